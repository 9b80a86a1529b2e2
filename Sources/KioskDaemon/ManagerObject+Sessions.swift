import KioskCore
import KioskCrypt
import Logging
import SystemPackage
import SystemdKit

extension ManagerObject {
    // MARK: StartSession

    /// Parse and validate (the name) → identify → authorize → load the
    /// profile (read and parsed off the loop) → apply → persist → commit → signal → reply.
    func startSession(_ call: MethodCall) throws -> MethodReply {
        guard let name = call.arguments.first?.string else {
            throw KioskError(.invalidArgument, "StartSession takes (s profile).")
        }
        return try startSession(call, name: name, trial: nil)
    }

    /// `StartTrialSession(s profile, t seconds)`: a session that ends by itself after `seconds`
    /// (10 s to 1 day) unless `ConfirmSession` comes first, and that a reboot ends: a remote
    /// admin cannot lock themselves out with a profile that turns out wrong.
    func startTrialSession(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 2, let name = call.arguments[0].string, let seconds = call.arguments[1].uint64
        else {
            throw KioskError(.invalidArgument, "StartTrialSession takes (s profile, t seconds).")
        }
        guard (10...86_400).contains(seconds) else {
            throw KioskError(.invalidArgument, "A trial lasts 10 s to 1 day, not \(seconds) s.")
        }
        return try startSession(call, name: name, trial: .seconds(Int64(seconds)))
    }

    private func startSession(_ call: MethodCall, name: String, trial: Duration?) throws -> MethodReply {
        try Profile.validateName(name)
        // Whether a session may start is the state's to say, after authorization (the profile's
        // own read, and session.start, check it in turn with other changes).
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageSession, doing: "start a guided-access session"
            ) { [unowned self] in
                loadProfile(call, name) { [unowned self] loaded in
                    applyStartSession(
                        call, caller: caller, name: name, profile: loaded.profile, source: loaded.source, trial: trial)
                }
            }
        }
        return .deferred
    }

    /// Reads and parses the profile `name` off the loop, then runs `next` with it on the loop;
    /// a profile that cannot be loaded is the call's error reply.
    func loadProfile(
        _ call: any Requester, _ name: String,
        then next: @escaping ((profile: Profile, source: String)) throws -> Void
    ) {
        loop.offload(
            to: profileReader,
            { [profiles] in
                Result { () throws(KioskError) in try profiles.loadWithSource(name) }
            },
            then: { [unowned self] loaded in
                attempt(call) { try next(loaded.get()) }
            })
    }

    func applyStartSession(
        _ call: MethodCall, caller: Caller, name: String, profile: Profile, source: String, trial: Duration?
    ) {
        change(call, .privileged) { [unowned self] in
            var next = state
            let changes = try next.startSession(profileName: name, profile: profile, at: clock.now(), trial: trial)
            // The enforcer applies the profile together with the state, once both are on disk.
            return Plan(next, profile: .set(profile)) { [unowned self] in
                activeProfileSource = source
                reloadWarning = ""
                logger.notice(
                    trial == nil ? "Session started" : "Trial session started; it ends unless confirmed",
                    metadata: caller.metadata.merging(MessageID.sessionStarted.metadata) { $1 }.merging([
                        "session.profile": "\(name)", "session.trial": "\(trial.map(\.kioskText) ?? "no")",
                    ]) { $1 })
                emitRestrictionChanged(changes)
                emitSessionChanged()
                scheduleSessionTimer()
                try call.reply([])
            }
        }
    }

    // MARK: EndSession, ForceEndSession

    func endSession(_ call: MethodCall) throws -> MethodReply {
        guard let passcode = call.arguments.first?.string else {
            throw KioskError(.invalidArgument, "EndSession takes (s passcode).")
        }
        try state.session.checkActive()
        try identify(call) { [unowned self] caller in
            // Each uid meets a throttle count of its own: nobody can make anyone else wait.
            let attempt = PasscodeAttempt(call: call, caller: caller, passcode: passcode, purpose: .endSession)
            try checkThrottle(attempt.source, attempt.caller)
            // Anyone who knows the passcode may end the session: no polkit check.
            try enqueue(attempt)
        }
        return .deferred
    }

    func forceEndSession(_ call: MethodCall) throws -> MethodReply {
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageSession,
                doing: "end a guided-access session without the passcode"
            ) { [unowned self] in
                applyEndSession(call, caller: caller, .forced)
            }
        }
        return .deferred
    }

    /// Ends the active session; with `checked`, only if it is still the session the passcode was
    /// checked for (another may have started meanwhile). The locks lift once the end is on disk.
    func applyEndSession(
        _ call: any Requester, caller: Caller, _ ending: KioskState.SessionEnding,
        finally: (() -> Void)? = nil
    ) {
        change(call, .privileged, finally: finally) { [unowned self] in
            var next = state
            let profile = next.session.profileName
            let changes = try next.endSession(ending)
            return Plan(next, profile: .set(nil)) { [unowned self] in
                logger.notice(
                    ending == .forced ? "Session force-ended" : "Session ended",
                    metadata: caller.metadata.merging(
                        (ending == .forced ? MessageID.sessionForceEnded : .sessionEnded).metadata
                    ) { $1 }.merging(["session.profile": "\(profile)"]) { $1 })
                emitRestrictionChanged(changes)
                emitSessionChanged()
                scheduleSessionTimer()
                try call.reply([])
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
                let loaded = try profiles.loadWithSource(name)
                profile = loaded.profile
                activeProfileSource = loaded.source
            } catch {
                if let retained = state.session.retainedProfileSource,
                    let kept = try? ProfileParser.parse(source: retained, file: name + ".toml")
                {
                    // A reload of this file had failed: the last good profile stays in force.
                    profile = ProfileDirectory.resolved(kept)
                    activeProfileSource = retained
                    reloadWarning = Self.reloadWarning(name: name, reason: error.message)
                    logger.warning(
                        "The restored session's profile file could not be loaded; the last good profile stays in force",
                        metadata: ["session.profile": "\(name)", "error": "\(error.message)"])
                } else {
                    restoreProblem = KioskState.restoreProblem(profileName: name, reason: error.message)
                    logger.error(
                        "The restored session's profile could not be loaded; enforcing the strictest locks",
                        metadata: ["session.profile": "\(name)", "error": "\(error.message)"])
                }
            }
        }
        commit(state, profile: .set(profile))
        guard state.session.isActive else { return }
        // Before READY, with nothing to serve: the restored session is brought up to date
        // synchronously, so an expired session's locks are on before any device is taken.
        if let progress = sessionProgress() {
            do {
                try store.save(checkpointed(progress.state))
            } catch {
                logger.error("Could not save the session's progress", metadata: ["error": "\(Errno.reason(of: error))"])
            }
            commit(progress.state)
            progress.emit()
        }
        scheduleSessionTimer()
    }

    /// Why the active session runs with the strictest locks instead of its profile's (a restored
    /// session's profile could not be loaded), and what of its locks the enforcer could not put
    /// in force (logind's inhibitor); "" otherwise.
    public var sessionProblem: String {
        guard state.session.isActive else { return "" }
        let problems = [activeProfile == nil ? restoreProblem : "", enforcer?.problem ?? ""]
        return problems.filter { !$0.isEmpty }.joined(separator: "; ")
    }

    /// What is wrong with the active session but does not change its locks (the enforcer's
    /// warnings: `[[device]]` entries that match no device); empty otherwise.
    public var sessionWarnings: [String] {
        guard state.session.isActive else { return [] }
        return (reloadWarning.isEmpty ? [] : [reloadWarning]) + (enforcer?.warnings ?? [])
    }

    func scheduleSessionTimer() {
        do {
            guard let wake = state.session.nextWakeup else {
                try sessionTimer?.setEnabled(.off)
                return
            }
            // The kiosk clock runs on CLOCK_BOOTTIME: so does the timer, and a wall-clock jump
            // moves neither.
            let now = clock.now()
            let checkpoint = state.clockCheckpoint.map { $0 + Self.checkpointInterval } ?? now
            let delay = max(.zero, min(wake, checkpoint) - now)
            if let sessionTimer {
                try sessionTimer.rearm(after: delay)
            } else {
                sessionTimer = try loop.addTimer(clock: .boottime, after: delay, accuracy: .milliseconds(10)) {
                    [unowned self] in
                    sessionTick()
                }
            }
        } catch {
            // The time limit is a lock: a timer that cannot be armed must be seen.
            logger.error(
                "Could not arm the session's timer",
                metadata: [
                    "session.profile": "\(state.session.profileName)", "error": "\(Errno.reason(of: error))",
                ])
        }
    }

    /// The session's timer: warnings and expiry are persisted in turn with the other changes.
    /// A save that fails is logged and the state applied anyway, so an expiry's locks apply;
    /// the next write persists it.
    func sessionTick() {
        // Urgent: an expiry is a lock, so it goes right after the save in flight, never behind
        // (or refused for) a queue of other callers' changes. The timer is one-shot and re-armed
        // only once this tick is done, so at most one tick waits.
        writer.submit(
            .urgent,
            { [unowned self] in
                guard let progress = sessionProgress() else {
                    scheduleSessionTimer()
                    return nil
                }
                let saved = checkpointed(progress.state)
                return StateWriter.Write(
                    state: saved,
                    durable: { [unowned self] in
                        commit(saved)
                        progress.emit()
                        scheduleSessionTimer()
                    },
                    failed: { [unowned self] error in
                        logger.error(
                            "Could not save the session's progress", metadata: ["error": "\(Errno.reason(of: error))"])
                        commit(saved)
                        progress.emit()
                        scheduleSessionTimer()
                    })
            }, dropped: { _ in })
    }

    /// The state with the session advanced to now, and the signals that tell of it; nil when
    /// nothing happened.
    func sessionProgress() -> (state: KioskState, emit: () -> Void)? {
        var next = state
        let now = clock.now()
        // A trial session nobody confirmed in time ends by itself (its presets go back).
        if next.session.trialIsOver(at: now), let changes = try? next.endSession(.unconfirmedTrial) {
            let profile = state.session.profileName
            return (
                next,
                { [unowned self] in
                    logger.notice(
                        "Trial session not confirmed in time; it ended",
                        metadata: MessageID.trialEnded.metadata.merging(["session.profile": "\(profile)"]) { $1 })
                    emitRestrictionChanged(changes)
                    emitSessionChanged()
                }
            )
        }
        let events = next.session.advance(to: now)
        // A session with a time limit saves the kiosk clock now and then, even with nothing to
        // tell: after a power cut, its time resumes from there.
        let checkpointDue =
            next.session.nextWakeup != nil
            && state.clockCheckpoint.map { now - $0 >= Self.checkpointInterval } ?? true
        guard !events.isEmpty || checkpointDue else { return nil }
        return (
            next,
            { [unowned self] in
                for event in events {
                    switch event {
                    case .warning(let secondsLeft):
                        emit(Member.timeLimitWarning, [.uint64(secondsLeft)])
                    case .expired:
                        logger.notice(
                            "Session time limit reached",
                            metadata: MessageID.sessionExpired.metadata.merging([
                                "session.profile": "\(state.session.profileName)"
                            ]) { $1 })
                        emitSessionChanged()
                    }
                }
            }
        )
    }
}
