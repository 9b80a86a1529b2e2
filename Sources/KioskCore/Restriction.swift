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
    static func validate(title: String, of id: RestrictionID) throws(KioskError) {
        try Text.validate(title, what: "title of \(id)", maxBytes: KioskWire.Limits.titleBytes, multiline: false)
    }

    /// The rule for a detail text, wherever one comes from.
    static func validate(detail: String, of id: RestrictionID) throws(KioskError) {
        try Text.validate(detail, what: "detail text of \(id)", maxBytes: KioskWire.Limits.detailBytes, multiline: true)
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
    // up to 512 × 1024 of these, and an array decodes much faster than a keyed object. The
    // registry reads its apps' lists itself, straight into its packed tables, with the same
    // checks (`Registry.Application.init(from:)`).
    public init(from decoder: any Decoder) throws {
        var c = try decoder.unkeyedContainer()
        self = try Self.decodeFields(of: &c)
    }

    /// Decodes the five fields of one restriction and holds them to the rules a declaration is
    /// held to; a problem names its place (`….restrictions.7.title`).
    static func decodeFields(of c: inout any UnkeyedDecodingContainer) throws -> Restriction {
        func corrupt(_ field: String?, _ message: String) -> DecodingError {
            .dataCorrupted(.init(codingPath: c.codingPath + (field.map { [FieldKey($0)] } ?? []), debugDescription: message))
        }
        let rawID = try c.decode(String.self)
        let id: RestrictionID
        do { id = try RestrictionID(rawID) } catch { throw corrupt("id", error.message) }
        let title = try c.decode(String.self)
        let detail = try c.decode(String.self)
        let rawState = try c.decode(String.self)
        let state: RestrictionState
        do { state = try RestrictionState(parsing: rawState) } catch { throw corrupt("state", error.message) }
        let retired = try c.decode(Bool.self)
        guard c.isAtEnd else { throw corrupt(nil, "a restriction has more than 5 fields") }
        do { try RestrictionDeclaration.validate(title: title, of: id) } catch { throw corrupt("title", error.message) }
        do { try RestrictionDeclaration.validate(detail: detail, of: id) } catch { throw corrupt("detail", error.message) }
        return Restriction(id: id, title: title, detail: detail, state: state, retired: retired)
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

/// A named place in a decoding error's path (`title`, `id`), for fields a file holds by
/// position: `….restrictions.7.title` reads better than `….restrictions.7.1`.
struct FieldKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
