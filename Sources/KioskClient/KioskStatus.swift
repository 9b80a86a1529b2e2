import KioskAPI

/// The manager's properties: the session, the passcode prompt and the daemon's version.
public struct KioskStatus: Hashable, Sendable {
    public var sessionState: SessionState
    /// The active session's profile name; empty when no session is active.
    public var activeProfile: String
    /// When the session's time limit runs out (CLOCK_REALTIME); nil when it has none.
    public var sessionDeadline: Timestamp?
    /// kioskd's version.
    public var version: String
    /// Why the session cannot be enforced as its profile asks, when a daemon says so
    /// (the `SessionProblem` property); nil when the daemon has no such property.
    public var sessionProblem: String?
    /// Problems with the session that do not change its locks (the `SessionWarnings` property,
    /// e.g. a profile's `[[device]]` entry that matches no device); empty when there are none
    /// or the daemon has no such property.
    public var sessionWarnings: [String]
    /// The passcode prompt at the kiosk (the `Prompt*` properties); closed when the daemon has
    /// no such properties.
    public var prompt: KioskPrompt
    /// Whether the session's profile asks for its time-limit warnings to be spoken
    /// (`SpeakWarnings`); false when inactive or when the daemon has no such property.
    public var speakWarnings: Bool
    /// The app the active session is for (its profile's `app`, the `ActiveApp` property); empty
    /// when none, or when the daemon has no such property.
    public var activeApp: String = ""
    /// kioskd's offer of more time at the kiosk (`TimeOffer`, `[session] visitor-extensions`);
    /// closed when the daemon has no such property.
    public var timeOffer: TimeOfferState = .closed
    /// How many more times the visitor may extend (`VisitorExtensionsLeft`) while the offer is open.
    public var visitorExtensionsLeft: Int = 0
    /// The language kioskd's screens show during the session (`Language`, the profile's
    /// `[session] language`, "de"); empty when the kiosk's locale decides, when inactive, or when
    /// the daemon has no such property.
    public var language: String = ""
    /// While "Still there?" is up (`IdleWarning`, `[idle] reset-warning`): when the idle reset
    /// comes unless someone answers (CLOCK_REALTIME); nil otherwise, or when the daemon has no
    /// such property.
    public var idleWarning: Timestamp?
    /// The display as kioskd wants it (`DisplayPower`); on when the daemon has no such property.
    public var displayPower: DisplayPower = .on
    /// When cleaning the screen ends (`CleaningUntil`, wall clock); nil when it does not run, or
    /// when the daemon has no such property.
    public var cleaningUntil: Timestamp?
    /// The profile whose touch regions staff draw at the kiosk (`Drawing`); empty when nobody
    /// does, or when the daemon has no such property.
    public var drawing: String = ""
    /// What staff drew so far (`DrawingState`); empty when nobody draws.
    public var drawingState = KioskDrawing()
    /// The active session's locked touch regions a display shades over the app (`LockedRegions`,
    /// `[touch] show-locked`); empty without a session, with `show-locked = false`, or when the
    /// daemon has no such property.
    public var lockedRegions: [ShadedRegion] = []
    /// The browser policies kioskd has in force, and why (`BrowserPolicies`,
    /// docs/browsers.md); empty when there is none, or when the daemon has no such property.
    public var browserPolicies: [BrowserPolicyInForce] = []
    /// Whether a passcode set with `SetPasscode` is stored (`PasscodeSet`); nil when the daemon
    /// has no such property (older than it).
    public var passcodeSet: Bool?
    /// Whether kioskd's state reaches the disk (`StateStorage`, docs/state-store.md § When the
    /// disk fails): nil while saves work, or when the daemon has no such property.
    public var stateStorage: StorageFailure?

    public init(
        sessionState: SessionState, activeProfile: String, sessionDeadline: Timestamp?,
        version: String, sessionProblem: String? = nil, sessionWarnings: [String] = [],
        prompt: KioskPrompt = .closed, speakWarnings: Bool = false, passcodeSet: Bool? = nil
    ) {
        self.passcodeSet = passcodeSet
        self.prompt = prompt
        self.speakWarnings = speakWarnings
        self.sessionWarnings = sessionWarnings
        self.sessionState = sessionState
        self.activeProfile = activeProfile
        self.sessionDeadline = sessionDeadline
        self.version = version
        self.sessionProblem = sessionProblem
    }
}

/// The passcode prompt kioskd opens at the kiosk after the exit gesture. kioskd reads the keys
/// and touches itself and forwards none to the kiosk app; these are only what a display (the
/// kioskd-prompt client, or an app drawing its own prompt) needs to draw it. No passcode, and no
/// character of one, ever appears here: only how many were typed.
public struct KioskPrompt: Hashable, Sendable {
    /// `PromptState` (KioskAPI's, shared with kioskd).
    public typealias State = PromptState
    /// Why the prompt closed (`PromptClosed`'s argument; KioskAPI's, shared with kioskd).
    public typealias CloseReason = PromptCloseReason

    /// A key of the PIN pad (`PromptPad`): its label ("0" to "9", "OK", "Cancel") and its
    /// rectangle in fractions (0 to 1) of the touch surface, which is the whole screen.
    public struct Key: Hashable, Sendable {
        public var label: String
        public var x: Double
        public var y: Double
        public var width: Double
        public var height: Double

        public init(label: String, x: Double, y: Double, width: Double, height: Double) {
            self.label = label
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    public var state: State
    /// How many characters have been typed (`PromptLength`), for dots.
    public var length: Int
    /// When the prompt closes by itself unless a key comes (`PromptDeadline`); nil when closed.
    public var deadline: Timestamp?
    /// Until when a passcode entered at the kiosk is not checked (`PromptRetryAfter`, the kiosk's
    /// throttle); nil when it may be tried now.
    public var retryAfter: Timestamp?

    public init(state: State, length: Int = 0, deadline: Timestamp? = nil, retryAfter: Timestamp? = nil) {
        self.state = state
        self.length = length
        self.deadline = deadline
        self.retryAfter = retryAfter
    }

    /// No prompt: what a daemon without the `Prompt*` properties shows.
    public static let closed = KioskPrompt(state: .closed)
}

/// What staff draw at the kiosk (`DrawingState`), for a display: every point in fractions
/// (0 to 1) of the screen.
public struct KioskDrawing: Hashable, Sendable {
    public struct Point: Hashable, Sendable {
        public var x: Double
        public var y: Double
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// A shape on the screen: its name and its outline (a rect as its 4 corners).
    public struct Shape: Hashable, Sendable {
        public var name: String
        public var outline: [Point]
        public init(name: String, outline: [Point]) {
            self.name = name
            self.outline = outline
        }
    }

    /// A button of the drawing's bar (`DrawingBar`): "cancel", "delete" or "done", and where
    /// kioskd reads its taps.
    public struct Button: Hashable, Sendable {
        public var name: String
        public var x: Double
        public var y: Double
        public var width: Double
        public var height: Double
        public init(name: String, x: Double, y: Double, width: Double, height: Double) {
            self.name = name
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    public var shapes: [Shape]
    /// The index of the selected shape, if one is.
    public var selected: Int?
    /// The stroke being drawn, from its start; empty between strokes.
    public var stroke: [Point]
    /// Why the last stroke added nothing while the drawing goes on ("crosses"); empty when it did.
    public var notice: String

    public init(shapes: [Shape] = [], selected: Int? = nil, stroke: [Point] = [], notice: String = "") {
        self.shapes = shapes
        self.selected = selected
        self.stroke = stroke
        self.notice = notice
    }
}

/// One restriction as kioskd lists it, in the app's presentation order.
public struct RestrictionInfo: Hashable, Sendable {
    public var id: String
    public var title: String
    public var detail: String
    public var state: RestrictionState

    public init(id: String, title: String, detail: String, state: RestrictionState) {
        self.id = id
        self.title = title
        self.detail = detail
        self.state = state
    }
}

/// Something kioskd announced, as `kioskctl monitor` prints it.
public enum ManagerEvent: Hashable, Sendable {
    /// `RestrictionStateChanged`.
    case restrictionStateChanged(app: String, restriction: String, state: RestrictionState)
    /// The session or another property changed (`PropertiesChanged`, or a restarted daemon
    /// reporting a different state): the status as it is now.
    case statusChanged(KioskStatus)
    /// `ExitRequested`: the exit gesture was seen; the kiosk UI should show a passcode prompt.
    case exitRequested
    /// `TimeLimitWarning`: the session's time limit runs out in this many seconds.
    case timeLimitWarning(secondsLeft: UInt64)
    /// `TimeExtended`: the person at the kiosk took the offer of more time; the session got this
    /// many seconds more, and this many extensions are left (docs/dbus-api.md § Time the visitor
    /// can extend). The new deadline comes with the `statusChanged` that follows.
    case timeExtended(secondsAdded: UInt64, extensionsLeft: UInt32)
    /// `IdleReset`: nobody used the kiosk for the profile's `[idle] reset-after`: go back to the
    /// start page and forget the visitor's input (docs/dbus-api.md § Idle time and the dark
    /// display).
    case idleReset
    /// `PromptClosed`: the passcode prompt at the kiosk closed, for this reason.
    case promptClosed(KioskPrompt.CloseReason)
    /// `CleaningStarted`: input at the kiosk is held for this many seconds while its screen is
    /// wiped (docs/dbus-api.md § Cleaning the screen); the end comes with the `statusChanged`
    /// that follows (``KioskStatus/cleaningUntil``).
    case cleaningStarted(seconds: UInt64)
    /// `CleaningEnded`: input flows again as the locks say.
    case cleaningEnded
    /// kioskd took its bus name (it started, or restarted).
    case daemonStarted
    /// kioskd gave its bus name up (it stopped or crashed).
    case daemonStopped
    /// The bus connection was lost; nothing more comes on this connection.
    case disconnected
}

/// One browser policy kioskd has written (`BrowserPolicies`, docs/browsers.md § What kioskctl
/// status shows).
public struct BrowserPolicyInForce: Hashable, Sendable {
    /// `chromium` or `firefox`.
    public var browser: String
    /// The policy's name as the browser reads it (`DeveloperToolsAvailability`,
    /// `Permissions.Camera`).
    public var policy: String
    /// Its value as JSON text (`2`, `["*"]`).
    public var value: String
    /// The denied restriction's id that put it there, or the web apps whose origins it lists.
    public var cause: String

    public init(browser: String, policy: String, value: String, cause: String) {
        self.browser = browser
        self.policy = policy
        self.value = value
        self.cause = cause
    }
}

/// Saves of kioskd's state failing (`StateStorage`): since when, and why.
public struct StorageFailure: Hashable, Sendable {
    /// When saves began to fail (CLOCK_REALTIME).
    public var since: Timestamp
    /// The last error and what waits to be saved, a sentence.
    public var problem: String

    public init(since: Timestamp, problem: String) {
        self.since = since
        self.problem = problem
    }
}
