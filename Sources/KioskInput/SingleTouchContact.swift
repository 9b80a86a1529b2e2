/// The one contact of a single-touch device (`BTN_TOUCH` with `ABS_X`/`ABS_Y`), whose own
/// pointer events are forwarded as they are while the contact is not suppressed.
struct SingleTouchContact: TouchContacts {
    private enum Decision { case idle, forwarded, suppressed }

    private var pointer: PointerEmulation
    private let locator: TouchLocator
    private var decision = Decision.idle
    /// The source's position.
    private var x: Int32?, y: Int32?
    private var downInFrame = false
    private var upInFrame = false
    /// Whether the source's `BTN_TOUCH` is down, as its events (or its state at grab time or at
    /// a resync) last said.
    private var sourceDown = false

    init(description: DeviceDescription) {
        pointer = PointerEmulation(description: description)
        locator = TouchLocator(description: description, x: ABS.x, y: ABS.y)
    }

    mutating func prepare(
        _ events: UnsafeBufferPointer<InputEvent>, end: Int, gate: DeviceGate, shared: inout SharedState
    ) {
        downInFrame = false
        upInFrame = false
        var index = 0
        while index < end {
            let event = events[index]
            index += 1
            if event.type == EV.abs && event.code == ABS.x { x = event.value }
            if event.type == EV.abs && event.code == ABS.y { y = event.value }
            if event.type == EV.key && event.code == BTN.touch {
                if event.value == 1 { downInFrame = true } else if event.value == 0 { upInFrame = true }
                sourceDown = event.value != 0
            }
        }
        if downInFrame && decision == .idle {
            let locked = locator.startIsLocked(
                x: x ?? 0, y: y ?? 0, time: events[end].time, gate: gate, shared: &shared)
            decision = locked ? .suppressed : .forwarded
        }
    }

    @inline(__always)
    mutating func route(_ event: InputEvent, holding: Bool, into output: inout OutputBuffer) -> Bool {
        guard Self.isPointerEvent(event) else { return false }
        if decision != .suppressed && !holding {
            output.append(event)
            pointer.noteForwarded(event)
        }
        return true
    }

    @inline(__always)
    private static func isPointerEvent(_ event: InputEvent) -> Bool {
        if event.type == EV.key { return event.code == BTN.touch || BTN.isFingerCountTool(event.code) }
        if event.type == EV.abs { return event.code == ABS.x || event.code == ABS.y || event.code == ABS.pressure }
        return false
    }

    mutating func finish(time: InputEvent, into output: inout OutputBuffer) {
        if downInFrame && decision == .forwarded {
            // The clone may hold another position (it missed a suppressed contact's moves).
            pointer.restorePosition(x: x, y: y, time: time, into: &output)
        }
        if upInFrame { decision = .idle }
    }

    mutating func endForwardedContacts(time: InputEvent, into output: inout OutputBuffer) {
        if decision == .forwarded {
            decision = .suppressed
            pointer.emitNoContact(time: time, into: &output)
        }
    }

    /// After `SYN_DROPPED`: `BTN_TOUCH` as `state` has it, when the drop changed it. A contact
    /// lifted in the dropped stretch ends (on the clone too, when it was forwarded); one begun in
    /// it is decided at its synced position, as any other.
    func appendChanges(to state: DeviceState, time: InputEvent, into frame: inout [InputEvent]) {
        let down = state.keysDown.contains(BTN.touch)
        guard down != sourceDown else { return }
        frame.append(time.with(type: EV.key, code: BTN.touch, value: down ? 1 : 0))
    }

    /// A contact live at grab time stays suppressed until lifted.
    mutating func adopt(_ state: DeviceState) {
        sourceDown = state.keysDown.contains(BTN.touch)
        if sourceDown { decision = .suppressed }
        x = state.absValues[ABS.x]
        y = state.absValues[ABS.y]
    }
}
