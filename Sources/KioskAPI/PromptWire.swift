/// The words of kioskd's passcode prompt at the kiosk on the bus: `PromptState`'s values and
/// `PromptClosed`'s reasons, shared by kioskd (which decides them), the replay and every client
/// (which show them), so that none can drift from the others.
public enum PromptState: String, Hashable, Sendable {
    case closed
    /// kioskd reads the passcode from the brokered devices; nothing reaches the kiosk.
    case open
    /// Enter came: the passcode is being checked; keys do nothing until it is decided.
    case checking
    /// A value this build does not know, from a newer kioskd: a client decodes it so
    /// (``init(wire:)``) instead of refusing the reply. Like every state but ``closed``, it
    /// means the prompt is up and kioskd reads the keys; kioskd itself never is in it.
    case unknown

    /// Decodes a `PromptState` a daemon sent: a value this build does not know is ``unknown``.
    public init(wire text: String) {
        self = PromptState(rawValue: text) ?? .unknown
    }
}

/// `TimeOffer`'s values: kioskd's offer of more time at the kiosk (`[session]
/// visitor-extensions`), as a display shows it.
public enum TimeOfferState: String, Hashable, Sendable {
    /// No offer: more than `warn-before` is left, no time limit, or no session.
    case closed
    /// More time is offered: a key or a touch at the kiosk takes it.
    case open
    /// The end is near and the visitor has used every extension: the screen says so.
    case exhausted
    /// A value this build does not know, from a newer kioskd.
    case unknown

    /// Decodes a `TimeOffer` a daemon sent: a value this build does not know is ``unknown``.
    public init(wire text: String) {
        self = TimeOfferState(rawValue: text) ?? .unknown
    }
}

/// `DisplayPower`'s values: the display as kioskd wants it (`[idle] blank-after`,
/// `display-off`, `Wake`, `Blank`). A process in the kiosk session follows it; kioskd never
/// drives a display.
public enum DisplayPower: String, Hashable, Sendable {
    case on
    /// Dark: the first key, button or touch only wakes it.
    case off
    /// A value this build does not know, from a newer kioskd: taken as ``on`` (a display is
    /// never kept dark on a guess).
    case unknown

    /// Decodes a `DisplayPower` a daemon sent: a value this build does not know is ``unknown``.
    public init(wire text: String) {
        self = DisplayPower(rawValue: text) ?? .unknown
    }

    /// Whether the display is to be dark.
    public var isOff: Bool { self == .off }
}

/// Why the prompt closed (`PromptClosed`'s argument). Every reason but ``accepted`` leaves the
/// locks as they were.
public enum PromptCloseReason: String, Hashable, Sendable, CaseIterable {
    /// The passcode was right: the session ended.
    case accepted
    /// It was wrong (counted by the kiosk's throttle).
    case rejected
    /// Enter came while the kiosk's throttle waits: nothing was checked.
    case throttled
    /// Esc or the pad's Cancel.
    case cancelled
    /// No key for 30 s.
    case timeout
    /// The session ended another way while the prompt was open.
    case ended
    /// The passcode could not be checked (libcrypt, the disk): not counted.
    case failed
}
