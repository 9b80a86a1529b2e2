import KioskAPI

/// The changes the daemon's methods make, as whole-state transitions: each validates first and
/// changes nothing when it throws.
extension KioskState {
    /// Declares an app's restrictions for `uid` (`RegisterApplication`): a restriction first
    /// declared during a session starts in the session's preset, otherwise `allow`.
    /// - Returns: whether anything changed (the same list again is a no-op).
    ///   With `takeOwnership` (`uid` is the `app-owner` an installed profile names), the id
    ///   becomes `uid`'s.
    /// - Throws: `AccessDenied` when the id belongs to another uid and neither `isAdmin` nor
    ///   `takeOwnership`; the registry's `InvalidArgs`.
    @discardableResult
    public mutating func declare(
        _ appID: AppID, restrictions: [RestrictionDeclaration], uid: UInt32,
        isAdmin: Bool, takeOwnership: Bool = false
    ) throws(KioskError) -> Bool {
        var session = self.session
        let changed = try registry.declare(
            appID, restrictions: restrictions, uid: uid, isAdmin: isAdmin, takeOwnership: takeOwnership
        ) {
            session.isActive ? session.initialState(for: $0, in: appID) : .allow
        }
        if changed { self.session = session }
        return changed
    }

    /// Forgets an app and its restrictions (`UnregisterApplication`, an admin). Refused with
    /// `SessionActive` while the session's profile presets any of its restrictions: the session
    /// would lose what it restores at its end, and the app could come back without its locks.
    public mutating func unregister(_ appID: AppID) throws(KioskError) {
        try checkUnregister(appID)
        try registry.unregister(appID)
    }

    /// Throws what ``unregister(_:)`` would (`UnknownApplication`, `SessionActive`), changing
    /// nothing: the method's validation step.
    public func checkUnregister(_ appID: AppID) throws(KioskError) {
        _ = try registry.application(appID)
        if session.presets(anyOf: appID) {
            throw KioskError(
                .sessionActive,
                "The guided-access session \"\(session.profileName)\" presets restrictions of \(appID); end it before forgetting the application."
            )
        }
    }

    /// Sets a restriction's state as an admin (`SetRestrictionState`): during a session it
    /// keeps the admin's state when the session ends.
    /// - Returns: whether the state changed.
    @discardableResult
    public mutating func setRestrictionState(
        _ state: RestrictionState, of restrictionID: RestrictionID,
        in appID: AppID
    ) throws(KioskError) -> Bool {
        guard try registry.setState(state, of: restrictionID, in: appID) else { return false }
        if session.isActive { session.noteAdminChange(of: restrictionID, in: appID) }
        return true
    }

    /// How a session is ended.
    public enum SessionEnding: Hashable, Sendable {
        /// `ForceEndSession` (an admin): the throttle count stays.
        case forced
        /// `EndSession` with the right passcode from `source`, checked for the session
        /// `checkedFor`: ends only that session, and resets that source's throttle count.
        case passcode(checkedFor: GuidedSession.Identity?, from: PasscodeSource)
        /// A trial session nobody confirmed in time, or across a reboot.
        case unconfirmedTrial
        /// `ReleaseSession` by the app that requested the session.
        case released(by: AppID)
    }

    /// Ends the active session, restoring its presets.
    /// - Returns: the restriction states that changed back.
    /// - Throws: `NoSession` when no session is active, or (for a passcode) when the session it
    ///   was checked for has ended meanwhile.
    ///
    /// However a session ends, the kiosk's passcode count goes with it: the wrong passcodes typed
    /// at the kiosk were a visitor's or staff's in that session, and must not make staff wait in
    /// the next one (docs/threat-model.md § What a visitor can do to staff).
    public mutating func endSession(_ ending: SessionEnding) throws(KioskError) -> [GuidedSession.Change] {
        let changes = try endingSession(ending)
        throttles.reset(.kiosk)
        return changes
    }

    /// Starts a session (``GuidedSession/start(profileName:profile:at:registry:trial:requestedBy:)``)
    /// with the kiosk's passcode count cleared, as an ending clears it.
    public mutating func startSession(
        profileName: String, profile: Profile, at now: Timestamp, trial: Duration? = nil,
        requestedBy: AppID? = nil
    ) throws(KioskError) -> [GuidedSession.Change] {
        let changes = try session.start(
            profileName: profileName, profile: profile, at: now, registry: &registry, trial: trial,
            requestedBy: requestedBy)
        throttles.reset(.kiosk)
        return changes
    }

    private mutating func endingSession(_ ending: SessionEnding) throws(KioskError) -> [GuidedSession.Change] {
        switch ending {
        case .forced, .unconfirmedTrial:
            try session.checkActive()
        case .released(let app):
            try session.checkActive()
            guard session.requestedBy == app else {
                throw KioskError(
                    .accessDenied,
                    "The guided-access session was not requested by \(app); only the app that requested a session may release it (the passcode or an admin ends any).")
            }
        case .passcode(let checked, let source):
            guard session.isActive, session.identity == checked else {
                throw KioskError(.noSession, "The guided-access session ended while the passcode was being checked.")
            }
            throttles.recordSuccess(from: source)
        }
        return try session.end(registry: &registry)
    }

    /// Sets the passcode hash (`SetPasscode` with the right current passcode from `source`): a
    /// right passcode resets that source's throttle count.
    public mutating func setPasscode(hash: String, from source: PasscodeSource) {
        passcodeHash = hash
        throttles.recordSuccess(from: source)
    }
}
