import KioskCore
import KioskInput
import Logging
import SystemPackage
import SystemdKit

/// The passcode prompt at the kiosk: the kiosk's events (the exit gesture, a prompt key, the
/// prompt's timer, a passcode's judgement) go through ``SessionMachine``, the pure machine
/// `kioskctl replay` runs too, whose effects ManagerObject+Machine.swift performs. The exit gesture opens the
/// prompt, the filter reads its keys from the brokered devices and forwards nothing, Enter
/// checks the passcode under the kiosk's own throttle count through the same queue as
/// `EndSession`, and whatever happens, it closes with every lock as it was unless the passcode
/// was right. It lives in memory only: a restart comes back with the session's locks and no prompt.
extension ManagerObject {
    /// How long the prompt waits for the next key (30 s; tests shorten it).
    public var promptTimeout: Duration {
        get { .microseconds(machine.prompt.timeout) }
        set { machine.prompt.timeout = newValue.microseconds }
    }

    /// The exit gesture was seen: `ExitRequested` for apps that draw their own prompt, and
    /// kioskd's own prompt opens (on an active or expired session, unless it is open already).
    public func requestExit() {
        logger.notice(
            "Exit gesture seen",
            metadata: MessageID.exitGesture.metadata.merging(["session.profile": "\(state.session.profileName)"]) { $1 }
        )
        kiosk(.exitGesture)
    }

    /// A key of the prompt, read by the filter (``FilterResult/promptKey``).
    public func promptKey(_ key: PromptKey) {
        kiosk(.promptKey(key))
    }

    /// The session ended while the prompt was open (a bus call's change, or the session's time,
    /// committed): it closes. One being checked is closed by its check's outcome.
    func sessionChangedUnderPrompt() {
        if machine.prompt.state == .open { kiosk(.sessionChanged) }
    }

    /// Runs a kiosk event that changes nothing persisted on the machine, and performs its effects.
    func kiosk(_ event: SessionMachine.Event) {
        try? perform(machine.handle(event, at: clock.now()), MachineStep(adopted: false))
    }

    /// The kiosk's passcode was judged (on the passcode queue, `finish`): the machine's outcome,
    /// written in turn with the other changes (a wrong one counted, a right one ending the
    /// session) before the prompt closes. `done` runs once it is on disk, failed, or had nothing
    /// to write.
    func judgedAtKiosk(
        _ judgement: SessionMachine.Judgement, checkedFor session: GuidedSession.Identity?, done: @escaping () -> Void
    ) {
        let requester = KioskRequester { [weak self] in self?.kiosk(.judged(.failed, checkedFor: session)) }
        change(requester, .privileged, survivesStop: true, finally: done) { [unowned self] in
            var next = machine
            let effects = next.handle(.judged(judgement, checkedFor: session), at: clock.now())
            return try plan(next, effects, MachineStep(profileName: state.session.profileName, adopted: false))
        }
    }

    /// Arms the prompt's timer for `deadline` (µs of the kiosk clock), or stops it (nil).
    func armPromptTimer(_ deadline: Int64?) {
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
                    if machine.prompt.timedOut(at: clock.now().microseconds) {
                        kiosk(.clock)
                    } else {
                        armPromptTimer(machine.prompt.deadline)
                    }
                }
            }
        } catch {
            // A prompt that cannot time out would hold the kiosk's input: close it now.
            logger.error("Could not arm the prompt's timer", metadata: ["error": "\(Errno.reason(of: error))"])
            machine.prompt.close()
            try? perform([.promptClosed(.failed)], MachineStep(adopted: false))
        }
    }

    // MARK: Properties

    var promptProperties: [BusProperty] {
        [
            BusProperty(Member.promptState, "s") { [unowned self] in .string(machine.prompt.state.rawValue) },
            BusProperty(Member.promptLength, "u") { [unowned self] in .uint32(UInt32(machine.prompt.length)) },
            BusProperty(Member.promptDeadline, "t") { [unowned self] in
                .uint64(
                    UInt64(
                        max(
                            0,
                            machine.prompt.deadline.map { displayTime(Timestamp(microseconds: $0)).microseconds } ?? 0))
                )
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
                        .structure([
                            .string($0.label), .double($0.x), .double($0.y), .double($0.width), .double($0.height),
                        ])
                    })
            },
            BusProperty(Member.speakWarnings, "b") { [unowned self] in
                .bool(state.session.isActive && activeProfile?.session.speakWarnings == true)
            },
            BusProperty(Member.language, "s") { [unowned self] in
                .string(state.session.isActive ? activeProfile?.session.language ?? "" : "")
            },
            BusProperty(Member.timeOffer, "s") { [unowned self] in .string(timeOfferState.rawValue) },
            BusProperty(Member.visitorExtensionsLeft, "u") { [unowned self] in
                .uint32(UInt32(machine.offer?.extensionsLeft ?? 0))
            },
        ]
    }

    /// `TimeOffer`: the machine's offer of more time as a display shows it.
    var timeOfferState: TimeOfferState {
        guard let offer = machine.offer else { return .closed }
        return offer.extensionsLeft > 0 ? .open : .exhausted
    }

    /// The visitor took the offer of more time (the filter read the key or touch): written in
    /// turn with the other changes, like a passcode judged at the kiosk.
    public func visitorExtends() {
        let requester = KioskRequester {}
        change(requester, .privileged) { [unowned self] in
            var next = machine
            let effects = next.handle(.visitorExtends, at: clock.now())
            return try plan(next, effects, MachineStep(profileName: state.session.profileName, adopted: false))
        }
    }

    func emitTimeOfferChanged() {
        emitPropertiesChanged([Member.timeOffer, Member.visitorExtensionsLeft])
    }

    func emitPromptChanged() {
        emitPropertiesChanged([Member.promptState, Member.promptLength, Member.promptDeadline, Member.promptRetryAfter])
    }
}
