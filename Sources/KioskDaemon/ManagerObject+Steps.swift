import KioskCore
import KioskStore
import Logging
import SystemPackage
import SystemdKit

extension ManagerObject {
    // MARK: Steps shared by the methods

    /// Looks the caller's uid up with the bus driver (without blocking), then runs `next`;
    /// whatever `next` throws becomes the call's error reply.
    func identify(_ call: MethodCall, then next: @escaping (Caller) throws -> Void) throws {
        guard let sender = call.sender else { throw KioskError(.accessDenied, "The call has no sender.") }
        // Every call that may change the state comes through here: it is underway until answered.
        changesUnderway += 1
        call.whenAnswered { [weak self] in self?.changesUnderway -= 1 }
        try identifier.unixUser(ofName: sender) { [unowned self] result in
            attempt(call) {
                guard case .success(let uid) = result else {
                    throw KioskError(.accessDenied, "Could not find the uid of \(sender).")
                }
                try next(Caller(busName: sender, uid: uid))
            }
        }
    }

    /// Runs `next` once the caller may do `action` (``Authorization``: root always may, anyone
    /// else is asked of polkit). With `when: false` nothing is asked.
    func authorize(
        _ call: MethodCall, caller: Caller, action: String, when needed: Bool = true,
        doing what: String, then next: @escaping () throws -> Void
    ) throws {
        if !needed || !Authorization.needsAsking(uid: caller.uid) {
            try next()
            return
        }
        try authorizer.authorize(action: action, busName: caller.busName) { [unowned self] result in
            attempt(call) {
                let answer: Authorization.Answer
                switch result {
                case .success(.allowed): answer = .allowed
                case .success(.denied): answer = .denied
                case .success(.challenge): answer = .challenge
                case .success(.unavailable): answer = .unavailable
                case .failure(let error):
                    logger.warning(
                        "polkit check failed",
                        metadata: caller.metadata.merging(["error": "\(Errno.reason(of: error))"]) { $1 })
                    answer = .failed
                }
                if let refusal = Authorization.refusal(answer, uid: caller.uid, action: action, doing: what) {
                    audit(
                        .notice, "Call refused", caller,
                        MessageID.callRefused.metadata.merging(["polkit.action": "\(action)"]) { $1 })
                    throw refusal
                }
                try next()
            }
        }
    }

    /// What a change writes once its turn comes, and what follows once it is on disk.
    struct Plan {
        /// The machine to take (its state written first): a session machine's step, or nil for a
        /// change of the state alone (`state`).
        var machine: SessionMachine?
        var state: KioskState
        /// Log, emit and reply; what it throws is the call's error reply.
        var then: () throws -> Void
        /// A save that fails still makes `state` the state (logged), and `then` runs: for a change
        /// that only tightens, like a wrong passcode counted by the throttle (fail closed: a disk
        /// that refuses writes must not give unlimited guesses). The next save persists it.
        var keepIfSaveFails: Bool

        init(_ state: KioskState, keepIfSaveFails: Bool = false, then: @escaping () throws -> Void) {
            self.state = state
            self.keepIfSaveFails = keepIfSaveFails
            self.then = then
        }

        init(_ machine: SessionMachine, keepIfSaveFails: Bool = false, then: @escaping () throws -> Void) {
            self.init(machine.state, keepIfSaveFails: keepIfSaveFails, then: then)
            self.machine = machine
        }
    }

    /// Queues a change of the state for `call` in `lane` (``StateWriter/Lane``). When its turn comes (every earlier change is on
    /// disk or failed), `compute` makes the next state from `state`, or answers `call` itself and
    /// returns nil. The plan's state is saved off the loop; then it becomes `state` and the plan's
    /// `then` runs: a reply or a signal never promises what is not on disk. A save that fails
    /// changes nothing and answers `call` with the error. `finally` runs after all of that, on
    /// every path. A change that `survivesStop` is made even when kioskd stops before its turn
    /// (a passcode attempt's outcome, ``StateWriter/hold()``).
    func change(
        _ call: any Requester, _ lane: StateWriter<KioskState>.Lane, survivesStop: Bool = false,
        finally: (() -> Void)? = nil, _ compute: @escaping () throws -> Plan?
    ) {
        writer.submit(
            lane, survivesStop: survivesStop,
            { [unowned self] in
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
                var next = plan.machine ?? machine
                next.state = checkpointed(plan.state)
                let saved = next.state
                return StateWriter.Write(
                    state: saved, afterSave: browserWrite(for: next),
                    durable: { [unowned self] written in
                        commit(next, browserFiles: .written(written))
                        stateSaved()
                        attempt(call, plan.then)
                        finally?()
                    },
                    failed: { [unowned self] error, written in
                        logger.error(
                            "Could not save the state",
                            metadata: ["store.path": "\(store.path)", "error": "\(Errno.reason(of: error))"])
                        stateSaveFailed(error)
                        if plan.keepIfSaveFails {
                            commit(next, browserFiles: .written(written))
                            keptUnsaved()
                            attempt(call, plan.then)
                        } else {
                            try? call.replyError(Self.busError(error))
                        }
                        finally?()
                    }, keptIfSaveFails: plan.keepIfSaveFails)
            },
            dropped: { refusal in
                switch refusal {
                case .stopping:
                    try? call.replyError(
                        Self.busError(KioskError(.failed, "kioskd is stopping; the change was not made.")))
                case .full(let waiting):
                    try? call.replyError(
                        Self.busError(
                            KioskError(
                                .failed, "\(waiting) changes are already waiting to be saved; the change was not made.")
                        ))
                }
                finally?()
            })
    }

    /// Stops taking changes (those waiting are answered with an error, passcode attempts not yet
    /// checked too), lets the save in flight finish and its reply go out, and a passcode being
    /// checked finish and its outcome be saved and answered, then runs `then`; at most
    /// `stopTimeout` later.
    public func stop(then: @escaping () -> Void) {
        isStopping = true
        retryTimer?.cancel()
        retryTimer = nil
        let unchecked = waitingPasscodeAttempts
        waitingPasscodeAttempts.removeAll()
        for attempt in unchecked {
            try? attempt.call.replyError(
                Self.busError(KioskError(.failed, "kioskd is stopping; the passcode was not checked.")))
        }
        writer.stop(within: Self.stopTimeout, then: then)
    }

    func attempt(_ call: any Requester, _ step: () throws -> Void) {
        do {
            try step()
        } catch {
            try? call.replyError(Self.busError(error))
        }
    }

    /// The one mapping at the bus boundary: every error a method's steps throw becomes a
    /// `KioskError`, whose code names the D-Bus error of the reply. What is not the caller's
    /// mistake (a save that failed, libcrypt, anything unforeseen) is `Failed`.
    static func kioskError(_ error: any Error) -> KioskError {
        switch error {
        case let error as KioskError: error
        case let error as StoreError: KioskError(.failed, "The change was not made: \(error.message)")
        case let error as BusError:
            KioskError(KioskError.Code(dbusName: error.name) ?? .failed, error.message)
        default: KioskError(.failed, Errno.reason(of: error))
        }
    }

    static func busError(_ error: any Error) -> BusError {
        let error = kioskError(error)
        return BusError(name: error.code.dbusName, message: error.message)
    }

    /// `state` with the kiosk clock of now as its checkpoint: every save carries it, so that
    /// after a reboot the clock resumes from the last save (``KioskClockMarker``).
    func checkpointed(_ state: KioskState) -> KioskState {
        var state = state
        state.clockCheckpoint = clock.now()
        return state
    }

    /// The wall clock was set (by hand or NTP): kiosk time did not move, but the wall-clock time
    /// `SessionDeadline` shows did; tell those who show it.
    public func wallClockChanged() {
        guard state.session.deadline != nil else { return }
        logger.info("The wall clock was set; the session's deadline is shown anew")
        emitSessionChanged()
    }

    /// Logs a line about what `caller` did. Root's lines are always logged (an audit trail); of
    /// any other uid's, the first ``RepeatLimiter/burst`` of each kind a minute are, and the rest
    /// are counted and summarised once the minute is over, so one uid cannot flood the journal.
    /// The minute is the kiosk clock's (``clock``, the one time source the manager reads: it
    /// never goes back when the wall clock is set).
    func audit(_ level: Logger.Level, _ message: Logger.Message, _ caller: Caller, _ metadata: Logger.Metadata = [:]) {
        let now = Duration.microseconds(clock.now().microseconds)
        guard
            caller.uid == 0 || repeats.admit(RepeatLimiter.Key(uid: caller.uid, message: message.description), at: now)
        else {
            armRepeatsTimer()
            return
        }
        logger.log(level: level, message, metadata: caller.metadata.merging(metadata) { $1 })
    }

    /// Arms the timer that logs the summaries, a window from now, unless it is armed already.
    private func armRepeatsTimer() {
        guard !repeatsTimerArmed else { return }
        repeatsTimerArmed = true
        if let repeatsTimer {
            try? repeatsTimer.rearm(after: repeats.window)
            return
        }
        repeatsTimer = try? loop.addTimer(after: repeats.window, accuracy: .seconds(1)) { [unowned self] in
            repeatsTimerArmed = false
            let now = Duration.microseconds(clock.now().microseconds)
            for (key, suppressed) in repeats.summaries(at: now) {
                logger.notice(
                    "Repeated lines not logged",
                    metadata: [
                        "bus.uid": "\(key.uid)", "log.message": "\(key.message)", "log.suppressed": "\(suppressed)",
                        "log.window": "\(repeats.window)",
                    ])
            }
            // Lines suppressed in a window that is not over yet: their summary comes next time.
            if repeats.hasPending { armRepeatsTimer() }
        }
    }

    func emitRestrictionChanged(_ changes: [GuidedSession.Change]) {
        for change in changes {
            emit(
                Member.restrictionStateChanged,
                [.string(change.app.rawValue), .string(change.restriction.rawValue), .string(change.state.rawValue)])
        }
    }

    func emitSessionChanged() {
        emitPropertiesChanged([
            Member.sessionState, Member.activeProfile, Member.sessionDeadline,
            Member.sessionProblem, Member.sessionWarnings, Member.speakWarnings, Member.language, Member.trialDeadline,
            Member.activeApp, Member.lockedRegions,
        ])
    }

    /// `SessionProblem` or `SessionWarnings` changed on their own (the enforcer's problem or
    /// warnings came or went).
    func emitSessionProblemChanged() {
        emitPropertiesChanged([Member.sessionProblem, Member.sessionWarnings])
    }

    /// `PropertiesChanged` of the Manager's `properties`, read now; a failure is logged.
    func emitPropertiesChanged(_ properties: [String]) {
        do {
            try bus.emitPropertiesChanged(
                path: KioskWire.objectPath, interface: KioskWire.managerInterface, properties: properties)
        } catch {
            logger.error("Could not emit PropertiesChanged", metadata: ["error": "\(Errno.reason(of: error))"])
        }
    }

    func emit(_ member: String, _ arguments: [DBusValue]) {
        do {
            try bus.emitSignal(
                path: KioskWire.objectPath, interface: KioskWire.managerInterface, member: member, arguments: arguments)
        } catch {
            logger.error(
                "Could not emit a signal", metadata: ["signal": "\(member)", "error": "\(Errno.reason(of: error))"])
        }
    }
}
