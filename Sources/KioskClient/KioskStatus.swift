import KioskAPI

/// The manager's properties: the session and the daemon's version.
public struct KioskStatus: Hashable, Sendable {
    public var sessionState: SessionState
    /// The active session's profile name; empty when no session is active.
    public var activeProfile: String
    /// When the session's time limit runs out (CLOCK_REALTIME); nil when it has none.
    public var sessionDeadline: WallClockTime?
    /// kioskd's version.
    public var version: String
    /// Why the session cannot be enforced as its profile asks, when a daemon says so
    /// (the `SessionProblem` property); nil when the daemon has no such property.
    public var sessionProblem: String?
    /// Problems with the session that do not change its locks (the `SessionWarnings` property,
    /// e.g. a profile's `[[device]]` entry that matches no device); empty when there are none
    /// or the daemon has no such property.
    public var sessionWarnings: [String]

    public init(
        sessionState: SessionState, activeProfile: String, sessionDeadline: WallClockTime?,
        version: String, sessionProblem: String? = nil, sessionWarnings: [String] = []
    ) {
        self.sessionWarnings = sessionWarnings
        self.sessionState = sessionState
        self.activeProfile = activeProfile
        self.sessionDeadline = sessionDeadline
        self.version = version
        self.sessionProblem = sessionProblem
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
    /// kioskd took its bus name (it started, or restarted).
    case daemonStarted
    /// kioskd gave its bus name up (it stopped or crashed).
    case daemonStopped
    /// The bus connection was lost; nothing more comes on this connection.
    case disconnected
}
