/// The wire names of kioskd's D-Bus API v1, defined once and used by the daemon,
/// the client library, `kioskctl` and the tests alike.
public enum KioskWire {
    public static let busName = "org.kioskd.GuidedAccess1"
    public static let objectPath = "/org/kioskd/GuidedAccess1"
    public static let managerInterface = "org.kioskd.GuidedAccess1.Manager"
    public static let errorPrefix = "org.kioskd.GuidedAccess1.Error"
    public static let version = "0.1.0"
    /// kioskd-prompt's Wayland app id (X11: `WM_CLASS`), which compositors match windows by:
    /// labwc's kiosk configuration (`packaging/labwc/rc.xml`) keeps it above the kiosk app.
    public static let promptAppID = "org.kioskd.Prompt"

    /// Member names of `org.kioskd.GuidedAccess1.Manager`: methods, signals and properties.
    public enum Member {
        // Methods
        public static let registerApplication = "RegisterApplication"
        public static let listApplications = "ListApplications"
        public static let unregisterApplication = "UnregisterApplication"
        public static let listRestrictions = "ListRestrictions"
        public static let getRestrictionState = "GetRestrictionState"
        public static let setRestrictionState = "SetRestrictionState"
        public static let startSession = "StartSession"
        public static let endSession = "EndSession"
        public static let forceEndSession = "ForceEndSession"
        public static let setPasscode = "SetPasscode"
        public static let extendSession = "ExtendSession"
        public static let setSessionDeadline = "SetSessionDeadline"
        public static let listProfiles = "ListProfiles"
        public static let reloadProfiles = "ReloadProfiles"
        public static let startTrialSession = "StartTrialSession"
        public static let confirmSession = "ConfirmSession"
        public static let requestSession = "RequestSession"
        public static let releaseSession = "ReleaseSession"
        public static let resetPasscodeThrottle = "ResetPasscodeThrottle"
        /// An admin woke the display kioskd held dark (`[idle]`), or said it went dark.
        public static let wake = "Wake"
        public static let blank = "Blank"
        /// Cleaning the screen: input held for a while (docs/dbus-api.md § Cleaning the screen).
        public static let startCleaning = "StartCleaning"
        public static let stopCleaning = "StopCleaning"
        /// Drawing a profile's touch regions at the kiosk (docs/dbus-api.md § Drawing the regions).
        public static let drawRegions = "DrawRegions"
        // Signals
        public static let restrictionStateChanged = "RestrictionStateChanged"
        public static let exitRequested = "ExitRequested"
        public static let timeLimitWarning = "TimeLimitWarning"
        /// The passcode prompt at the kiosk closed; its argument says why.
        public static let promptClosed = "PromptClosed"
        /// The visitor took the offer of more time: the seconds added, the extensions left.
        public static let timeExtended = "TimeExtended"
        /// Nobody used the kiosk for `[idle] reset-after`: the app goes back to its start page.
        public static let idleReset = "IdleReset"
        /// Cleaning the screen started (or again): its length in seconds.
        public static let cleaningStarted = "CleaningStarted"
        /// Cleaning the screen ended (its time, `StopCleaning`, or the prompt opened).
        public static let cleaningEnded = "CleaningEnded"
        // Properties
        public static let sessionState = "SessionState"
        public static let activeProfile = "ActiveProfile"
        public static let sessionDeadline = "SessionDeadline"
        /// Why the restored session runs with the strictest locks ("" when it runs with its profile).
        public static let sessionProblem = "SessionProblem"
        /// Problems with the active session that do not change its locks (a `[[device]]` entry
        /// that matches no device); empty otherwise.
        public static let sessionWarnings = "SessionWarnings"
        /// When an unconfirmed trial session ends by itself (wall clock µs; 0 when none).
        public static let trialDeadline = "TrialDeadline"
        /// The app the active session is for (its profile's `app`); "" for none.
        public static let activeApp = "ActiveApp"
        public static let version = "Version"
        // Properties of the passcode prompt at the kiosk (kioskd reads the keys; a display draws it)
        public static let promptState = "PromptState"
        public static let promptLength = "PromptLength"
        public static let promptDeadline = "PromptDeadline"
        public static let promptRetryAfter = "PromptRetryAfter"
        public static let promptPad = "PromptPad"
        public static let speakWarnings = "SpeakWarnings"
        /// The language of kioskd's screens during the session (`[session] language`); "" when
        /// the profile leaves it to the kiosk's locale, or when inactive.
        public static let language = "Language"
        // Properties of the offer of more time at the kiosk (`[session] visitor-extensions`)
        /// `closed`, `open` or `exhausted` (``TimeOfferState``).
        public static let timeOffer = "TimeOffer"
        /// How many more times the visitor may extend the time limit (0 without the offer).
        public static let visitorExtensionsLeft = "VisitorExtensionsLeft"
        // Properties of idle time (`[idle]`)
        /// When the idle reset comes unless the visitor answers "Still there?" (wall clock µs);
        /// 0 while the screen is not up.
        public static let idleWarning = "IdleWarning"
        /// `on` or `off`: the display as kioskd wants it (``DisplayPower``).
        public static let displayPower = "DisplayPower"
        /// When cleaning the screen ends (wall clock µs); 0 when it does not run.
        public static let cleaningUntil = "CleaningUntil"
        /// The profile whose regions staff draw at the kiosk; "" when nobody does.
        public static let drawing = "Drawing"
        /// The drawing's bar of buttons (Cancel, Delete, Done) in screen fractions.
        public static let drawingBar = "DrawingBar"
        /// What staff drew so far: the shapes, the selection, the stroke, a notice.
        public static let drawingState = "DrawingState"
        // Properties of the locked regions a display shades (`[touch] show-locked`)
        /// The active session's locked touch regions to shade (``ShadedRegion``, `a(sdad)`);
        /// empty without a session, in an expired one, or with `show-locked = false`.
        public static let lockedRegions = "LockedRegions"
        // The browsers' policy (docs/browsers.md)
        /// The browser policies kioskd has in force and why (`a(ssss)`: browser, policy name,
        /// value as JSON text, the restriction or web apps that caused it).
        public static let browserPolicies = "BrowserPolicies"
        // Passcodes
        /// Whether a passcode set with `SetPasscode` is stored (`b`); a profile's own
        /// `[passcode] hash` is `ListProfiles`' to tell.
        public static let passcodeSet = "PasscodeSet"
        /// Whether the state reaches the disk: `(t failing_since, s problem)`.
        public static let stateStorage = "StateStorage"
    }

    /// Polkit actions checked by the admin methods.
    public enum Action {
        public static let manageRestrictions = "org.kioskd.GuidedAccess1.manage-restrictions"
        public static let manageSession = "org.kioskd.GuidedAccess1.manage-session"
        public static let setPasscode = "org.kioskd.GuidedAccess1.set-passcode"
        /// An app starting and ending its own session (RequestSession, ReleaseSession).
        public static let requestSession = "org.kioskd.GuidedAccess1.request-session"
        /// Waking the display kioskd holds dark, or saying it went dark (Wake, Blank).
        public static let displayPower = "org.kioskd.GuidedAccess1.display-power"
        /// Cleaning the screen (StartCleaning, StopCleaning).
        public static let clean = "org.kioskd.GuidedAccess1.clean"
    }

    /// The limits of docs/dbus-api.md; input beyond them is `InvalidArgs` and changes nothing.
    public enum Limits {
        public static let idBytes = 255
        public static let titleBytes = 256
        public static let detailBytes = 4096
        public static let restrictionsPerApp = 256
        /// Retired restrictions kept per app (their states survive a re-declaration);
        /// past this, the ones retired longest ago are forgotten first.
        public static let retiredPerApp = 256
        public static let applications = 1024
        /// Apps one uid other than root may own.
        public static let applicationsPerUID = 32
        /// Text (ids, titles, details; declared and retired) the apps of one uid other than root
        /// may keep: 1 MiB.
        public static let textBytesPerUID = 1 << 20
        /// Text all apps together may keep: 16 MiB (the state file is rewritten on every change).
        public static let textBytes = 16 << 20
        /// Changes waiting to be saved, of admins and passcode attempts, and of everyone else;
        /// past this a change is answered `Failed` and not made.
        public static let waitingChanges = 256
        /// Changes one uid other than root may have waiting to be saved (registrations of its own
        /// apps), so that no uid can fill the queue for others.
        public static let waitingChangesPerUID = 16
        /// Passcode attempts (`EndSession`, `SetPasscode`) waiting for their turn; past this an
        /// attempt is answered `Throttled` without being checked.
        public static let waitingPasscodeAttempts = 32
        /// Passcode attempts of one uid other than root waiting for their turn (root's are never
        /// refused for a full queue).
        public static let waitingPasscodeAttemptsPerUID = 4
    }
}
