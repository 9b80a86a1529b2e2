/// The pointer part of a pen, tablet or absolute mouse (``PointerKind/absolute``): a pointer
/// that says where on the screen it is, decided in strokes.
///
/// A stroke runs from the frame where the first of its buttons goes down (a mouse button, the
/// pen's tip `BTN_TOUCH`, a barrel button `BTN_STYLUS*`), or its pressure rises above the
/// axis's minimum (libinput takes a pen's tip from pressure, not `BTN_TOUCH`), to the frame
/// where all are up again. It is decided once, at the end of the frame that starts it, by where
/// the pointer is then (through the device's calibration, like a touch); a suppressed stroke
/// sends nothing at all, a forwarded one everything. Between strokes the pointer hovers:
/// motion, proximity (`BTN_TOOL_*`) and tilt pass unless the rule suppresses everything; a
/// wheel turned while hovering over a locked region is swallowed (it would scroll what is
/// there).
///
/// The part owns every event of the device but keyboard keys and `MSC_SCAN`: all its axes,
/// pointer buttons, relative axes (wheels) and other `EV_MSC` (`MSC_SERIAL`). What the clone
/// holds is tracked, so that after a stretch it missed (a suppressed stroke, a locked spell)
/// the first forwarded frame brings it to the device's state.
struct AbsoluteStrokes: TouchContacts {
    private enum Decision { case idle, forwarded, suppressed }

    private let locator: TouchLocator
    /// The axes (below `ABS_MT_SLOT`) and pointer buttons the device reports.
    private let axes: [UInt16]
    private let buttons: [UInt16]
    private let pressureMinimum: Int32?
    /// The device's axis values and buttons, and the clone's (indexed by code).
    private var source: [Int32]
    private var clone: [Int32]
    private var sourceDown: [Bool]
    private var cloneDown: [Bool]
    /// Buttons the profile locks by name (their events are dropped, as read in `prepare`).
    private var blocked: [Bool]
    private var strokeButtonsDown = 0
    private var decision = Decision.idle
    private var rule = ContactRule.forwardAll
    private var holding = false
    /// Whether this frame's events go to the clone.
    private var forwarding = false
    /// A wheel turned in this frame over a locked region, while hovering.
    private var wheelLocked = false
    /// The clone may differ from the device (an event was not forwarded).
    private var stale = false

    init(description: DeviceDescription) {
        locator = TouchLocator(description: description, x: ABS.x, y: ABS.y)
        axes = (0..<ABS.mtSlot).filter { description.supports(type: EV.abs, code: $0) }
        buttons = (description.codes[EV.key] ?? []).filter(BTN.isPointerButton).sorted()
        pressureMinimum = description.absInfo[ABS.pressure]?.minimum
        source = Array(repeating: 0, count: ABS.count)
        for (code, info) in description.absInfo where Int(code) < ABS.count { source[Int(code)] = info.minimum }
        clone = source
        sourceDown = Array(repeating: false, count: KEY.count)
        cloneDown = sourceDown
        blocked = sourceDown
    }

    @inline(__always)
    static func ownsKey(_ code: UInt16) -> Bool { BTN.isPointerButton(code) }

    private var strokeIsDown: Bool {
        if strokeButtonsDown > 0 { return true }
        guard let pressureMinimum else { return false }
        return source[Int(ABS.pressure)] > pressureMinimum
    }

    mutating func prepare(
        _ events: UnsafeBufferPointer<InputEvent>, end: Int, gate: DeviceGate, shared: inout SharedState
    ) {
        rule = gate.contacts
        holding = shared.holdsAll
        var wheel = false
        var index = 0
        while index < end {
            let event = events[index]
            index += 1
            switch event.type {
            case EV.abs where Int(event.code) < ABS.count:
                source[Int(event.code)] = event.value
            case EV.key where BTN.isPointerButton(event.code) && event.value != 2:
                // A button the profile locks by name (extra-locked-keys) never reaches the clone
                // and starts no stroke.
                blocked[Int(event.code)] = shared.locksButton(event.code, pointerExempt: gate.pointerExempt)
                if blocked[Int(event.code)] { continue }
                let down = event.value != 0
                if sourceDown[Int(event.code)] != down {
                    sourceDown[Int(event.code)] = down
                    if BTN.isStrokeButton(event.code) { strokeButtonsDown += down ? 1 : -1 }
                }
            case EV.rel:
                wheel = true
            default:
                break
            }
        }
        if decision == .idle && strokeIsDown {
            let locked = locator.startIsLocked(
                x: source[Int(ABS.x)], y: source[Int(ABS.y)], time: events[end].time, gate: gate, shared: &shared)
            decision = locked ? .suppressed : .forwarded
        }
        forwarding = isForwarding
        wheelLocked =
            wheel && decision == .idle
            && locator.isLocked(x: source[Int(ABS.x)], y: source[Int(ABS.y)], rule: rule, shared: shared)
    }

    private var isForwarding: Bool {
        guard !holding else { return false }
        switch decision {
        case .forwarded: return true
        case .suppressed: return false
        case .idle: return rule != .suppressAll
        }
    }

    @inline(__always)
    mutating func route(_ event: InputEvent, holding: Bool, into output: inout OutputBuffer) -> Bool {
        switch event.type {
        case EV.abs, EV.rel: break
        case EV.key:
            guard BTN.isPointerButton(event.code) else { return false }
            if blocked[Int(event.code)] { return true }
            // An autorepeat only of a button the clone holds down, as the key ledger forwards
            // them: one never pressed (or locked by name before it was) sends none.
            if event.value == 2 && !cloneDown[Int(event.code)] { return true }
        case EV.msc: guard event.code != MSC.scan else { return false }
        default: return false
        }
        guard forwarding && !(event.type == EV.rel && wheelLocked) else {
            stale = true
            return true
        }
        output.append(event)
        if event.type == EV.abs && Int(event.code) < ABS.count {
            clone[Int(event.code)] = event.value
        } else if event.type == EV.key && event.value != 2 {
            cloneDown[Int(event.code)] = event.value != 0
        }
        return true
    }

    mutating func finish(time: InputEvent, into output: inout OutputBuffer) {
        if decision != .idle && !strokeIsDown {
            decision = .idle
            forwarding = isForwarding
        }
        guard forwarding && stale else { return }
        stale = false
        for code in axes where clone[Int(code)] != source[Int(code)] {
            output.append(time.with(type: EV.abs, code: code, value: source[Int(code)]))
            clone[Int(code)] = source[Int(code)]
        }
        for code in buttons where cloneDown[Int(code)] != sourceDown[Int(code)] {
            output.append(time.with(type: EV.key, code: code, value: sourceDown[Int(code)] ? 1 : 0))
            cloneDown[Int(code)] = sourceDown[Int(code)]
        }
    }

    /// Releases everything the clone holds (buttons, the tool's proximity, pressure); the
    /// stroke under way, if any, stays suppressed until it ends.
    mutating func endForwardedContacts(time: InputEvent, into output: inout OutputBuffer) {
        if decision == .forwarded { decision = .suppressed }
        forwarding = false
        stale = true
        for code in buttons where cloneDown[Int(code)] {
            output.append(time.with(type: EV.key, code: code, value: 0))
            cloneDown[Int(code)] = false
        }
        if let pressureMinimum, clone[Int(ABS.pressure)] > pressureMinimum {
            output.append(time.with(type: EV.abs, code: ABS.pressure, value: pressureMinimum))
            clone[Int(ABS.pressure)] = pressureMinimum
        }
    }

    /// What the device holds at grab time was never forwarded: a stroke under way stays
    /// suppressed until it ends; the pen's proximity reaches the clone with the first
    /// forwarded frame.
    mutating func adopt(_ state: DeviceState) {
        for (code, value) in state.absValues where Int(code) < ABS.count {
            source[Int(code)] = value
            clone[Int(code)] = value
        }
        for code in buttons where state.keysDown.contains(code) {
            sourceDown[Int(code)] = true
            if BTN.isStrokeButton(code) { strokeButtonsDown += 1 }
        }
        if strokeIsDown { decision = .suppressed }
        stale = true
    }

    /// After a drop: a press or release for every button whose state differs from `state`
    /// (the key ledger does not hold this part's buttons).
    func appendButtonDifferences(to state: DeviceState, time: InputEvent, into frame: inout [InputEvent]) {
        for code in buttons where state.keysDown.contains(code) != sourceDown[Int(code)] {
            frame.append(time.with(type: EV.key, code: code, value: state.keysDown.contains(code) ? 1 : 0))
        }
    }
}
