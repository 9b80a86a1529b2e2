import KioskAPI
import KioskInput

/// A visitor who walked away (`[idle]`, docs/profiles.md § A visitor who walks away, a dark
/// screen): the "Still there?" screen, `IdleReset`, and the display kioskd wants dark. In memory
/// only, like the prompt: a restart comes back with the display wanted on and no screen up.
///
/// Idle time runs from the later of the last physical input on any brokered device (the
/// performer's, swallowed input included) and ``activeAt``: the session's start, the end of a
/// pause (the prompt, the offer of more time, cleaning), an answer to the screen, a wake. It
/// does not run while a pause is up: the passcode prompt, the offer of more time, cleaning. Only an active
/// session has idle time; once it expires or ends, the screen closes and the display is wanted on.
public struct IdlePhase: Sendable, Equatable {
    /// The last activity kioskd counts besides the devices' input (kiosk clock).
    public var activeAt = Timestamp(microseconds: 0)
    /// The "Still there?" screen is up: the reset comes at this time unless a key or touch
    /// answers it. Nil: not up.
    public var warningUntil: Timestamp?
    /// `IdleReset` was sent for the idle period that began at this time (one per period).
    public var resetFor: Timestamp?
    /// kioskd wants the display off; the next key or touch only wakes it.
    public var displayOff = false
    /// The kiosk's local time was in a `display-off` window at the last look.
    public var inWindow = false

    public init() {}
}

extension SessionMachine {
    /// What the kiosk's clock and input say for idle time: the last physical input (nil: none
    /// since kioskd started), the local minute of the day (nil: not looked at; the replay has
    /// no wall clock).
    public struct IdleInput: Sendable, Equatable {
        public var lastInput: Timestamp?
        public var localMinute: Int?
        public init(lastInput: Timestamp?, localMinute: Int? = nil) {
            self.lastInput = lastInput
            self.localMinute = localMinute
        }
    }

    /// The profile's `[idle]`, while it applies: an active session whose profile asks for it.
    var idleSettings: Profile.Idle? {
        guard state.session.state == .active, let idle = profile?.idle, !idle.isEmpty else { return nil }
        return idle
    }

    /// Idle time does not run: the prompt is open, the offer of more time is up, the screen is
    /// being cleaned, or staff draw regions.
    var idlePaused: Bool { prompt.state != .closed || offer != nil || cleaning != nil || drawing != nil }

    /// When idle time began, by `input`.
    func idleSince(_ input: IdleInput) -> Timestamp {
        max(input.lastInput ?? idle.activeAt, idle.activeAt)
    }

    /// Time passed for idle: the "Still there?" screen, `IdleReset`, the display wanted off, as
    /// they come due at `now`.
    mutating func idleTime(_ input: IdleInput, at now: Timestamp) -> [Effect] {
        guard let settings = idleSettings else { return idleEnded() }
        var effects: [Effect] = []
        if let minute = input.localMinute, !settings.displayOff.isEmpty {
            let inside = settings.displayOff.contains { $0.contains(minute: minute) }
            if inside && !idle.inWindow && !idle.displayOff {
                effects += setDisplay(off: true, why: .schedule)
            }
            idle.inWindow = inside
        }
        if idlePaused { return effects }
        let since = idleSince(input)
        let idleFor = now - since
        if let until = idle.warningUntil, let after = settings.resetAfter, since > until + (.zero - after) {
            // Input since the screen came up that did not answer it (a pointer's motion): the
            // visitor is there all the same.
            idle.warningUntil = nil
            effects.append(.idleWarningChanged)
        }
        if let after = settings.resetAfter, idle.resetFor != since {
            if idleFor >= after {
                if idle.warningUntil != nil {
                    idle.warningUntil = nil
                    effects.append(.idleWarningChanged)
                }
                idle.resetFor = since
                effects.append(.idleReset(settings.reset))
            } else if let warning = settings.resetWarning, idleFor >= after - warning, idle.warningUntil == nil,
                !idle.displayOff
            {
                idle.warningUntil = since + after
                effects.append(.idleWarningChanged)
            }
        }
        if let after = settings.blankAfter, idleFor >= after, !idle.displayOff {
            effects += setDisplay(off: true, why: .idle)
        }
        return effects
    }

    /// When idle time next needs a look, by `input`, at `now`: nil when nothing is due (no idle
    /// settings, all done for this period). While a pause is up, nothing: its end is activity,
    /// and the performer looks again then.
    public func idleWakeup(_ input: IdleInput, at now: Timestamp) -> Timestamp? {
        guard let settings = idleSettings, !idlePaused else { return nil }
        let since = idleSince(input)
        var due: [Timestamp] = []
        if let after = settings.resetAfter, idle.resetFor != since {
            due.append(since + after)
            if let warning = settings.resetWarning, idle.warningUntil == nil, !idle.displayOff {
                due.append(since + (after - warning))
            }
        }
        if let after = settings.blankAfter, !idle.displayOff { due.append(since + after) }
        return due.filter { $0 > now }.min()
    }

    /// Whether the performer must look at the local time each minute (`display-off` windows).
    public var idleWatchesLocalTime: Bool { !(idleSettings?.displayOff.isEmpty ?? true) }

    /// The visitor answered the "Still there?" screen (a key, button or touch let go): their
    /// work stays, idle time begins anew.
    mutating func stillHere(at now: Timestamp) -> [Effect] {
        guard idle.warningUntil != nil else { return [] }
        idle.warningUntil = nil
        idle.activeAt = max(idle.activeAt, now)
        return [.idleWarningChanged]
    }

    /// A key or touch woke the dark display (it reaches no app), or an admin did: idle time
    /// begins anew.
    mutating func wake(at now: Timestamp, by why: DisplayReason) -> [Effect] {
        guard idle.displayOff else { return [] }
        idle.activeAt = max(idle.activeAt, now)
        return setDisplay(off: false, why: why)
    }

    /// The display went dark by other means and kioskd was told (`kioskctl blank`): the next key
    /// or touch only wakes it. Only in an active session.
    mutating func toldBlank(at now: Timestamp) -> [Effect] {
        guard state.session.state == .active, !idle.displayOff else { return [] }
        return setDisplay(off: true, why: .admin)
    }

    /// A pause ended (the prompt closed, the offer went, the cleaning ended): idle time begins
    /// anew from `now`, and a "Still there?" it came over goes (someone was there), so that its
    /// hold does not outlast it.
    mutating func pauseEnded(at now: Timestamp) -> [Effect] {
        idle.activeAt = max(idle.activeAt, now)
        guard idle.warningUntil != nil else { return [] }
        idle.warningUntil = nil
        return [.idleWarningChanged]
    }

    /// The session is no longer active: the screen closes, the display is wanted on.
    mutating func idleEnded() -> [Effect] {
        var effects: [Effect] = []
        if idle.warningUntil != nil {
            idle.warningUntil = nil
            effects.append(.idleWarningChanged)
        }
        if idle.displayOff { effects += setDisplay(off: false, why: .sessionChanged) }
        idle.resetFor = nil
        idle.inWindow = false
        return effects
    }

    /// Why kioskd wants the display on or off (the journal says it).
    public enum DisplayReason: String, Sendable, Equatable {
        /// `blank-after` passed with no input.
        case idle
        /// A `display-off` window began.
        case schedule
        /// A key or touch woke it.
        case input
        /// An admin said the display went dark (`kioskctl blank`), or woke it (`kioskctl wake`).
        case admin
        /// The session expired or ended, or its profile no longer blanks.
        case sessionChanged = "session-changed"
    }

    private mutating func setDisplay(off: Bool, why: DisplayReason) -> [Effect] {
        idle.displayOff = off
        var effects: [Effect] = []
        if off, idle.warningUntil != nil {
            idle.warningUntil = nil
            effects.append(.idleWarningChanged)
        }
        return effects + [.displayPowerChanged(on: !off, why)]
    }
}
