import KioskAPI
import KioskCore
import KioskInput

/// The offline dry run behind `kioskctl replay --profile FILE TRACE`: a recording through the
/// session's filter, printed as what would reach the kiosk.
public enum Replay {
    /// Filtered output of every device, frames in time order, as evemu `E:` lines with
    /// libevdev-style comments. A `SYN_DROPPED` in the recording is resynced from the state the
    /// recording itself implies. A completed exit gesture prints `# ExitRequested`.
    ///
    /// With `passcode` (the profile holds a hash: it says whether a typed passcode matches it),
    /// the kiosk's side of the session runs on ``SessionMachine``, the very code kioskd runs,
    /// on the recording's clock: the exit gesture opens kioskd's prompt as in a session (an
    /// `expired` one too), nothing is forwarded while it is open, and where it closes a comment
    /// says why — `# PasscodeAccepted` (after which events pass unfiltered: the session ended),
    /// `# PasscodeRejected`, `# PromptThrottled` (Enter while the kiosk's throttle waits: 5 wrong
    /// passcodes are free, then 30 s doubling to 5 minutes), `# PromptCancelled`,
    /// `# PromptTimeout` (after which the locks are as before).
    ///
    /// With `session` (the profile's `[session]`: its time limit and warnings), the session's
    /// time runs on the same machine and the same clock, counted from the recording's first
    /// event: `# TimeLimitWarning N` where kioskd would send it (N seconds left), and
    /// `# SessionExpired` where the time runs out, after which nothing is forwarded (the exit
    /// gesture and the prompt still work).
    ///
    /// With `session`, the profile's cleaning gesture (`[session] cleaning-gesture`) starts
    /// cleaning the screen as on the kiosk: `# Cleaning 30s` where it starts, nothing forwarded
    /// but what assistive technology keeps (`[accessibility]`, `[[device]]`), and
    /// `# CleaningEnded` at the first event after its time (or where the exit gesture opens the
    /// prompt).
    ///
    /// The profile's keyboard access features (sticky, slow and bounce keys) run as on the
    /// kiosk; slow keys' deadline comes on the recording's clock, a held key's press printed
    /// with its deadline's time before the recording's next event.
    ///
    /// With `idle` (the profile's `[idle]`), idle time runs on the same machine and clock, from
    /// the recording's previous event: `# IdleWarning, reset at T s` where "Still there?" would
    /// come up (nothing forwarded while it is up; a key or touch let go answers it,
    /// `# IdleWarning closed`), `# IdleReset at T s`, `# Blank at T s` where kioskd would want
    /// the display dark (nothing forwarded), `# Wake (swallowed)` where a press woke it (that
    /// key or contact reaches nothing until let go). T counts from the recording's first event.
    /// A recording has no wall clock: `display-off` windows are not modelled.
    public static func run(
        trace: Trace, policy: FilterPolicy, passcode: ((String) -> Bool)? = nil, expired: Bool = false,
        session: Profile.Session? = nil, idle: Profile.Idle? = nil
    ) -> String {
        var text = ""
        for line in lines(
            trace: trace, policy: policy, passcode: passcode, expired: expired, session: session, idle: idle)
        {
            text += line
            text += "\n"
        }
        return text
    }

    /// The filtered frames, each tagged with the index of its device in `trace.devices`.
    public static func frames(
        trace: Trace, policy: FilterPolicy, passcode: ((String) -> Bool)? = nil, expired: Bool = false,
        session: Profile.Session? = nil, idle: Profile.Idle? = nil
    ) -> [(device: Int, events: [InputEvent], note: String?)] {
        let filter = InputFilter(policy: policy)
        let ids = trace.devices.map { filter.addDevice($0.description) }
        var states = trace.devices.map { DeviceState(for: $0.description) }
        var output = OutputBuffer()
        var pendingResync: Set<Int> = []
        var result: [(device: Int, events: [InputEvent], note: String?)] = []
        let start = mergedByFrame(trace).first.map { Timestamp(microseconds: $0.1.time) } ?? Timestamp(microseconds: 0)
        var machine = sessionMachine(at: start, expired: expired, session: session, idle: idle)
        let timed = session?.timeLimit != nil
        let idles = !(idle?.isEmpty ?? true)
        /// The time of the recording's previous event: idle time's last input.
        var lastInput: Timestamp?
        /// When idle time was last looked at: what came due after it is due now.
        var idleLooked = start
        func seconds(_ t: Timestamp) -> String {
            let tenths = (t - start).microseconds / 100_000
            return "\(tenths / 10).\(tenths % 10) s"
        }
        /// The policy kioskd's enforcer would apply now: the profile's, holding all input once
        /// the session expired, reading the passcode while the prompt is open, reading the key that
        /// takes the offer of more time while it is up; none once the
        /// session ended.
        func current() -> FilterPolicy {
            guard machine.state.session.isActive else { return .passThrough }
            var now = policy
            if machine.state.session.state == .expired { now.holdAllInput = true }
            if machine.prompt.state != .closed { now.readsPasscode = true }
            if let offer = machine.offer, offer.extensionsLeft > 0 { now.offersTime = true }
            if machine.state.session.state == .active {
                if machine.idle.warningUntil != nil { now.asksPresence = true }
                if machine.idle.displayOff { now.displayOff = true }
            }
            if machine.cleaning != nil { now.cleaning = true }
            return now
        }
        func collect() {
            for frame in output.frames {
                result.append((ids.firstIndex(of: frame.device) ?? 0, Array(output.events(of: frame)), nil))
            }
            output.removeAll()
        }
        /// Runs a kiosk event through the machine at `now` and performs its effects here: the
        /// passcode judged at once, the prompt's keys read or the locks given back.
        func kiosk(_ event: SessionMachine.Event, at now: Int64) {
            // Run for each recorded event: no array per call (a check's verdict is the only
            // event an effect brings, one at a time).
            var next: SessionMachine.Event? = event
            while let due = next {
                next = nil
                for effect in machine.handle(due, at: Timestamp(microseconds: now)) {
                    switch effect {
                    case .promptOpened:
                        filter.setPolicy(current(), into: &output)
                        collect()
                    case .check(let typed):
                        next = .judged(
                            passcode?(typed) == true ? .right : .wrong, checkedFor: machine.state.session.identity)
                    case .promptClosed(let reason):
                        filter.setPolicy(current(), into: &output)
                        collect()
                        result.append((0, [], note(reason)))
                    case .timeLimitWarning(let secondsLeft):
                        result.append((0, [], "TimeLimitWarning \(secondsLeft)"))
                    case .sessionExpired:
                        filter.setPolicy(current(), into: &output)
                        collect()
                        result.append((0, [], "SessionExpired"))
                    case .timeOfferChanged:
                        filter.setPolicy(current(), into: &output)
                        collect()
                        result.append(
                            (0, [], machine.offer.map { "TimeOffer \($0.extensionsLeft) left" } ?? "TimeOffer closed"))
                    case .visitorExtended(let amount, let left):
                        result.append((0, [], "TimeExtended \(amount.kioskText), \(left) left"))
                    case .idleWarningChanged:
                        filter.setPolicy(current(), into: &output)
                        collect()
                        result.append(
                            (
                                0, [],
                                machine.idle.warningUntil.map { "IdleWarning, reset at \(seconds($0))" }
                                    ?? "IdleWarning closed"
                            ))
                    case .idleReset:
                        result.append((0, [], "IdleReset at \(seconds(Timestamp(microseconds: now)))"))
                    case .displayPowerChanged(let on, _):
                        filter.setPolicy(current(), into: &output)
                        collect()
                        result.append(
                            (0, [], on ? "Wake (swallowed)" : "Blank at \(seconds(Timestamp(microseconds: now)))"))
                    case .cleaningStarted(let length):
                        filter.setPolicy(current(), into: &output)
                        collect()
                        result.append((0, [], "Cleaning \(length.kioskText)"))
                    case .cleaningEnded:
                        filter.setPolicy(current(), into: &output)
                        collect()
                        result.append((0, [], "CleaningEnded"))
                    case .exitRequested, .promptChanged, .save, .sessionEnded, .trialEnded, .deadlineChanged,
                        .trialConfirmed,
                        .sessionStarted, .profileReloaded, .lastGoodKept, .strictestLocks, .wrongPasscode, .refused,
                        .drawingStarted, .drawingEnded:
                        break  // a bus call's, or the daemon's: not a recording's (drawing starts by a call)
                    }
                }
            }
        }
        for (deviceIndex, event) in mergedByFrame(trace) {
            let id = ids[deviceIndex]
            let now = event.time
            if passcode != nil || machine.cleaning != nil { kiosk(.clock, at: now) }
            if timed { kiosk(.sessionTime, at: now) }
            if idles {
                // Idle time's timer, on the recording's clock: each thing due before this event,
                // at its own time.
                let input = SessionMachine.IdleInput(lastInput: lastInput)
                var looks = 0  // each look does what is due, so at most one per threshold
                while looks < 4, let due = machine.idleWakeup(input, at: idleLooked), due.microseconds <= now {
                    kiosk(.idle(input), at: due.microseconds)
                    idleLooked = due
                    looks += 1
                }
                lastInput = Timestamp(microseconds: now)
                idleLooked = Timestamp(microseconds: now)
            }
            // Slow keys' timer, on the recording's clock: a key held long enough counts at its
            // deadline, before whatever the recording has next.
            if let due = filter.keyDeadline, due <= now {
                filter.advance(to: now, into: &output)
                collect()
            }
            let outcome = filter.process(event, device: id, into: &output)
            // A recording goes on after a drop with the rest of the kernel's stream (discarded by
            // the filter up to the next SYN_REPORT); those events stand for the state after the
            // drop: resync with that state at the SYN_REPORT that ends the discarded stretch.
            states[deviceIndex].apply(event)
            if event.isSynReport, pendingResync.remove(deviceIndex) != nil {
                filter.resync(device: id, to: states[deviceIndex], into: &output)
            }
            if outcome.resyncNeeded { pendingResync.insert(deviceIndex) }
            collect()
            if outcome.exitRequested {
                result.append((deviceIndex, [], "ExitRequested"))
                if passcode != nil { kiosk(.exitGesture, at: now) }
            }
            if let key = outcome.promptKey, passcode != nil { kiosk(.promptKey(key), at: now) }
            if outcome.woke { kiosk(.wake, at: now) }
            if outcome.tookOffer {
                kiosk(machine.idle.warningUntil != nil ? .stillHere : .visitorExtends, at: now)
            }
            if outcome.cleaningRequested { kiosk(.cleaningGesture, at: now) }
        }
        return result
    }

    /// The session a replay runs: active from the recording's first event (expired at once with
    /// `expired`), with the profile's `session` settings (its time limit), its passcode judged by
    /// the replay's `passcode`.
    static func sessionMachine(
        at start: Timestamp, expired: Bool, session: Profile.Session? = nil, idle: Profile.Idle? = nil
    ) -> SessionMachine {
        var state = KioskState()
        var profile = Profile()
        if let session { profile.session = session }
        if let idle { profile.idle = idle }
        _ = try? state.startSession(profileName: "replay", profile: profile, at: start)
        if expired { _ = try? state.session.setDeadline(start, warnings: [], at: start) }
        // The profile's session settings: the offer of more time (`visitor-extensions`) and idle
        // time come as on the kiosk.
        var machine = SessionMachine(state: state, profile: session == nil && idle == nil ? nil : profile)
        machine.idle.activeAt = start
        return machine
    }

    /// The comment a replay prints where the prompt closed.
    public static func note(_ reason: PromptCloseReason) -> String {
        switch reason {
        case .accepted: "PasscodeAccepted"
        case .rejected: "PasscodeRejected"
        case .throttled: "PromptThrottled"
        case .cancelled: "PromptCancelled"
        case .timeout: "PromptTimeout"
        case .ended: "PromptEnded"
        case .failed: "PromptFailed"
        }
    }

    /// What the profile's allowed-device entries come to on this recording, as comment lines: the
    /// devices each one lets through (matched on the recording's `N:` name and `I:` ids), and
    /// the entries that match on udev properties, which a recording does not have.
    public static func allowedDeviceNotes(trace: Trace, policy: FilterPolicy) -> [String] {
        policy.allowedDevices.map { entry in
            if !entry.matcher.udev.isEmpty {
                let keys = entry.matcher.udev.map(\.key).joined(separator: ", ")
                return
                    "# [[device]] \(entry.role): matches on udev properties (\(keys)), which a recording does not have: here it lets no device through"
            }
            let matched = trace.devices.indices.filter { entry.matcher.matches(trace.devices[$0].description) }
            guard !matched.isEmpty else { return "# [[device]] \(entry.role): matches no device of the recording" }
            let passes = entry.passesKeys && entry.passesPointer ? "all" : entry.passesKeys ? "keys" : "pointer"
            let names = matched.map { "device \($0) (\(trace.devices[$0].description.name))" }
            return "# [[device]] \(entry.role): lets through \(names.joined(separator: ", ")): \(passes)"
        }
    }

    static func lines(
        trace: Trace, policy: FilterPolicy, passcode: ((String) -> Bool)? = nil, expired: Bool = false,
        session: Profile.Session? = nil, idle: Profile.Idle? = nil
    ) -> [String] {
        var lines: [String] = allowedDeviceNotes(trace: trace, policy: policy)
        var lastDevice = -1
        for frame in frames(
            trace: trace, policy: policy, passcode: passcode, expired: expired, session: session, idle: idle)
        {
            if let note = frame.note {
                lines.append("# \(note)")
                continue
            }
            if trace.devices.count > 1 && frame.device != lastDevice {
                lines.append("# device \(frame.device): \(trace.devices[frame.device].description.name)")
                lastDevice = frame.device
            }
            for event in frame.events { lines.append(evemuLine(event)) }
        }
        return lines
    }

    /// Events of all devices, each device's frames kept whole, frames ordered by the time of
    /// their `SYN_REPORT` (stable, so equal times keep the devices' order).
    static func mergedByFrame(_ trace: Trace) -> [(Int, InputEvent)] {
        var frames: [(time: Int64, device: Int, order: Int, events: ArraySlice<InputEvent>)] = []
        for (deviceIndex, device) in trace.devices.enumerated() {
            var start = 0
            for (index, event) in device.events.enumerated() where event.isSynReport {
                frames.append((event.time, deviceIndex, frames.count, device.events[start...index]))
                start = index + 1
            }
            if start < device.events.count {
                frames.append((Int64.max, deviceIndex, frames.count, device.events[start...]))
            }
        }
        frames.sort { ($0.time, $0.order) < ($1.time, $1.order) }
        return frames.flatMap { frame in frame.events.map { (frame.device, $0) } }
    }

    /// One evemu event line: `E: 0.054565 0003 002f 0001\t# EV_ABS / ABS_MT_SLOT 1`.
    public static func evemuLine(_ event: InputEvent) -> String {
        let usec = String(event.microseconds)
        let time = "\(event.seconds).\(String(repeating: "0", count: max(0, 6 - usec.count)))\(usec)"
        let value =
            event.value < 0
            ? "-" + padded(String(-Int64(event.value)), 3)
            : padded(String(event.value), 4)
        var line = "E: \(time) \(padded(hex(event.type), 4)) \(padded(hex(event.code), 4)) \(value)"
        if event.isSynReport {
            line += "\t# ------------ SYN_REPORT (0) ----------"
        } else {
            let type = EventCodes.typeName(event.type) ?? "type \(event.type)"
            let code = EventCodes.name(type: event.type, code: event.code) ?? "code \(event.code)"
            line += "\t# \(type) / \(code) \(event.value)"
        }
        return line
    }

    private static func hex(_ value: UInt16) -> String { String(value, radix: 16) }

    private static func padded(_ text: String, _ width: Int) -> String {
        String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
