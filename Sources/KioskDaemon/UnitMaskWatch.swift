import Glibc
import Logging
import SystemdKit

/// Stops kioskd cleanly when its unit is masked while it runs (kioskd(8) § SIGNALS).
///
/// `systemctl mask` makes the manager reload: the running unit loses its settings, among them
/// `NotifyAccess=`, but keeps its watchdog, so every `WATCHDOG=1` is refused from then on and
/// the watchdog would kill kioskd with SIGABRT 30 s later, a crash in the journal for what an
/// admin meant as "stop it and keep it stopped". kioskd asks the manager after each reload
/// whether its unit is masked and, if so, stops as on SIGTERM: the session saved, the devices
/// released, exit 0.
///
/// Only when kioskd runs under a service manager (`$NOTIFY_SOCKET`); each step that fails
/// (no systemd on the bus, a policy that refuses) leaves kioskd as it was, logged at debug.
final class UnitMaskWatch {
    private static let systemd = "org.freedesktop.systemd1"
    private static let managerPath = "/org/freedesktop/systemd1"
    private static let managerInterface = "org.freedesktop.systemd1.Manager"

    private let bus: Bus
    private let logger: Logger
    private let stop: () -> Void
    private var reloading: BusSlot?
    /// kioskd's unit's object path, once the manager has said it.
    private var unitPath: String? {
        didSet { if reloadedBeforePath { check() } }
    }
    /// A reload finished before the path was known: checked once it is.
    private var reloadedBeforePath = false

    /// Watches on `bus` (the system bus, where systemd is); calls `stop` once, on the loop, when
    /// the unit is found masked.
    init?(bus: Bus, logger: Logger, stop: @escaping () -> Void) {
        guard getenv("NOTIFY_SOCKET") != nil else { return nil }
        self.bus = bus
        self.logger = logger
        self.stop = stop
        do {
            reloading = try bus.matchSignal(
                sender: Self.systemd, path: Self.managerPath, interface: Self.managerInterface, member: "Reloading"
            ) { [weak self] message in
                // Reloading(false): the reload is done and the units carry their new settings.
                if case .bool(false)? = try? message.readAll().first { self?.check() }
            }
            // The manager sends Reloading only to subscribed peers.
            try call(Self.managerPath, Self.managerInterface, "Subscribe", []) { _ in }
            try call(Self.managerPath, Self.managerInterface, "GetUnitByPID", [.uint32(UInt32(getpid()))]) {
                [weak self] values in
                if case .objectPath(let path)? = values.first { self?.unitPath = path }
            }
        } catch {
            logger.debug("Not watching for kioskd's unit being masked", metadata: ["error": "\(error)"])
        }
    }

    /// Asks for the unit's `LoadState`; stops kioskd when it is `masked`.
    private func check() {
        guard let unitPath else {
            reloadedBeforePath = true
            return
        }
        try? call(
            unitPath, "org.freedesktop.DBus.Properties", "Get",
            [.string("org.freedesktop.systemd1.Unit"), .string("LoadState")]
        ) { [weak self] values in
            guard let self, case .variant(.string("masked"))? = values.first else { return }
            logger.notice(
                "kioskd's unit was masked while it runs: stopping, as systemctl stop would (a masked unit's watchdog pings are refused)",
                metadata: ["unit.path": "\(unitPath)"])
            reloading = nil
            stop()
        }
    }

    private func call(
        _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue],
        _ done: @escaping ([DBusValue]) -> Void
    ) throws {
        let message = try bus.makeMethodCall(
            destination: Self.systemd, path: path, interface: interface, member: member)
        try message.append(arguments)
        try bus.callAsync(message, timeout: .seconds(10)) { [logger] result in
            switch result {
            case .success(let reply):
                if let values = try? reply.readAll() { done(values) }
            case .failure(let error):
                logger.debug(
                    "The service manager did not answer", metadata: ["method": "\(member)", "error": "\(error)"])
            }
        }
    }
}
