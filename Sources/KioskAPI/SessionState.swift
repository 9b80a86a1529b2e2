/// A guided-access session's state, as the `SessionState` property carries it and the state
/// file keeps it: `inactive`, `active` or `expired`.
public enum SessionState: String, Hashable, Sendable, Codable {
    case inactive, active, expired
    /// A value this build does not know, from a newer kioskd: a client decodes it so
    /// (``init(wire:)``) instead of refusing the reply, and treats it as a session in force. kioskd
    /// never is in it, and the state file refuses it.
    case unknown

    /// Decodes a `SessionState` a daemon sent: a value this build does not know is ``unknown``.
    public init(wire text: String) {
        self = SessionState(rawValue: text) ?? .unknown
    }

    /// Decodes a state file's state: ``unknown`` is not one (only a client decodes it).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let state = SessionState(rawValue: text), state != .unknown else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "The session state \"\(text)\" is not one kioskd keeps.")
        }
        self = state
    }
}
