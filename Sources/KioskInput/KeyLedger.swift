/// The keys of one device: what is physically down, and which presses were forwarded to the
/// clone (the ledger). A release or an autorepeat is forwarded only for a press that was, so
/// the clone never sees a key go up that it did not see go down.
struct KeyLedger {
    /// Down as far as the ledger is concerned: physically, or, with the keyboard access features
    /// on, as they pass the keys on (KeyLedger+KeyAccess.swift).
    private(set) var keyDown: [Bool]
    private var keyForwarded: [Bool]
    /// The keyboard access features' state, while the policy turns one on for this device.
    var access: KeyAccess?

    init() {
        keyDown = Array(repeating: false, count: KEY.count)
        keyForwarded = Array(repeating: false, count: KEY.count)
    }

    /// Records a key event and returns whether it goes to the clone. A synthetic press (from a
    /// resync) does not count toward the exit gesture. A pointer button follows the device's
    /// pointer rule (`gate`), a keyboard key the key locks (unless the device's keys are
    /// exempt). A key that completes an allowed combo passes, and the combo's modifiers held on
    /// this device that were held back go to `output` first. Out of line on purpose: inlined
    /// into the frame loop, its writes made the optimizer check both arrays for uniqueness at
    /// the start of every frame, keys or not.
    ///
    /// With the keyboard access features on, a keyboard key goes through them first
    /// (KeyLedger+KeyAccess.swift), which bring what they pass on back here.
    @inline(never)
    mutating func decide(
        _ event: InputEvent, synthetic: Bool, gate: DeviceGate, shared: inout SharedState,
        into output: inout OutputBuffer
    ) -> Bool {
        if access != nil {  // one test without the features
            return decideWithAccess(event, synthetic: synthetic, gate: gate, shared: &shared, into: &output)
        }
        let key = Int(event.code)
        guard key < KEY.count else { return !shared.holdsAll }
        switch event.value {
        case 1:
            let wasDown = keyDown[key]
            if !wasDown {
                keyDown[key] = true
                shared.physicalKeyChanged(event.code, down: true)
                if !synthetic {
                    shared.notePress(of: event.code, at: event.time)
                    shared.notePromptPress(of: event.code)
                    shared.noteOfferKey(event.code, down: true)
                }
            }
            if BTN.isPointerButton(event.code) {
                if shared.holdsAll || !gate.pointerPasses { return false }
                if shared.locksButton(event.code, pointerExempt: gate.pointerExempt) { return false }
            } else if shared.endsAllowedCombo(event.code), !shared.holdsAll,
                !shared.completesBlockedEscapeChord(event.code),
                let combo = allowedCombo(endingWith: event.code, shared)
            {
                sendHeldBack(combo, time: event, into: &output)
            } else if shared.swallowsPress(of: event.code, keysExempt: gate.keysExempt) {
                return false
            }
            keyForwarded[key] = true
            return true
        case 0:
            if keyDown[key] {
                keyDown[key] = false
                shared.physicalKeyChanged(event.code, down: false)
                if !synthetic { shared.noteOfferKey(event.code, down: false) }
            }
            if keyForwarded[key] {
                keyForwarded[key] = false
                return true
            }
            return false
        default:  // autorepeat: only for a press that was forwarded, and not while it completes
            // a blocked chord (a key held before Ctrl+Alt went down: a text console takes the
            // repeat as a press, and Ctrl+Alt+Del reboots)
            return keyForwarded[key] && !shared.completesBlockedChord(event.code, keysExempt: gate.keysExempt)
        }
    }

    /// The first allowed combo that `code` ends whose modifiers are all held on this device.
    private func allowedCombo(endingWith code: UInt16, _ shared: SharedState) -> KeyCombo? {
        for combo in shared.policy.allowedCombos where combo.key == code && holds(combo) { return combo }
        return nil
    }

    private func holds(_ combo: KeyCombo) -> Bool {
        held(combo.ctrl, KEY.leftCtrl, KEY.rightCtrl) && held(combo.alt, KEY.leftAlt, KEY.rightAlt)
            && held(combo.shift, KEY.leftShift, KEY.rightShift) && held(combo.meta, KEY.leftMeta, KEY.rightMeta)
    }

    private func held(_ side: KeyCombo.Side, _ left: UInt16, _ right: UInt16) -> Bool {
        switch side {
        case .none: true
        case .either: keyDown[Int(left)] || keyDown[Int(right)]
        case .left: keyDown[Int(left)]
        case .right: keyDown[Int(right)]
        }
    }

    /// Sends the presses of the combo's modifiers that are down on this device but were held
    /// back (locked), so the kiosk sees the whole combo.
    private mutating func sendHeldBack(_ combo: KeyCombo, time: InputEvent, into output: inout OutputBuffer) {
        let sides: [(KeyCombo.Side, UInt16, UInt16)] = [
            (combo.ctrl, KEY.leftCtrl, KEY.rightCtrl), (combo.alt, KEY.leftAlt, KEY.rightAlt),
            (combo.shift, KEY.leftShift, KEY.rightShift), (combo.meta, KEY.leftMeta, KEY.rightMeta),
        ]
        for (side, left, right) in sides where side != .none {
            for code in [left, right] where keyDown[Int(code)] && !keyForwarded[Int(code)] {
                if side == .left && code == right || side == .right && code == left { continue }
                output.append(time.with(type: EV.key, code: code, value: 1))
                keyForwarded[Int(code)] = true
            }
        }
    }

    /// Releases on the clone every forwarded key or button the (new) policy locks.
    mutating func releaseLocked(
        shared: SharedState, gate: DeviceGate, time: InputEvent, into output: inout OutputBuffer
    ) {
        for key in 0..<KEY.count where keyForwarded[key] {
            let code = UInt16(key)
            let release =
                BTN.isPointerButton(code)
                ? shared.holdsAll || !gate.pointerPasses || shared.locksButton(code, pointerExempt: gate.pointerExempt)
                : shared.mustRelease(code, keysExempt: gate.keysExempt)
            guard release else { continue }
            output.append(time.with(type: EV.key, code: code, value: 0))
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
    /// order, but those `skipping` names (a touch part's, recomputed or tracked there).
    func appendDifferences(
        to state: DeviceState, skipping: (UInt16) -> Bool, time: InputEvent, into frame: inout [InputEvent]
    ) {
        for key in 0..<KEY.count {
            let down = state.keysDown.contains(UInt16(key))
            if down != keyDown[key] {
                if skipping(UInt16(key)) { continue }
                frame.append(time.with(type: EV.key, code: UInt16(key), value: down ? 1 : 0))
            }
        }
    }
}
