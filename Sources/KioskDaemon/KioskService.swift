import CMalloc
import Glibc
import KioskCore
import KioskCrypt
import KioskFiles
import KioskStore
import LinuxInput
import Logging
import SystemPackage
import SystemdKit

/// The daemon: one sd_event loop on the calling thread owning the bus, the input devices, the
/// timers and the signals. The state file is loaded first; a restored session's locks are in
/// the broker's filter before it takes any device; the devices are taken before the name;
/// `READY=1` once the name is owned.
public enum KioskService {
    public struct Options: Sendable {
        public var stateDirectory: String
        public var profileDirectory: String
        /// Broker input devices (docs/input-enforcement.md); false for `--no-input` (registry and
        /// bus only; a locked power key still takes logind's inhibitor).
        public var brokerInput: Bool
        /// Emptied at every boot (`RuntimeDirectory=`): where the kiosk clock's marker tells a
        /// restart from a reboot (``KioskClockMarker``).
        public var runtimeDirectory: String
        /// Chromium's managed policy directory (`--chromium-policy-dir`).
        public var chromiumPolicyDirectory: String
        /// Firefox's policy directory (`--firefox-policy-dir`).
        public var firefoxPolicyDirectory: String
        /// The web apps' manifests (`--apps-dir`).
        public var appsDirectory: String

        public init(
            stateDirectory: String, profileDirectory: String, brokerInput: Bool, runtimeDirectory: String,
            chromiumPolicyDirectory: String = "/etc/chromium/policies/managed",
            firefoxPolicyDirectory: String = "/etc/firefox/policies", appsDirectory: String = "/etc/kioskd/apps"
        ) {
            self.stateDirectory = stateDirectory
            self.profileDirectory = profileDirectory
            self.brokerInput = brokerInput
            self.runtimeDirectory = runtimeDirectory
            self.chromiumPolicyDirectory = chromiumPolicyDirectory
            self.firefoxPolicyDirectory = firefoxPolicyDirectory
            self.appsDirectory = appsDirectory
        }

        /// Where kioskd writes and checks the browsers' policy.
        public var browserPaths: BrowserPolicyPaths {
            BrowserPolicyPaths(
                chromiumDirectory: chromiumPolicyDirectory,
                firefoxDirectory: firefoxPolicyDirectory, firefoxHeldFile: stateDirectory + "/firefox-policy-keys.json")
        }
    }

    /// Runs until SIGTERM or SIGINT; returns the process exit code (0 after a clean stop,
    /// 1 when the state file is corrupt, or does not read and this boot kept no runtime copy of
    /// it, when the bus cannot be served or the bus is lost).
    public static func run(_ options: Options, logger: Logger) -> Int32 {
        do {
            return try serve(options, logger: logger)
        } catch let error as StoreError where error.code == .io {
            logger.critical(
                "Could not read the state file; kioskd starts once it reads (input stays hidden until then); after a reboot, a session with a time limit then comes back expired",
                metadata: ["error": "\(error.message)", "store.path": "\(error.path)"])
            return 1
        } catch let error as StoreError {
            logger.critical(
                "Could not load the state file", metadata: ["error": "\(error.message)", "store.path": "\(error.path)"])
            return 1
        } catch {
            logger.critical("kioskd could not start", metadata: ["error": "\(Errno.reason(of: error))"])
            return 1
        }
    }

    private static func serve(_ options: Options, logger: Logger) throws -> Int32 {
        try EventLoop.blockSignals([SIGTERM, SIGINT, SIGHUP])
        let loop = try EventLoop()
        let store = StateStore(directory: options.stateDirectory)
        // systemd's StateDirectory= has usually made it already; `--state-dir` elsewhere may not
        // have. A failure (a disk returning I/O errors) is the load's and the probe's to say.
        do {
            try Files.makePrivateDirectory(options.stateDirectory)
        } catch {
            logger.warning("Could not make the state directory", metadata: ["error": "\(error)"])
        }
        // What a kioskd of this boot kept in the runtime directory because its save failed:
        // wrong passcodes and a session's time, newer than the disk (docs/state-store.md § When
        // the disk fails).
        let pendingStore = StateStore(directory: options.runtimeDirectory, name: StateStore.pendingFileName)
        let pending = loadPending(pendingStore, logger: logger)
        let unreadable = UnreadableStateMarker(runtimeDirectory: options.runtimeDirectory)
        var (state, unsaved) = try loadState(
            store, pendingStore, pending: pending, unreadable: unreadable, logger: logger)
        let trial = state.session.trialEnd != nil
        let (clock, newBoot) = startKioskClock(&state, store: store, options: options, logger: logger)
        if trial && !state.session.isActive {
            // A new boot ended an unconfirmed trial session: on disk before anything else, so
            // that a crash now cannot bring it back.
            logger.notice(
                "A trial session was not confirmed before the reboot; it ended", metadata: MessageID.trialEnded.metadata
            )
            unsaved = true
        }

        // The built-in browsers are root's apps, declared before anything is served: their
        // restrictions are listed (and their states kept) whether a browser runs or not.
        var browsersDeclared = false
        do throws(KioskError) {
            browsersDeclared = try state.declareBrowsers()
        } catch {
            // A registry already holding the most apps kioskd keeps: serve it as it is.
            logger.error("Could not declare the built-in browsers", metadata: ["error": "\(error.message)"])
        }
        // Whether the state directory takes writes now: with the state saved when memory holds
        // more than the disk, else with a probe file. A failure is served, not fatal: reads and
        // input go on, changes are refused, tightening ones kept (and `StateStorage` says why).
        var storageError = checkStorage(store, pendingStore, state: state, save: unsaved || browsersDeclared)
        if storageError == nil { unsaved = false }
        // What was changed after the disk's last save is unknown after a reboot when the disk
        // does not take a write now, or did not read at an earlier start of this boot.
        let lastSaveKnown = storageError == nil && !unreadable.isSet
        var marker = clock.marker
        let failedClosed = StateStorage.failClosedAfterReboot(
            &state, marker: &marker, boottime: SystemWallClock.boottime(), newBoot: newBoot,
            writable: lastSaveKnown)
        if marker != clock.marker {
            clock.marker = marker
            writeMarker(marker, options, logger)
        }
        if failedClosed {
            logger.warning(
                storageError == nil
                    ? "The wrong passcodes since the last save are unknown (the state did not read earlier this boot); no free attempts are left"
                    : "The wrong passcodes since the last save are unknown and the state cannot be saved; no free attempts are left"
            )
            unsaved = true
            if storageError == nil {
                storageError = checkStorage(store, pendingStore, state: state, save: true)
                if storageError == nil { unsaved = false }
            }
        }

        let bus = try Bus.openSystem()
        try bus.attach(to: loop)
        let manager = ManagerObject(
            bus: bus, loop: loop, store: store, state: state,
            profileDirectory: options.profileDirectory, clock: clock, logger: logger)
        manager.displayTime = { [unowned clock] in clock.marker.display($0) }
        // Asked of systemd long before READY=1, so that a mask right after the start is seen.
        let maskWatch = UnitMaskWatch(bus: bus, logger: logger) { [unowned manager] in
            _ = try? Notify.stopping()
            manager.stop { loop.exit(code: 0) }
        }
        manager.pendingStore = pendingStore
        // A set wall clock moves what SessionDeadline shows, never a wait or a limit.
        let wallClockWatch = try WallClockWatch(loop: loop) { [unowned manager, unowned clock] in
            let now = clock.now()
            clock.marker.displayOffset = SystemWallClock().now().microseconds - now.microseconds
            writeMarker(clock.marker, options, logger)
            manager.wallClockChanged()
        }
        // Each calibrated clone's matrix, for udev's 99-zz-kioskd-calibration.rules to give it.
        let broker =
            options.brokerInput
            ? InputBroker(
                loop: loop, logger: logger, calibrationDirectory: options.runtimeDirectory + "/calibration") : nil
        let enforcement = InputEnforcement(
            broker: broker, inhibitor: LogindInhibitor(bus: bus, logger: logger),
            awake: LogindInhibitor(bus: bus, logger: logger, kind: LogindInhibitor.keepAwake), logger: logger)
        manager.enforcer = enforcement
        manager.governBrowsers(options.browserPaths)
        broker?.onDeviceBrokered = { [unowned enforcement] _ in enforcement.deviceBrokered() }
        broker?.onDeviceGone = { [unowned enforcement] in enforcement.deviceGone() }
        try manager.export()
        if let storageError { manager.startedWithoutStorage(storageError, unsaved: unsaved) }
        // Fail closed: the restored session's locks are in the filter before any device is taken.
        manager.restoreSession(newBoot: newBoot, lastSaveKnown: lastSaveKnown)
        unreadable.clear()  // what it stood for is in `state` now, on disk or kept as unsaved
        // The web apps: declared (and saved) before the name is taken, their origins in the policy.
        manager.governWebApps(directory: options.appsDirectory)
        broker?.onExitRequested = { [unowned manager] in manager.requestExit() }
        broker?.onPromptKey = { [unowned manager] key in manager.promptKey(key) }
        broker?.onTookOffer = { [unowned manager] in manager.visitorAnswered() }
        broker?.onWoke = { [unowned manager] in manager.displayWoken() }
        broker?.onCleaningRequested = { [unowned manager] in manager.requestCleaning() }
        broker?.onDrawing = { [unowned manager] events in manager.drawingInput(events) }
        if let broker {
            manager.timeSinceInput = { [unowned broker, unowned loop] in
                broker.lastInput == 0 ? nil : .microseconds(Int64(loop.now(.monotonic)) - broker.lastInput)
            }
        }
        broker?.deviceAllowedMessageID = MessageID.deviceAllowed.rawValue
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
        // SIGHUP (and `systemctl reload`, through kioskctl reload): the session's profile read again.
        sources.append(
            try loop.addSignal(SIGHUP) { [unowned manager] _ in
                logger.info("SIGHUP: reloading the session's profile")
                manager.reload(LogRequester(), caller: Caller(busName: "SIGHUP", uid: 0))
            })
        // A kioskd that lost the bus would go on deaf: nobody could end the session or read a
        // state. It exits non-zero instead, so that systemd starts it again (Restart=always),
        // with the session's locks back before READY=1, as after a crash.
        let disconnected = try bus.onDisconnect { [unowned manager] in
            logger.critical("The bus connection was lost; exiting so that kioskd is started again")
            manager.stop { loop.exit(code: 1) }
        }
        if let watchdog = try Notify.startWatchdog(on: loop) { sources.append(watchdog) }
        // Decoding the state file leaves its text and the decoder's temporaries freed but held by
        // malloc (free chunks below the top of the heap, which free() does not return): give
        // them back once, before an idle daemon's life begins (docs/benchmarks.md § Footprint).
        malloc_trim(0)
        let storageNote = manager.storageProblem.isEmpty ? "" : "; \(manager.storageProblem)"
        try Notify.ready(status: "Serving \(state.registry.applications.count) applications\(storageNote)")
        logger.info("Ready", metadata: ["bus.name": "\(KioskWire.busName)", "store.path": "\(store.path)"])

        let code = try loop.run()
        broker?.stop()  // the devices deliver to everyone again
        bus.close()
        sources.forEach { $0.cancel() }
        withExtendedLifetime((manager, broker, disconnected, wallClockWatch, maskWatch)) {}
        return code
    }

    /// The state to start from and whether it holds more than the disk: the state file's, or the
    /// runtime copy's when that is newer (``StateStorage/restore(disk:pending:)``).
    ///
    /// A state file that does not read (an I/O error, not a corrupt file) with a runtime copy:
    /// the copy is the disk's state plus tightening changes, served and saved once the disk
    /// works. Without one the session, its locks and the passcode are unknown: the error is
    /// thrown (kioskd does not start, and a dead kioskd hides all input) and `unreadable` is
    /// set, so that after a reboot the start that reads the disk again fails closed as with
    /// the disk broken. A corrupt file throws and is left untouched.
    private static func loadState(
        _ store: StateStore, _ pendingStore: StateStore, pending: KioskState?, unreadable: UnreadableStateMarker,
        logger: Logger
    ) throws(StoreError) -> (KioskState, Bool) {
        let disk: KioskState
        do {
            disk = try store.load()
        } catch {
            guard error.code == .io, let pending else {
                if error.code == .io { unreadable.set(logger: logger) }
                throw error
            }
            logger.error(
                "Could not read the state file; serving the unsaved state this boot kept in the runtime directory",
                metadata: ["error": "\(error.message)", "store.path": "\(pendingStore.path)"])
            return (pending, true)
        }
        let (state, fromPending) = StateStorage.restore(disk: disk, pending: pending)
        if pending != nil && !fromPending { pendingStore.remove() }  // older than the disk
        return (state, fromPending)
    }

    /// The runtime directory's copy of a state whose save failed; nil when there is none or it
    /// cannot be read (logged: the disk's state is served then).
    private static func loadPending(_ pendingStore: StateStore, logger: Logger) -> KioskState? {
        do {
            return try pendingStore.loadIfPresent()
        } catch {
            logger.error("Could not read the unsaved state", metadata: ["error": "\(error.message)"])
            return nil
        }
    }

    /// Whether the state directory takes writes at start: the state saved when `save` (memory
    /// holds more than the disk; the runtime copy is removed then), else a probe file written and
    /// removed. Returns what the write met, nil when it worked.
    private static func checkStorage(
        _ store: StateStore, _ pendingStore: StateStore, state: KioskState, save: Bool
    ) -> StoreError? {
        do {
            if save {
                try store.save(state)
                pendingStore.remove()
            } else {
                try store.probeWritable()
            }
            return nil
        } catch {
            return error
        }
    }

    /// Where the kiosk clock stands: this boot's marker if there is one, else a new boot (every
    /// throttle wait restarts in full; the clock resumes from the state's checkpoint).
    private static func startKioskClock(
        _ state: inout KioskState, store: StateStore, options: Options, logger: Logger
    ) -> (clock: SystemKioskClock, newBoot: Bool) {
        let path = options.runtimeDirectory + "/clock"
        let marker = (try? Files.readRegular(path, limit: 4096)).flatMap {
            KioskClockMarker(text: String(decoding: $0.bytes, as: UTF8.self))
        }
        let (started, newBoot) = KioskClockMarker.start(
            state: &state, statePath: store.path, marker: marker, boottime: SystemWallClock.boottime(),
            realtime: SystemWallClock().now())
        if newBoot {
            logger.info(
                "A new boot: the kiosk clock resumes from the last save; throttle waits start again",
                metadata: ["clock.marker": "\(path)"])
        }
        writeMarker(started, options, logger)
        return (SystemKioskClock(marker: started), newBoot)
    }

    private static func writeMarker(_ marker: KioskClockMarker, _ options: Options, _ logger: Logger) {
        let path = options.runtimeDirectory + "/clock"
        do {
            try Files.makePrivateDirectory(options.runtimeDirectory)
            try Files.replace(path, with: Array(marker.text.utf8), durable: false)
        } catch {
            // Without it the next start counts as a new boot: throttle waits restart (fail closed).
            logger.warning(
                "Could not keep the kiosk clock's marker",
                metadata: ["clock.marker": "\(path)", "error": "\(error)"])
        }
    }
}

/// `<runtime-dir>/state-unreadable`: a start of this boot found the state file unreadable (an I/O
/// error) and kept no copy of it (docs/state-store.md § When the disk fails). After a reboot,
/// the start that reads it again cannot know what changed after its last save, so it fails
/// closed as with the disk broken; within one boot nothing was unsaved. The start that reads
/// the file removes the marker.
struct UnreadableStateMarker {
    let directory: String
    var path: String { directory + "/state-unreadable" }

    init(runtimeDirectory: String) {
        directory = runtimeDirectory
    }

    /// Whether an earlier start of this boot left it.
    var isSet: Bool { access(path, F_OK) == 0 }

    /// Leaves it (a runtime directory that cannot take it is logged: the next start then counts
    /// what it reads as known).
    func set(logger: Logger) {
        do {
            try Files.makePrivateDirectory(directory)
            try Files.replace(path, with: Array("kioskd\n".utf8), durable: false)
        } catch {
            logger.error("Could not mark the state as unread in the runtime directory", metadata: ["error": "\(error)"])
        }
    }

    func clear() { Files.remove(path) }
}
