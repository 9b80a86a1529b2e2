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
        try Text.validate(title, what: "title of \(id)", maxBytes: KioskAPI.Limits.titleBytes, multiline: false)
        try Text.validate(detail, what: "detail text of \(id)", maxBytes: KioskAPI.Limits.detailBytes, multiline: true)
        self.id = id
        self.title = title
        self.detail = detail
    }

    /// Validates the three strings of a `(sss)` as they came from a client.
    public init(id: String, title: String, detail: String) throws(KioskError) {
        try self.init(id: RestrictionID(id), title: title, detail: detail)
    }
}

/// A restriction as the registry lists it: the declaration, its state, and whether the
/// app still declares it. (The registry keeps them packed, see `RestrictionTable`, and makes
/// these values when asked for a list.)
public struct Restriction: Hashable, Sendable, Codable {
    public var id: RestrictionID
    public var title: String
    public var detail: String
    public var state: RestrictionState
    /// The app no longer declares this id; the state is kept for when it comes back.
    public var retired: Bool

    public init(id: RestrictionID, title: String, detail: String, state: RestrictionState, retired: Bool = false) {
        self.id = id
        self.title = title
        self.detail = detail
        self.state = state
        self.retired = retired
    }

    // Stored as a compact array `[id, title, detail, state, retired]`: the state file holds
    // up to 512 × 1024 of these, and an array decodes much faster than a keyed object. Each
    // app's list is read and written through this, one restriction at a time.
    public init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        id = try c.decode(RestrictionID.self)
        title = try c.decode(String.self)
        detail = try c.decode(String.self)
        state = try c.decode(RestrictionState.self)
        retired = try c.decode(Bool.self)
        guard c.isAtEnd else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "a restriction has more than 5 fields")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.unkeyedContainer()
        try c.encode(id)
        try c.encode(title)
        try c.encode(detail)
        try c.encode(state)
        try c.encode(retired)
    }
}
