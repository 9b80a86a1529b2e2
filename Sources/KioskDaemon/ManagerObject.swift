import Dispatch
import Glibc
import KioskCore
import KioskInput
import KioskStore
import Logging
import SystemPackage
import SystemdKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Who made a call: its unique bus name and effective uid (from the bus driver).
struct Caller {
    var busName: String
    var uid: UInt32

    var metadata: Logger.Metadata { ["bus.name": "\(busName)", "bus.uid": "\(uid)"] }

    /// The kiosk itself: the passcode typed at its prompt (an event source of its own, logged
    /// under this name; its throttle count is `kiosk`, not uid 0's).
    static let kiosk = Caller(busName: "kiosk", uid: 0)
}

/// `org.kioskd.GuidedAccess1.Manager` at `/org/kioskd/GuidedAccess1`: the D-Bus API v1
/// (docs/dbus-api.md) over the pure model (`KioskCore`) and the state file (`KioskStore`).
///
/// Lives on the loop thread. Every method has the systemd shape: parse and validate
/// (`InvalidArgs` naming the value) → no-op short-circuit → authorize (polkit, asynchronously;
/// root always) → apply to a copy of the state in the core (a session call: of the session
/// machine, `ManagerObject+Machine.swift`) → persist → take the copy, emit signals and
/// `PropertiesChanged` → reply.
///
/// Changes are persisted off the loop, one at a time, in order (`StateWriter`): a change's copy
/// is made from `state` when its turn comes, so it includes every earlier change, and it becomes
/// `state` (and the reply and signals go out) only once it is on disk. Meanwhile the loop serves
/// reads, other callers and input.
///
/// One file per group of D-Bus members, as docs/dbus-api.md § "Where each group lives" names
/// them (`scripts/check-manager-groups.py` holds the files to that table).
public final class ManagerObject {
    typealias Member = KioskWire.Member

    let bus: Bus
    let loop: EventLoop
    let store: any StateSaving
    let profiles: ProfileDirectory
    let clock: any KioskClock
    let logger: Logger
    /// Decides for callers that are not root (polkit).
    let authorizer: any Authorizing
    /// Finds a caller's uid (the bus driver).
    let identifier: any CallerIdentifying

    /// The session machine (docs/architecture.md § The session machine): the state as last
    /// persisted — what reads answer and the enforcer sees, never ahead of the disk —, the active
    /// session's profile (its passcode hash, if any, ends the session; why a reload or a restore
    /// could not read it), and the prompt at the kiosk. What is persisted changes only by
    /// ``commit(_:)``.
    var machine: SessionMachine
    /// The state as last persisted.
    public var state: KioskState { machine.state }
    /// The active session's profile.
    var activeProfile: Profile? { machine.profile }
    /// Makes the session's locks real (input broker, logind inhibitor); told of every commit,
    /// with the state and the active profile together.
    public var enforcer: (any SessionEnforcer)? {
        didSet { enforcer?.onProblemChanged = { [weak self] in self?.emitSessionProblemChanged() } }
    }
    var sessionTimer: EventSource?
    /// The app ids kioskd declares itself (the built-in browsers, the web apps' manifests):
    /// `RegisterApplication` and `UnregisterApplication` refuse them to everyone.
    var reservedApps = ReservedApps()
    /// Writes the browsers' policy on every commit (ManagerObject+Browsers.swift); nil until
    /// ``governBrowsers(_:)``.
    var browserPolicy: BrowserPolicyWriter?
    /// Where the web apps' manifests are (`--apps-dir`), and those in use (each app's last good
    /// one), in the order of their ids; nil and empty until ``governWebApps(directory:)``.
    var webAppDirectory: WebAppDirectory?
    var webApps: [WebAppManifest] = []
    /// The wall-clock time to show for a kiosk-clock time (`SessionDeadline`); kioskd's is the
    /// ``KioskClockMarker``'s, tests keep the identity.
    public var displayTime: (Timestamp) -> Timestamp = { $0 }
    /// How often a session with a time limit saves the kiosk clock, so that after a power cut
    /// at most this much of its time is counted again.
    static let checkpointInterval: Duration = .seconds(60)
    /// Keeps one uid's repeated lines from flooding the journal (`audit`).
    var repeats = RepeatLimiter()
    var repeatsTimer: EventSource?
    var repeatsTimerArmed = false
    /// Calls that may change the state (they passed their checks) and are not answered yet.
    var changesUnderway = 0
    var exported: ExportedObject?
    /// Passcode attempts waiting for their turn, and the call of the one being hashed.
    var waitingPasscodeAttempts: [PasscodeAttempt] = []
    var passcodeAttemptInFlight: (any Requester)?
    /// kioskd is stopping (``stop(then:)``): no passcode attempt starts.
    var isStopping = false
    var promptTimer: EventSource?
    /// Idle time's timer (ManagerObject+Idle.swift), and how long ago the last physical input
    /// came (the broker's stamp; nil: no broker, or no input yet).
    var idleTimer: EventSource?
    public var timeSinceInput: (() -> Duration?)?
    /// Ends the cleaning of the screen by time (ManagerObject+Cleaning.swift).
    var cleaningTimer: EventSource?
    /// Staff drawing regions (ManagerObject+Drawing.swift): what they drew so far, the admin's
    /// `DrawRegions` to answer and who made it, the wait's timer, and the watch on that admin's
    /// connection.
    var regionDrawing: RegionDrawing?
    var drawingCall: MethodCall?
    var drawingCaller: Caller?
    var drawingTimer: EventSource?
    var drawingWatch: BusSlot?
    /// How many points of the stroke being drawn `DrawingState` last carried.
    var drawingStrokeSent = 0
    /// Where yescrypt runs (a serial queue of its own, never the loop or the cooperative pool).
    let passcodeWorker = DispatchQueue(label: "org.kioskd.passcode", qos: .userInitiated)
    /// Persists changes, one at a time, on a serial queue of its own.
    let writer: StateWriter<KioskState>
    /// Where StartSession reads and parses its profile file.
    let profileReader = DispatchQueue(label: "org.kioskd.profiles", qos: .userInitiated)
    /// Whether saves reach the disk, and what waits to (ManagerObject+Storage.swift).
    var storage = StateStorage()
    /// Where a state holding changes whose save failed is kept until it is saved: a file in the
    /// runtime directory, so that a restart within the boot keeps them; nil: nowhere.
    public var pendingStore: StateStore?
    /// Saves the state again while saves fail.
    var retryTimer: EventSource?
    /// How long a stop waits for the save in flight.
    static let stopTimeout: Duration = .seconds(5)

    /// `authorizer` defaults to polkit on `bus`, `identifier` to `bus`'s driver.
    public init(
        bus: Bus, loop: EventLoop, store: any StateSaving, state: KioskState, profileDirectory: String,
        clock: any KioskClock, logger: Logger, authorizer: (any Authorizing)? = nil,
        identifier: (any CallerIdentifying)? = nil
    ) {
        self.bus = bus
        self.loop = loop
        self.store = store
        self.authorizer = authorizer ?? PolkitAuthority(bus: bus)
        self.identifier = identifier ?? bus
        machine = SessionMachine(state: state, profile: nil)
        profiles = ProfileDirectory(path: profileDirectory)
        self.clock = clock
        self.logger = logger
        writer = StateWriter(loop: loop, queue: DispatchQueue(label: "org.kioskd.store", qos: .userInitiated)) {
            [store] state in try store.save(state)
        }
    }

    /// Serves the interface at `KioskWire.objectPath`. Call before taking the bus name.
    public func export() throws(Errno) {
        exported = try bus.export(interface, at: KioskWire.objectPath)
    }

    // MARK: The interface

    var interface: BusInterface {
        BusInterface(
            KioskWire.managerInterface,
            methods: [
                method(
                    Member.registerApplication, in: [("s", "app_id"), ("a(sss)", "restrictions")],
                    // Read no further than the largest list kioskd takes: a 32 MiB call is refused
                    // before it is made into values.
                    limits: ReadLimits(
                        arrayItems: KioskWire.Limits.restrictionsPerApp, stringBytes: KioskWire.Limits.detailBytes)
                ) {
                    [unowned self] in
                    try registerApplication($0)
                },
                method(Member.unregisterApplication, in: [("s", "app_id")]) { [unowned self] in
                    try unregisterApplication($0)
                },
                method(Member.listApplications, out: [("as", "app_ids")]) { [unowned self] in
                    try listApplications($0)
                },
                method(Member.listRestrictions, in: [("s", "app_id")], out: [("a(ssss)", "restrictions")]) {
                    [unowned self] in
                    try listRestrictions($0)
                },
                method(
                    Member.getRestrictionState, in: [("s", "app_id"), ("s", "restriction_id")], out: [("s", "state")]
                ) { [unowned self] in
                    try getRestrictionState($0)
                },
                method(Member.setRestrictionState, in: [("s", "app_id"), ("s", "restriction_id"), ("s", "state")]) {
                    [unowned self] in
                    try setRestrictionState($0)
                },
                method(Member.startSession, in: [("s", "profile")]) { [unowned self] in try startSession($0) },
                method(Member.endSession, in: [("s", "passcode")]) { [unowned self] in try endSession($0) },
                method(Member.forceEndSession) { [unowned self] in try forceEndSession($0) },
                method(Member.extendSession, in: [("x", "seconds")]) { [unowned self] in try extendSession($0) },
                method(Member.setSessionDeadline, in: [("t", "usec")]) { [unowned self] in try setSessionDeadline($0) },
                method(Member.listProfiles, out: [("a(ssbb)", "profiles")]) { [unowned self] in try listProfiles($0) },
                method(Member.reloadProfiles) { [unowned self] in try reloadProfiles($0) },
                method(Member.startTrialSession, in: [("s", "profile"), ("t", "seconds")]) { [unowned self] in
                    try startTrialSession($0)
                },
                method(Member.confirmSession) { [unowned self] in try confirmSession($0) },
                method(Member.requestSession, in: [("s", "app_id"), ("s", "profile")]) { [unowned self] in
                    try requestSession($0)
                },
                method(Member.releaseSession, in: [("s", "app_id")]) { [unowned self] in try releaseSession($0) },
                method(Member.setPasscode, in: [("s", "current"), ("s", "new")]) { [unowned self] in try setPasscode($0)
                },
                method(Member.resetPasscodeThrottle, in: [("s", "source")]) { [unowned self] in
                    try resetPasscodeThrottle($0)
                },
                method(Member.wake) { [unowned self] in try wake($0) },
                method(Member.blank) { [unowned self] in try blank($0) },
            ] + cleaningMethods + drawingMethods,
            signals: [
                BusSignal(
                    Member.restrictionStateChanged,
                    arguments: [("s", "app_id"), ("s", "restriction_id"), ("s", "state")]),
                BusSignal(Member.exitRequested),
                BusSignal(Member.timeLimitWarning, arguments: [("t", "seconds_left")]),
                BusSignal(Member.promptClosed, arguments: [("s", "reason")]),
                BusSignal(Member.timeExtended, arguments: [("t", "seconds_added"), ("u", "extensions_left")]),
                BusSignal(Member.idleReset),
            ] + Self.cleaningSignals,
            properties: [
                BusProperty(Member.sessionState, "s") { [unowned self] in .string(state.session.state.rawValue) },
                BusProperty(Member.activeProfile, "s") { [unowned self] in .string(state.session.profileName) },
                BusProperty(Member.sessionDeadline, "t") { [unowned self] in
                    .uint64(UInt64(max(0, state.session.deadline.map(displayTime)?.microseconds ?? 0)))
                },
                BusProperty(Member.sessionProblem, "s") { [unowned self] in .string(sessionProblem) },
                BusProperty(Member.activeApp, "s") { [unowned self] in
                    .string(state.session.isActive ? activeProfile?.app?.rawValue ?? "" : "")
                },
                BusProperty(Member.trialDeadline, "t") { [unowned self] in
                    .uint64(UInt64(max(0, state.session.trialEnd.map(displayTime)?.microseconds ?? 0)))
                },
                BusProperty(Member.sessionWarnings, "as") { [unowned self] in
                    .array(elementSignature: "s", sessionWarnings.map(DBusValue.string))
                },
            ] + promptProperties + idleProperties + cleaningProperties + drawingProperties + lockedRegionsProperties
                + browserProperties + passcodeProperties + storageProperties + [
                    BusProperty(Member.version, "s", flags: [.const]) { .string(KioskWire.version) }
                ])
    }

    /// A method whose handler's `KioskError`s reply with their documented D-Bus error names.
    func method(
        _ name: String, in inArgs: [(String, String)] = [], out outArgs: [(String, String)] = [],
        limits: ReadLimits = .none, _ handler: @escaping (MethodCall) throws -> MethodReply
    ) -> BusMethod {
        BusMethod(name, in: inArgs, out: outArgs, limits: limits) { call in
            do { return try handler(call) } catch { throw Self.busError(error) }
        }
    }

    /// The commit step: makes `next` (the machine with a change applied when its turn came) the
    /// machine, keeping the live prompt, and has the enforcer apply the state and the session's
    /// profile at once. Called once a change is on disk (or, for a change that only tightens,
    /// once its save failed), before its signals and its reply.
    /// `browserFiles` says whether the browsers' files are to be written here, or were written
    /// by the state writer (``browserWrite(for:)``).
    func commit(_ next: SessionMachine, browserFiles: BrowserFiles = .writeHere) {
        machine.adopt(next)
        enforcer?.enforce(state, profile: activeProfile)
        switch browserFiles {
        case .writeHere: writeBrowserPolicies()
        case .written(let outcome): browserPoliciesWritten(outcome as? BrowserPolicyWriter.Job.Outcome)
        }
    }

    /// Where a commit's browser policy files come from.
    enum BrowserFiles {
        /// Written by ``commit(_:browserFiles:)`` itself, on the loop.
        case writeHere
        /// Written on the state writer's queue after the save: what ``browserWrite(for:)``
        /// returned there (nil when the files held the policies already).
        case written((any Sendable)?)
    }
}
