import Logging
import SystemPackage
import SystemdKit

/// A logind `block` inhibitor: for the power, suspend, hibernate and reboot keys (``powerKeys``),
/// held while a session locks the power key, so logind does not act on a press that reaches it
/// some other way (a node kioskd could not grab, a button logind reads through another driver);
/// or against idling, sleep and the lid switch (``keepAwake``), held while a session's profile
/// asks to keep the kiosk awake (`[session] keep-awake`).
///
/// Taken with `org.freedesktop.login1.Manager.Inhibit` on the daemon's bus (asynchronously: the
/// loop never waits for logind); the returned fd *is* the inhibitor, and closing it releases
/// it. A refused or failed `Inhibit` is asked again while the session still wants it, after 1 s,
/// then 2, 4, … up to every 30 s (the input broker's back-off); until it is held, ``problem``
/// says so and `SessionProblem` shows it. When logind is not on the bus (containers, tests),
/// that is said once at info level and kioskd goes on without (asking again on the same
/// back-off, in case it comes): no logind, nobody acting on the power key, so no problem.
/// Lives on the loop thread.
final class LogindInhibitor {
    /// What is inhibited, and the words for it in messages.
    struct Kind {
        var what: String
        var why: String
        var name: String
    }

    static let powerKeys = Kind(
        what: "handle-power-key:handle-suspend-key:handle-hibernate-key:handle-reboot-key",
        why: "A guided-access session locks the power key", name: "power-key inhibitor")
    static let keepAwake = Kind(
        what: "idle:sleep:handle-lid-switch", why: "A guided-access session keeps the kiosk awake",
        name: "keep-awake inhibitor")
    static let who = "kioskd"
    static let mode = "block"
    static let firstRetry = Duration.seconds(1)
    static let lastRetry = Duration.seconds(30)

    private let bus: Bus
    private let logger: Logger
    let kind: Kind
    private var wanted = false
    private var fd: FileDescriptor?
    private var inFlight = false
    private var saidAbsent = false
    private var retryTimer: EventSource?
    private(set) var backOff = LogindInhibitor.firstRetry
    /// Why the last `Inhibit` failed, while the inhibitor is wanted and not held (nil when
    /// logind is absent: not a problem).
    private var refusal: String? {
        didSet { if refusal != oldValue { onProblemChanged?() } }
    }
    /// Called (on the loop) whenever ``problem`` changes.
    var onProblemChanged: (() -> Void)?

    init(bus: Bus, logger: Logger, kind: Kind = LogindInhibitor.powerKeys) {
        self.bus = bus
        self.logger = logger
        self.kind = kind
    }

    deinit {
        retryTimer?.cancel()
        try? fd?.close()
    }

    /// A session wants the inhibitor and kioskd does not hold it because logind refused it (or
    /// the call failed): what `SessionProblem` says; "" otherwise.
    var problem: String {
        guard wanted, fd == nil, let refusal else { return "" }
        return "kioskd does not hold logind's \(kind.name) (\(refusal)); asking again every "
            + "\(Self.lastRetry.components.seconds) s at most"
    }

    /// Takes the inhibitor (if it is not held or being asked for) or releases it.
    func setHeld(_ held: Bool) {
        wanted = held
        if held {
            if fd == nil && !inFlight && retryTimer == nil { request() }
        } else {
            retryTimer?.cancel()
            retryTimer = nil
            backOff = Self.firstRetry
            refusal = nil
            if let fd {
                try? fd.close()
                self.fd = nil
                logger.info("Released logind's \(kind.name)")
            }
        }
    }

    /// `Inhibit(s what, s who, s why, s mode) → h`.
    private func request() {
        do {
            let call = try bus.makeMethodCall(
                destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
                interface: "org.freedesktop.login1.Manager", member: "Inhibit")
            try call.append(.string(kind.what), .string(Self.who), .string(kind.why), .string(Self.mode))
            try bus.callAsync(call, timeout: .seconds(25)) { [weak self] result in self?.answered(result) }
            inFlight = true
        } catch {
            logger.warning(
                "Could not ask logind for the \(kind.name)", metadata: ["error": "\(Errno.reason(of: error))"])
            failed(reason: "the call could not be sent: \(Errno.reason(of: error))")
        }
    }

    /// `Inhibit` failed: asks again after the back-off (1 s, doubling up to 30 s) while wanted.
    private func failed(reason: String?) {
        guard wanted else { return }
        refusal = reason
        let delay = backOff
        backOff = min(backOff * 2, Self.lastRetry)
        guard let loop = bus.loop else { return }
        do {
            retryTimer = try loop.addTimer(after: delay) { [weak self] in
                guard let self else { return }
                retryTimer?.cancel()
                retryTimer = nil
                if wanted && fd == nil && !inFlight { request() }
            }
            if reason != nil {
                logger.info(
                    "Asking logind for the \(kind.name) again",
                    metadata: ["retry.seconds": "\(delay.components.seconds)"])
            }
        } catch {
            logger.error(
                "Could not arm the inhibitor's retry timer", metadata: ["error": "\(Errno.reason(of: error))"])
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
                failed(reason: "logind's answer carried no fd")
                return
            }
            if wanted {
                fd = received
                backOff = Self.firstRetry
                refusal = nil
                logger.info("Holding logind's \(kind.name)", metadata: ["inhibit.what": "\(kind.what)"])
            } else {
                try? received.close()  // the session ended while logind was answering
            }
        case .failure(let error as BusError)
        where error.name == BusError.serviceUnknown || error.name == BusError.nameHasNoOwner:
            if !saidAbsent {
                saidAbsent = true
                logger.info("logind is not on the bus; the power key is locked without its inhibitor")
            }
            refusal = nil
            failed(reason: nil)
        case .failure(let error):
            let reason = Errno.reason(of: error)
            logger.warning("logind refused the \(kind.name)", metadata: ["error": "\(reason)"])
            failed(reason: "logind refused it: \(reason)")
        }
    }
}
