import KioskAPI

/// Every app's declared restrictions and their states: the model kioskd persists.
///
/// A pure value: no I/O. Every mutation validates first and changes nothing when it throws.
public struct Registry: Hashable, Sendable, Codable {
    /// One app: who owns its id and its restrictions, declared ones first in presentation
    /// order, then retired ones (most recently retired first).
    ///
    /// The restrictions are held packed (``RestrictionTable``: their text in one buffer and a
    /// 12-byte entry each); `restrictions` and `declared` make `Restriction` values of them.
    public struct Application: Hashable, Sendable, Codable {
        public let id: AppID
        /// The uid that first registered the app id; other non-admin uids may not re-register it.
        public var ownerUID: UInt32
        var table: RestrictionTable

        init(id: AppID, ownerUID: UInt32, table: RestrictionTable) {
            self.id = id
            self.ownerUID = ownerUID
            self.table = table
        }

        /// Every restriction, declared ones first in presentation order, then retired ones.
        public var restrictions: [Restriction] { table.indices.map { table[$0] } }

        /// The restrictions the app declares now, in presentation order.
        public var declared: [Restriction] {
            table.indices.filter { !table.entries[$0].retired }.map { table[$0] }
        }
    }

    /// Apps in the order they first registered.
    public private(set) var applications: [Application] = []
    /// The positions in `applications`, in the order of their apps' ids: a lookup by id is a
    /// binary search (about 10 comparisons for 1,000 apps) instead of a scan, for 4 bytes an app
    /// (a hash table would take about 48). Derived from `applications`, so equality and hashing
    /// leave it out.
    private var byID: [Int32] = []

    public init() {}

    /// A registry holding `applications`, in this order, checked as a state file is: at most
    /// ``KioskWire/Limits/applications`` apps, no id twice. (Each app's restrictions were checked
    /// when it was read.)
    package init(checking applications: [Application]) throws(FileProblem) {
        guard applications.count <= KioskWire.Limits.applications else {
            throw FileProblem(
                application: KioskWire.Limits.applications, field: nil,
                message:
                    "\(applications.count) applications, more than the \(KioskWire.Limits.applications) allowed")
        }
        var byID = (0..<Int32(applications.count)).map { $0 }
        byID.sort { (applications[Int($0)].id, $0) < (applications[Int($1)].id, $1) }
        // Equal ids are next to each other, in file order: report the duplicate that comes first
        // in the file, as reading the list in order would.
        var duplicate: (index: Int, first: Int)?
        var groupStart = 0
        for slot in byID.indices.dropFirst() {
            let index = Int(byID[slot])
            if applications[index].id != applications[Int(byID[slot - 1])].id {
                groupStart = slot
            } else if slot == groupStart + 1, index < duplicate?.index ?? .max {
                duplicate = (index, Int(byID[groupStart]))
            }
        }
        if let duplicate {
            throw FileProblem(
                application: duplicate.index, field: "id",
                message:
                    "the application \(applications[duplicate.index].id) appears twice (first as application \(duplicate.first))"
            )
        }
        self.applications = applications
        self.byID = byID
    }

    /// What is wrong with the applications read from a state file, and where: the index of the
    /// application and the field in it, if it is about one.
    package struct FileProblem: Error, Sendable {
        package var application: Int?
        package var field: String?
        package var message: String
    }

    public static func == (a: Registry, b: Registry) -> Bool { a.applications == b.applications }
    public func hash(into hasher: inout Hasher) { hasher.combine(applications) }

    /// Where the app with this id is in `applications`.
    private func position(of id: AppID) -> Int? {
        let slot = slot(for: id)
        guard slot < byID.count, applications[Int(byID[slot])].id == id else { return nil }
        return Int(byID[slot])
    }

    /// The first slot of `byID` whose app's id is not less than `id`.
    private func slot(for id: AppID) -> Int {
        var low = 0, high = byID.count
        while low < high {
            let middle = (low + high) / 2
            if applications[Int(byID[middle])].id < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    public var isEmpty: Bool { applications.isEmpty }
    public var applicationIDs: [AppID] { applications.map(\.id) }

    public func application(_ id: AppID) throws(KioskError) -> Application {
        guard let index = position(of: id) else { throw Registry.unknown(id) }
        return applications[index]
    }

    /// The uid that owns `id`, or `nil` if no app with this id is registered.
    public func owner(of id: AppID) -> UInt32? {
        position(of: id).map { applications[$0].ownerUID }
    }

    /// Whether `uid` needs an admin's authorization to register `appID`: the id is registered
    /// to another uid, and `uid` is not root. (The first uid that registers an id owns it.)
    public func needsAuthorization(app appID: AppID, uid: UInt32) -> Bool {
        guard let owner = owner(of: appID) else { return false }
        return owner != uid && uid != 0
    }

    /// Throws `InvalidArgs` when an app declares more restrictions than it may; callers check it
    /// before reading a long list, ``declare(_:restrictions:uid:isAdmin:initialState:)`` again.
    public static func checkDeclarationCount(_ count: Int, of appID: AppID) throws(KioskError) {
        guard count <= KioskWire.Limits.restrictionsPerApp else {
            throw .invalid(
                "\(appID) declares \(count) restrictions; at most \(KioskWire.Limits.restrictionsPerApp) are allowed per app."
            )
        }
    }

    /// Declares (or re-declares) an app's restrictions in presentation order, for `uid`.
    ///
    /// Reconciles with what is stored: new ids start as `allow` (or their preset, if a
    /// session presets them), titles and details are updated, ids no longer declared are
    /// kept as retired with their state, and a retired id declared again comes back with it.
    /// With `takeOwnership` (the uid an installed profile names as the app's `app-owner`), the
    /// id becomes `uid`'s whoever registered it before.
    /// - Returns: whether anything changed (a re-declaration of the same list is a no-op).
    @discardableResult
    public mutating func declare(
        _ appID: AppID, restrictions declarations: [RestrictionDeclaration], uid: UInt32, isAdmin: Bool = false,
        takeOwnership: Bool = false, initialState: (RestrictionID) -> RestrictionState = { _ in .allow }
    ) throws(KioskError) -> Bool {
        try Self.checkDeclarationCount(declarations.count, of: appID)
        var seen = Set<RestrictionID>()
        for declaration in declarations where !seen.insert(declaration.id).inserted {
            throw .invalid("\(appID) declares the restriction \(declaration.id) twice; each id must be unique.")
        }
        let existingIndex = position(of: appID)
        if let existingIndex {
            // The refusal names no other uid: who runs which app is not the caller's to learn.
            guard isAdmin || takeOwnership || !needsAuthorization(app: appID, uid: uid) else {
                throw KioskError(
                    .accessDenied,
                    "The application id \(appID) is registered by another uid; uid \(uid) may not register it.")
            }
        } else {
            guard applications.count < KioskWire.Limits.applications else {
                throw .invalid(
                    "There are already \(KioskWire.Limits.applications) applications registered, the most kioskd keeps; \(appID) was not added."
                )
            }
        }

        if existingIndex == nil, !isAdmin, uid != 0 {
            let owned = applications.count { $0.ownerUID == uid }
            guard owned < KioskWire.Limits.applicationsPerUID else {
                throw .invalid(
                    "uid \(uid) already owns \(owned) applications, the most a uid other than root may; \(appID) was not added. An admin can remove one with kioskctl forget."
                )
            }
        }
        let old = existingIndex.map { applications[$0].table } ?? RestrictionTable()
        // Newly retired first (in their old order), then those retired before.
        let retiring =
            old.indices.filter { !old.entries[$0].retired && !seen.contains(old.id(at: $0)) }
            + old.indices.filter { old.entries[$0].retired && !seen.contains(old.id(at: $0)) }
        let kept = try Self.retainable(retiring, of: old, app: appID)

        var next = RestrictionTable()
        next.reserveCapacity(
            entries: declarations.count + kept.count,
            textBytes:
                declarations.reduce(0) { $0 + $1.id.rawValue.utf8.count + $1.title.utf8.count + $1.detail.utf8.count }
                + kept.reduce(0) { $0 + old.entries[$1].textCount })
        for declaration in declarations {
            let state = old.index(of: declaration.id).map { old.entries[$0].state } ?? initialState(declaration.id)
            next.append(
                id: declaration.id, title: declaration.title, detail: declaration.detail, state: state, retired: false)
        }
        for index in kept { next.append(index, of: old, retired: true) }

        try checkTextQuota(
            next, replacing: old, of: appID, owner: existingIndex.map { applications[$0].ownerUID } ?? uid,
            exempt: isAdmin || uid == 0)
        if let existingIndex {
            let newOwner = takeOwnership && applications[existingIndex].ownerUID != uid
            if newOwner { applications[existingIndex].ownerUID = uid }
            guard newOwner || applications[existingIndex].table != next else { return false }
            applications[existingIndex].table = next
        } else {
            byID.insert(Int32(applications.count), at: slot(for: appID))
            applications.append(Application(id: appID, ownerUID: uid, table: next))
        }
        return true
    }

    /// Refuses a table that would take the text kept by `owner`'s apps past
    /// ``KioskWire/Limits/textBytesPerUID`` (unless `exempt`: root, or an admin) or all apps'
    /// past ``KioskWire/Limits/textBytes``. Only growth is refused, so a registry that was over
    /// a cap (read from an older state file) still takes the same or a smaller list.
    private func checkTextQuota(
        _ next: RestrictionTable, replacing old: RestrictionTable, of appID: AppID, owner: UInt32, exempt: Bool
    ) throws(KioskError) {
        let growth = next.text.count - old.text.count
        guard growth > 0 else { return }
        if !exempt, owner != 0 {
            let owned = applications.reduce(0) { $0 + ($1.ownerUID == owner ? $1.table.text.count : 0) }
            guard owned + growth <= KioskWire.Limits.textBytesPerUID else {
                throw .invalid(
                    "\(appID) would bring the text kept for uid \(owner)'s applications to \(owned + growth) bytes, more than the \(KioskWire.Limits.textBytesPerUID) bytes a uid other than root may keep; the registration was refused."
                )
            }
        }
        let total = applications.reduce(0) { $0 + $1.table.text.count }
        guard total + growth <= KioskWire.Limits.textBytes else {
            throw .invalid(
                "\(appID) would bring the text kept for all applications to \(total + growth) bytes, more than the \(KioskWire.Limits.textBytes) bytes kioskd keeps; the registration was refused."
            )
        }
    }

    /// The retired restrictions to keep, of `retiring` (newly retired first, then those retired
    /// before, most recently first): up to ``KioskWire/Limits/retiredPerApp``, dropping `allow`
    /// ones retired longest ago first. A `deny` is never dropped: only an admin or a profile
    /// sets one, and an app's registration must not undo it (an app that retired 256 other ids
    /// would otherwise get it back as `allow` by declaring it again). When the denied ones alone
    /// are more than the cap, the registration is refused.
    private static func retainable(
        _ retiring: [Int], of old: RestrictionTable, app appID: AppID
    ) throws(KioskError) -> [Int] {
        let cap = KioskWire.Limits.retiredPerApp
        guard retiring.count > cap else { return retiring }
        let denied = retiring.count { old.entries[$0].state == .deny }
        guard denied <= cap else {
            throw .invalid(
                "\(appID) would retire \(denied) restrictions that an admin or a profile denied, more than the \(cap) retired restrictions kept per app; a denied restriction is never forgotten, so the registration was refused. Declare them again, or have an admin allow them first."
            )
        }
        var room = cap - denied
        return retiring.filter { index in
            if old.entries[index].state == .deny { return true }
            guard room > 0 else { return false }
            room -= 1
            return true
        }
    }

    /// Forgets an app: its id (anyone may register it again, and own it) and every restriction
    /// with its state. Throws `UnknownApplication` when no app has this id.
    public mutating func unregister(_ appID: AppID) throws(KioskError) {
        let slot = slot(for: appID)
        guard slot < byID.count, applications[Int(byID[slot])].id == appID else { throw Registry.unknown(appID) }
        let index = byID.remove(at: slot)
        applications.remove(at: Int(index))
        for other in byID.indices where byID[other] > index { byID[other] -= 1 }
    }

    /// An app's restrictions in presentation order (declared ones; retired ones with `includeRetired`).
    public func restrictions(of appID: AppID, includeRetired: Bool = false) throws(KioskError) -> [Restriction] {
        let app = try application(appID)
        return includeRetired ? app.restrictions : app.declared
    }

    /// The state of one restriction (retired ones too: their state is kept).
    public func state(of restrictionID: RestrictionID, in appID: AppID) throws(KioskError) -> RestrictionState {
        let (appIndex, index) = try position(of: restrictionID, in: appID)
        return applications[appIndex].table.entries[index].state
    }

    /// Sets one restriction's state.
    /// - Returns: whether the state changed (setting the current state is a no-op).
    @discardableResult
    public mutating func setState(
        _ state: RestrictionState, of restrictionID: RestrictionID, in appID: AppID
    ) throws(KioskError) -> Bool {
        let (appIndex, index) = try position(of: restrictionID, in: appID)
        guard applications[appIndex].table.entries[index].state != state else { return false }
        applications[appIndex].table.setState(state, at: index)
        return true
    }

    /// Whether `appID` has a restriction `restrictionID` (declared or retired).
    public func contains(_ restrictionID: RestrictionID, in appID: AppID) -> Bool {
        position(of: appID).map { applications[$0].table.index(of: restrictionID) != nil } ?? false
    }

    /// The number of declared restrictions currently denied, over all apps.
    public var deniedCount: Int {
        applications.reduce(0) { $0 + $1.table.entries.count { !$0.retired && $0.state == .deny } }
    }

    /// Where a restriction is: its app's index and its own in that app's table.
    private func position(
        of restrictionID: RestrictionID, in appID: AppID
    ) throws(KioskError) -> (app: Int, restriction: Int) {
        guard let appIndex = position(of: appID) else { throw Registry.unknown(appID) }
        guard let index = applications[appIndex].table.index(of: restrictionID) else {
            throw Registry.unknown(restrictionID, in: appID)
        }
        return (appIndex, index)
    }

    static func unknown(_ id: AppID) -> KioskError {
        KioskError(.unknownApplication, "No application \(id) is registered.")
    }

    static func unknown(_ id: RestrictionID, in appID: AppID) -> KioskError {
        KioskError(.unknownRestriction, "The application \(appID) has no restriction \(id).")
    }
}
