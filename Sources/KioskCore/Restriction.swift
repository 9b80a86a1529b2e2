import KioskAPI

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
            .dataCorrupted(
                .init(codingPath: c.codingPath + (field.map { [FieldKey($0)] } ?? []), debugDescription: message))
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
        do { try RestrictionDeclaration.validate(detail: detail, of: id) } catch {
            throw corrupt("detail", error.message)
        }
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
