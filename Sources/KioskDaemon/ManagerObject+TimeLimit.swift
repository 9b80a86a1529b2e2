import KioskCore
import Logging
import SystemPackage
import SystemdKit

/// The session's time: a session restored after a restart brought up to date, its time limit
/// and warnings (`TimeLimitWarning`), a trial's end, and the kiosk clock's checkpoints.
extension ManagerObject {
    // MARK: The session's time limit

    /// Brings a session restored from the state file up to date, applies its locks through the
    /// enforcer (fail closed: a profile that can no longer be loaded gets the strictest locks,
    /// and `SessionProblem` says why) and arms its timer. Call once, before serving input.
    ///
    /// `newBoot`: kioskd starts after a reboot (``KioskClockMarker``). With the state directory
    /// not writable then (``storage``, from the start's probe), a session with a time limit
    /// comes back expired: how long it ran after its last save is unknown (fail closed,
    /// ``StateStorage/mustExpireRestoredSession(_:newBoot:writable:)``). `lastSaveKnown: false`
    /// does the same with the directory writable: an earlier start of this boot could not read
    /// the state file, so what happened after its last save is unknown too.
    public func restoreSession(newBoot: Bool = false, lastSaveKnown: Bool = true) {
        let name = state.session.profileName
        if state.session.isActive {
            let loaded = Result { () throws(KioskError) in try profiles.loadWithSource(name) }
            // The text a failed reload kept: the machine keeps it in force by the reload's rule.
            var lastGood: SessionMachine.LoadedProfile?
            if case .failure = loaded, let retained = state.session.retainedProfileSource,
                let kept = try? ProfileParser.parse(source: retained, file: name + ".toml")
            {
                lastGood = SessionMachine.LoadedProfile(profile: ProfileDirectory.resolved(kept), source: retained)
            }
            let effects = machine.handle(.restored(loaded, lastGood: lastGood), at: clock.now())
            try? perform(effects, MachineStep(profileName: name))
        }
        commit(machine)
        guard state.session.isActive else { return }
        // Before READY, with nothing to serve: the restored session is brought up to date
        // synchronously, so an expired session's locks are on before any device is taken.
        var at = clock.now()
        if StateStorage.mustExpireRestoredSession(
            state.session, newBoot: newBoot, writable: !storage.isFailing && lastSaveKnown),
            let deadline = state.session.deadline
        {
            logger.warning(
                storage.isFailing
                    ? "The session's time after its last save is unknown and the state cannot be saved; it comes back expired"
                    : "The session's time after its last save is unknown (the state did not read earlier this boot); it comes back expired",
                metadata: MessageID.sessionExpired.metadata.merging(["session.profile": "\(name)"]) { $1 })
            at = max(at, deadline)
        }
        if let progress = sessionProgress(at: at) {
            var next = progress.machine
            next.state = checkpointed(next.state)
            do {
                try store.save(next.state)
                commit(next)
                stateSaved()
            } catch {
                logger.error("Could not save the session's progress", metadata: ["error": "\(Errno.reason(of: error))"])
                stateSaveFailed(error)
                commit(next)
                keptUnsaved()
            }
            progress.emit()
        }
        scheduleSessionTimer()
    }

    /// Why the active session runs with the strictest locks instead of its profile's (a restored
    /// session's profile could not be loaded), and what of its locks the enforcer could not put
    /// in force (logind's inhibitor); "" otherwise.
    public var sessionProblem: String {
        guard state.session.isActive else { return "" }
        let problems = [
            activeProfile == nil ? machine.restoreProblem : "", enforcer?.problem ?? "", browserPolicy?.problem ?? "",
        ]
        return problems.filter { !$0.isEmpty }.joined(separator: "; ")
    }

    /// What is wrong with the active session but does not change its locks (the enforcer's
    /// warnings: `[[device]]` entries that match no device); empty otherwise.
    public var sessionWarnings: [String] {
        guard state.session.isActive else { return [] }
        return (machine.reloadWarning.isEmpty ? [] : [machine.reloadWarning]) + (enforcer?.warnings ?? [])
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
                return checkpointedWrite(
                    of: progress.machine, keptIfSaveFails: true,
                    saved: { [unowned self] in
                        progress.emit()
                        scheduleSessionTimer()
                    },
                    failed: { [unowned self] next, error, written in
                        logger.error(
                            "Could not save the session's progress", metadata: ["error": "\(Errno.reason(of: error))"])
                        stateSaveFailed(error)
                        commit(next, browserFiles: .written(written))
                        keptUnsaved()
                        progress.emit()
                        scheduleSessionTimer()
                    })
            }, dropped: { _ in })
    }

    /// The machine with the session advanced to now (``SessionMachine``'s `sessionTime`, what
    /// `kioskctl replay` runs on a recording's clock), and the signals that tell of it; nil when
    /// nothing happened.
    func sessionProgress(at time: Timestamp? = nil) -> (machine: SessionMachine, emit: () -> Void)? {
        let now = time ?? clock.now()
        var next = machine
        let effects = next.handle(.sessionTime, at: now).filter { if case .save = $0 { false } else { true } }
        // A session with a time limit saves the kiosk clock now and then, even with nothing to
        // tell: after a power cut, its time resumes from there.
        let checkpointDue =
            next.state.session.nextWakeup != nil
            && state.clockCheckpoint.map { now - $0 >= Self.checkpointInterval } ?? true
        guard !effects.isEmpty || checkpointDue else { return nil }
        let step = MachineStep(profileName: state.session.profileName)
        return (
            next,
            { [unowned self] in
                try? perform(effects, step)
                sessionChangedUnderPrompt()  // a prompt that opened while the end was saved
            }
        )
    }
}
