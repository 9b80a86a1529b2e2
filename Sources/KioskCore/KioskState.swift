/// Everything kioskd persists: the registry, the session, the passcode throttle and the
/// passcode hash. One value, written as a whole, so a reader never sees half an update.
public struct KioskState: Hashable, Sendable, Codable {
    public var registry = Registry()
    public var session = GuidedSession()
    public var throttle = PasscodeThrottle()
    /// The crypt(3) hash set with `SetPasscode` (never the passcode itself).
    public var passcodeHash: String?

    public init() {}
}

extension Registry {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let applications = try container.decode([Application].self, forKey: .applications)
        // The file may have been edited by hand: hold it to the rules every call is held to
        // (each app's restrictions are checked as they are decoded).
        func corrupt(_ message: String) -> DecodingError {
            .dataCorruptedError(forKey: .applications, in: container, debugDescription: message)
        }
        guard applications.count <= KioskAPI.Limits.applications else {
            throw corrupt("\(applications.count) applications, more than the \(KioskAPI.Limits.applications) allowed")
        }
        var appIDs = Set<AppID>()
        for app in applications where !appIDs.insert(app.id).inserted {
            throw corrupt("the application \(app.id) appears twice")
        }
        self.init()
        self.applications = applications
    }

    enum CodingKeys: String, CodingKey { case applications }
}

extension Registry.Application {
    // `{"id": …, "ownerUID": …, "restrictions": [[id, title, detail, state, retired], …]}`: the
    // shape the synthesized coding of `[Restriction]` gave, so files stay as they were.

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(AppID.self, forKey: .id)
        let ownerUID = try container.decode(UInt32.self, forKey: .ownerUID)
        func corrupt(_ message: String) -> DecodingError {
            .dataCorruptedError(forKey: .restrictions, in: container, debugDescription: message)
        }
        // Straight into the packed table, one restriction at a time: the 50,000 of a large
        // file never exist as `Restriction` values all at once.
        var list = try container.nestedUnkeyedContainer(forKey: .restrictions)
        var table = RestrictionTable()
        let most = KioskAPI.Limits.restrictionsPerApp + KioskAPI.Limits.retiredPerApp
        table.reserveCapacity(entries: min(list.count ?? 0, most), textBytes: 0)
        var ids = Set<RestrictionID>()
        var declared = 0, retired = 0
        while !list.isAtEnd {
            let restriction = try list.decode(Restriction.self)
            guard ids.insert(restriction.id).inserted else {
                throw corrupt("the restriction \(restriction.id) of \(id) appears twice")
            }
            if restriction.retired { retired += 1 } else { declared += 1 }
            guard declared <= KioskAPI.Limits.restrictionsPerApp, retired <= KioskAPI.Limits.retiredPerApp else {
                throw corrupt("\(id) has more restrictions than the limits allow")
            }
            guard restriction.title.utf8.count <= KioskAPI.Limits.titleBytes,
                  restriction.detail.utf8.count <= KioskAPI.Limits.detailBytes else {
                throw corrupt("the title or detail text of \(restriction.id) of \(id) is longer than the limits allow")
            }
            table.append(id: restriction.id, title: restriction.title, detail: restriction.detail,
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
