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
    public static func scene(
        status: KioskStatus?, now: Timestamp, lastClose: (reason: KioskPrompt.CloseReason, at: Timestamp)?,
        warned: Bool
    ) -> PromptScreen? {
        guard let status else { return nil }
        // The passcode prompt first: the offer's countdown goes on behind it.
        guard status.prompt.state != .closed else { return offer(status: status, now: now) }
        let prompt = status.prompt
        let typed = max(0, prompt.length)
        var message: String
        if prompt.state == .checking {
            message = "Checking…"
        } else if let until = prompt.retryAfter, until > now {
            message = "Too many wrong passcodes. Try again in \(clock(until - now))."
        } else if let last = lastClose, now - last.at < resultShownFor, let result = result(of: last.reason) {
            message = result
        } else {
            message = "Type the passcode, then Enter or OK."
        }
        var closing: String?
        if prompt.state == .open, let deadline = prompt.deadline, deadline - now <= closingShownFor {
            closing = "Closing in \(clock(max(.zero, deadline - now)))"
        }
        return PromptScreen(
            title: "Enter the passcode to end Guided Access",
            dots: String(repeating: "● ", count: min(typed, maxDots)).trimmedTrailingSpace,
            dotsLabel: typed == 0 ? "No digits typed" : typed == 1 ? "1 digit typed" : "\(typed) digits typed",
            message: message,
            banner: banner(status: status, now: now, warned: warned),
            closing: closing)
    }

    /// The offer of more time (`TimeOffer`): "Need more time?", the seconds left, the one simple
    /// action that takes it; once none are left, that the session ends then. Nil without an offer.
    static func offer(status: KioskStatus, now: Timestamp) -> PromptScreen? {
        guard status.sessionState == .active, status.timeOffer == .open || status.timeOffer == .exhausted else {
            return nil
        }
        let remaining = status.sessionDeadline.map { max(.zero, $0 - now) }
        let left = remaining.map { clock($0) }
        if status.timeOffer == .exhausted {
            return PromptScreen(
                title: "No more time can be added", dots: "", dotsLabel: "",
                message: left.map { "This session ends in \($0)." } ?? "This session ends soon.", banner: nil,
                closing: nil, button: nil, showsPad: false)
        }
        let count = status.visitorExtensionsLeft
        return PromptScreen(
            title: "Need more time?", dots: "", dotsLabel: "",
            message: "Press any key or touch the screen to get more time."
                + (count == 1 ? " You can do this 1 more time." : " You can do this \(count) more times."),
            banner: left.map { "\($0) left in this session" },
            bannerLabel: remaining.map { "\(spokenDuration($0)) left in this session" }, closing: nil,
            button: "More time", showsPad: false)
    }

    /// The sentence spoken when the offer comes up (on a second sense beside the screen).
    public static func offerSentence(status: KioskStatus, now: Timestamp) -> String {
        let left = status.sessionDeadline.map { spokenDuration(max(.zero, $0 - now)) + " left. " } ?? ""
        return status.timeOffer == .exhausted
            ? "\(left)No more time can be added."
            : "Need more time? \(left)Press any key or touch the screen."
    }

    /// How long the last attempt's result is shown on the next prompt.
    public static let resultShownFor = Duration.seconds(60)
    /// The prompt's own timeout is shown in its last seconds.
    public static let closingShownFor = Duration.seconds(10)
    /// Dots beyond this many would not fit a line; the label still says how many.
    public static let maxDots = 24

    static func result(of reason: KioskPrompt.CloseReason) -> String? {
        switch reason {
        case .rejected: "The passcode was wrong. Try again."
        case .throttled: "Not checked: the kiosk waits after too many wrong passcodes."
        case .timeout: "The last prompt closed after 30 seconds without a key."
        case .failed: "The passcode could not be checked; nothing was counted. Try again."
        case .accepted, .cancelled, .ended: nil
        }
    }

    static func banner(status: KioskStatus, now: Timestamp, warned: Bool) -> String? {
        if status.sessionState == .expired { return "Time is up: the session's time limit ran out." }
        guard warned, let deadline = status.sessionDeadline, deadline > now else { return nil }
        return "\(spokenDuration(deadline - now)) left in this session"
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
    public static func sentence(secondsLeft: UInt64) -> String {
        "\(spokenDuration(.seconds(Int64(clamping: secondsLeft)))) left"
    }

    /// "5 minutes", "1 minute 30 seconds", "2 hours": the largest units, rounded up to a whole
    /// minute from 10 minutes on (a warning is rounded up by kioskd, too).
    static func spokenDuration(_ duration: Duration) -> String {
        var total = Int((duration + .microseconds(999_999)).components.seconds)
        if total >= 600 { total = (total + 59) / 60 * 60 }
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        func unit(_ n: Int, _ name: String) -> String? { n == 0 ? nil : "\(n) \(name)\(n == 1 ? "" : "s")" }
        let parts = [unit(h, "hour"), unit(m, "minute"), unit(s, "second")].compactMap { $0 }
        return parts.isEmpty ? "0 seconds" : parts.joined(separator: " ")
    }
}

extension String {
    fileprivate var trimmedTrailingSpace: String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
