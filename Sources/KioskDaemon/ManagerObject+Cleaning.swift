import KioskCore
import Logging
import SystemPackage
import SystemdKit

/// Cleaning the screen (docs/dbus-api.md § Cleaning the screen): `StartCleaning`,
/// `StopCleaning`, the profile's cleaning gesture, the end by time, `CleaningStarted`,
/// `CleaningEnded` and `CleaningUntil`. The rules are the session machine's
/// (`SessionMachine+Cleaning.swift`); here they are authorized, timed on the kiosk clock
/// (CLOCK_BOOTTIME: a wall-clock jump neither ends nor prolongs it) and made real by the
/// enforcer. Nothing of it is saved: a restart comes back with the session's locks and no
/// cleaning.
extension ManagerObject {
    /// `StartCleaning(t seconds)`: holds input for `seconds` (5 to 300) from now, with or without
    /// a session; again while cleaning, from now. Under the polkit action `clean`.
    func startCleaning(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 1, let seconds = call.arguments[0].uint64 else {
            throw KioskError(.invalidArgument, "StartCleaning takes (t seconds).")
        }
        let range = Profile.Session.cleaningTimeRange
        let bounds = range.lowerBound.components.seconds...range.upperBound.components.seconds
        guard seconds >= bounds.lowerBound, seconds <= bounds.upperBound else {
            throw KioskError(
                .invalidArgument,
                "StartCleaning's seconds is \(seconds); cleaning takes \(bounds.lowerBound) to \(bounds.upperBound) seconds (\(range.lowerBound.kioskText) to \(range.upperBound.kioskText)), and nothing changed."
            )
        }
        return try applyCleaning(call, .startCleaning(.seconds(Int64(seconds))), doing: "start cleaning the screen")
    }

    /// `StopCleaning()`: ends cleaning now; nothing when none runs. Under the polkit action `clean`.
    func stopCleaning(_ call: MethodCall) throws -> MethodReply {
        try applyCleaning(call, .stopCleaning, doing: "stop cleaning the screen")
    }

    /// Identify → authorize → apply the change to the live machine in turn with the other
    /// changes (nothing to write) → perform its effects → reply.
    private func applyCleaning(
        _ call: MethodCall, _ change: SessionMachine.Change, doing what: String
    ) throws -> MethodReply {
        try identify(call) { [unowned self] caller in
            try authorize(call, caller: caller, action: KioskWire.Action.clean, doing: what) { [unowned self] in
                self.change(call, .privileged) { [unowned self] in
                    let effects = try machine.apply(change, at: clock.now())
                    return try plan(
                        machine, effects,
                        MachineStep(
                            requester: call, caller: caller, change: change, profileName: state.session.profileName))
                }
            }
        }
        return .deferred
    }

    /// The profile's cleaning gesture was seen (the filter's ``FilterResult/cleaningRequested``).
    public func requestCleaning() {
        kiosk(.cleaningGesture)
    }

    /// `cleaningStarted`: the hold in force, its timer set, the journal, the signal.
    func performCleaningStarted(_ length: Duration, _ step: MachineStep) {
        enforcer?.setCleaning(true)
        armCleaningTimer()
        logger.notice(
            "Cleaning the screen: input is held",
            metadata: step.caller.metadata.merging(MessageID.cleaningStarted.metadata) { $1 }.merging([
                "cleaning.length": "\(length.kioskText)", "session.profile": "\(state.session.profileName)",
            ]) { $1 })
        emit(Member.cleaningStarted, [.uint64(UInt64(length.components.seconds))])
        emitPropertiesChanged([Member.cleaningUntil])
    }

    /// `cleaningEnded`: the hold lifted, the timer off, the journal, the signal.
    func performCleaningEnded(_ step: MachineStep) {
        try? cleaningTimer?.setEnabled(.off)
        enforcer?.setCleaning(false)
        logger.notice(
            "Cleaning the screen ended: input flows as the locks say",
            metadata: step.caller.metadata.merging(MessageID.cleaningEnded.metadata) { $1 }.merging([
                "session.profile": "\(state.session.profileName)"
            ]) { $1 })
        emit(Member.cleaningEnded, [])
        emitPropertiesChanged([Member.cleaningUntil])
    }

    /// Arms the cleaning's timer for its end (kiosk clock), or ends the cleaning now when the timer
    /// cannot be armed: a hold nothing would lift must not stay.
    func armCleaningTimer() {
        guard let until = machine.cleaning?.until else {
            try? cleaningTimer?.setEnabled(.off)
            return
        }
        let delay = max(.zero, Timestamp(microseconds: until) - clock.now())
        do {
            if let cleaningTimer {
                try cleaningTimer.rearm(after: delay)
            } else {
                cleaningTimer = try loop.addTimer(clock: .boottime, after: delay, accuracy: .milliseconds(50)) {
                    [unowned self] in
                    cleaningTick()
                }
            }
        } catch {
            logger.error("Could not arm the cleaning's timer", metadata: ["error": "\(Errno.reason(of: error))"])
            machine.cleaning = nil
            try? perform([.cleaningEnded], MachineStep(adopted: false))
        }
    }

    /// The cleaning's timer fired: it ends when its time is up on the kiosk clock, or the timer is
    /// set again for what is left.
    func cleaningTick() {
        if machine.cleaningIsOver(at: clock.now()) {
            kiosk(.clock)
        } else {
            armCleaningTimer()
        }
    }

    /// `CleaningUntil`: when the cleaning ends, as wall-clock µs for a display; 0 when none runs.
    var cleaningProperties: [BusProperty] {
        [
            BusProperty(Member.cleaningUntil, "t") { [unowned self] in
                .uint64(
                    UInt64(
                        max(
                            0, machine.cleaning.map { displayTime(Timestamp(microseconds: $0.until)).microseconds } ?? 0
                        )
                    ))
            }
        ]
    }

    var cleaningMethods: [BusMethod] {
        [
            method(Member.startCleaning, in: [("t", "seconds")]) { [unowned self] in try startCleaning($0) },
            method(Member.stopCleaning) { [unowned self] in try stopCleaning($0) },
        ]
    }

    static var cleaningSignals: [BusSignal] {
        [BusSignal(Member.cleaningStarted, arguments: [("t", "seconds")]), BusSignal(Member.cleaningEnded)]
    }
}
