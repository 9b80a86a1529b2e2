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
/// stays outside the pure modules); its result comes back as ``Event/judged(_:checkedFor:)``.
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
    /// The active session's profile (its passcode hash ends the session before the set one).
    public var profile: Profile?

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
        /// Time passed for the prompt (its timer fired, or a recording's clock moved on).
        case clock
        /// Time passed for the session (its timer fired, or a recording's clock moved on): due
        /// time-limit warnings, the expiry, a trial nobody confirmed in time.
        case sessionTime
        /// The passcode asked for by ``Effect/check(_:)`` was judged: right, wrong, or it could not
        /// be checked; `checkedFor` is the session it was checked for.
        case judged(Judgement, checkedFor: GuidedSession.Identity?)
        /// The session ended or changed another way (a bus call, its profile reloaded).
        case sessionChanged
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
    }

    /// An admin's change to the live session, from a bus call the daemon has validated and
    /// authorized; its effects end before the reply, which the performer sends.
    public enum Change: Sendable, Equatable {
        /// `ExtendSession`: the end of the time limit moved by this much (from now, when the
        /// session has expired).
        case extend(by: Duration)
        /// `SetSessionDeadline`: the end set to this kiosk-clock time; nil removes the limit.
        case deadline(Timestamp?)
        /// `ConfirmSession`: a trial session stays.
        case confirmTrial
    }

    /// Applies an admin's `change` at `now`: the session's own rules refuse it (and nothing
    /// changes) when there is no session, no time limit to extend, an end too far ahead, or no
    /// trial to confirm. The warning marks still ahead of the new end are pending again (the
    /// session's rule drops those already behind it, so none comes due at once).
    public mutating func apply(_ change: Change, at now: Timestamp) throws(KioskError) -> [Effect] {
        switch change {
        case .extend(let amount):
            let end = try state.session.extendedDeadline(by: amount, at: now)
            return try newDeadline(end, at: now)
        case .deadline(let end):
            return try newDeadline(end, at: now)
        case .confirmTrial:
            try state.session.confirmTrial()
            return [.save(keepIfSaveFails: false), .trialConfirmed]
        }
    }

    private mutating func newDeadline(_ end: Timestamp?, at now: Timestamp) throws(KioskError) -> [Effect] {
        // Its only event is the expiry of an end at or before now, which `deadlineChanged` tells.
        _ = try state.session.setDeadline(end, warnings: profile?.session.warnings ?? [], at: now)
        return [.save(keepIfSaveFails: false), .deadlineChanged]
    }

    /// Runs `event` at `now`.
    public mutating func handle(_ event: Event, at now: Timestamp) -> [Effect] {
        switch event {
        case .exitGesture:
            // On an active or expired session only, unless the prompt is open already.
            guard state.session.isActive, prompt.open(at: now.microseconds) else { return [.exitRequested] }
            return [.exitRequested, .promptOpened, .promptChanged(deadline: prompt.deadline)]
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
            return prompt.timedOut(at: now.microseconds) ? close(.timeout) : []
        case .sessionTime:
            // Saved even when the save fails: an expiry is a lock and must apply.
            if state.session.trialIsOver(at: now), let changes = try? state.endSession(.unconfirmedTrial) {
                profile = nil
                return [.save(keepIfSaveFails: true), .trialEnded(changes)]
            }
            let effects: [Effect] = state.session.advance(to: now).map {
                switch $0 {
                case .warning(let secondsLeft): .timeLimitWarning(secondsLeft: secondsLeft)
                case .expired: .sessionExpired
                }
            }
            return effects.isEmpty ? [] : [.save(keepIfSaveFails: true)] + effects
        case .judged(let judgement, let session):
            guard prompt.state == .checking else { return [] }
            switch judgement {
            case .failed:
                // Not counted; a session that ended meanwhile is what the display says.
                return close(state.session.isActive ? .failed : .ended)
            case .wrong:
                // Counted even when the save fails: a disk that refuses writes must not give
                // unlimited guesses.
                state.throttles.recordFailure(from: .kiosk, at: now)
                return [.save(keepIfSaveFails: true)] + close(.rejected)
            case .right:
                guard let changes = try? state.endSession(.passcode(checkedFor: session, from: .kiosk)) else {
                    return close(.ended)
                }
                profile = nil
                return [.save(keepIfSaveFails: false), .sessionEnded(changes)] + close(.accepted)
            }
        case .sessionChanged:
            // One being checked is closed by its check's outcome.
            return prompt.state == .open && !state.session.isActive ? close(.ended) : []
        }
    }

    private mutating func close(_ reason: PromptCloseReason) -> [Effect] {
        guard prompt.state != .closed else { return [] }
        prompt.close()
        return [.promptClosed(reason)]
    }
}
