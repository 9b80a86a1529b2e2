import KioskCore
import KioskInput
import Logging
import SystemPackage
import SystemdKit

/// The passcode prompt at the kiosk (issue 15): the exit gesture opens it, the filter reads its
/// keys from the brokered devices and forwards nothing, Enter checks the passcode under the
/// kiosk's own throttle count through the same queue as `EndSession`, and whatever happens, it
/// closes with every lock as it was unless the passcode was right. It lives in memory only: a
/// restart comes back with the session's locks and no prompt.
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
        emit(Member.exitRequested, [])
        guard state.session.isActive, prompt.open(at: clock.now().microseconds) else { return }
        logger.notice(
            "Passcode prompt opened at the kiosk: no input reaches the kiosk until it closes",
            metadata: ["session.profile": "\(state.session.profileName)"])
        enforcer?.setPrompt(open: true)
        armPromptTimer()
        emitPromptChanged()
    }

    /// A key of the prompt, read by the filter (``FilterResult/promptKey``).
    public func promptKey(_ key: PromptKey) {
        switch prompt.press(key, at: clock.now().microseconds) {
        case .none:
            return
        case .changed:
            armPromptTimer()
            emitPromptChanged()
        case .close(let reason):
            closePrompt(reason)
        case .check(let passcode):
            try? promptTimer?.setEnabled(.off)
            emitPromptChanged()
            checkPromptPasscode(passcode)
        }
    }

    private func checkPromptPasscode(_ passcode: String) {
        // Refused before hashing, like a bus caller's: not an attempt.
        let requester = PromptRequester { [weak self] outcome in self?.closePrompt(outcome) }
        let kiosk = Caller(busName: "kiosk", uid: 0)
        do {
            try checkThrottle(.kiosk, kiosk)
        } catch {
            return closePrompt(.throttled)
        }
        do {
            try enqueue(PasscodeAttempt(call: requester, caller: kiosk, passcode: passcode, purpose: .endSession, source: .kiosk))
        } catch {
            closePrompt(.failed)
        }
    }

    /// Closes the prompt (if open) and gives the locks back as they were.
    func closePrompt(_ reason: PromptOutcome) {
        guard prompt.state != .closed else { return }
        prompt.close()
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

    /// The session ended (or expired into another state) while the prompt was open: it closes.
    /// One being checked is closed by its check's outcome.
    func sessionChangedUnderPrompt() {
        if prompt.state == .open && !state.session.isActive { closePrompt(.ended) }
    }

    private func armPromptTimer() {
        guard let deadline = prompt.deadline else { return }
        let delay = max(.zero, WallClockTime(microseconds: deadline) - clock.now())
        do {
            if let promptTimer {
                try promptTimer.rearm(after: delay)
            } else {
                promptTimer = try loop.addTimer(clock: .boottime, after: delay, accuracy: .milliseconds(50)) {
                    [unowned self] in
                    if prompt.timedOut(at: clock.now().microseconds) { closePrompt(.timeout) } else { armPromptTimer() }
                }
            }
        } catch {
            // A prompt that cannot time out would hold the kiosk's input: close it now.
            logger.error("Could not arm the prompt's timer", metadata: ["error": "\(Errno.reason(of: error))"])
            closePrompt(.failed)
        }
    }

    // MARK: Properties

    var promptProperties: [BusProperty] {
        [
            BusProperty(Member.promptState, "s") { [unowned self] in .string(prompt.state.rawValue) },
            BusProperty(Member.promptLength, "u") { [unowned self] in .uint32(UInt32(prompt.length)) },
            BusProperty(Member.promptDeadline, "t") { [unowned self] in
                .uint64(UInt64(max(0, prompt.deadline.map { displayTime(WallClockTime(microseconds: $0)).microseconds } ?? 0)))
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
