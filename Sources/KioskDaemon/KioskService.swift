import CMalloc
import Glibc
import KioskCore
import KioskStore
import LinuxInput
import Logging
import SystemdKit

/// The daemon: one sd_event loop on the calling thread owning the bus, the input devices, the
/// timers and the signals. The state file is loaded first; a restored session's locks are in
/// the broker's filter before it takes any device; the devices are taken before the name;
/// `READY=1` once the name is owned.
public enum KioskService {
    public struct Options: Sendable {
        public var stateDirectory: String
        public var profileDirectory: String
        /// Broker input devices (DESIGN §4); false for `--no-input` (registry and bus only; a
        /// locked power key still takes logind's inhibitor).
        public var brokerInput: Bool

        public init(stateDirectory: String, profileDirectory: String, brokerInput: Bool) {
            self.stateDirectory = stateDirectory
            self.profileDirectory = profileDirectory
            self.brokerInput = brokerInput
        }
    }

    /// Runs until SIGTERM or SIGINT; returns the process exit code (0 after a clean stop,
    /// 1 when the state file cannot be read or the bus cannot be served).
    public static func run(_ options: Options, logger: Logger) -> Int32 {
        do {
            return try serve(options, logger: logger)
        } catch let error as StoreError {
            logger.critical(
                "Could not load the state file", metadata: ["error": "\(error.message)", "store.path": "\(error.path)"])
            return 1
        } catch {
            logger.critical("kioskd could not start", metadata: ["error": "\(error)"])
            return 1
        }
    }

    private static func serve(_ options: Options, logger: Logger) throws -> Int32 {
        try EventLoop.blockSignals([SIGTERM, SIGINT])
        let loop = try EventLoop()
        let store = StateStore(directory: options.stateDirectory)
        try makeDirectory(options.stateDirectory)
        let state = try store.load()  // a corrupt file throws and is left untouched

        let bus = try Bus.openSystem()
        try bus.attach(to: loop)
        let manager = ManagerObject(
            bus: bus, loop: loop, store: store, state: state,
            profileDirectory: options.profileDirectory, clock: SystemWallClock(), logger: logger)
        let broker = options.brokerInput ? InputBroker(loop: loop, logger: logger) : nil
        manager.enforcer = InputEnforcement(
            broker: broker, inhibitor: LogindInhibitor(bus: bus, logger: logger), logger: logger)
        try manager.export()
        // Fail closed: the restored session's locks are in the filter before any device is taken.
        manager.restoreSession()
        broker?.onExitRequested = { [unowned manager] in manager.requestExit() }
        broker?.start()
        try bus.requestName(KioskWire.busName)

        var sources: [EventSource] = []
        for signal in [SIGTERM, SIGINT] {
            sources.append(
                try loop.addSignal(signal) { [unowned manager] _ in
                    _ = try? Notify.stopping()
                    logger.info("Stopping")
                    // The save in flight finishes and its caller is answered (bounded); changes still
                    // waiting are answered with an error. A second signal stops at once.
                    manager.stop { loop.exit(code: 0) }
                })
        }
        if let watchdog = try Notify.startWatchdog(on: loop) { sources.append(watchdog) }
        // Decoding the state file leaves its text and the decoder's temporaries freed but held by
        // malloc (free chunks below the top of the heap, which free() does not return): give
        // them back once, before an idle daemon's life begins (docs/benchmarks.md § Footprint).
        malloc_trim(0)
        try Notify.ready(status: "Serving \(state.registry.applications.count) applications")
        logger.info("Ready", metadata: ["bus.name": "\(KioskWire.busName)", "store.path": "\(store.path)"])

        let code = try loop.run()
        broker?.stop()  // the devices deliver to everyone again
        bus.close()
        sources.forEach { $0.cancel() }
        withExtendedLifetime((manager, broker)) {}
        return code
    }

    /// Creates the state directory (0700) when it is missing; systemd's StateDirectory= usually has.
    private static func makeDirectory(_ path: String) throws(Errno) {
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw Errno.current }
    }
}
