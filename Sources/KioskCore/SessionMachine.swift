import KioskAPI
import KioskInput

/// The session as the kiosk itself drives it, as one pure machine: the persisted state, the
/// prompt, the time and an event in; the next state and the effects, as data, out. kioskd runs it
/// on its loop and performs the effects (docs/architecture.md § The session machine);
/// `kioskctl replay` runs the very same machine on a recording's clock, so that a dry run
/// models the exit gesture, the prompt, the kiosk's throttle, the time limit and the end of the
/// session exactly as the kiosk does.
///
/// The kiosk is an event source of its own (not a bus caller), and the prompt's outcome is a
/// value (``PromptCloseReason``). Checking a passcode is an effect (``Effect/check(_:)``: yescrypt
/// stays outside the pure modules); its result comes back as ``Event/judged(_:checkedFor:from:)``,
/// for the kiosk's prompt and for `EndSession` alike. A bus call that changes the session is a
/// ``Change``, applied once the daemon has validated and authorized it.
///
/// What is persisted changes only where an effect says ``Effect/save(keepIfSaveFails:)``: the
/// performer writes `state` before it performs any effect after it (nothing visible before it is
/// on disk), except that a wrong passcode counts even when its save fails
/// (`keepIfSaveFails`, docs/state-store.md).
public struct SessionMachine: Sendable, Equatable {
    /// What kioskd persists (the registry, the session, the throttles, the passcode hash).
    public var state: KioskState
    /// The prompt at the kiosk: in memory only (a restart comes back locked, the prompt closed).
    public var prompt = PromptPhase()
    /// The kiosk's offer of more time (`[session] visitor-extensions`), while it is up. In memory
    /// only: it follows from the session's time, so a restart offers again while the time left
    /// is under `warn-before`.
    public var offer: TimeOffer?
    /// Cleaning the screen (``CleaningPhase``), while it runs. In memory only, like the prompt.
    public var cleaning: CleaningPhase?
    /// Staff drawing a profile's regions (``DrawingPhase``), while they do. In memory only.
    public var drawing: DrawingPhase?
    /// The active session's profile (its passcode hash ends the session before the set one); nil
    /// without a session, or for a restored session whose profile could not be loaded (the
    /// strictest locks).
    public var profile: Profile?
    /// The text of the active session's profile as last read: what a failed reload keeps in the
    /// state file (``GuidedSession/retainedProfileSource``).
    public var profileSource: String?
    /// Why the last reload of the session's profile failed (`SessionWarnings`); "" when it did not.
    public var reloadWarning = ""
    /// Why a restored session runs on the strictest locks (`SessionProblem`): its profile could not
    /// be loaded and no last good copy was kept; "" otherwise.
    public var restoreProblem = ""
    /// Idle time (`[idle]`): the "Still there?" screen, the reset, the display wanted dark. In
    /// memory only (SessionMachine+Idle.swift).
    public var idle = IdlePhase()

    public init(state: KioskState, profile: Profile?, promptTimeout: Duration = .seconds(30)) {
        self.state = state
        self.profile = profile
        prompt.timeout = promptTimeout.microseconds
    }

    /// What the kiosk (and its clock) did.
    public enum Event: Sendable, Equatable {
        /// The profile's exit gesture was completed.
        case exitGesture
        /// A key of the prompt, read by the filter (digits, Backspace, Enter, Esc, a pad touch).
        case promptKey(PromptKey)
        /// Time passed for the prompt and the cleaning (a timer fired, or a recording's clock
        /// moved on): a prompt waiting too long times out, a cleaning whose time is up ends.
        case clock
        /// Time passed for the session (its timer fired, or a recording's clock moved on): due
        /// time-limit warnings, the expiry, a trial nobody confirmed in time.
        case sessionTime
        /// The passcode asked for by ``Effect/check(_:)`` was judged: right, wrong, or it could not
        /// be checked; `checkedFor` is the session it was checked for, `source` whose count it met
        /// (the kiosk's prompt, or a bus caller's `EndSession`; a wrong `SetPasscode` counts too).
        case judged(Judgement, checkedFor: GuidedSession.Identity?, from: PasscodeSource = .kiosk)
        /// The session ended while the prompt opened (it was saved while the prompt took a key):
        /// an open prompt closes as `ended`.
        case sessionChanged
        /// kioskd started with a session in the state file: its profile as read now (`loaded`),
        /// and the last good profile the state file kept from a failed reload, if any.
        case restored(Result<LoadedProfile, KioskError>, lastGood: LoadedProfile?)
        /// The person at the kiosk took the offer of more time (the filter read the key or touch
        /// that takes it).
        case visitorExtends
        /// Time passed for idle (its timer fired, the local minute changed, or a recording's
        /// clock moved on), with the last physical input as the performer saw it.
        case idle(IdleInput)
        /// The person at the kiosk answered the "Still there?" screen (a key, button or touch let
        /// go, read by the filter).
        case stillHere
        /// A key or touch on the dark display woke it (read by the filter, swallowed until let go).
        case wake
        /// An admin said the display is dark (`kioskctl blank`: the next key or touch only wakes
        /// it) or woke it (`kioskctl wake`).
        case adminDisplay(on: Bool)
        /// The profile's cleaning gesture was completed (`[session] cleaning-gesture`).
        case cleaningGesture
        /// Staff touched the screen or pressed a key while drawing regions: its wait restarts.
        case drawingActivity
    }

    /// The offer of more time at the kiosk: from `warn-before` before the end of an active
    /// session whose profile has `visitor-extensions`, until it is taken, the end moves away,
    /// the session expires or ends. `extensionsLeft` 0: the screen says none are left.
    public struct TimeOffer: Sendable, Equatable {
        public var extensionsLeft: Int
        public init(extensionsLeft: Int) { self.extensionsLeft = extensionsLeft }
    }

    public enum Judgement: Sendable, Equatable {
        case right, wrong, failed
    }

    /// What the performer does, in this order.
    public enum Effect: Sendable, Equatable {
        /// `ExitRequested`, for apps that draw their own prompt.
        case exitRequested
        /// The prompt opened: the filter reads the passcode and forwards nothing.
        case promptOpened
        /// What a display shows changed (`PromptState`, `PromptLength`, `PromptDeadline`,
        /// `PromptRetryAfter`); `deadline` is when ``Event/clock`` must come to time it out.
        case promptChanged(deadline: Int64?)
        /// Check `passcode` (the prompt is `checking` until ``Event/judged(_:checkedFor:)``).
        case check(String)
        /// Write ``state`` before anything after this effect.
        case save(keepIfSaveFails: Bool)
        /// The session ended: these restriction states went back.
        case sessionEnded([GuidedSession.Change])
        /// The prompt closed, with the locks as before (or none once it was `accepted`).
        case promptClosed(PromptCloseReason)
        /// `TimeLimitWarning`: this many seconds are left.
        case timeLimitWarning(secondsLeft: UInt64)
        /// The time limit ran out: the session is expired, and holds all input (the exit
        /// gesture and the prompt still work).
        case sessionExpired
        /// A trial session nobody confirmed in time ended by itself: these restriction states
        /// went back.
        case trialEnded([GuidedSession.Change])
        /// An admin changed the session's time limit (``Change/extend(by:)``,
        /// ``Change/deadline(_:)``): `SessionDeadline` changed, the session's timer is set anew.
        case deadlineChanged
        /// An admin confirmed the trial session (``Change/confirmTrial``): it stays.
        case trialConfirmed
        /// A session started (``Change/start(_:_:trial:requestedBy:)``): these restriction states
        /// were preset; its profile's locks apply, its timer is set.
        case sessionStarted([GuidedSession.Change])
        /// The session's profile was read again and is in force (``Change/reload(_:readFor:)``):
        /// these restriction states changed with its presets (``GuidedSession/represet(_:registry:)``);
        /// `PropertiesChanged`, the session's timer set anew (an end now behind expires it).
        case profileReloaded([GuidedSession.Change])
        /// The session's profile file no longer loads (a reload, a restart): the last good profile
        /// stays in force, its text kept in the state file; `SessionWarnings` says why (`reason`).
        case lastGoodKept(reason: String)
        /// A restored session's profile could not be loaded and no last good copy was kept: the
        /// strictest locks, `SessionProblem` says why (`reason`).
        case strictestLocks(reason: String)
        /// A wrong passcode from `source` was counted (`failures` now): the audit entry; a bus
        /// caller's call is answered `WrongPasscode`.
        case wrongPasscode(from: PasscodeSource, failures: Int)
        /// The call is answered with this error (what the effects before it did stays).
        case refused(KioskError)
        /// The offer of more time came up, went, or its count changed (``offer``): what a display
        /// shows (`TimeOffer`, `VisitorExtensionsLeft`), and what the filter takes.
        case timeOfferChanged
        /// The visitor took the offer (``Event/visitorExtends``): the end moved by `by`, the
        /// session's timer is set anew; the audit entry and `TimeExtended`.
        case visitorExtended(by: Duration, extensionsLeft: Int)
        /// The "Still there?" screen came up or went (``idle``'s `warningUntil`): what a display
        /// shows (`IdleWarning`), and what the filter takes.
        case idleWarningChanged
        /// Nobody touched the kiosk for `[idle] reset-after`: `IdleReset`, or the kiosk session
        /// restarted (`reset`); once per idle period.
        case idleReset(Profile.Idle.ResetMode)
        /// kioskd wants the display on or off (`DisplayPower`), and why; while it is off the
        /// filter holds all input and the first key or touch only wakes it.
        case displayPowerChanged(on: Bool, DisplayReason)
        /// Cleaning started (or started again) for `length` (``cleaning``): the filter holds
        /// input but what assistive technology needs; `CleaningStarted`, `CleaningUntil`, its
        /// timer set for the end.
        case cleaningStarted(Duration)
        /// Cleaning ended (its time, `StopCleaning`, or the prompt opened): input flows as the
        /// locks say; `CleaningEnded`, `CleaningUntil` 0.
        case cleaningEnded
        /// Staff draw regions (``drawing``): the filter holds all input, kioskd reads the touches;
        /// `Drawing`, its timer set.
        case drawingStarted
        /// The drawing ended, and why: input flows as the locks say; `Drawing` empty.
        case drawingEnded(DrawingEndReason)
    }

    /// A profile file as read: the profile, and its text (kept should a later reload fail).
    public struct LoadedProfile: Sendable, Equatable {
        public var profile: Profile
        public var source: String

        public init(profile: Profile, source: String) {
            self.profile = profile
            self.source = source
        }
    }

    /// A bus call's change to the session, validated and authorized by the daemon; its effects
    /// end before the reply, which the performer sends (or the error ``Effect/refused(_:)`` says).
    public enum Change: Sendable, Equatable {
        /// `ExtendSession`: the end of the time limit moved by this much (from now, when the
        /// session has expired).
        case extend(by: Duration)
        /// `SetSessionDeadline`: the end set to this kiosk-clock time; nil removes the limit.
        case deadline(Timestamp?)
        /// `ConfirmSession`: a trial session stays.
        case confirmTrial
        /// `StartSession`, `StartTrialSession` (`trial`), `RequestSession` (`requestedBy`): a
        /// session of the profile `name`, as read.
        case start(_ name: String, _ profile: LoadedProfile, trial: Duration? = nil, requestedBy: AppID? = nil)
        /// `ForceEndSession` (`forced`), `ReleaseSession` (`released`); a right passcode comes as
        /// ``Event/judged(_:checkedFor:from:)``.
        case end(KioskState.SessionEnding)
        /// `EndSession`: the passcode is checked (``Effect/check(_:)``); its outcome comes back as
        /// ``Event/judged(_:checkedFor:from:)``.
        case passcode(String)
        /// `ReloadProfiles` (or SIGHUP): the session's profile file read again for the session
        /// `readFor`, or why it no longer loads.
        case reload(Result<LoadedProfile, KioskError>, readFor: GuidedSession.Identity?)
        /// `StartCleaning`: cleaning for this long (5 s to 5 min), from now; with or without a
        /// session. Nothing is saved (``cleaning`` is in memory only).
        case startCleaning(Duration)
        /// `StopCleaning`: cleaning ends now; nothing happens when none runs.
        case stopCleaning
        /// `DrawRegions`: staff draw the regions of this profile at the kiosk, with or without a
        /// session. Nothing is saved (``drawing`` is in memory only).
        case startDrawing(String)
        /// The drawing ends (Done, Cancel, its caller gone); nothing happens when none runs.
        case endDrawing(DrawingEndReason)
    }

    /// Applies a bus call's `change` at `now`: the session's own rules refuse it (and nothing
    /// changes) when there is no session (or one already), no time limit to extend, an end too
    /// far ahead, no trial to confirm, or another session than the one a profile was read for.
    /// The warning marks still ahead of a new end are pending again (the session's rule drops
    /// those already behind it, so none comes due at once).
    public mutating func apply(_ change: Change, at now: Timestamp) throws(KioskError) -> [Effect] {
        let pausedBefore = idlePaused
        var effects = try applyChange(change, at: now)
        effects += idleAfterStep(pausedBefore: pausedBefore, at: now)
        return effects
    }

    /// What is left of idle after a step: a pause that ended is activity; a session no longer
    /// active closes the screen and wants the display on.
    private mutating func idleAfterStep(pausedBefore: Bool, at now: Timestamp) -> [Effect] {
        guard state.session.state == .active else { return idleEnded() }
        return pausedBefore && !idlePaused ? pauseEnded(at: now) : []
    }

    private mutating func applyChange(_ change: Change, at now: Timestamp) throws(KioskError) -> [Effect] {
        switch change {
        case .start(let name, let loaded, let trial, let app):
            let changes = try state.startSession(
                profileName: name, profile: loaded.profile, at: now, trial: trial, requestedBy: app)
            take(loaded)
            idle = IdlePhase()
            idle.activeAt = now
            return [.save(keepIfSaveFails: false), .sessionStarted(changes)]
        case .end(let ending):
            let ended = try end(ending)
            return [.save(keepIfSaveFails: false)] + ended.closed + [.sessionEnded(ended.changes)]
        case .passcode(let passcode):
            try state.session.checkActive()
            return [.check(passcode)]
        case .reload(let loaded, let session):
            guard session != nil, state.session.identity == session else {
                throw KioskError(.failed, "The session changed while its profile was read; nothing was reloaded.")
            }
            switch loaded {
            case .success(let loaded):
                // Its only event is the expiry of an end at or before now, which
                // `profileReloaded` tells: the marks ahead stay pending, none is due at once.
                _ = try state.session.reloaded(loaded.profile, at: now)
                let changes = state.session.represet(loaded.profile, registry: &state.registry)
                state.session.retainedProfileSource = nil
                take(loaded)
                return [.save(keepIfSaveFails: false), .profileReloaded(changes)] + reviewOffer(at: now)
            case .failure(let error):
                let reason = keepLastGood(error)
                return [
                    .save(keepIfSaveFails: false), .lastGoodKept(reason: reason),
                    .refused(
                        KioskError(
                            .invalidArgument,
                            "The profile \(Text.quoted(state.session.profileName)) could not be reloaded, so the last good one stays in force: \(error.message)"
                        )),
                ]
            }
        case .extend(let amount):
            let end = try state.session.extendedDeadline(by: amount, at: now)
            return try newDeadline(end, at: now)
        case .deadline(let end):
            return try newDeadline(end, at: now)
        case .confirmTrial:
            try state.session.confirmTrial()
            return [.save(keepIfSaveFails: false), .trialConfirmed]
        case .startCleaning(let length):
            return try startCleaning(for: length, at: now)
        case .stopCleaning:
            return stopCleaning()
        case .startDrawing(let name):
            return try startDrawing(name, at: now)
        case .endDrawing(let reason):
            return endDrawing(reason)
        }
    }

    /// The session's profile is `loaded` from now on.
    private mutating func take(_ loaded: LoadedProfile) {
        profile = loaded.profile
        profileSource = loaded.source
        reloadWarning = ""
        restoreProblem = ""
    }

    /// The one rule for a profile file that no longer loads, on a reload and on a restart: the
    /// profile last read stays in force — its locks, and the session, its deadline and its pending
    /// warnings as they were — and its text is kept in the state file, so that a restart keeps
    /// it too (docs/dbus-api.md § ReloadProfiles). `SessionWarnings` says why until a reload
    /// succeeds.
    /// - Returns: `SessionWarnings`' sentence.
    private mutating func keepLastGood(_ error: KioskError) -> String {
        state.session.retainedProfileSource = profileSource
        reloadWarning =
            "The profile \(Text.quoted(state.session.profileName)) could not be reloaded, so the session keeps the profile last read from it: \(error.message)"
        return reloadWarning
    }

    /// Ends the session `ending` says.
    /// - Returns: the effects of closing an open prompt (as `ended`: a bus call or the session's
    ///   time ended the session under it), and the restriction states that went back.
    private mutating func end(
        _ ending: KioskState.SessionEnding
    ) throws(KioskError) -> (closed: [Effect], changes: [GuidedSession.Change]) {
        let changes = try state.endSession(ending)
        profile = nil
        profileSource = nil
        reloadWarning = ""
        restoreProblem = ""
        let offerClosed: [Effect] = offer == nil ? [] : [.timeOfferChanged]
        offer = nil
        return ((prompt.state == .open ? close(.ended) : []) + offerClosed, changes)
    }

    private mutating func newDeadline(_ end: Timestamp?, at now: Timestamp) throws(KioskError) -> [Effect] {
        // Its only event is the expiry of an end at or before now, which `deadlineChanged` tells.
        _ = try state.session.setDeadline(end, warnings: profile?.session.warningMarks ?? [], at: now)
        return [.save(keepIfSaveFails: false), .deadlineChanged] + reviewOffer(at: now)
    }

    /// Puts the offer of more time up, or takes it down, as the session's time says at `now`:
    /// up while an active session whose profile lets the visitor extend has at most
    /// `warn-before` left. `timeOfferChanged` when that changed it.
    private mutating func reviewOffer(at now: Timestamp) -> [Effect] {
        var due: TimeOffer?
        if state.session.state == .active, let deadline = state.session.deadline, let session = profile?.session,
            let allowed = session.visitorExtensions, session.extensionLength != nil,
            deadline - now <= session.warnBefore
        {
            due = TimeOffer(extensionsLeft: max(0, allowed - state.session.visitorExtensionsUsed))
        }
        guard due != offer else { return [] }
        offer = due
        return [.timeOfferChanged]
    }

    /// The visitor takes the offer: the end moves by the profile's `extend-by` from the current
    /// end, with the warning marks still ahead of it pending again, and one extension is counted.
    /// Nothing without an offer with extensions left on an active session.
    private mutating func visitorExtends(at now: Timestamp) -> [Effect] {
        guard let offer, offer.extensionsLeft > 0, state.session.state == .active,
            let marks = profile?.session.warningMarks, let length = profile?.session.extensionLength
        else { return [] }
        do {
            let end = try state.session.extendedDeadline(by: length, at: now)
            _ = try state.session.setDeadline(end, warnings: marks, at: now)
        } catch {
            return []  // an end further than the longest time limit ahead: the offer stays
        }
        state.session.recordVisitorExtension()
        return [.save(keepIfSaveFails: false), .visitorExtended(by: length, extensionsLeft: offer.extensionsLeft - 1)]
            + reviewOffer(at: now)
    }

    /// Runs `event` at `now`.
    public mutating func handle(_ event: Event, at now: Timestamp) -> [Effect] {
        let pausedBefore = idlePaused
        var effects = handleEvent(event, at: now)
        effects += idleAfterStep(pausedBefore: pausedBefore, at: now)
        return effects
    }

    private mutating func handleEvent(_ event: Event, at now: Timestamp) -> [Effect] {
        switch event {
        case .idle(let input):
            return idleTime(input, at: now)
        case .stillHere:
            return stillHere(at: now)
        case .wake:
            return wake(at: now, by: .input)
        case .adminDisplay(let on):
            return on ? wake(at: now, by: .admin) : toldBlank(at: now)
        case .visitorExtends:
            return visitorExtends(at: now)
        case .exitGesture:
            // On an active or expired session only, unless the prompt is open already; staff
            // opening it are done cleaning.
            guard state.session.isActive, prompt.open(at: now.microseconds) else { return [.exitRequested] }
            return [.exitRequested] + stopCleaning() + endDrawing(.prompt) + [
                .promptOpened, .promptChanged(deadline: prompt.deadline),
            ]
        case .cleaningGesture:
            return drawing == nil ? cleaningGesture(at: now) : []
        case .drawingActivity:
            return drawingActivity(at: now)
        case .promptKey(let key):
            switch prompt.press(key, at: now.microseconds) {
            case .none: return []
            case .changed: return [.promptChanged(deadline: prompt.deadline)]
            case .close(let reason): return close(reason)
            case .check(let passcode):
                // Refused before hashing, like a bus caller's: not an attempt, not counted.
                if state.throttles.waitRemaining(.kiosk, at: now) > .zero { return close(.throttled) }
                return [.promptChanged(deadline: nil), .check(passcode)]
            }
        case .clock:
            let ended = cleaningIsOver(at: now) ? stopCleaning() : []
            let idle = drawingIsIdle(at: now) ? endDrawing(.timeout) : []
            return ended + idle + (prompt.timedOut(at: now.microseconds) ? close(.timeout) : [])
        case .sessionTime:
            // Saved even when the save fails: an expiry is a lock and must apply.
            if state.session.trialIsOver(at: now), let ended = try? end(.unconfirmedTrial) {
                return [.save(keepIfSaveFails: true)] + ended.closed + [.trialEnded(ended.changes)]
            }
            let effects: [Effect] =
                state.session.advance(to: now).map {
                    switch $0 {
                    case .warning(let secondsLeft): .timeLimitWarning(secondsLeft: secondsLeft)
                    case .expired: .sessionExpired
                    }
                } + reviewOffer(at: now)
            return effects.isEmpty ? [] : [.save(keepIfSaveFails: true)] + effects
        case .judged(let judgement, let session, let source) where source != .kiosk:
            switch judgement {
            case .failed:
                return []  // answered with why it could not be checked: nothing counted or changed
            case .wrong:
                // Counted even when the save fails, as the kiosk's.
                state.throttles.recordFailure(from: source, at: now)
                return [
                    .save(keepIfSaveFails: true),
                    .wrongPasscode(from: source, failures: state.throttles[source].failures),
                ]
            case .right:
                do {
                    let ended = try end(.passcode(checkedFor: session, from: source))
                    return [.save(keepIfSaveFails: false)] + ended.closed + [.sessionEnded(ended.changes)]
                } catch {
                    return [.refused(error)]
                }
            }
        case .judged(let judgement, let session, _):
            guard prompt.state == .checking else { return [] }
            switch judgement {
            case .failed:
                // Not counted; a session that ended meanwhile is what the display says.
                return close(state.session.isActive ? .failed : .ended)
            case .wrong:
                // Counted even when the save fails: a disk that refuses writes must not give
                // unlimited guesses.
                state.throttles.recordFailure(from: .kiosk, at: now)
                return [
                    .save(keepIfSaveFails: true),
                    .wrongPasscode(from: .kiosk, failures: state.throttles[.kiosk].failures),
                ]
                    + close(.rejected)
            case .right:
                // The prompt is `checking`, so the ending closes nothing: it closes as accepted.
                guard let ended = try? end(.passcode(checkedFor: session, from: .kiosk)) else {
                    return close(.ended)
                }
                return [.save(keepIfSaveFails: false), .sessionEnded(ended.changes)] + close(.accepted)
            }
        case .sessionChanged:
            // One being checked is closed by its check's outcome.
            return prompt.state == .open && !state.session.isActive ? close(.ended) : []
        case .restored(let loaded, let lastGood):
            guard state.session.isActive else { return [] }
            idle.activeAt = max(idle.activeAt, now)  // kioskd just started: a full idle period
            switch loaded {
            case .success(let loaded):
                take(loaded)
                return []
            case .failure(let error):
                // A reload of this file had failed: its last good profile stays in force, by the
                // reload's own rule.
                if let lastGood {
                    take(lastGood)
                    return [.lastGoodKept(reason: keepLastGood(error))]
                }
                restoreProblem = KioskState.restoreProblem(
                    profileName: state.session.profileName, reason: error.message)
                return [.strictestLocks(reason: error.message)]
            }
        }
    }

    /// Makes `planned` — this machine with a change applied when its turn came, now on disk —
    /// the machine, keeping this one's prompt, which went on meanwhile (its `promptClosed`
    /// effects are performed on it with ``Event/sessionChanged``), and its cleaning, which no
    /// saved change touches.
    public mutating func adopt(_ planned: SessionMachine) {
        let prompt = self.prompt
        let idle = self.idle
        let cleaning = self.cleaning
        let drawing = self.drawing
        let sameSession = planned.state.session.identity == state.session.identity
        self = planned
        self.prompt = prompt
        self.cleaning = cleaning
        self.drawing = drawing
        // Idle time went on too, unless the change started or ended a session (then the
        // planned one is the new session's, or none).
        if sameSession { self.idle = idle }
    }

    private mutating func close(_ reason: PromptCloseReason) -> [Effect] {
        guard prompt.state != .closed else { return [] }
        prompt.close()
        return [.promptClosed(reason)]
    }
}
