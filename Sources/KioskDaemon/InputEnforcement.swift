import KioskCore
import KioskInput
import LinuxInput
import Logging

/// Makes a session's locks real. `ManagerObject` tells it the state and the active profile
/// whenever either changes; it must act before returning (a reply to `StartSession` goes out
/// after the locks are on).
public protocol SessionEnforcer: AnyObject {
    func enforce(_ state: KioskState, profile: Profile?)
    /// What the enforcer wants in force and could not put there ("" when nothing): part of
    /// `SessionProblem` while a session is active.
    var problem: String { get }
    /// Called (on the loop) whenever ``problem`` changes; set by `ManagerObject`.
    var onProblemChanged: (() -> Void)? { get set }
}

extension SessionEnforcer {
    public var problem: String { "" }
    public var onProblemChanged: (() -> Void)? {
        get { nil }
        set {}
    }
}

/// The enforcer kioskd runs: the state's filter policy (KioskCore's mapping) goes to the input
/// broker, and logind's power-key inhibitor is held while that policy swallows the power key.
final class InputEnforcement: SessionEnforcer {
    private let broker: InputBroker?
    private let inhibitor: LogindInhibitor?
    private let logger: Logger
    private(set) var policy = FilterPolicy.passThrough

    /// `broker` is nil with `--no-input`; the inhibitor is still taken for a locked power key.
    init(broker: InputBroker?, inhibitor: LogindInhibitor?, logger: Logger) {
        self.broker = broker
        self.inhibitor = inhibitor
        self.logger = logger
    }

    /// logind's inhibitor, wanted (the session locks the power key) and not held.
    var problem: String { inhibitor?.problem ?? "" }

    var onProblemChanged: (() -> Void)? {
        get { inhibitor?.onProblemChanged }
        set { inhibitor?.onProblemChanged = newValue }
    }

    func enforce(_ state: KioskState, profile: Profile?) {
        let next = state.filterPolicy(profile: profile)
        guard next != policy else { return }
        policy = next
        broker?.setPolicy(next)
        inhibitor?.setHeld(next.locksPowerKeys)
        logger.info(
            "Input locks changed",
            metadata: [
                "session.state": "\(state.session.state.rawValue)", "input.locked-keys": "\(next.lockedKeys.count)",
                "input.hold-all": "\(next.holdAllInput)",
            ])
    }
}
