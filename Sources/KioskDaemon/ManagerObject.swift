import Dispatch
import Foundation
import Glibc
import KioskCore
import KioskStore
import Logging
import SystemdKit

/// Who made a call: its unique bus name and effective uid (from the bus driver).
struct Caller {
    var busName: String
    var uid: UInt32

    var metadata: Logger.Metadata { ["bus.name": "\(busName)", "bus.uid": "\(uid)"] }
}

/// `org.kioskd.GuidedAccess1.Manager` at `/org/kioskd/GuidedAccess1`: the D-Bus API v1 of
/// DESIGN §3 over the pure model (`KioskCore`) and the state file (`KioskStore`).
///
/// Lives on the loop thread. Every method has the systemd shape: parse and validate
/// (`InvalidArgs` naming the value) → no-op short-circuit → authorize (polkit, asynchronously;
/// root always) → apply to a copy of the state in the core → persist → take the copy, emit
/// signals and `PropertiesChanged` → reply.
///
/// Changes are persisted off the loop, one at a time, in order (`StateWriter`): a change's copy
/// is made from `state` when its turn comes, so it includes every earlier change, and it becomes
/// `state` (and the reply and signals go out) only once it is on disk. Meanwhile the loop serves
/// reads, other callers and input.
public final class ManagerObject {
    private typealias Member = KioskWire.Member

    private let bus: Bus
    private let loop: EventLoop
    private let store: any StateSaving
    private let profiles: ProfileDirectory
    private let clock: any WallClock
    private let logger: Logger
    /// Decides for callers that are not root (polkit).
    private let authorizer: any Authorizing
    /// Finds a caller's uid (the bus driver).
    private let identifier: any CallerIdentifying

    /// The state as last persisted: what reads answer and the enforcer sees, never ahead of the
    /// disk. Changed only by ``commit(_:profile:)``.
    public private(set) var state: KioskState
    /// The active session's profile (its passcode hash, if any, ends the session). Changed only
    /// by ``commit(_:profile:)``.
    private var activeProfile: Profile?
    /// Makes the session's locks real (input broker, logind inhibitor); told of every commit,
    /// with the state and the active profile together.
    public var enforcer: (any SessionEnforcer)?
    /// Why the restored session's profile could not be loaded (see `sessionProblem`).
    private var restoreProblem = ""
    private var sessionTimer: EventSource?
    /// Calls that may change the state (they passed their checks) and are not answered yet.
    private var changesUnderway = 0
    private var exported: ExportedObject?
    /// Passcode attempts waiting for their turn, and the call of the one being hashed.
    private var waitingPasscodeAttempts: [PasscodeAttempt] = []
    private var passcodeAttemptInFlight: MethodCall?
    /// Where yescrypt runs (a serial queue of its own, never the loop or the cooperative pool).
    private let passcodeWorker = DispatchQueue(label: "org.kioskd.passcode", qos: .userInitiated)
    /// Persists changes, one at a time, on a serial queue of its own.
    private let writer: StateWriter<KioskState>
    /// Where StartSession reads and parses its profile file.
    private let profileReader = DispatchQueue(label: "org.kioskd.profiles", qos: .userInitiated)
    /// How long a stop waits for the save in flight.
    static let stopTimeout: Duration = .seconds(5)

    /// `authorizer` defaults to polkit on `bus`, `identifier` to `bus`'s driver.
    public init(bus: Bus, loop: EventLoop, store: any StateSaving, state: KioskState, profileDirectory: String,
                clock: any WallClock, logger: Logger, authorizer: (any Authorizing)? = nil,
                identifier: (any CallerIdentifying)? = nil) {
        self.bus = bus
        self.loop = loop
        self.store = store
        self.authorizer = authorizer ?? PolkitAuthority(bus: bus)
        self.identifier = identifier ?? bus
        self.state = state
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
        BusInterface(KioskWire.managerInterface, methods: [
            method(Member.registerApplication, in: [("s", "app_id"), ("a(sss)", "restrictions")]) { [unowned self] in
                try registerApplication($0)
            },
            method(Member.listApplications, out: [("as", "app_ids")]) { [unowned self] _ in
                .values([.strings(state.registry.applicationIDs.map(\.rawValue))])
            },
            method(Member.listRestrictions, in: [("s", "app_id")], out: [("a(ssss)", "restrictions")]) { [unowned self] in
                try listRestrictions($0)
            },
            method(Member.getRestrictionState, in: [("s", "app_id"), ("s", "restriction_id")], out: [("s", "state")]) { [unowned self] in
                try getRestrictionState($0)
            },
            method(Member.setRestrictionState, in: [("s", "app_id"), ("s", "restriction_id"), ("s", "state")]) { [unowned self] in
                try setRestrictionState($0)
            },
            method(Member.startSession, in: [("s", "profile")]) { [unowned self] in try startSession($0) },
            method(Member.endSession, in: [("s", "passcode")]) { [unowned self] in try endSession($0) },
            method(Member.forceEndSession) { [unowned self] in try forceEndSession($0) },
            method(Member.setPasscode, in: [("s", "current"), ("s", "new")]) { [unowned self] in try setPasscode($0) },
        ], signals: [
            BusSignal(Member.restrictionStateChanged, arguments: [("s", "app_id"), ("s", "restriction_id"), ("s", "state")]),
            BusSignal(Member.exitRequested),
            BusSignal(Member.timeLimitWarning, arguments: [("t", "seconds_left")]),
        ], properties: [
            BusProperty(Member.sessionState, "s") { [unowned self] in .string(state.session.state.rawValue) },
            BusProperty(Member.activeProfile, "s") { [unowned self] in .string(state.session.profileName) },
            BusProperty(Member.sessionDeadline, "t") { [unowned self] in
                .uint64(UInt64(max(0, state.session.deadline?.microseconds ?? 0)))
            },
            BusProperty(Member.sessionProblem, "s") { [unowned self] in .string(sessionProblem) },
            BusProperty(Member.version, "s", flags: [.const]) { .string(KioskWire.version) },
        ])
    }

    /// A method whose handler's `KioskError`s reply with their documented D-Bus error names.
    private func method(_ name: String, in inArgs: [(String, String)] = [], out outArgs: [(String, String)] = [],
                        _ handler: @escaping (MethodCall) throws -> MethodReply) -> BusMethod {
        BusMethod(name, in: inArgs, out: outArgs) { call in
            do { return try handler(call) } catch { throw Self.busError(error) }
        }
    }

    // MARK: RegisterApplication

    /// Parse and validate → identify → ownership (part of validation: another uid's app id needs
    /// an admin) → no-op (the owner's or root's identical list) → authorize (only for another
    /// uid's app id) → apply → persist → reply.
    private func registerApplication(_ call: MethodCall) throws -> MethodReply {
        let (appID, declarations) = try Self.parseRegistration(call.arguments)
        try identify(call) { [unowned self] caller in
            let needsAdmin = state.registry.needsAuthorization(app: appID, uid: caller.uid)
            if !needsAdmin, isNoOpRegistration(appID, declarations, uid: caller.uid) {
                try call.reply([])
                return
            }
            let owner = state.registry.owner(of: appID) ?? 0
            try authorize(call, caller: caller, action: KioskWire.Action.manageRestrictions, when: needsAdmin,
                          doing: "register the application id \(appID), which belongs to uid \(owner),") { [unowned self] in
                applyRegistration(call, caller: caller, appID: appID, declarations: declarations, isAdmin: needsAdmin)
            }
        }
        return .deferred
    }

    /// Whether declaring `declarations` for `uid` would change nothing, sure only when no other
    /// change is underway (one could still change this app, and this call must land after it).
    private func isNoOpRegistration(_ appID: AppID, _ declarations: [RestrictionDeclaration], uid: UInt32) -> Bool {
        guard changesUnderway == 1, writer.isIdle else { return false }  // 1: this call
        var copy = state
        return (try? copy.declare(appID, restrictions: declarations, uid: uid, isAdmin: false)) == false
    }

    static func parseRegistration(_ arguments: [DBusValue]) throws(KioskError) -> (AppID, [RestrictionDeclaration]) {
        guard arguments.count == 2, let app = arguments[0].string, let items = arguments[1].array else {
            throw KioskError(.invalidArgument, "RegisterApplication takes (s app_id, a(sss) restrictions).")
        }
        let appID = try AppID(app)
        try Registry.checkDeclarationCount(items.count, of: appID)
        var declarations: [RestrictionDeclaration] = []
        declarations.reserveCapacity(items.count)
        for item in items {
            guard let fields = item.fields, fields.count == 3,
                  let id = fields[0].string, let title = fields[1].string, let detail = fields[2].string else {
                throw KioskError(.invalidArgument, "Each restriction must be (s id, s title, s detail).")
            }
            declarations.append(try RestrictionDeclaration(id: id, title: title, detail: detail))
        }
        return (appID, declarations)
    }

    private func applyRegistration(_ call: MethodCall, caller: Caller, appID: AppID,
                                   declarations: [RestrictionDeclaration], isAdmin: Bool) {
        change(call) { [unowned self] in
            var next = state
            guard try next.declare(appID, restrictions: declarations, uid: caller.uid, isAdmin: isAdmin) else {
                try call.reply([])  // the same list again: nothing to write
                return nil
            }
            return Plan(next) { [unowned self] in
                logger.notice("Application registered", metadata: caller.metadata.merging([
                    "app.id": "\(appID)", "restriction.count": "\(declarations.count)",
                ]) { $1 })
                try call.reply([])
            }
        }
    }

    // MARK: ListRestrictions, GetRestrictionState

    private func listRestrictions(_ call: MethodCall) throws -> MethodReply {
        guard let app = call.arguments.first?.string else { throw BusError.invalidArgs("ListRestrictions takes (s app_id).") }
        let restrictions = try state.registry.restrictions(of: AppID(app))
        return .values([.array(elementSignature: "(ssss)", restrictions.map {
            .structure([.string($0.id.rawValue), .string($0.title), .string($0.detail), .string($0.state.rawValue)])
        })])
    }

    private func getRestrictionState(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 2, let app = call.arguments[0].string, let id = call.arguments[1].string else {
            throw BusError.invalidArgs("GetRestrictionState takes (s app_id, s restriction_id).")
        }
        let appID = try AppID(app)
        let current = try state.registry.state(of: RestrictionID(id), in: appID)
        return .values([.string(current.rawValue)])
    }

    // MARK: SetRestrictionState

    private func setRestrictionState(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 3, let app = call.arguments[0].string, let id = call.arguments[1].string,
              let text = call.arguments[2].string else {
            throw BusError.invalidArgs("SetRestrictionState takes (s app_id, s restriction_id, s state).")
        }
        let appID = try AppID(app)
        let restrictionID = try RestrictionID(id)
        let newState = try RestrictionState(parsing: text)
        // The no-op answer is only sure when no change is underway (being identified, authorized
        // or waiting to be saved): one that is could still set this restriction, and this call
        // must then land after it.
        let current = try state.registry.state(of: restrictionID, in: appID)
        if current == newState, changesUnderway == 0, writer.isIdle { return .empty }
        try identify(call) { [unowned self] caller in
            try authorize(call, caller: caller, action: KioskWire.Action.manageRestrictions, doing: "set restriction states") { [unowned self] in
                applyRestrictionState(call, caller: caller, appID: appID, restrictionID: restrictionID, state: newState)
            }
        }
        return .deferred
    }

    private func applyRestrictionState(_ call: MethodCall, caller: Caller, appID: AppID, restrictionID: RestrictionID,
                                       state newState: RestrictionState) {
        change(call) { [unowned self] in
            var next = state
            guard try next.setRestrictionState(newState, of: restrictionID, in: appID) else {
                try call.reply([])  // another call set it meanwhile
                return nil
            }
            return Plan(next) { [unowned self] in
                logger.notice("Restriction state set", metadata: caller.metadata.merging([
                    "app.id": "\(appID)", "restriction.id": "\(restrictionID)", "restriction.state": "\(newState.rawValue)",
                ]) { $1 })
                emit(Member.restrictionStateChanged, [.string(appID.rawValue), .string(restrictionID.rawValue), .string(newState.rawValue)])
                try call.reply([])
            }
        }
    }

    // MARK: StartSession

    /// Parse and validate (the name; no session may be active) → identify → authorize → load the
    /// profile (read and parsed off the loop) → apply → persist → commit → signal → reply.
    private func startSession(_ call: MethodCall) throws -> MethodReply {
        guard let name = call.arguments.first?.string else { throw BusError.invalidArgs("StartSession takes (s profile).") }
        try Profile.validateName(name)
        try state.session.checkCanStart()
        try identify(call) { [unowned self] caller in
            try authorize(call, caller: caller, action: KioskWire.Action.manageSession, doing: "start a guided-access session") { [unowned self] in
                loadProfile(call, name) { [unowned self] profile in
                    applyStartSession(call, caller: caller, name: name, profile: profile)
                }
            }
        }
        return .deferred
    }

    /// Reads and parses the profile `name` off the loop, then runs `next` with it on the loop;
    /// a profile that cannot be loaded is the call's error reply.
    private func loadProfile(_ call: MethodCall, _ name: String, then next: @escaping (Profile) throws -> Void) {
        loop.offload(to: profileReader, { [profiles] in
            Result { () throws(KioskError) in try profiles.load(name) }
        }, then: { [unowned self] loaded in
            attempt(call) { try next(loaded.get()) }
        })
    }

    private func applyStartSession(_ call: MethodCall, caller: Caller, name: String, profile: Profile) {
        change(call) { [unowned self] in
            var next = state
            let changes = try next.session.start(profileName: name, profile: profile, at: clock.now(), registry: &next.registry)
            // The enforcer applies the profile together with the state, once both are on disk.
            return Plan(next, profile: .set(profile)) { [unowned self] in
                logger.notice("Session started", metadata: caller.metadata.merging(["session.profile": "\(name)"]) { $1 })
                emitRestrictionChanged(changes)
                emitSessionChanged()
                scheduleSessionTimer()
                try call.reply([])
            }
        }
    }

    // MARK: EndSession, ForceEndSession

    private func endSession(_ call: MethodCall) throws -> MethodReply {
        guard let passcode = call.arguments.first?.string else { throw BusError.invalidArgs("EndSession takes (s passcode).") }
        try state.session.checkActive()
        try state.throttle.check(at: clock.now())
        try identify(call) { [unowned self] caller in
            // Anyone who knows the passcode may end the session: no polkit check.
            try enqueue(PasscodeAttempt(call: call, caller: caller, passcode: passcode, purpose: .endSession))
        }
        return .deferred
    }

    private func forceEndSession(_ call: MethodCall) throws -> MethodReply {
        try state.session.checkActive()
        try identify(call) { [unowned self] caller in
            try authorize(call, caller: caller, action: KioskWire.Action.manageSession, doing: "end a guided-access session without the passcode") { [unowned self] in
                applyEndSession(call, caller: caller, .forced)
            }
        }
        return .deferred
    }

    /// Ends the active session; with `checked`, only if it is still the session the passcode was
    /// checked for (another may have started meanwhile). The locks lift once the end is on disk.
    private func applyEndSession(_ call: MethodCall, caller: Caller, _ ending: KioskState.SessionEnding,
                                 finally: (() -> Void)? = nil) {
        change(call, finally: finally) { [unowned self] in
            var next = state
            let profile = next.session.profileName
            let changes = try next.endSession(ending)
            return Plan(next, profile: .set(nil)) { [unowned self] in
                logger.notice(ending == .forced ? "Session force-ended" : "Session ended", metadata: caller.metadata.merging(["session.profile": "\(profile)"]) { $1 })
                emitRestrictionChanged(changes)
                emitSessionChanged()
                scheduleSessionTimer()
                try call.reply([])
            }
        }
    }

    // MARK: SetPasscode

    private func setPasscode(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 2, let current = call.arguments[0].string, let new = call.arguments[1].string else {
            throw BusError.invalidArgs("SetPasscode takes (s current, s new).")
        }
        try PasscodeCheck.validateNew(new)
        try identify(call) { [unowned self] caller in
            try authorize(call, caller: caller, action: KioskWire.Action.setPasscode, doing: "set the passcode") { [unowned self] in
                try enqueue(PasscodeAttempt(call: call, caller: caller, passcode: current, purpose: .setPasscode(new: new)))
            }
        }
        return .deferred
    }

    // MARK: Passcode attempts, one at a time, hashed off the loop

    /// An EndSession or SetPasscode call waiting for its passcode to be checked.
    private struct PasscodeAttempt {
        enum Purpose {
            case endSession
            case setPasscode(new: String)

            var check: PasscodeCheck.Purpose {
                switch self {
                case .endSession: .endSession
                case .setPasscode: .setPasscode
                }
            }
        }

        var call: MethodCall
        var caller: Caller
        var passcode: String
        var purpose: Purpose
    }

    /// What the worker found: whether the passcode matched, and for SetPasscode the new hash.
    private struct PasscodeVerdict: Sendable {
        var matches: Bool
        var newHash: Result<String, KioskError>?
    }

    /// More attempts than this waiting are refused (`Throttled`) rather than queued.
    static let maxWaitingPasscodeAttempts = 32

    /// Queues `attempt`. Attempts run one at a time, in order: each checks the throttle on the loop
    /// after the previous one's failure is recorded, so parallel guesses get no free tries, and
    /// its yescrypt work (tens of ms) runs on `passcodeWorker` while the loop serves other callers.
    private func enqueue(_ attempt: PasscodeAttempt) throws(KioskError) {
        guard waitingPasscodeAttempts.count < Self.maxWaitingPasscodeAttempts else {
            throw KioskError(.throttled, "\(waitingPasscodeAttempts.count) passcode attempts are already waiting to be checked; try again in 1 s.")
        }
        waitingPasscodeAttempts.append(attempt)
        startNextPasscodeAttempt()
    }

    /// Starts the next waiting attempt unless one is being hashed: checks the throttle and the
    /// session now, takes the hash to compare with, and hands the hashing to the worker.
    private func startNextPasscodeAttempt() {
        while passcodeAttemptInFlight == nil, !waitingPasscodeAttempts.isEmpty {
            let waiting = waitingPasscodeAttempts.removeFirst()
            attempt(waiting.call) {
                try state.throttle.check(at: clock.now())
                let check = try PasscodeCheck(waiting.purpose.check, in: state, activeProfile: activeProfile)
                let session = state.session.identity
                passcodeAttemptInFlight = waiting.call
                loop.offload(to: passcodeWorker, { [passcode = waiting.passcode, purpose = waiting.purpose] in
                    Self.judge(passcode, with: check, purpose: purpose)
                }, then: { [unowned self] verdict in
                    // The next attempt meets the throttle only once this one's outcome is on disk.
                    finish(waiting, verdict: verdict, check: check, session: session) { [unowned self] in
                        passcodeAttemptInFlight = nil
                        startNextPasscodeAttempt()
                    }
                })
            }
        }
    }

    /// On the worker: the slow part (what a missing hash means is the check's rule).
    private static func judge(_ passcode: String, with check: PasscodeCheck,
                              purpose: PasscodeAttempt.Purpose) -> PasscodeVerdict {
        guard check.accepts(passcode, verify: Passcode.verify) else { return PasscodeVerdict(matches: false) }
        switch purpose {
        case .endSession:
            return PasscodeVerdict(matches: true)
        case .setPasscode(let new):
            return PasscodeVerdict(matches: true, newHash: Result { () throws(KioskError) in try Passcode.hash(new) })
        }
    }

    /// Back on the loop: a wrong passcode is recorded in the throttle (persisted) and answered
    /// `WrongPasscode`; a right one does what the call asked, if it still applies: the session
    /// it was checked for may have ended (or another started) meanwhile. `done` runs once the
    /// outcome is on disk (or could not be written, or there was nothing to write).
    private func finish(_ attempt: PasscodeAttempt, verdict: PasscodeVerdict, check: PasscodeCheck,
                        session: GuidedSession.Identity?, done: @escaping () -> Void) {
        guard verdict.matches else {
            change(attempt.call, finally: done) { [unowned self] in
                var next = state
                next.throttle.recordFailure(at: clock.now())
                let failures = next.throttle.failures
                return Plan(next, keepIfSaveFails: true) { [unowned self] in
                    logger.warning("Wrong passcode", metadata: attempt.caller.metadata.merging(["passcode.failures": "\(failures)"]) { $1 })
                    throw check.wrongPasscode
                }
            }
            return
        }
        switch attempt.purpose {
        case .endSession:
            applyEndSession(attempt.call, caller: attempt.caller, .passcode(checkedFor: session), finally: done)
        case .setPasscode:
            change(attempt.call, finally: done) { [unowned self] in
                var next = state
                next.setPasscode(hash: try verdict.newHash!.get())
                return Plan(next) { [unowned self] in
                    logger.notice("Passcode set", metadata: attempt.caller.metadata)
                    try attempt.call.reply([])
                }
            }
        }
    }

    // MARK: The session's time limit

    /// Brings a session restored from the state file up to date, applies its locks through the
    /// enforcer (fail closed: a profile that can no longer be loaded gets the strictest locks,
    /// and `SessionProblem` says why) and arms its timer. Call once, before serving input.
    public func restoreSession() {
        var profile: Profile?
        if state.session.isActive {
            let name = state.session.profileName
            do {
                profile = try profiles.load(name)
            } catch {
                restoreProblem = KioskState.restoreProblem(profileName: name, reason: error.message)
                logger.error("The restored session's profile could not be loaded; enforcing the strictest locks",
                             metadata: ["session.profile": "\(name)", "error": "\(error.message)"])
            }
        }
        commit(state, profile: .set(profile))
        guard state.session.isActive else { return }
        // Before READY, with nothing to serve: the restored session is brought up to date
        // synchronously, so an expired session's locks are on before any device is taken.
        if let progress = sessionProgress() {
            do {
                try store.save(progress.state)
            } catch {
                logger.error("Could not save the session's progress", metadata: ["error": "\(error)"])
            }
            commit(progress.state)
            progress.emit()
        }
        scheduleSessionTimer()
    }

    /// Why the active session runs with the strictest locks instead of its profile's: set when a
    /// restored session's profile could not be loaded; "" otherwise.
    public var sessionProblem: String {
        state.session.isActive && activeProfile == nil ? restoreProblem : ""
    }

    /// Emits `ExitRequested`: the exit gesture was seen, the kiosk UI should ask for the passcode.
    public func requestExit() {
        logger.notice("Exit gesture seen", metadata: ["session.profile": "\(state.session.profileName)"])
        emit(Member.exitRequested, [])
    }

    /// A change of the active profile that comes with a committed state.
    enum ProfileChange {
        case unchanged
        case set(Profile?)
    }

    /// The commit step: makes `next` the state (and, with `.set`, the active profile) and has
    /// the enforcer apply both at once. Called once a change is on disk (or, for a change that
    /// only tightens, once its save failed), before its signals and its reply.
    private func commit(_ next: KioskState, profile: ProfileChange = .unchanged) {
        state = next
        if case .set(let profile) = profile { activeProfile = profile }
        enforcer?.enforce(state, profile: activeProfile)
    }

    private func scheduleSessionTimer() {
        do {
            guard let wake = state.session.nextWakeup else {
                try sessionTimer?.setEnabled(.off)
                return
            }
            let delay = max(.zero, wake - clock.now())
            if let sessionTimer {
                try sessionTimer.rearm(after: delay)
            } else {
                sessionTimer = try loop.addTimer(clock: .realtime, after: delay, accuracy: .milliseconds(10)) { [unowned self] in
                    sessionTick()
                }
            }
        } catch {
            // The time limit is a lock: a timer that cannot be armed must be seen.
            logger.error("Could not arm the session's timer", metadata: [
                "session.profile": "\(state.session.profileName)", "error": "\(error)",
            ])
        }
    }

    /// The session's timer: warnings and expiry are persisted in turn with the other changes.
    /// A save that fails is logged and the state applied anyway, so an expiry's locks apply;
    /// the next write persists it.
    private func sessionTick() {
        // Urgent: an expiry is a lock, so it goes right after the save in flight, never behind
        // (or refused for) a queue of other callers' changes. The timer is one-shot and re-armed
        // only once this tick is done, so at most one tick waits.
        writer.submit(urgent: true, { [unowned self] in
            guard let progress = sessionProgress() else {
                scheduleSessionTimer()
                return nil
            }
            return StateWriter.Write(state: progress.state, durable: { [unowned self] in
                commit(progress.state)
                progress.emit()
                scheduleSessionTimer()
            }, failed: { [unowned self] error in
                logger.error("Could not save the session's progress", metadata: ["error": "\(error)"])
                commit(progress.state)
                progress.emit()
                scheduleSessionTimer()
            })
        }, dropped: { _ in })
    }

    /// The state with the session advanced to now, and the signals that tell of it; nil when
    /// nothing happened.
    private func sessionProgress() -> (state: KioskState, emit: () -> Void)? {
        var next = state
        let events = next.session.advance(to: clock.now())
        guard !events.isEmpty else { return nil }
        return (next, { [unowned self] in
            for event in events {
                switch event {
                case .warning(let secondsLeft):
                    emit(Member.timeLimitWarning, [.uint64(secondsLeft)])
                case .expired:
                    logger.notice("Session time limit reached", metadata: ["session.profile": "\(state.session.profileName)"])
                    emitSessionChanged()
                }
            }
        })
    }

    // MARK: Steps shared by the methods

    /// Looks the caller's uid up with the bus driver (without blocking), then runs `next`;
    /// whatever `next` throws becomes the call's error reply.
    private func identify(_ call: MethodCall, then next: @escaping (Caller) throws -> Void) throws {
        guard let sender = call.sender else { throw BusError.accessDenied("The call has no sender.") }
        // Every call that may change the state comes through here: it is underway until answered.
        changesUnderway += 1
        call.whenAnswered { [weak self] in self?.changesUnderway -= 1 }
        try identifier.unixUser(ofName: sender) { [unowned self] result in
            attempt(call) {
                guard case .success(let uid) = result else {
                    throw BusError.accessDenied("Could not find the uid of \(sender).")
                }
                try next(Caller(busName: sender, uid: uid))
            }
        }
    }

    /// Root is always allowed; anyone else needs polkit's `allowed` for `action`; with no
    /// polkit on the bus, only root. With `when: false` nothing is asked.
    private func authorize(_ call: MethodCall, caller: Caller, action: String, when needed: Bool = true,
                           doing what: String, then next: @escaping () throws -> Void) throws {
        if !needed || caller.uid == 0 {
            try next()
            return
        }
        try authorizer.authorize(action: action, busName: caller.busName) { [unowned self] result in
            attempt(call) {
                switch result {
                case .success(.allowed):
                    try next()
                case .success(.unavailable):
                    throw KioskError(.accessDenied, "uid \(caller.uid) may not \(what): polkit is not running, so only root may.")
                case .success(.denied), .success(.challenge):
                    throw KioskError(.accessDenied, "uid \(caller.uid) may not \(what) (polkit action \(action)).")
                case .failure(let error):
                    logger.warning("polkit check failed", metadata: caller.metadata.merging(["error": "\(error)"]) { $1 })
                    throw KioskError(.accessDenied, "uid \(caller.uid) may not \(what): polkit could not be asked.")
                }
            }
        }
    }

    /// What a change writes once its turn comes, and what follows once it is on disk.
    private struct Plan {
        var state: KioskState
        /// The active profile to take together with `state` (the enforcer sees both at once).
        var profile: ProfileChange
        /// Log, emit and reply; what it throws is the call's error reply.
        var then: () throws -> Void
        /// A save that fails still makes `state` the state (logged), and `then` runs: for a change
        /// that only tightens, like a wrong passcode counted by the throttle (fail closed: a disk
        /// that refuses writes must not give unlimited guesses). The next save persists it.
        var keepIfSaveFails: Bool

        init(_ state: KioskState, profile: ProfileChange = .unchanged, keepIfSaveFails: Bool = false,
             then: @escaping () throws -> Void) {
            self.state = state
            self.profile = profile
            self.keepIfSaveFails = keepIfSaveFails
            self.then = then
        }
    }

    /// Queues a change of the state for `call`. When its turn comes (every earlier change is on
    /// disk or failed), `compute` makes the next state from `state`, or answers `call` itself and
    /// returns nil. The plan's state is saved off the loop; then it becomes `state` and the plan's
    /// `then` runs: a reply or a signal never promises what is not on disk. A save that fails
    /// changes nothing and answers `call` with the error. `finally` runs after all of that, on
    /// every path.
    private func change(_ call: MethodCall, finally: (() -> Void)? = nil, _ compute: @escaping () throws -> Plan?) {
        writer.submit({ [unowned self] in
            let plan: Plan?
            do {
                plan = try compute()
            } catch {
                try? call.replyError(Self.busError(error))
                plan = nil
            }
            guard let plan else {
                finally?()
                return nil
            }
            return StateWriter.Write(state: plan.state, durable: { [unowned self] in
                commit(plan.state, profile: plan.profile)
                attempt(call, plan.then)
                finally?()
            }, failed: { [unowned self] error in
                logger.error("Could not save the state", metadata: ["store.path": "\(store.path)", "error": "\(error)"])
                if plan.keepIfSaveFails {
                    commit(plan.state, profile: plan.profile)
                    attempt(call, plan.then)
                } else {
                    try? call.replyError(Self.busError(error))
                }
                finally?()
            })
        }, dropped: { refusal in
            switch refusal {
            case .stopping:
                try? call.replyError(BusError(name: BusError.failed, message: "kioskd is stopping; the change was not made."))
            case .full(let waiting):
                try? call.replyError(BusError(name: BusError.failed, message: "\(waiting) changes are already waiting to be saved; the change was not made."))
            }
            finally?()
        })
    }

    /// Stops taking changes (those waiting are answered with an error), lets the save in flight
    /// finish and its reply go out, then runs `then`; at most `stopTimeout` later.
    public func stop(then: @escaping () -> Void) {
        writer.stop(within: Self.stopTimeout, then: then)
    }

    private func attempt(_ call: MethodCall, _ step: () throws -> Void) {
        do {
            try step()
        } catch {
            try? call.replyError(Self.busError(error))
        }
    }

    static func busError(_ error: any Error) -> BusError {
        switch error {
        case let error as KioskError: BusError(name: error.code.dbusName, message: error.message)
        case let error as BusError: error
        case let error as StoreError: BusError(name: BusError.failed, message: "The change was not made: \(error.message)")
        default: BusError(name: BusError.failed, message: "\(error)")
        }
    }

    private func emitRestrictionChanged(_ changes: [GuidedSession.Change]) {
        for change in changes {
            emit(Member.restrictionStateChanged, [.string(change.app.rawValue), .string(change.restriction.rawValue), .string(change.state.rawValue)])
        }
    }

    private func emitSessionChanged() {
        do {
            try bus.emitPropertiesChanged(path: KioskWire.objectPath, interface: KioskWire.managerInterface,
                                          properties: [Member.sessionState, Member.activeProfile, Member.sessionDeadline,
                                                       Member.sessionProblem])
        } catch {
            logger.error("Could not emit PropertiesChanged", metadata: ["error": "\(error)"])
        }
    }

    private func emit(_ member: String, _ arguments: [DBusValue]) {
        do {
            try bus.emitSignal(path: KioskWire.objectPath, interface: KioskWire.managerInterface, member: member, arguments: arguments)
        } catch {
            logger.error("Could not emit a signal", metadata: ["signal": "\(member)", "error": "\(error)"])
        }
    }
}

