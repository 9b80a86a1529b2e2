import KioskCore
import Logging
import SystemdKit

extension ManagerObject {
    // MARK: RegisterApplication

    /// Parse and validate (a reserved id — a built-in browser's, a manifest's — is refused to
    /// everyone, root too: kioskd declares those itself) → identify → the profiles' claims (an id an installed profile names is
    /// root's and its `app-owner`'s alone, read off the loop) → ownership (another uid's app id
    /// needs an admin) → no-op (the owner's or root's identical list) → authorize (only for
    /// another uid's app id) → apply → persist → reply.
    func registerApplication(_ call: MethodCall) throws -> MethodReply {
        let (appID, declarations) = try Self.parseRegistration(call.arguments)
        if let refusal = reservedApps.refusal(appID, method: "RegisterApplication") { throw refusal }
        try identify(call) { [unowned self] caller in
            guard caller.uid != 0 else {
                return try registerUnclaimed(call, caller: caller, appID: appID, declarations: declarations)
            }
            loop.offload(
                to: profileReader, { [profiles] in profiles.claims(of: appID) },
                then: { [unowned self] claims in
                    attempt(call) {
                        guard let claims else {
                            return try registerUnclaimed(call, caller: caller, appID: appID, declarations: declarations)
                        }
                        guard claims.contains(where: { $0?.isOwner(caller.uid) == true }) else {
                            audit(
                                .notice, "Call refused", caller,
                                MessageID.callRefused.metadata.merging(["app.id": "\(appID)"]) { $1 })
                            throw KioskError(
                                .accessDenied,
                                "The application id \(appID) is named by a profile on this kiosk: only that profile's app-owner (or root) may register it, and uid \(caller.uid) is not."
                            )
                        }
                        applyRegistration(
                            call, caller: caller, appID: appID, declarations: declarations, isAdmin: false,
                            takeOwnership: true)
                    }
                })
        }
        return .deferred
    }

    /// Registration of an id no installed profile names (or by root): the first uid owns it.
    private func registerUnclaimed(
        _ call: MethodCall, caller: Caller, appID: AppID, declarations: [RestrictionDeclaration]
    ) throws {
        let needsAdmin = state.registry.needsAuthorization(app: appID, uid: caller.uid)
        if !needsAdmin, isNoOpRegistration(appID, declarations, uid: caller.uid) {
            try call.reply([])
            return
        }
        try authorize(
            call, caller: caller, action: KioskWire.Action.manageRestrictions, when: needsAdmin,
            doing: "register the application id \(appID), which another uid registered,"
        ) { [unowned self] in
            applyRegistration(call, caller: caller, appID: appID, declarations: declarations, isAdmin: needsAdmin)
        }
    }

    /// Whether declaring `declarations` for `uid` would change nothing, sure only when no other
    /// change is underway (one could still change this app, and this call must land after it).
    func isNoOpRegistration(_ appID: AppID, _ declarations: [RestrictionDeclaration], uid: UInt32) -> Bool {
        guard changesUnderway == 1, writer.isIdle else { return false }  // 1: this call
        var copy = state
        return (try? copy.declare(appID, restrictions: declarations, uid: uid, isAdmin: false)) == false
    }

    static func parseRegistration(_ arguments: [DBusValue]) throws(KioskError) -> (AppID, [RestrictionDeclaration]) {
        guard arguments.count == 2, let app = arguments[0].string, let items = arguments[1].array else {
            throw KioskError(.invalidArgument, "RegisterApplication takes (s app_id, a(sss) restrictions).")
        }
        let appID = try AppID(app)
        try Registry.checkDeclarationCount(items.count, of: appID)
        var declarations: [RestrictionDeclaration] = []
        declarations.reserveCapacity(items.count)
        for item in items {
            guard let fields = item.fields, fields.count == 3,
                let id = fields[0].string, let title = fields[1].string, let detail = fields[2].string
            else {
                throw KioskError(.invalidArgument, "Each restriction must be (s id, s title, s detail).")
            }
            declarations.append(try RestrictionDeclaration(id: id, title: title, detail: detail))
        }
        return (appID, declarations)
    }

    func applyRegistration(
        _ call: MethodCall, caller: Caller, appID: AppID,
        declarations: [RestrictionDeclaration], isAdmin: Bool, takeOwnership: Bool = false
    ) {
        // An app's own registration is anyone's to make: it waits behind admins' changes and
        // passcode attempts, at most a few per uid (a flood from one uid delays no one else).
        let lane: StateWriter<KioskState>.Lane =
            isAdmin || caller.uid == 0 ? .privileged : .unprivileged(uid: caller.uid)
        change(call, lane) { [unowned self] in
            var next = state
            guard
                try next.declare(
                    appID, restrictions: declarations, uid: caller.uid, isAdmin: isAdmin, takeOwnership: takeOwnership)
            else {
                try call.reply([])  // the same list again: nothing to write
                return nil
            }
            return Plan(next) { [unowned self] in
                let metadata: Logger.Metadata = ["app.id": "\(appID)", "restriction.count": "\(declarations.count)"]
                if isAdmin {
                    logger.notice(
                        "Application registered",
                        metadata: caller.metadata.merging(metadata) { $1 }.merging(MessageID.applicationRegistered.metadata) { $1 })
                } else {
                    audit(.notice, "Application registered", caller, metadata.merging(MessageID.applicationRegistered.metadata) { $1 })  // anyone's: summarised
                }
                try call.reply([])
            }
        }
    }

    // MARK: UnregisterApplication

    /// Validate (the id) → identify → authorize (manage-restrictions) → in turn: the app must
    /// exist and no active session may preset it → apply → persist → reply.
    func unregisterApplication(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 1, let app = call.arguments[0].string else {
            throw KioskError(.invalidArgument, "UnregisterApplication takes (s app_id).")
        }
        let appID = try AppID(app)
        if let refusal = reservedApps.refusal(appID, method: "UnregisterApplication") { throw refusal }
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageRestrictions, doing: "forget applications"
            ) { [unowned self] in
                change(call, .privileged) { [unowned self] in
                    var next = state
                    try next.unregister(appID)  // in turn: a change may have come first
                    return Plan(next) { [unowned self] in
                        logger.notice(
                            "Application forgotten",
                            metadata: caller.metadata.merging(MessageID.applicationForgotten.metadata) { $1 }.merging([
                                "app.id": "\(appID)"
                            ]) { $1 })
                        try call.reply([])
                    }
                }
            }
        }
        return .deferred
    }

    // MARK: ListApplications, ListRestrictions, GetRestrictionState

    func listApplications(_ call: MethodCall) throws -> MethodReply {
        .values([.strings(state.registry.applicationIDs.map(\.rawValue))])
    }

    func listRestrictions(_ call: MethodCall) throws -> MethodReply {
        guard let app = call.arguments.first?.string else {
            throw KioskError(.invalidArgument, "ListRestrictions takes (s app_id).")
        }
        let restrictions = try state.registry.restrictions(of: AppID(app))
        return .values([
            .array(
                elementSignature: "(ssss)",
                restrictions.map {
                    .structure([
                        .string($0.id.rawValue), .string($0.title), .string($0.detail), .string($0.state.rawValue),
                    ])
                })
        ])
    }

    func getRestrictionState(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 2, let app = call.arguments[0].string, let id = call.arguments[1].string else {
            throw KioskError(.invalidArgument, "GetRestrictionState takes (s app_id, s restriction_id).")
        }
        let appID = try AppID(app)
        let current = try state.registry.state(of: RestrictionID(id), in: appID)
        return .values([.string(current.rawValue)])
    }

    // MARK: SetRestrictionState

    func setRestrictionState(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 3, let app = call.arguments[0].string, let id = call.arguments[1].string,
            let text = call.arguments[2].string
        else {
            throw KioskError(.invalidArgument, "SetRestrictionState takes (s app_id, s restriction_id, s state).")
        }
        let appID = try AppID(app)
        let restrictionID = try RestrictionID(id)
        let newState = try RestrictionState(parsing: text)
        // The no-op answer is only sure when no change is underway (being identified, authorized
        // or waiting to be saved): one that is could still set this restriction, and this call
        // must then land after it.
        let current = try state.registry.state(of: restrictionID, in: appID)
        if current == newState, changesUnderway == 0, writer.isIdle { return .empty }
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageRestrictions, doing: "set restriction states"
            ) { [unowned self] in
                applyRestrictionState(call, caller: caller, appID: appID, restrictionID: restrictionID, state: newState)
            }
        }
        return .deferred
    }

    func applyRestrictionState(
        _ call: MethodCall, caller: Caller, appID: AppID, restrictionID: RestrictionID,
        state newState: RestrictionState
    ) {
        change(call, .privileged) { [unowned self] in
            var next = state
            guard try next.setRestrictionState(newState, of: restrictionID, in: appID) else {
                try call.reply([])  // another call set it meanwhile
                return nil
            }
            return Plan(next) { [unowned self] in
                logger.notice(
                    "Restriction state set",
                    metadata: caller.metadata.merging(MessageID.restrictionSet.metadata) { $1 }.merging([
                        "app.id": "\(appID)", "restriction.id": "\(restrictionID)",
                        "restriction.state": "\(newState.rawValue)",
                    ]) { $1 })
                emit(
                    Member.restrictionStateChanged,
                    [.string(appID.rawValue), .string(restrictionID.rawValue), .string(newState.rawValue)])
                try call.reply([])
            }
        }
    }
}
