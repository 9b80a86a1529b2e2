import KioskClient

/// What kioskd-prompt shows, worked out from what kioskd publishes: pure, so that every text on
/// the screen is tested without a display, and the GTK side only copies it into widgets.
///
/// The display is passive: it learns only the prompt's state and how many characters were typed
/// (never a key, never the passcode), and draws nothing kioskd does not say.
public struct PromptScreen: Hashable, Sendable {
    /// The first line, large.
    public var title: String
    /// One dot per digit typed.
    public var dots: String
    /// What a screen reader says for the dots (a dot has no name of its own): how many digits
    /// were typed, never which ("No digits typed", "1 digit typed", "3 digits typed"); empty on
    /// the offer's screen, which has no dots.
    public var dotsLabel: String
    /// The line under the dots: the throttle's wait, "Checking…", the last attempt's result, or
    /// how to enter the passcode; never empty.
    public var message: String
    /// The session's time-limit banner: set once a warning came (or the time ran out).
    public var banner: String?
    /// What a screen reader says for the banner when it differs from what it shows: the offer's
    /// countdown in words ("29 seconds left in this session", not "0:29 left in this session").
    public var bannerLabel: String?
    /// The prompt closes by itself soon: shown in its last seconds only.
    public var closing: String?
    /// A large button's label (the offer of more time): drawn, not pressed — kioskd reads the
    /// key or touch that takes the offer on the devices, anywhere on the screen.
    public var button: String?
    /// Whether the PIN pad is drawn (the passcode prompt's, not the offer's).
    public var showsPad = true

    /// The screen while the prompt is not closed; nil when there must be no window.
    ///
    /// - Parameters:
    ///   - lastClose: why the prompt closed last, and when: a wrong passcode is said on the next
    ///     prompt if it opens within `resultShownFor` (the window itself is destroyed at once
    ///     when the prompt closes, so that the kiosk app gets its focus back under cage).
    ///   - warned: whether a time-limit warning came during this session (the banner shows
    ///     from then on).
    ///   - tr: the words in the display's language (English as written here by default).
    public static func scene(
        status: KioskStatus?, now: Timestamp, lastClose: (reason: KioskPrompt.CloseReason, at: Timestamp)?,
        warned: Bool, tr: Translation = .english
    ) -> PromptScreen? {
        guard let status else { return nil }
        // The passcode prompt first (opening it ends a cleaning); then the cleaning's countdown,
        // over an offer of more time, whose countdown goes on behind it; then "Still there?".
        guard status.prompt.state != .closed else {
            return cleaning(status: status, now: now, tr: tr) ?? offer(status: status, now: now, tr: tr)
                ?? stillThere(status: status, now: now, tr: tr)
        }
        let prompt = status.prompt
        let typed = max(0, prompt.length)
        var message: String
        if prompt.state == .checking {
            message = tr("Checking…")
        } else if let until = prompt.retryAfter, until > now {
            // TRANSLATORS: %s is a wait as a clock, "4:00" (minutes:seconds), counting down.
            message = tr("Too many wrong passcodes. Try again in %s.", clock(until - now))
        } else if let last = lastClose, now - last.at < resultShownFor, let result = result(of: last.reason, tr: tr) {
            message = result
        } else {
            // TRANSLATORS: Enter is the keyboard's key, OK the PIN pad's (translated as "OK" is below).
            message = tr("Type the passcode, then Enter or OK.")
        }
        var closing: String?
        if prompt.state == .open, let deadline = prompt.deadline, deadline - now <= closingShownFor {
            closing = tr("Closing in %s", clock(max(.zero, deadline - now)))
        }
        return PromptScreen(
            title: tr("Enter the passcode to end Guided Access"),
            dots: String(repeating: "● ", count: min(typed, maxDots)).trimmedTrailingSpace,
            dotsLabel: typed == 0 ? tr("No digits typed") : tr.plural("%d digit typed", "%d digits typed", typed),
            message: message,
            banner: banner(status: status, now: now, warned: warned, tr: tr),
            closing: closing)
    }

    /// Cleaning the screen (`CleaningUntil`): what is paused and the seconds left, "Cleaning —
    /// 25 s"; a screen reader reads the countdown in words. Nil when no cleaning runs (or its end
    /// is behind `now`: kioskd's `CleaningEnded` is on its way).
    static func cleaning(status: KioskStatus, now: Timestamp, tr: Translation = .english) -> PromptScreen? {
        guard let until = status.cleaningUntil, until > now else { return nil }
        let left = until - now
        let seconds = Int((left + .microseconds(999_999)).components.seconds)
        return PromptScreen(
            title: tr("Cleaning the screen"), dots: "", dotsLabel: "",
            message: tr("Touch, buttons and keys are paused so that the screen can be wiped."),
            // TRANSLATORS: the cleaning's countdown on the screen; %s is the seconds left, "25".
            banner: tr("Cleaning — %s s", String(seconds)),
            // TRANSLATORS: the cleaning's countdown as a screen reader reads it; %s is a time in
            // words, "25 seconds".
            bannerLabel: tr("Cleaning: %s left", spokenDuration(left, tr: tr)), closing: nil, button: nil,
            showsPad: false)
    }

    /// The sentence spoken when cleaning starts (a screen reader's user cannot see the countdown):
    /// "Cleaning the screen. Touch, buttons and keys are paused for 30 seconds."
    public static func cleaningSentence(status: KioskStatus, now: Timestamp, tr: Translation = .english) -> String? {
        guard let until = status.cleaningUntil, until > now else { return nil }
        // TRANSLATORS: spoken when cleaning starts; %s is a time in words, "30 seconds".
        return tr("Cleaning the screen.") + " "
            + tr("Touch, buttons and keys are paused for %s.", spokenDuration(until - now, tr: tr))
    }

    /// The offer of more time (`TimeOffer`): "Need more time?", the seconds left, the one simple
    /// action that takes it; once none are left, that the session ends then. Nil without an offer.
    static func offer(status: KioskStatus, now: Timestamp, tr: Translation = .english) -> PromptScreen? {
        guard status.sessionState == .active, status.timeOffer == .open || status.timeOffer == .exhausted else {
            return nil
        }
        let remaining = status.sessionDeadline.map { max(.zero, $0 - now) }
        let left = remaining.map { clock($0) }
        if status.timeOffer == .exhausted {
            return PromptScreen(
                title: tr("No more time can be added"), dots: "", dotsLabel: "",
                message: left.map { tr("This session ends in %s.", $0) } ?? tr("This session ends soon."), banner: nil,
                closing: nil, button: nil, showsPad: false)
        }
        let count = status.visitorExtensionsLeft
        return PromptScreen(
            title: tr("Need more time?"), dots: "", dotsLabel: "",
            // TRANSLATORS: the offer of more time; %d below is how many more times it can be taken.
            message: tr("Press any key or touch the screen to get more time.") + " "
                + tr.plural("You can do this %d more time.", "You can do this %d more times.", count),
            // TRANSLATORS: %s is a clock ("0:29") on the screen, words ("29 seconds") when read out.
            banner: left.map { tr("%s left in this session", $0) },
            bannerLabel: remaining.map { tr("%s left in this session", spokenDuration($0, tr: tr)) }, closing: nil,
            button: tr("More time"), showsPad: false)
    }

    /// "Still there?" (`IdleWarning`, `[idle] reset-warning`): the seconds until the kiosk starts
    /// over, and the one simple action that keeps the visitor's work. Nil while it is not up.
    static func stillThere(status: KioskStatus, now: Timestamp, tr: Translation = .english) -> PromptScreen? {
        guard status.sessionState == .active, let reset = status.idleWarning else { return nil }
        let remaining = max(.zero, reset - now)
        return PromptScreen(
            title: tr("Still there?"), dots: "", dotsLabel: "",
            message: tr("Press any key or touch the screen to keep going. Otherwise the kiosk starts over."),
            // TRANSLATORS: %s is a clock ("0:19") on the screen, words ("19 seconds") when read out.
            banner: tr("Starting over in %s", clock(remaining)),
            bannerLabel: tr("Starting over in %s", spokenDuration(remaining, tr: tr)), closing: nil,
            button: tr("Keep going"), showsPad: false)
    }

    /// The sentence spoken when "Still there?" comes up (on a second sense beside the screen).
    public static func stillThereSentence(status: KioskStatus, now: Timestamp, tr: Translation = .english) -> String {
        let left = status.idleWarning.map { tr("%s left.", spokenDuration(max(.zero, $0 - now), tr: tr)) + " " }
        return tr("Still there?") + " " + (left ?? "") + tr("Press any key or touch the screen.")
    }

    /// What a screen reader is told when the screen goes from `old` to `new`, for the passcode
    /// prompt (the offer is spoken on its own, ``offerSentence(status:now:tr:)``): the title and
    /// what to do when it opens; then each new count ("3 digits typed", never which) and each
    /// new line under it ("Checking…", "The passcode was wrong. Try again."); the prompt's own
    /// timeout once, when it is first shown. Nil when nothing new is worth saying (the seconds of
    /// a wait counting down are not).
    public static func announcement(from old: PromptScreen?, to new: PromptScreen) -> String? {
        guard new.showsPad else { return nil }
        guard let old, old.showsPad else {
            return [new.title, new.dotsLabel, new.message].filter { !$0.isEmpty }.joined(separator: ". ")
                .replacingDoubleStops
        }
        var parts: [String] = []
        if new.dotsLabel != old.dotsLabel { parts.append(new.dotsLabel) }
        if new.message != old.message, !Self.isSameWait(old.message, new.message) { parts.append(new.message) }
        if let closing = new.closing, old.closing == nil { parts.append(closing) }
        return parts.isEmpty ? nil : parts.joined(separator: ". ").replacingDoubleStops
    }

    /// Two lines that differ only in their digits: a wait counting down ("Try again in 3:59.").
    static func isSameWait(_ a: String, _ b: String) -> Bool {
        func shape(_ s: String) -> String { String(s.map { $0.isNumber ? "0" : $0 }) }
        return shape(a) == shape(b)
    }

    /// The sentence spoken when the offer comes up (on a second sense beside the screen).
    public static func offerSentence(status: KioskStatus, now: Timestamp, tr: Translation = .english) -> String {
        // TRANSLATORS: spoken; %s is a time in words, "30 seconds", "1 minute 30 seconds".
        let left = status.sessionDeadline.map { tr("%s left.", spokenDuration(max(.zero, $0 - now), tr: tr)) + " " }
        return status.timeOffer == .exhausted
            ? (left ?? "") + tr("No more time can be added.")
            : tr("Need more time?") + " " + (left ?? "") + tr("Press any key or touch the screen.")
    }

    /// A PIN pad key's label as drawn: digits as they are, "OK" and "Cancel" (`PromptPad`'s,
    /// in English on the bus) in the display's language.
    public static func keyLabel(_ label: String, tr: Translation = .english) -> String {
        switch label {
        case "OK": tr("OK")
        // TRANSLATORS: a PIN pad key's label; keep it short, it is drawn on a small key.
        case "Cancel": tr("Cancel")
        default: label
        }
    }

    /// What a screen reader says for a PIN pad key: "PIN pad key 7".
    public static func keyName(_ label: String, tr: Translation = .english) -> String {
        tr("PIN pad key %s", keyLabel(label, tr: tr))
    }

    /// A PIN pad key's accessible description, read after its name.
    public static func keyDescription(tr: Translation = .english) -> String {
        tr("Touch it: kioskd reads the touch itself.")
    }

    /// The window's title before the first screen sets it.
    public static func windowTitle(tr: Translation = .english) -> String { tr("Guided Access passcode") }

    /// How long the last attempt's result is shown on the next prompt.
    public static let resultShownFor = Duration.seconds(60)
    /// The prompt's own timeout is shown in its last seconds.
    public static let closingShownFor = Duration.seconds(10)
    /// Dots beyond this many would not fit a line; the label still says how many.
    public static let maxDots = 24

    static func result(of reason: KioskPrompt.CloseReason, tr: Translation) -> String? {
        switch reason {
        case .rejected: tr("The passcode was wrong. Try again.")
        case .throttled: tr("Not checked: the kiosk waits after too many wrong passcodes.")
        case .timeout: tr("The last prompt closed after 30 seconds without a key.")
        case .failed: tr("The passcode could not be checked; nothing was counted. Try again.")
        case .accepted, .cancelled, .ended: nil
        }
    }

    static func banner(status: KioskStatus, now: Timestamp, warned: Bool, tr: Translation) -> String? {
        if status.sessionState == .expired { return tr("Time is up: the session's time limit ran out.") }
        guard warned, let deadline = status.sessionDeadline, deadline > now else { return nil }
        return tr("%s left in this session", spokenDuration(deadline - now, tr: tr))
    }

    /// A wait as a clock, rounded up: "0:29", "4:00", "1:00:00".
    public static func clock(_ duration: Duration) -> String {
        let total = Int((duration + .microseconds(999_999)).components.seconds)
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(m):\(two(s))"
    }

    /// A time-limit warning as a sentence to speak: "5 minutes left", "1 minute left",
    /// "30 seconds left", "1 hour 30 minutes left".
    public static func sentence(secondsLeft: UInt64, tr: Translation = .english) -> String {
        // TRANSLATORS: a spoken time-limit warning; %s is a time in words, "5 minutes".
        tr("%s left", spokenDuration(.seconds(Int64(clamping: secondsLeft)), tr: tr))
    }

    /// "5 minutes", "1 minute 30 seconds", "2 hours": the largest units, rounded up to a whole
    /// minute from 10 minutes on (a warning is rounded up by kioskd, too).
    static func spokenDuration(_ duration: Duration, tr: Translation = .english) -> String {
        var total = Int((duration + .microseconds(999_999)).components.seconds)
        if total >= 600 { total = (total + 59) / 60 * 60 }
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        let parts = [
            h == 0 ? nil : tr.plural("%d hour", "%d hours", h),
            m == 0 ? nil : tr.plural("%d minute", "%d minutes", m),
            s == 0 ? nil : tr.plural("%d second", "%d seconds", s),
        ].compactMap { $0 }
        return parts.isEmpty ? tr.plural("%d second", "%d seconds", 0) : parts.joined(separator: " ")
    }
}

extension String {
    /// "done.. next" → "done. next": sentences joined after one that ends with its own stop.
    fileprivate var replacingDoubleStops: String {
        var out = ""
        for c in self {
            if c == ".", let last = out.last, last == "." || last == "?" || last == "…" { continue }
            out.append(c)
        }
        return out
    }

    fileprivate var trimmedTrailingSpace: String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
