import KioskCore
import Logging
import SystemPackage
import SystemdKit

#if canImport(Glibc)
import Glibc
#endif

/// Idle time (`[idle]`, docs/dbus-api.md § Idle time and the dark display): the "Still there?"
/// screen, `IdleReset`, and the display kioskd wants dark, decided by ``SessionMachine`` from
/// the last physical input the broker saw, on a timer of the kiosk clock armed for the next
/// thing due (never per input event: the broker only stamps the time of each read). kioskd
/// never turns the display off itself: it publishes `DisplayPower`, and a process inside the
/// kiosk session (kioskd-prompt) does it.
extension ManagerObject {
    /// The unit restarted by `[idle] reset = "restart-app"`: the compositor and its primary
    /// client, the app.
    static let kioskSessionUnit = "kiosk-session.service"

    /// What idle time reads now: the last physical input moved onto the kiosk clock, and the
    /// local minute of the day when a `display-off` window needs it (`localtime_r`, the system
    /// time zone, so a DST change or a set clock is seen at the next look).
    func idleInput() -> SessionMachine.IdleInput {
        let now = clock.now()
        var last: Timestamp?
        if let since = timeSinceInput?() { last = now + (.zero - since) }
        var minute: Int?
        if machine.idleWatchesLocalTime {
            var t = time(nil)
            var parts = tm()
            if localtime_r(&t, &parts) != nil { minute = Int(parts.tm_hour) * 60 + Int(parts.tm_min) }
        }
        return SessionMachine.IdleInput(lastInput: last, localMinute: minute)
    }

    /// Looks at idle time now and performs what came due (`perform` arms the timer for the
    /// next look, as after every step).
    func idleLook() {
        try? perform(machine.handle(.idle(idleInput()), at: clock.now()), MachineStep(adopted: false))
    }

    /// Arms the idle timer for the next thing due, or the next local minute while a
    /// `display-off` window is watched; off when nothing is due. Cheap: called after every step.
    func scheduleIdleTimer() {
        let now = clock.now()
        let input = idleInput()
        var delay: Duration? = machine.idleWakeup(input, at: now).map { max(.zero, $0 - now) }
        if machine.idleWatchesLocalTime {
            let second = Int64(time(nil) % 60)
            let toMinute = Duration.seconds(60 - second)
            delay = min(delay ?? toMinute, toMinute)
        }
        do {
            guard let delay else {
                try idleTimer?.setEnabled(.off)
                return
            }
            if let idleTimer {
                try idleTimer.rearm(after: delay)
            } else {
                // CLOCK_BOOTTIME, as the kiosk clock: a set wall clock fires nothing.
                idleTimer = try loop.addTimer(clock: .boottime, after: delay, accuracy: .milliseconds(100)) {
                    [unowned self] in
                    idleLook()
                }
            }
        } catch {
            logger.error("Could not arm the idle timer", metadata: ["error": "\(Errno.reason(of: error))"])
        }
    }

    /// A press woke the dark display (the filter read it; it reaches no app).
    public func displayWoken() {
        kiosk(.wake)
    }

    /// The visitor let go of a key, button or touch while a screen asked for it: the offer of
    /// more time, or "Still there?".
    public func visitorAnswered() {
        if machine.idle.warningUntil != nil {
            kiosk(.stillHere)
        } else {
            visitorExtends()
        }
    }

    /// Performs an idle effect (ManagerObject+Machine.swift's `perform` hands them here).
    func performIdle(_ effect: SessionMachine.Effect) {
        switch effect {
        case .idleWarningChanged:
            let until = machine.idle.warningUntil
            logger.info(
                until == nil ? "\"Still there?\" closed" : "\"Still there?\" shown: idle reset unless someone answers",
                metadata: ["session.profile": "\(state.session.profileName)"])
            enforcer?.setIdle(warning: until != nil, displayOff: machine.idle.displayOff)
            emitPropertiesChanged([Member.idleWarning])
        case .idleReset(let mode):
            logger.notice(
                "Nobody used the kiosk for a while: idle reset",
                metadata: MessageID.idleReset.metadata.merging([
                    "session.profile": "\(state.session.profileName)", "idle.reset": "\(mode.rawValue)",
                ]) { $1 })
            // The app is told first, also when its session is restarted.
            emit(Member.idleReset, [])
            if mode == .restartApp { restartKioskSession() }
        case .displayPowerChanged(let on, let why):
            logger.notice(
                on ? "Display wanted on" : "Display wanted off",
                metadata: MessageID.displayPower.metadata.merging([
                    "session.profile": "\(state.session.profileName)", "display.power": on ? "on" : "off",
                    "display.reason": "\(why.rawValue)",
                ]) { $1 })
            enforcer?.setIdle(warning: machine.idle.warningUntil != nil, displayOff: !on)
            emitPropertiesChanged([Member.displayPower])
        default:
            break
        }
    }

    /// `[idle] reset = "restart-app"`: systemd restarts the kiosk session (its `RestartUnit`,
    /// asked asynchronously on kioskd's bus). A refusal is logged; the reset signal went anyway.
    private func restartKioskSession() {
        askSystemd("RestartUnit", unit: Self.kioskSessionUnit) { [weak self] error in
            guard let self else { return }
            if let error {
                logger.warning(
                    "Could not restart the kiosk session for the idle reset",
                    metadata: ["unit": "\(Self.kioskSessionUnit)", "error": "\(Errno.reason(of: error))"])
            } else {
                logger.info(
                    "Kiosk session restarted for the idle reset", metadata: ["unit": "\(Self.kioskSessionUnit)"])
            }
        }
    }

    /// Asks systemd's manager for `member(unit, "replace")` (`RestartUnit`,
    /// `ReloadOrTryRestartUnit`, …) asynchronously on kioskd's bus; `done` gets systemd's
    /// refusal (a `BusError`), or why the call could not be sent, or nil once the job is queued.
    func askSystemd(_ member: String, unit: String, done: @escaping ((any Error)?) -> Void) {
        do {
            let call = try bus.makeMethodCall(
                destination: "org.freedesktop.systemd1", path: "/org/freedesktop/systemd1",
                interface: "org.freedesktop.systemd1.Manager", member: member)
            try call.append(.string(unit), .string("replace"))
            try bus.callAsync(call, timeout: .seconds(25)) { result in
                if case .failure(let error) = result { done(error) } else { done(nil) }
            }
        } catch {
            done(error)
        }
    }

    // MARK: Methods

    /// `Wake()`: the display kioskd holds dark comes on (nothing swallowed).
    func wake(_ call: MethodCall) throws -> MethodReply { try setDisplay(call, on: true) }

    /// `Blank()`: the display went dark by other means (a screen saver, a hook): the next key or
    /// touch only wakes it.
    func blank(_ call: MethodCall) throws -> MethodReply { try setDisplay(call, on: false) }

    /// `Wake` and `Blank`, for an admin (`display-power`), in an active session only (otherwise
    /// NoSession).
    private func setDisplay(_ call: MethodCall, on: Bool) throws -> MethodReply {
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.displayPower,
                doing: on ? "wake the kiosk's display" : "say the kiosk's display is dark"
            ) { [unowned self] in
                guard state.session.state == .active else {
                    throw KioskError(.noSession, "No guided-access session is active: kioskd holds no display dark.")
                }
                logger.notice(
                    on ? "Display woken by an admin" : "Told that the display is dark",
                    metadata: caller.metadata)
                kiosk(.adminDisplay(on: on))
                try call.reply([])
            }
        }
        return .deferred
    }

    // MARK: Properties

    var idleProperties: [BusProperty] {
        [
            BusProperty(Member.idleWarning, "t") { [unowned self] in
                .uint64(UInt64(max(0, machine.idle.warningUntil.map(displayTime)?.microseconds ?? 0)))
            },
            BusProperty(Member.displayPower, "s") { [unowned self] in
                .string(machine.idle.displayOff ? "off" : "on")
            },
        ]
    }
}
