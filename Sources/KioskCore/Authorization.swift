/// Who may do what kioskd guards with a polkit action: the rule, apart from asking polkit (the
/// daemon asks, then hands the answer here).
public enum Authorization {
    /// What polkit answered, as far as the rule cares.
    public enum Answer: Hashable, Sendable {
        case allowed
        case denied
        /// polkit would allow it after authentication; a kiosk has no authentication agent.
        case challenge
        /// No polkit on the bus.
        case unavailable
        /// polkit was there but could not be asked (an error reply, a timeout).
        case failed
    }

    /// Root is always allowed; any other uid is asked of polkit.
    public static func needsAsking(uid: UInt32) -> Bool { uid != 0 }

    /// Why `uid` may not do `what` (a phrase: "set restriction states") after polkit answered
    /// `answer` for `action`, or nil when it may. A challenge counts as denied, and with no
    /// polkit on the bus only root may.
    public static func refusal(_ answer: Answer, uid: UInt32, action: String, doing what: String) -> KioskError? {
        switch answer {
        case .allowed: nil
        case .unavailable:
            KioskError(.accessDenied, "uid \(uid) may not \(what): polkit is not running, so only root may.")
        case .denied, .challenge:
            KioskError(.accessDenied, "uid \(uid) may not \(what) (polkit action \(action)).")
        case .failed:
            KioskError(.accessDenied, "uid \(uid) may not \(what): polkit could not be asked.")
        }
    }
}
