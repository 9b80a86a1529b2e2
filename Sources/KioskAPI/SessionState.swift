/// A guided-access session's state, as the `SessionState` property carries it and the state
/// file keeps it: `inactive`, `active` or `expired` (DESIGN §2).
public enum SessionState: String, Hashable, Sendable, Codable {
    case inactive, active, expired
}
