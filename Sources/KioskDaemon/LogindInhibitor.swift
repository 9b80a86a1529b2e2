import Logging
import SystemPackage
import SystemdKit

/// logind's `block` inhibitor for the power, suspend, hibernate and reboot keys, held while a
/// session locks the power key, so logind does not act on a press that reaches it some other
/// way (a node kioskd could not grab, a button logind reads through another driver).
///
/// Taken with `org.freedesktop.login1.Manager.Inhibit` on the daemon's bus (asynchronously: the
/// loop never waits for logind); the returned fd *is* the inhibitor, and closing it releases
/// it. When logind is not on the bus (containers, tests), that is said once at info level and
/// kioskd goes on without. Lives on the loop thread.
final class LogindInhibitor {
    static let what = "handle-power-key:handle-suspend-key:handle-hibernate-key:handle-reboot-key"
    static let who = "kioskd"
    static let why = "A guided-access session locks the power key"
    static let mode = "block"

    private let bus: Bus
    private let logger: Logger
    private var wanted = false
    private var fd: FileDescriptor?
    private var inFlight = false
    private var saidAbsent = false

    init(bus: Bus, logger: Logger) {
        self.bus = bus
        self.logger = logger
    }

    deinit { try? fd?.close() }

    /// Takes the inhibitor (if it is not held or being asked for) or releases it.
    func setHeld(_ held: Bool) {
        wanted = held
        if held {
            if fd == nil && !inFlight { request() }
        } else if let fd {
            try? fd.close()
            self.fd = nil
            logger.info("Released logind's power-key inhibitor")
        }
    }

    /// `Inhibit(s what, s who, s why, s mode) → h`.
    private func request() {
        do {
            let call = try bus.makeMethodCall(
                destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
                interface: "org.freedesktop.login1.Manager", member: "Inhibit")
            try call.append(.string(Self.what), .string(Self.who), .string(Self.why), .string(Self.mode))
            try bus.callAsync(call, timeout: .seconds(25)) { [weak self] result in self?.answered(result) }
            inFlight = true
        } catch {
            logger.warning(
                "Could not ask logind for the power-key inhibitor", metadata: ["error": "\(Errno.reason(of: error))"])
        }
    }

    private func answered(_ result: Result<Message, any Error>) {
        inFlight = false
        switch result {
        case .success(let reply):
            let received: FileDescriptor
            do {
                received = try reply.readUnixFD()
            } catch {
                logger.warning(
                    "logind's answer to Inhibit carried no fd", metadata: ["error": "\(Errno.reason(of: error))"])
                return
            }
            if wanted {
                fd = received
                logger.info("Holding logind's power-key inhibitor", metadata: ["inhibit.what": "\(Self.what)"])
            } else {
                try? received.close()  // the session ended while logind was answering
            }
        case .failure(let error as BusError)
        where error.name == BusError.serviceUnknown || error.name == BusError.nameHasNoOwner:
            if !saidAbsent {
                saidAbsent = true
                logger.info("logind is not on the bus; the power key is locked without its inhibitor")
            }
        case .failure(let error):
            logger.warning("logind refused the power-key inhibitor", metadata: ["error": "\(Errno.reason(of: error))"])
        }
    }
}
