/// Whether the app should allow or deny the operation a restriction guards.
/// Travels on the bus as the strings `allow` and `deny`.
public enum RestrictionState: String, Sendable, Hashable, Codable, CaseIterable {
    case allow
    case deny

    /// Parses a state string from a client or a profile; anything else is `InvalidArgs`.
    public init(parsing string: String) throws(KioskError) {
        guard let state = RestrictionState(rawValue: string) else {
            throw .invalid("The state \(Text.quoted(string)) is unknown; it must be \"allow\" or \"deny\".")
        }
        self = state
    }
}

/// What an app declares about one restriction: its id, a title and a detail text,
/// as iOS's `textForGuidedAccessRestriction` and `detailTextForGuidedAccessRestriction`.
public struct RestrictionDeclaration: Hashable, Sendable, Codable {
    public let id: RestrictionID
    public let title: String
    public let detail: String

    /// Validates title (≤ 256 bytes, one line) and detail (≤ 4096 bytes, may span lines).
    public init(id: RestrictionID, title: String, detail: String) throws(KioskError) {
        try Self.validate(title: title, of: id)
        try Self.validate(detail: detail, of: id)
        self.id = id
        self.title = title
        self.detail = detail
    }

    /// Validates the three strings of a `(sss)` as they came from a client.
    public init(id: String, title: String, detail: String) throws(KioskError) {
        try self.init(id: RestrictionID(id), title: title, detail: detail)
    }

    /// The rule for a title, wherever one comes from (a client, a profile, the state file).
    package static func validate(title: String, of id: RestrictionID) throws(KioskError) {
        try Text.validate(title, what: "title of \(id)", maxBytes: KioskWire.Limits.titleBytes, multiline: false)
    }

    /// The rule for a detail text, wherever one comes from.
    package static func validate(detail: String, of id: RestrictionID) throws(KioskError) {
        try Text.validate(detail, what: "detail text of \(id)", maxBytes: KioskWire.Limits.detailBytes, multiline: true)
    }
}
