import KioskCore
import KioskInput
import Logging
import SystemPackage
import SystemdKit

/// The passcode prompt at the kiosk: the kiosk's events (the exit gesture, a prompt key, the
/// prompt's timer, a passcode's judgement) go through ``SessionMachine``, the pure machine
/// `kioskctl replay` runs too, and this file performs its effects. The exit gesture opens the
/// prompt, the filter reads its keys from the brokered devices and forwards nothing, Enter
/// checks the passcode under the kiosk's own throttle count through the same queue as
/// `EndSession`, and whatever happens, it closes with every lock as it was unless the passcode
/// was right. It lives in memory only: a restart comes back with the session's locks and no prompt.
extension ManagerObject {
    typealias PromptOutcome = PromptPhase.Reason

    /// How long the prompt waits for the next key (30 s; tests shorten it).
    public var promptTimeout: Duration {
        get { .microseconds(prompt.timeout) }
        set { prompt.timeout = newValue.microseconds }
    }

    /// The exit gesture was seen: `ExitRequested` for apps that draw their own prompt, and
    /// kioskd's own prompt opens (on an active or expired session, unless it is open already).
    public func requestExit() {
        logger.notice(
            "Exit gesture seen",
            metadata: MessageID.exitGesture.metadata.merging(["session.profile": "\(state.session.profileName)"]) { $1 })
        kiosk(.exitGesture)
    }

    /// A key of the prompt, read by the filter (``FilterResult/promptKey``).
    public func promptKey(_ key: PromptKey) {
        kiosk(.promptKey(key))
    }

    /// The session ended (or expired into another state) while the prompt was open: it closes.
    /// One being checked is closed by its check's outcome.
    func sessionChangedUnderPrompt() {
        if prompt.state == .open { kiosk(.sessionChanged) }
    }

    /// Runs a kiosk event that changes nothing persisted through the machine, and performs its
    /// effects.
    private func kiosk(_ event: SessionMachine.Event) {
        var machine = SessionMachine(state: state, profile: activeProfile)
        machine.prompt = prompt
        let effects = machine.handle(event, at: clock.now())
        prompt = machine.prompt
        perform(effects)
    }

    /// The kiosk's passcode was judged (on the passcode queue, `finish`): the machine's outcome,
    /// written in turn with the other changes (a wrong one counted, a right one ending the
    /// session) before the prompt closes. `done` runs once it is on disk, failed, or had nothing
    /// to write.
    func judgedAtKiosk(_ judgement: SessionMachine.Judgement, checkedFor session: GuidedSession.Identity?, done: @escaping () -> Void) {
        let requester = KioskRequester { [weak self] in self?.kiosk(.judged(.failed, checkedFor: session)) }
        change(requester, .privileged, finally: done) { [unowned self] in
            var machine = SessionMachine(state: state, profile: activeProfile)
            machine.prompt = prompt
            let effects = machine.handle(.judged(judgement, checkedFor: session), at: clock.now())
            guard let save = effects.firstIndex(where: { if case .save = $0 { true } else { false } }),
                case .save(let keep) = effects[save]
            else {
                prompt = machine.prompt
                perform(effects)
                return nil
            }
            let ended = effects.contains { if case .sessionEnded = $0 { true } else { false } }
            let profileName = state.session.profileName
            return Plan(machine.state, profile: ended ? .set(nil) : .unchanged, keepIfSaveFails: keep) {
                [unowned self] in
                prompt = machine.prompt
                perform(Array(effects[..<save]) + effects[(save + 1)...], profileName: profileName)
            }
        }
    }

    /// The machine's effects, in order (a `save` is the change's, above); `profileName` is the
    /// session's before the effects (one that ended has none after).
    private func perform(_ effects: [SessionMachine.Effect], profileName: String? = nil) {
        for effect in effects {
            switch effect {
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
                // Checked through the queue bus callers' passcodes take, against the kiosk's count.
                let requester = KioskRequester { [weak self] in self?.kiosk(.judged(.failed, checkedFor: nil)) }
                do {
                    try enqueue(
                        PasscodeAttempt(
                            call: requester, caller: .kiosk, passcode: passcode, purpose: .endSession, source: .kiosk))
                } catch {
                    kiosk(.judged(.failed, checkedFor: nil))
                }
            case .save:
                break
            case .sessionEnded(let changes):
                logger.notice(
                    "Session ended",
                    metadata: Caller.kiosk.metadata.merging(MessageID.sessionEnded.metadata) { $1 }.merging([
                        "session.profile": "\(profileName ?? state.session.profileName)"
                    ]) { $1 })
                emitRestrictionChanged(changes)
                emitSessionChanged()
                scheduleSessionTimer()
            case .timeLimitWarning, .sessionExpired, .trialEnded, .deadlineChanged, .trialConfirmed:
                break  // the session's time, not the kiosk's: ManagerObject+TimeLimit performs them
            case .promptClosed(let reason):
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
            }
        }
    }

    /// Arms the prompt's timer for `deadline` (µs of the kiosk clock), or stops it (nil).
    private func armPromptTimer(_ deadline: Int64?) {
        guard let deadline else {
            try? promptTimer?.setEnabled(.off)
            return
        }
        let delay = max(.zero, Timestamp(microseconds: deadline) - clock.now())
        do {
            if let promptTimer {
                try promptTimer.rearm(after: delay)
            } else {
                promptTimer = try loop.addTimer(clock: .boottime, after: delay, accuracy: .milliseconds(50)) {
                    [unowned self] in
                    if prompt.timedOut(at: clock.now().microseconds) { kiosk(.clock) } else { armPromptTimer(prompt.deadline) }
                }
            }
        } catch {
            // A prompt that cannot time out would hold the kiosk's input: close it now.
            logger.error("Could not arm the prompt's timer", metadata: ["error": "\(Errno.reason(of: error))"])
            prompt.close()
            perform([.promptClosed(.failed)])
        }
    }

    // MARK: Properties

    var promptProperties: [BusProperty] {
        [
            BusProperty(Member.promptState, "s") { [unowned self] in .string(prompt.state.rawValue) },
            BusProperty(Member.promptLength, "u") { [unowned self] in .uint32(UInt32(prompt.length)) },
            BusProperty(Member.promptDeadline, "t") { [unowned self] in
                .uint64(UInt64(max(0, prompt.deadline.map { displayTime(Timestamp(microseconds: $0)).microseconds } ?? 0)))
            },
            BusProperty(Member.promptRetryAfter, "t") { [unowned self] in
                let now = clock.now()
                let wait = state.throttles.waitRemaining(.kiosk, at: now)
                return .uint64(wait > .zero ? UInt64(max(0, displayTime(now + wait).microseconds)) : 0)
            },
            BusProperty(Member.promptPad, "a(sdddd)", flags: [.const]) {
                .array(
                    elementSignature: "(sdddd)",
                    PadKey.standardPad.map {
                        .structure([.string($0.label), .double($0.x), .double($0.y), .double($0.width), .double($0.height)])
                    })
            },
            BusProperty(Member.speakWarnings, "b") { [unowned self] in
                .bool(state.session.isActive && activeProfile?.session.speakWarnings == true)
            },
        ]
    }

    func emitPromptChanged() {
        do {
            try bus.emitPropertiesChanged(
                path: KioskWire.objectPath, interface: KioskWire.managerInterface,
                properties: [Member.promptState, Member.promptLength, Member.promptDeadline, Member.promptRetryAfter])
        } catch {
            logger.error("Could not emit PropertiesChanged", metadata: ["error": "\(Errno.reason(of: error))"])
        }
    }
}
