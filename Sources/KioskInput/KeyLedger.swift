/// The keys of one device: what is physically down, and which presses were forwarded to the
/// clone (the ledger). A release or an autorepeat is forwarded only for a press that was, so
/// the clone never sees a key go up that it did not see go down.
struct KeyLedger {
    private var keyDown: [Bool]
    private var keyForwarded: [Bool]

    init() {
        keyDown = Array(repeating: false, count: KEY.count)
        keyForwarded = Array(repeating: false, count: KEY.count)
    }

    /// Records a key event and returns whether it goes to the clone. A synthetic press (from a
    /// resync) does not count toward the exit gesture. Out of line on purpose: inlined into the
    /// frame loop, its writes made the optimizer check both arrays for uniqueness at the start
    /// of every frame, keys or not.
    @inline(never)
    mutating func decide(_ event: InputEvent, synthetic: Bool, shared: inout SharedState) -> Bool {
        let key = Int(event.code)
        guard key < KEY.count else { return !shared.holdsAll }
        switch event.value {
        case 1:
            let wasDown = keyDown[key]
            if !wasDown {
                keyDown[key] = true
                shared.physicalKeyChanged(event.code, down: true)
                if !synthetic { shared.notePress(of: event.code, at: event.time) }
            }
            if shared.swallowsPress(of: event.code) { return false }
            keyForwarded[key] = true
            return true
        case 0:
            if keyDown[key] {
                keyDown[key] = false
                shared.physicalKeyChanged(event.code, down: false)
            }
            if keyForwarded[key] {
                keyForwarded[key] = false
                return true
            }
            return false
        default:  // autorepeat: only for a press that was forwarded, and not while it completes
            // a blocked chord (a key held before Ctrl+Alt went down: a text console takes the
            // repeat as a press, and Ctrl+Alt+Del reboots)
            return keyForwarded[key] && !shared.completesBlockedChord(event.code)
        }
    }

    /// Releases on the clone every forwarded key the (new) policy locks.
    mutating func releaseLocked(shared: SharedState, time: InputEvent, into output: inout OutputBuffer) {
        for key in 0..<KEY.count where keyForwarded[key] && shared.mustRelease(UInt16(key)) {
            output.append(time.with(type: EV.key, code: UInt16(key), value: 0))
            keyForwarded[key] = false
        }
    }

    /// A key down at grab time: physically down, never forwarded.
    mutating func adoptDown(_ code: UInt16, shared: inout SharedState) {
        keyDown[Int(code)] = true
        shared.physicalKeyChanged(code, down: true)
    }

    /// The device is gone: its keys no longer count as held (for escape chords).
    func releaseShared(shared: inout SharedState) {
        for key in 0..<KEY.count where keyDown[key] {
            shared.physicalKeyChanged(UInt16(key), down: false)
        }
    }

    /// Appends a press or release for every key whose state differs from `state`, in code
    /// order; with `skippingTouchKeys`, `BTN_TOUCH` and `BTN_TOOL_*` are left out (recomputed).
    func appendDifferences(
        to state: DeviceState, skippingTouchKeys: Bool, time: InputEvent, into frame: inout [InputEvent]
    ) {
        for key in 0..<KEY.count {
            let down = state.keysDown.contains(UInt16(key))
            if down != keyDown[key] {
                if skippingTouchKeys && (UInt16(key) == BTN.touch || BTN.isFingerCountTool(UInt16(key))) {
                    continue
                }
                frame.append(time.with(type: EV.key, code: UInt16(key), value: down ? 1 : 0))
            }
        }
    }
}
