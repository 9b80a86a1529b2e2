import KioskCore
import Logging
import SystemPackage
import SystemdKit

/// The session machine's steps, performed (docs/architecture.md § The session machine): a bus
/// call's ``SessionMachine/Change``, validated and authorized, is applied in turn with the other
/// changes; its effects after `save` are performed once it is on disk (the signals, the log, the
/// error an effect answers with), then the call is answered. The kiosk's events and the session's
/// time take their effects to ``perform(_:_:)`` too.
extension ManagerObject {
    typealias Effect = SessionMachine.Effect

    /// What a machine step is for: whom it answers, who asked, and what the log says of it.
    struct MachineStep {
        var requester: (any Requester)?
        var caller: Caller = .kiosk
        var change: SessionMachine.Change?
        /// How the log names a change of the time limit ("extended by 60 s").
        var what = ""
        /// The session's profile before the step (one that ended has none after).
        var profileName = ""
        /// The reply to a wrong passcode (its check's: it says whether a passcode is set).
        var wrongPasscode: KioskError?
        /// The step ran on a copy of the machine whose prompt was not taken (a bus call's change,
        /// the session's time): its prompt closing is redone on the live prompt, which may have
        /// moved on meanwhile.
        var adopted = true
    }

    /// Applies the change `makeChange` makes at the kiosk clock's now through the machine, in
    /// turn with the other changes: on disk first, then its effects, then the reply. `what` is
    /// for the log of a time-limit change.
    func applyToSession(
        _ requester: any Requester, caller: Caller, what: String = "", finally: (() -> Void)? = nil,
        _ makeChange: @escaping (Timestamp) throws -> SessionMachine.Change
    ) {
        change(requester, .privileged, finally: finally) { [unowned self] in
            let now = clock.now()
            let change = try makeChange(now)
            var next = machine
            let effects = try next.apply(change, at: now)
            return try plan(
                next, effects,
                MachineStep(
                    requester: requester, caller: caller, change: change, what: what,
                    profileName: state.session.profileName))
        }
    }

    /// The plan of a machine step: with a `save` first, `next` is written and the rest performed
    /// once it is on disk; without, the effects are performed now (nil: nothing to write). The
    /// step's requester is answered after its effects (unless one of them answered it).
    func plan(_ next: SessionMachine, _ effects: [Effect], _ step: MachineStep) throws -> Plan? {
        guard case .save(let keep)? = effects.first else {
            if !step.adopted { machine.prompt = next.prompt }
            try perform(effects, step)
            try step.requester?.reply([])
            return nil
        }
        return Plan(next, keepIfSaveFails: keep) { [unowned self] in
            // A prompt that opened while the session's end was saved closes now, after the
            // change's own effects.
            defer { sessionChangedUnderPrompt() }
            if !step.adopted { machine.prompt = next.prompt }
            try perform(Array(effects.dropFirst()), step)
            try step.requester?.reply([])
        }
    }

    /// Performs the machine's `effects`, in order (a `save` is the plan's, written before); what
    /// one throws (`refused`, `wrongPasscode`) answers the step's requester.
    func perform(_ effects: [Effect], _ step: MachineStep) throws {
        // A step may end a pause, start or end a session: idle time's next look moves.
        defer { scheduleIdleTimer() }
        for effect in effects {
            switch effect {
            case .idleWarningChanged, .idleReset, .displayPowerChanged:
                performIdle(effect)
            case .save:
                break
            case .exitRequested:
                emit(Member.exitRequested, [])
            case .promptOpened:
                logger.notice(
                    "Passcode prompt opened at the kiosk: no input reaches the kiosk until it closes",
                    metadata: ["session.profile": "\(state.session.profileName)"])
                enforcer?.setPrompt(open: true)
            case .promptChanged(let deadline):
                armPromptTimer(deadline)
                emitPromptChanged()
            case .check(let passcode):
                try checkPasscode(passcode, step)
            case .promptClosed(let reason):
                guard !step.adopted else {
                    sessionChangedUnderPrompt()
                    continue
                }
                try? promptTimer?.setEnabled(.off)
                enforcer?.setPrompt(open: false)
                let level: Logger.Level = reason == .rejected || reason == .throttled ? .warning : .notice
                logger.log(
                    level: level, "Passcode prompt closed",
                    metadata: MessageID.promptClosed.metadata.merging([
                        "prompt.reason": "\(reason.rawValue)", "session.profile": "\(state.session.profileName)",
                    ]) { $1 })
                emit(Member.promptClosed, [.string(reason.rawValue)])
                emitPromptChanged()
            case .sessionStarted(let changes):
                logSessionStarted(step)
                for warning in activeProfile?.assistiveKeyWarnings ?? [] {
                    logger.warning("\(warning)", metadata: ["session.profile": "\(state.session.profileName)"])
                }
                emitRestrictionChanged(changes)
                emitSessionChanged()
                scheduleSessionTimer()
            case .sessionEnded(let changes):
                let forced = step.change == .end(.forced)
                logger.notice(
                    forced ? "Session force-ended" : "Session ended",
                    metadata: step.caller.metadata.merging(
                        (forced ? MessageID.sessionForceEnded : .sessionEnded).metadata
                    ) { $1 }.merging(["session.profile": "\(step.profileName)"]) { $1 })
                emitRestrictionChanged(changes)
                emitSessionChanged()
                scheduleSessionTimer()
            case .timeLimitWarning(let secondsLeft):
                emit(Member.timeLimitWarning, [.uint64(secondsLeft)])
            case .sessionExpired:
                logger.notice(
                    "Session time limit reached",
                    metadata: MessageID.sessionExpired.metadata.merging(["session.profile": "\(step.profileName)"]) {
                        $1
                    })
                emitSessionChanged()
            case .trialEnded(let changes):
                logger.notice(
                    "Trial session not confirmed in time; it ended",
                    metadata: MessageID.trialEnded.metadata.merging(["session.profile": "\(step.profileName)"]) { $1 })
                emitRestrictionChanged(changes)
                emitSessionChanged()
            case .deadlineChanged:
                logger.notice(
                    "Session time limit \(step.what)",
                    metadata: step.caller.metadata.merging(MessageID.sessionTimeChanged.metadata) { $1 }.merging([
                        "session.profile": "\(state.session.profileName)",
                        "session.deadline": "\(state.session.deadline.map { "\(displayTime($0))" } ?? "none")",
                    ]) { $1 })
                emitSessionChanged()
                scheduleSessionTimer()
            case .trialConfirmed:
                logger.notice(
                    "Trial session confirmed",
                    metadata: step.caller.metadata.merging(MessageID.trialConfirmed.metadata) { $1 }.merging([
                        "session.profile": "\(state.session.profileName)"
                    ]) { $1 })
                emitSessionChanged()
                scheduleSessionTimer()
            case .profileReloaded(let changes):
                logger.notice(
                    "Session's profile reloaded",
                    metadata: step.caller.metadata.merging(MessageID.profileReloaded.metadata) { $1 }.merging([
                        "session.profile": "\(step.profileName)"
                    ]) { $1 })
                emitRestrictionChanged(changes)
                emitSessionChanged()
                scheduleSessionTimer()
            case .lastGoodKept(let reason):
                guard step.change != nil else {
                    logger.warning(
                        "The restored session's profile file could not be loaded; the last good profile stays in force",
                        metadata: ["session.profile": "\(step.profileName)", "error": "\(reason)"])
                    continue
                }
                logger.error(
                    "The session's profile could not be reloaded; the last good profile stays in force",
                    metadata: step.caller.metadata.merging(MessageID.profileReloadFailed.metadata) { $1 }.merging([
                        "session.profile": "\(step.profileName)", "error": "\(reason)",
                    ]) { $1 })
                emitSessionProblemChanged()
            case .strictestLocks(let reason):
                logger.error(
                    "The restored session's profile could not be loaded; enforcing the strictest locks",
                    metadata: ["session.profile": "\(step.profileName)", "error": "\(reason)"])
            case .wrongPasscode(let source, let failures):
                audit(
                    .warning, "Wrong passcode", step.caller,
                    MessageID.wrongPasscode.metadata.merging([
                        "passcode.failures": "\(failures)", "passcode.source": "\(source)",
                    ]) { $1 })
                if source != .kiosk { throw step.wrongPasscode ?? KioskError(.wrongPasscode, "The passcode is wrong.") }
            case .refused(let error):
                throw error
            case .timeOfferChanged:
                enforcer?.setTimeOffer(open: machine.offer.map { $0.extensionsLeft > 0 } ?? false)
                emitTimeOfferChanged()
            case .visitorExtended(let amount, let left):
                logger.notice(
                    "Session time extended at the kiosk",
                    metadata: Caller.kiosk.metadata.merging(MessageID.visitorExtended.metadata) { $1 }.merging([
                        "session.profile": "\(state.session.profileName)",
                        "session.deadline": "\(state.session.deadline.map { "\(displayTime($0))" } ?? "none")",
                        "session.extended-by": "\(amount.kioskText)", "session.extensions-left": "\(left)",
                    ]) { $1 })
                emit(Member.timeExtended, [.uint64(UInt64(amount.microseconds / 1_000_000)), .uint32(UInt32(left))])
                emitSessionChanged()
                scheduleSessionTimer()
            case .cleaningStarted(let length):
                performCleaningStarted(length, step)
            case .cleaningEnded:
                performCleaningEnded(step)
            case .drawingStarted:
                performDrawingStarted(step)
            case .drawingEnded(let reason):
                performDrawingEnded(reason)
            }
        }
    }

    /// `check`: the passcode goes through the queue bus callers' passcodes take, against the
    /// kiosk's count for the kiosk's prompt, the caller's for `EndSession`.
    private func checkPasscode(_ passcode: String, _ step: MachineStep) throws {
        guard let call = step.requester else {
            let requester = KioskRequester { [weak self] in self?.kiosk(.judged(.failed, checkedFor: nil)) }
            do {
                try enqueue(
                    PasscodeAttempt(
                        call: requester, caller: .kiosk, passcode: passcode, purpose: .endSession, source: .kiosk))
            } catch {
                kiosk(.judged(.failed, checkedFor: nil))
            }
            return
        }
        try enqueue(PasscodeAttempt(call: call, caller: step.caller, passcode: passcode, purpose: .endSession))
    }

    private func logSessionStarted(_ step: MachineStep) {
        guard case .start(let name, _, let trial, let app)? = step.change else { return }
        var metadata = step.caller.metadata.merging(MessageID.sessionStarted.metadata) { $1 }
        metadata["session.profile"] = "\(name)"
        if let app {
            metadata["app.id"] = "\(app)"
            logger.notice("Session requested by its app", metadata: metadata)
        } else {
            metadata["session.trial"] = "\(trial.map(\.kioskText) ?? "no")"
            logger.notice(
                trial == nil ? "Session started" : "Trial session started; it ends unless confirmed", metadata: metadata
            )
        }
    }
}
