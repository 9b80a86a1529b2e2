/// Every app's declared restrictions and their states: the model kioskd persists.
///
/// A pure value: no I/O. Every mutation validates first and changes nothing when it throws.
public struct Registry: Hashable, Sendable, Codable {
    /// One app: who owns its id and its restrictions, declared ones first in presentation
    /// order, then retired ones (most recently retired first).
    public struct Application: Hashable, Sendable, Codable {
        public let id: AppID
        /// The uid that first registered the app id; other non-admin uids may not re-register it.
        public var ownerUID: UInt32
        public var restrictions: [Restriction]

        /// The restrictions the app declares now, in presentation order.
        public var declared: [Restriction] { restrictions.filter { !$0.retired } }

        func index(of id: RestrictionID) -> Int? { restrictions.firstIndex { $0.id == id } }
    }

    /// Apps in the order they first registered.
    public internal(set) var applications: [Application] = []

    public init() {}

    public var isEmpty: Bool { applications.isEmpty }
    public var applicationIDs: [AppID] { applications.map(\.id) }

    public func application(_ id: AppID) throws(KioskError) -> Application {
        guard let app = applications.first(where: { $0.id == id }) else { throw Registry.unknown(id) }
        return app
    }

    /// Declares (or re-declares) an app's restrictions in presentation order, for `uid`.
    ///
    /// Reconciles with what is stored: new ids start as `allow` (or their preset, if a
    /// session presets them), titles and details are updated, ids no longer declared are
    /// kept as retired with their state, and a retired id declared again comes back with it.
    /// - Returns: whether anything changed (a re-declaration of the same list is a no-op).
    @discardableResult
    public mutating func declare(
        _ appID: AppID, restrictions declarations: [RestrictionDeclaration], uid: UInt32, isAdmin: Bool = false,
        initialState: (RestrictionID) -> RestrictionState = { _ in .allow }
    ) throws(KioskError) -> Bool {
        guard declarations.count <= KioskAPI.Limits.restrictionsPerApp else {
            throw .invalid("\(appID) declares \(declarations.count) restrictions; at most \(KioskAPI.Limits.restrictionsPerApp) are allowed per app.")
        }
        var seen = Set<RestrictionID>()
        for declaration in declarations where !seen.insert(declaration.id).inserted {
            throw .invalid("\(appID) declares the restriction \(declaration.id) twice; each id must be unique.")
        }
        let existingIndex = applications.firstIndex { $0.id == appID }
        if let existingIndex {
            let owner = applications[existingIndex].ownerUID
            guard owner == uid || isAdmin else {
                throw KioskError(.accessDenied, "The application id \(appID) belongs to uid \(owner); uid \(uid) may not register it.")
            }
        } else {
            guard applications.count < KioskAPI.Limits.applications else {
                throw .invalid("There are already \(KioskAPI.Limits.applications) applications registered, the most kioskd keeps; \(appID) was not added.")
            }
        }

        let old = existingIndex.map { applications[$0].restrictions } ?? []
        let oldByID = Dictionary(old.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var next: [Restriction] = declarations.map { declaration in
            let state = oldByID[declaration.id]?.state ?? initialState(declaration.id)
            return Restriction(id: declaration.id, title: declaration.title, detail: declaration.detail, state: state)
        }
        // Newly retired first (in their old order), then those retired before.
        let newlyRetired = old.filter { !$0.retired && !seen.contains($0.id) }.map { r in
            var r = r; r.retired = true; return r
        }
        let stillRetired = old.filter { $0.retired && !seen.contains($0.id) }
        next += (newlyRetired + stillRetired).prefix(KioskAPI.Limits.retiredPerApp)

        if let existingIndex {
            guard applications[existingIndex].restrictions != next else { return false }
            applications[existingIndex].restrictions = next
        } else {
            applications.append(Application(id: appID, ownerUID: uid, restrictions: next))
        }
        return true
    }

    /// An app's restrictions in presentation order (declared ones; retired ones with `includeRetired`).
    public func restrictions(of appID: AppID, includeRetired: Bool = false) throws(KioskError) -> [Restriction] {
        let app = try application(appID)
        return includeRetired ? app.restrictions : app.declared
    }

    /// The state of one restriction (retired ones too: their state is kept).
    public func state(of restrictionID: RestrictionID, in appID: AppID) throws(KioskError) -> RestrictionState {
        let app = try application(appID)
        guard let index = app.index(of: restrictionID) else { throw Registry.unknown(restrictionID, in: appID) }
        return app.restrictions[index].state
    }

    /// Sets one restriction's state.
    /// - Returns: whether the state changed (setting the current state is a no-op).
    @discardableResult
    public mutating func setState(_ state: RestrictionState, of restrictionID: RestrictionID, in appID: AppID) throws(KioskError) -> Bool {
        guard let appIndex = applications.firstIndex(where: { $0.id == appID }) else { throw Registry.unknown(appID) }
        guard let index = applications[appIndex].index(of: restrictionID) else { throw Registry.unknown(restrictionID, in: appID) }
        guard applications[appIndex].restrictions[index].state != state else { return false }
        applications[appIndex].restrictions[index].state = state
        return true
    }

    /// Whether `appID` has a restriction `restrictionID` (declared or retired).
    public func contains(_ restrictionID: RestrictionID, in appID: AppID) -> Bool {
        applications.first { $0.id == appID }?.index(of: restrictionID) != nil
    }

    /// The number of declared restrictions currently denied, over all apps.
    public var deniedCount: Int {
        applications.reduce(0) { $0 + $1.declared.count { $0.state == .deny } }
    }

    static func unknown(_ id: AppID) -> KioskError {
        KioskError(.unknownApplication, "No application \(id) is registered.")
    }

    static func unknown(_ id: RestrictionID, in appID: AppID) -> KioskError {
        KioskError(.unknownRestriction, "The application \(appID) has no restriction \(id).")
    }
}
