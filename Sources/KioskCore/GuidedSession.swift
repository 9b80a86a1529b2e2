import KioskAPI

/// A guided-access session: the state machine of docs/dbus-api.md § Sessions, with the time limit and the
/// restriction presets it applied. Pure: every transition takes the time as an argument.
///
/// ```
/// inactive --start--> active --deadline--> expired
///     ^                  |                    |
///     +------end---------+--------end---------+
/// ```
public struct GuidedSession: Hashable, Sendable, Codable {
    /// `inactive`, `active` or `expired`: what the bus and apps see, so it is defined with them.
    public typealias State = SessionState

    /// A restriction the session preset, with the state to go back to at the end.
    public struct SavedState: Hashable, Sendable, Codable {
        public var app: AppID
        public var restriction: RestrictionID
        public var previous: RestrictionState
        public var preset: RestrictionState
        /// An admin set this restriction during the session: its state stays at the end.
        public var changedByAdmin: Bool
    }

    /// What a step of time produced, for the daemon to signal.
    public enum Event: Hashable, Sendable {
        /// `TimeLimitWarning`: this much time is left.
        case warning(secondsLeft: UInt64)
        /// The time limit ran out: the session is now `expired`.
        case expired
    }

    /// A restriction state to set in the registry (and signal).
    public struct Change: Hashable, Sendable {
        public var app: AppID
        public var restriction: RestrictionID
        public var state: RestrictionState
    }

    public private(set) var state: State = .inactive
    /// The profile's name in the profile directory (empty when inactive).
    public private(set) var profileName: String = ""
    public private(set) var startedAt: Timestamp?
    /// When the time limit runs out, if the profile has one.
    public private(set) var deadline: Timestamp?
    /// Warning marks (time left) not yet signalled, longest first.
    public private(set) var pendingWarnings: [Duration] = []
    public private(set) var saved: [SavedState] = []
    /// Presets for restrictions not declared yet: applied when their app declares them.
    public private(set) var pendingPresets: [Profile.Preset] = []
    /// The text of the profile in force, kept once a reload of its file failed (the file no
    /// longer parses): a restart keeps this profile in force rather than the strictest locks.
    /// Nil while the file is good.
    public var retainedProfileSource: String?
    /// A trial session ends by itself at this time unless an admin confirms it (`kioskctl start
    /// --trial`); nil for any other session, and once confirmed. Not across a reboot.
    public private(set) var trialEnd: Timestamp?
    /// The app that requested this session itself (`RequestSession`, exam mode): it may end it
    /// (`ReleaseSession`); so may the passcode and an admin, never another app.
    public private(set) var requestedBy: AppID?
    /// How many times the person at the kiosk extended the time limit (`visitor-extensions`);
    /// nil for none (and in a state file from before the count).
    public private(set) var visitorExtensionsTaken: Int?

    public init() {}

    /// How many times the person at the kiosk extended the time limit in this session.
    public var visitorExtensionsUsed: Int { visitorExtensionsTaken ?? 0 }

    /// The person at the kiosk extended the time limit once more.
    public mutating func recordVisitorExtension() {
        visitorExtensionsTaken = visitorExtensionsUsed + 1
    }

    public var isActive: Bool { state != .inactive }

    /// Which session this is: a passcode checked for one session must not end another that
    /// started meanwhile. Nil when inactive.
    public struct Identity: Hashable, Sendable {
        public var profileName: String
        public var startedAt: Timestamp?
    }

    public var identity: Identity? {
        isActive ? Identity(profileName: profileName, startedAt: startedAt) : nil
    }

    /// Throws `SessionActive` unless a session may start now (none is active or expired).
    public func checkCanStart() throws(KioskError) {
        guard state == .inactive else {
            throw KioskError(
                .sessionActive,
                "A guided-access session with the profile \(Text.quoted(profileName)) is already \(state.rawValue).")
        }
    }

    /// Throws `NoSession` unless a session is active or expired.
    public func checkActive() throws(KioskError) {
        guard isActive else { throw KioskError(.noSession, "No guided-access session is active.") }
    }

    /// Starts a session of `profile` at `now`, applying its presets to `registry`.
    /// - Returns: the restriction states that changed, in the profile's order.
    /// - Throws: `SessionActive` if a session is already active or expired.
    public mutating func start(
        profileName: String, profile: Profile, at now: Timestamp, registry: inout Registry,
        trial: Duration? = nil, requestedBy: AppID? = nil
    ) throws(KioskError) -> [Change] {
        try checkCanStart()
        var next = GuidedSession()
        next.state = .active
        next.profileName = profileName
        next.startedAt = now
        next.trialEnd = trial.map { now + $0 }
        next.requestedBy = requestedBy
        if let limit = profile.session.timeLimit {
            next.deadline = now + limit
            next.pendingWarnings = profile.session.warningMarks.filter { $0 < limit }.sorted(by: >)
        }
        var changes: [Change] = []
        for preset in profile.presets {
            guard registry.contains(preset.restriction, in: preset.app),
                let previous = try? registry.state(of: preset.restriction, in: preset.app)
            else {
                next.pendingPresets.append(preset)
                continue
            }
            next.saved.append(
                SavedState(
                    app: preset.app, restriction: preset.restriction, previous: previous, preset: preset.state,
                    changedByAdmin: false))
            if (try? registry.setState(preset.state, of: preset.restriction, in: preset.app)) == true {
                changes.append(Change(app: preset.app, restriction: preset.restriction, state: preset.state))
            }
        }
        self = next
        return changes
    }

    /// The session's profile was read again (a reload): its presets as the file now says them.
    /// A preset added, or changed in the file, applies now; one the file no longer has goes back
    /// to the state it had before the session (what the end would restore), unless an admin set
    /// it during the session (it keeps the admin's state, as at the end); one unchanged in the
    /// file is left alone, so an admin's change during the session stands. The end restores the
    /// presets added by the reload as it does the others: to their states before the reload.
    /// - Returns: the restriction states that changed: the file's presets in its order, then
    ///   those removed.
    public mutating func represet(_ profile: Profile, registry: inout Registry) -> [Change] {
        guard isActive else { return [] }
        var changes: [Change] = []
        func set(_ state: RestrictionState, of restriction: RestrictionID, in app: AppID) {
            if (try? registry.setState(state, of: restriction, in: app)) == true {
                changes.append(Change(app: app, restriction: restriction, state: state))
            }
        }
        for preset in profile.presets {
            if let index = saved.firstIndex(where: { $0.app == preset.app && $0.restriction == preset.restriction }) {
                guard saved[index].preset != preset.state else { continue }
                saved[index].preset = preset.state
                saved[index].changedByAdmin = false
                set(preset.state, of: preset.restriction, in: preset.app)
            } else if let index = pendingPresets.firstIndex(where: {
                $0.app == preset.app && $0.restriction == preset.restriction
            }) {
                pendingPresets[index] = preset
            } else if registry.contains(preset.restriction, in: preset.app),
                let previous = try? registry.state(of: preset.restriction, in: preset.app)
            {
                saved.append(
                    SavedState(
                        app: preset.app, restriction: preset.restriction, previous: previous, preset: preset.state,
                        changedByAdmin: false))
                set(preset.state, of: preset.restriction, in: preset.app)
            } else {
                pendingPresets.append(preset)
            }
        }
        let inFile = Set(profile.presets.map { PresetKey(app: $0.app, restriction: $0.restriction) })
        for removed in saved where !inFile.contains(PresetKey(app: removed.app, restriction: removed.restriction)) {
            if !removed.changedByAdmin { set(removed.previous, of: removed.restriction, in: removed.app) }
        }
        saved.removeAll { !inFile.contains(PresetKey(app: $0.app, restriction: $0.restriction)) }
        pendingPresets.removeAll { !inFile.contains(PresetKey(app: $0.app, restriction: $0.restriction)) }
        return changes
    }

    /// A restriction of an app, as presets name it.
    private struct PresetKey: Hashable {
        var app: AppID
        var restriction: RestrictionID
    }

    /// The state a restriction first declared during the session starts in (its preset),
    /// recording that it goes back to `allow` when the session ends.
    public mutating func initialState(for restriction: RestrictionID, in app: AppID) -> RestrictionState {
        guard let index = pendingPresets.firstIndex(where: { $0.app == app && $0.restriction == restriction }) else {
            return .allow
        }
        let preset = pendingPresets.remove(at: index)
        saved.append(
            SavedState(
                app: app, restriction: restriction, previous: .allow, preset: preset.state, changedByAdmin: false))
        return preset.state
    }

    /// Whether the session presets (or will preset, once declared) a restriction of `app`.
    public func presets(anyOf app: AppID) -> Bool {
        isActive && (saved.contains { $0.app == app } || pendingPresets.contains { $0.app == app })
    }

    /// An admin set a restriction during the session: it keeps the admin's state at the end.
    public mutating func noteAdminChange(of restriction: RestrictionID, in app: AppID) {
        for index in saved.indices where saved[index].app == app && saved[index].restriction == restriction {
            saved[index].changedByAdmin = true
        }
        pendingPresets.removeAll { $0.app == app && $0.restriction == restriction }
    }

    /// Advances the session to `now`: sends due warnings, then expires at the deadline.
    public mutating func advance(to now: Timestamp) -> [Event] {
        guard state == .active, let deadline else { return [] }
        // After a late wake-up several marks may be due: one warning tells the time left.
        var warningDue = false
        while let mark = pendingWarnings.first, now >= deadline + (.zero - mark) {
            pendingWarnings.removeFirst()
            warningDue = true
        }
        if now >= deadline {
            state = .expired
            return [.expired]
        }
        guard warningDue else { return [] }
        let left = deadline - now
        return [.warning(secondsLeft: UInt64((left.microseconds + 999_999) / 1_000_000))]
    }

    /// When ``advance(to:)`` next has something to do (or a trial ends), if ever.
    public var nextWakeup: Timestamp? {
        var limit: Timestamp?
        if state == .active, let deadline {
            limit = pendingWarnings.first.map { deadline + (.zero - $0) } ?? deadline
        }
        guard isActive, let trialEnd else { return limit }
        return min(limit ?? trialEnd, trialEnd)
    }

    /// Whether a trial session's time to be confirmed has run out at `now`.
    public func trialIsOver(at now: Timestamp) -> Bool {
        guard isActive, let trialEnd else { return false }
        return now >= trialEnd
    }

    /// An admin confirms a trial session: it stays, as any other.
    /// - Throws: `NoSession`; `InvalidArgs` when the session is not a trial (or confirmed already).
    public mutating func confirmTrial() throws(KioskError) {
        try checkActive()
        guard trialEnd != nil else {
            throw KioskError(.invalidArgument, "The session is not a trial waiting to be confirmed.")
        }
        trialEnd = nil
    }

    /// Moves the end of the time limit to `newDeadline` at `now` (nil: no limit), with the
    /// profile's warning marks (`warnings`): the marks still ahead of the new end are pending
    /// again; an expired session whose new end is ahead is active again; an end at or before
    /// `now` expires the session now. At most ``Profile/Session/maximumTimeLimit`` ahead.
    /// - Returns: what the change produced at once: only ever the expiry (an end at or before
    ///   `now`); a mark already behind the new end is dropped, never sent late.
    /// - Throws: `NoSession` without a session; `InvalidArgs` for an end too far ahead.
    public mutating func setDeadline(
        _ newDeadline: Timestamp?, warnings: [Duration], at now: Timestamp
    ) throws(KioskError) -> [Event] {
        try checkActive()
        if let newDeadline, newDeadline - now > Profile.Session.maximumTimeLimit {
            throw KioskError(
                .invalidArgument,
                "The new end of the time limit is \((newDeadline - now).kioskText) from now; at most \(Profile.Session.maximumTimeLimit.kioskText) is allowed."
            )
        }
        deadline = newDeadline
        if let newDeadline {
            pendingWarnings = warnings.filter { now < newDeadline + (.zero - $0) }.sorted(by: >)
            if state == .expired && now < newDeadline { state = .active }
        } else {
            pendingWarnings = []
            state = .active
        }
        return advance(to: now)
    }

    /// The session's profile was edited and read again: its time limit counts from the session's
    /// start (none when it has none now), with its warnings; as ``setDeadline(_:warnings:at:)``
    /// (never more than the longest time limit ahead, since the session started by now).
    public mutating func reloaded(_ profile: Profile, at now: Timestamp) throws(KioskError) -> [Event] {
        try checkActive()
        let end = profile.session.timeLimit.map { (startedAt ?? now) + $0 }
        return try setDeadline(end, warnings: profile.session.warningMarks, at: now)
    }

    /// The end a time limit extended by `amount` at `now` has: from the current end, or from now
    /// for an expired session (whoever asks for more time wants it from now on).
    /// - Throws: `NoSession`; `InvalidArgs` for a session without a time limit (set one with a
    ///   deadline instead).
    public func extendedDeadline(by amount: Duration, at now: Timestamp) throws(KioskError) -> Timestamp {
        try checkActive()
        guard let deadline else {
            throw KioskError(
                .invalidArgument,
                "The session has no time limit to extend; set one with SetSessionDeadline (kioskctl deadline).")
        }
        return (state == .expired ? max(deadline, now) : deadline) + amount
    }

    /// Ends the session, restoring each preset restriction an admin did not change.
    /// - Returns: the restriction states that changed back.
    /// - Throws: `NoSession` if no session is active.
    public mutating func end(registry: inout Registry) throws(KioskError) -> [Change] {
        try checkActive()
        var changes: [Change] = []
        for saved in saved where !saved.changedByAdmin {
            if (try? registry.setState(saved.previous, of: saved.restriction, in: saved.app)) == true {
                changes.append(Change(app: saved.app, restriction: saved.restriction, state: saved.previous))
            }
        }
        self = GuidedSession()
        return changes
    }
}
