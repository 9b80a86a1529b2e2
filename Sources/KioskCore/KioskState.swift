import KioskAPI

/// Everything kioskd persists: the registry, the session, the passcode throttle and the
/// passcode hash. One value, written as a whole, so a reader never sees half an update.
public struct KioskState: Hashable, Sendable, Codable {
    public var registry = Registry()
    public var session = GuidedSession()
    /// The wrong-passcode counts, one per source.
    public var throttles = PasscodeThrottles()
    /// The crypt(3) hash set with `SetPasscode` (never the passcode itself).
    public var passcodeHash: String?
    /// The kiosk clock when this state was saved (``KioskClockMarker``): after a reboot the clock
    /// resumes from here. Nil in a state file from before the kiosk clock.
    public var clockCheckpoint: Timestamp?

    public init() {}

    /// Decodes a state file's state. The file may have been edited by hand or damaged: values the
    /// model's arithmetic could not take (a failure count at `Int.max`, a warning mark longer than
    /// any time limit) are refused as corrupt rather than trapping later.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        registry = try container.decode(Registry.self, forKey: .registry)
        session = try container.decode(GuidedSession.self, forKey: .session)
        // "throttle": the one count for everybody of older files, kept as the count every source
        // starts from; it is written back (the inherited count) so an older kioskd still reads
        // the file. "throttles": one per source.
        let inherited = try container.decode(PasscodeThrottle.self, forKey: .throttle)
        let bySource = try container.decodeIfPresent([String: PasscodeThrottle].self, forKey: .throttles) ?? [:]
        do {
            throttles = try PasscodeThrottles(inherited: inherited, encoded: bySource)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: container.codingPath + [CodingKeys.throttles], debugDescription: error.message))
        }
        passcodeHash = try container.decodeIfPresent(String.self, forKey: .passcodeHash)
        clockCheckpoint = try container.decodeIfPresent(Timestamp.self, forKey: .clock)
        let limit = Profile.Session.maximumTimeLimit
        let extensions = Profile.Session.visitorExtensionRange
        guard (0...extensions.upperBound).contains(session.visitorExtensionsUsed) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: container.codingPath + [CodingKeys.session],
                    debugDescription:
                        "\(session.visitorExtensionsUsed) visitor extensions is outside 0 to \(extensions.upperBound)"))
        }
        if let mark = session.pendingWarnings.first(where: { $0 < .zero || $0 > limit }) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: container.codingPath + [CodingKeys.session],
                    debugDescription: "a pending warning of \(mark) is outside 0 to \(limit.kioskText)"))
        }
        for (key, throttle) in [(CodingKeys.throttle, inherited)] + bySource.map({ (CodingKeys.throttles, $0.value) }) {
            guard (0...Self.maximumFailures).contains(throttle.failures) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: container.codingPath + [key],
                        debugDescription: "\(throttle.failures) wrong passcodes is outside 0 to \(Self.maximumFailures)"
                    ))
            }
        }
        guard bySource.count <= PasscodeThrottles.maximumSources else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: container.codingPath + [CodingKeys.throttles],
                    debugDescription:
                        "\(bySource.count) passcode sources, more than \(PasscodeThrottles.maximumSources)"))
        }
    }

    /// The most wrong passcodes a state file may count (at one a second, over 30 years).
    static let maximumFailures = 1_000_000_000

    enum CodingKeys: String, CodingKey {
        case registry, session, throttle, throttles, passcodeHash, clock
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(registry, forKey: .registry)
        try container.encode(session, forKey: .session)
        try container.encode(throttles.inherited, forKey: .throttle)
        let bySource = throttles.encoded()
        if !bySource.isEmpty { try container.encode(bySource, forKey: .throttles) }
        try container.encodeIfPresent(passcodeHash, forKey: .passcodeHash)
        try container.encodeIfPresent(clockCheckpoint, forKey: .clock)
    }
}

extension Registry {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let applications = try container.decode([Application].self, forKey: .applications)
        // The file may have been edited by hand: hold it to the rules every call is held to
        // (each app's restrictions are checked as they are decoded).
        do {
            try self.init(checking: applications)
        } catch {
            var place = container.codingPath + [CodingKeys.applications as any CodingKey]
            if let index = error.application { place.append(IndexKey(index)) }
            if let field = error.field { place.append(FieldKey(field)) }
            throw DecodingError.dataCorrupted(.init(codingPath: place, debugDescription: error.message))
        }
    }

    enum CodingKeys: String, CodingKey { case applications }
}

/// An array index in a decoding error's path.
struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { String(intValue!) }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

extension Registry.Application {
    // `{"id": …, "ownerUID": …, "restrictions": [[id, title, detail, state, retired], …]}`: the
    // shape the synthesized coding of `[Restriction]` gave, so files stay as they were.

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(AppID.self, forKey: .id)
        let ownerUID = try container.decode(UInt32.self, forKey: .ownerUID)
        // Straight into the packed table, one restriction at a time: the 50,000 of a large
        // file never exist as `Restriction` values all at once.
        var list = try container.nestedUnkeyedContainer(forKey: .restrictions)
        var table = RestrictionTable()
        let most = KioskWire.Limits.restrictionsPerApp + KioskWire.Limits.retiredPerApp
        table.reserveCapacity(entries: min(list.count ?? 0, most), textBytes: 0)
        var firstIndex = [RestrictionID: Int]()
        var declared = 0, retired = 0
        while !list.isAtEnd {
            let index = list.currentIndex
            var fields = try list.nestedUnkeyedContainer()
            let restriction = try Restriction.decodeFields(of: &fields)
            func corrupt(_ field: String?, _ message: String) -> DecodingError {
                .dataCorrupted(
                    .init(
                        codingPath: fields.codingPath + (field.map { [FieldKey($0)] } ?? []), debugDescription: message)
                )
            }
            if let first = firstIndex.updateValue(index, forKey: restriction.id) {
                throw corrupt(
                    "id", "the restriction \(restriction.id) of \(id) appears twice (first as restriction \(first))")
            }
            if restriction.retired { retired += 1 } else { declared += 1 }
            guard declared <= KioskWire.Limits.restrictionsPerApp, retired <= KioskWire.Limits.retiredPerApp else {
                throw corrupt(
                    nil,
                    "\(id) has more restrictions than the limits allow (\(KioskWire.Limits.restrictionsPerApp) declared and \(KioskWire.Limits.retiredPerApp) retired)"
                )
            }
            table.append(
                id: restriction.id, title: restriction.title, detail: restriction.detail,
                state: restriction.state, retired: restriction.retired)
        }
        table.trimCapacity()
        self.init(id: id, ownerUID: ownerUID, table: table)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(ownerUID, forKey: .ownerUID)
        var list = container.nestedUnkeyedContainer(forKey: .restrictions)
        for index in table.indices { try list.encode(table[index]) }
    }

    enum CodingKeys: String, CodingKey { case id, ownerUID, restrictions }
}
