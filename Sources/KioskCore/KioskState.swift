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
        // The file may have been edited by hand: hold it to the rules every call is held to.
        func corrupt(_ message: String) -> DecodingError {
            .dataCorruptedError(forKey: .applications, in: container, debugDescription: message)
        }
        guard applications.count <= KioskAPI.Limits.applications else {
            throw corrupt("\(applications.count) applications, more than the \(KioskAPI.Limits.applications) allowed")
        }
        var appIDs = Set<AppID>()
        for app in applications {
            guard appIDs.insert(app.id).inserted else { throw corrupt("the application \(app.id) appears twice") }
            var ids = Set<RestrictionID>()
            for restriction in app.restrictions where !ids.insert(restriction.id).inserted {
                throw corrupt("the restriction \(restriction.id) of \(app.id) appears twice")
            }
            let declared = app.restrictions.count { !$0.retired }
            guard declared <= KioskAPI.Limits.restrictionsPerApp,
                  app.restrictions.count - declared <= KioskAPI.Limits.retiredPerApp else {
                throw corrupt("\(app.id) has more restrictions than the limits allow")
            }
        }
        self.init()
        self.applications = applications
    }

    enum CodingKeys: String, CodingKey { case applications }
}
