/// The filter state of one device: the frame being read, the key ledger (`KeyLedger`), and
/// the contacts of its touch protocol (`ProtocolBSlots`, `ProtocolAContacts`,
/// `SingleTouchContact`, each with the clone's `PointerEmulation`). A struct, mutated in
/// place inside `InputFilter`'s array, so its fields need no dynamic exclusivity checks on
/// the per-event path.
///
/// Keys are decided event by event inside the frame (so `MSC_SCAN` stays with its key); touch
/// is decided per contact at the end of the frame that starts it, with that frame's final
/// position. Source `BTN_TOUCH`/`ABS_X`/`ABS_Y`/`BTN_TOOL_*` of multitouch devices are never
/// forwarded: they are recomputed from forwarded contacts by the kernel's rule
/// (`input_mt_report_pointer_emulation`: the oldest contact drives the pointer axes).
struct DeviceFilter {
    let id: DeviceID
    let description: DeviceDescription
    private let pointerKind: PointerKind
    /// What the policy lets this device do (recomputed on every policy change).
    private var gate = DeviceGate()

    private var frame: [InputEvent] = []
    private var syntheticFrame: [InputEvent] = []
    private var dropping = false
    private var lastEvent = InputEvent(type: EV.syn, code: SYN.report, value: 0)

    private var keys = KeyLedger()
    /// Which part below holds the device's contacts or strokes (the others are nil): its touch
    /// protocol, or an absolute pointer's strokes. The parts are stored apart rather than as an
    /// enum's payloads: mutating a payload means moving the part out and back, hundreds of bytes
    /// per frame.
    private enum Part { case none, multitouchB, multitouchA, singleTouch, strokes }
    private let kind: Part
    private var slotsB: ProtocolBSlots?
    private var contactsA: ProtocolAContacts?
    private var single: SingleTouchContact?
    private var strokes: AbsoluteStrokes?

    init(id: DeviceID, description: DeviceDescription, shared: SharedState) {
        self.id = id
        self.description = description
        pointerKind = description.pointerKind
        if pointerKind == .absolute {
            kind = .strokes
            strokes = AbsoluteStrokes(description: description)
        } else {
            switch description.touchProtocol {
            case .multitouchB(let slots):
                kind = .multitouchB
                slotsB = ProtocolBSlots(description: description, slots: slots)
            case .multitouchA:
                kind = .multitouchA
                contactsA = ProtocolAContacts(description: description)
            case .singleTouch:
                kind = .singleTouch
                single = SingleTouchContact(description: description)
            case .none:
                kind = .none
            }
        }
        frame.reserveCapacity(256)
        syntheticFrame.reserveCapacity(256)
        gate = DeviceGate(description: description, pointerKind: pointerKind, policy: shared.policy)
        keys.configureAccess(shared.policy.keyAccess, keysExempt: gate.keysExempt)
    }

    /// Whether the part, not the key ledger, holds a key code.
    private func partOwnsKey(_ code: UInt16) -> Bool {
        switch kind {
        case .none: false
        case .multitouchB, .multitouchA, .singleTouch: ProtocolBSlots.ownsKey(code)
        case .strokes: AbsoluteStrokes.ownsKey(code)
        }
    }

    // MARK: - Events in

    /// Returns whether the device needs a resync (the event was `SYN_DROPPED`).
    @inline(__always)
    mutating func process(_ event: InputEvent, shared: inout SharedState, into output: inout OutputBuffer) -> Bool {
        lastEvent = event
        if event.type == EV.syn {
            if event.code == SYN.dropped {
                frame.removeAll(keepingCapacity: true)
                dropping = true
                return true
            }
            if event.code == SYN.report {
                if dropping {
                    dropping = false
                    frame.removeAll(keepingCapacity: true)
                    return false
                }
                frame.append(event)
                processBufferedFrame(shared: &shared, into: &output)
                return false
            }
        }
        if !dropping { frame.append(event) }
        return false
    }

    /// Feeds a run of this device's events, as one read returns them: whole frames, and at
    /// either end perhaps part of one. Decides exactly as `process(_:shared:into:)` would, event
    /// by event, but a frame wholly inside the run is filtered where it lies instead of being
    /// copied into `frame` first; a frame the run's end cuts waits there for the rest. Each
    /// frame's prompt key, if any, is appended to `promptKeys` (the last of the frame, as the
    /// event path's `FilterResult` has it). Returns whether the run held a `SYN_DROPPED`, where
    /// it stops reading the run (the caller resyncs, as after the event path's drop).
    @inline(__always)
    mutating func process(
        run events: UnsafeBufferPointer<InputEvent>, shared: inout SharedState, into output: inout OutputBuffer,
        promptKeys: inout [PromptKey]
    ) -> Bool {
        let count = events.count
        guard count > 0 else { return false }
        lastEvent = events[count - 1]
        var start = 0  // the first event of the frame being read
        var index = 0
        while index < count {
            let event = events[index]
            index += 1
            guard event.type == EV.syn else { continue }
            if event.code == SYN.report {
                if dropping {
                    dropping = false
                    frame.removeAll(keepingCapacity: true)
                } else {
                    shared.promptKey = nil
                    if frame.isEmpty {
                        processFrame(
                            UnsafeBufferPointer(rebasing: events[start..<index]), synthetic: false, shared: &shared,
                            into: &output)
                    } else {
                        frame.append(contentsOf: events[start..<index])
                        processBufferedFrame(shared: &shared, into: &output)
                    }
                    if let key = shared.promptKey { promptKeys.append(key) }
                }
                start = index
            } else if event.code == SYN.dropped {
                // The run ends here: what follows is judged against slots and keys the drop
                // made stale (a contact begun in the dropped stretch would come without its
                // start); the caller resyncs from the device's state, which stands for it. The
                // drop is the last event read, as on the event path (the resync's frames carry
                // its time).
                lastEvent = event
                frame.removeAll(keepingCapacity: true)
                dropping = true
                return true
            }
        }
        if start < count && !dropping { frame.append(contentsOf: events[start..<count]) }
        return false
    }

    /// Filters the frame gathered in `frame` (its last event the `SYN_REPORT`) and empties it.
    /// Out of line: a frame split across reads is the rare case.
    @inline(never)
    private mutating func processBufferedFrame(shared: inout SharedState, into output: inout OutputBuffer) {
        // Moved out while it is read, so that `frame` stays uniquely referenced and emptying it
        // keeps its storage.
        var events: [InputEvent] = []
        swap(&events, &frame)
        events.withUnsafeBufferPointer { processFrame($0, synthetic: false, shared: &shared, into: &output) }
        events.removeAll(keepingCapacity: true)
        swap(&events, &frame)
    }

    // MARK: - Frames

    /// Dispatches on the touch protocol once per frame, to the frame loop specialized for its
    /// part (the part is passed in place, next to the key ledger). `events` is one whole frame,
    /// its last event the `SYN_REPORT`.
    private mutating func processFrame(
        _ events: UnsafeBufferPointer<InputEvent>, synthetic: Bool, shared: inout SharedState,
        into output: inout OutputBuffer
    ) {
        switch kind {
        case .multitouchB:
            Self.filterFrame(
                events, device: id, synthetic: synthetic, gate: gate, keys: &keys, touch: &slotsB!, shared: &shared,
                into: &output)
        case .multitouchA:
            Self.filterFrame(
                events, device: id, synthetic: synthetic, gate: gate, keys: &keys, touch: &contactsA!,
                shared: &shared, into: &output)
        case .singleTouch:
            Self.filterFrame(
                events, device: id, synthetic: synthetic, gate: gate, keys: &keys, touch: &single!, shared: &shared,
                into: &output)
        case .strokes:
            Self.filterFrame(
                events, device: id, synthetic: synthetic, gate: gate, keys: &keys, touch: &strokes!,
                shared: &shared, into: &output)
        case .none:
            var none = NoTouch()
            Self.filterFrame(
                events, device: id, synthetic: synthetic, gate: gate, keys: &keys, touch: &none, shared: &shared,
                into: &output)
        }
    }

    private static func filterFrame<Touch: TouchContacts>(
        _ events: UnsafeBufferPointer<InputEvent>, device id: DeviceID, synthetic: Bool, gate: DeviceGate,
        keys: inout KeyLedger, touch: inout Touch, shared: inout SharedState, into output: inout OutputBuffer
    ) {
        let start = output.count
        let end = events.count - 1  // the SYN_REPORT
        touch.prepare(events, end: end, gate: gate, shared: &shared)

        var pendingScan: InputEvent?
        var index = 0
        while index < end {
            let event = events[index]
            index += 1
            if event.type == EV.msc {
                if gate.dropsMisc { continue }  // its clone has no EV_MSC
                if event.code == MSC.scan {
                    if let scan = pendingScan, !shared.holdsAll { output.append(scan) }
                    pendingScan = event
                    continue
                }
            }
            // A key value but 0 (up), 1 (down) or 2 (autorepeat) is no kernel driver's (a
            // userspace device can send one): swallowed, scan code and all, so the clone and the
            // ledger never disagree on what it meant.
            if event.type == EV.key && UInt32(bitPattern: event.value) > 2 {
                pendingScan = nil
                continue
            }
            if event.type == EV.key && !Touch.ownsKey(event.code) {
                let forward = keys.decide(event, synthetic: synthetic, gate: gate, shared: &shared, into: &output)
                if forward {
                    if let scan = pendingScan { output.append(scan) }
                    output.append(event)
                }
                pendingScan = nil
                continue
            }
            // A touch (BTN_TOUCH) going down or up, for the offer of more time.
            if event.type == EV.key && event.code == BTN.touch && !synthetic && event.value <= 1 {
                shared.noteOfferKey(event.code, down: event.value == 1)
            }
            if let scan = pendingScan {
                pendingScan = nil
                if event.type == EV.key {
                    // A button of the touch part: its scan code goes with it, or not at all.
                    let before = output.count
                    if !shared.holdsAll { output.append(scan) }
                    _ = touch.route(event, holding: shared.holdsAll, into: &output)
                    if output.count == before + 1 { output.removeLast() }
                    continue
                }
                if !shared.holdsAll { output.append(scan) }
            }
            if touch.route(event, holding: shared.holdsAll, into: &output) { continue }
            if event.type == EV.syn { continue }  // SYN_CONFIG, stray SYN_MT_REPORT
            if event.type == EV.rel || (event.type == EV.abs && gate.axesArePointer) {
                if gate.pointerPasses && !shared.holdsAll { output.append(event) }
                continue
            }
            if !shared.holdsAll { output.append(event) }
        }
        if let scan = pendingScan, !shared.holdsAll { output.append(scan) }

        touch.finish(time: events[end], into: &output)
        output.commitFrame(device: id, from: start, time: events[end])
    }

    // MARK: - Policy changes, grab-time state, resync

    mutating func applyPolicyChange(shared: inout SharedState, into output: inout OutputBuffer) {
        gate = DeviceGate(description: description, pointerKind: pointerKind, policy: shared.policy)
        let start = output.count
        let time = lastEvent
        keys.settleAccess(time: time, forget: false, gate: gate, shared: &shared, into: &output)
        keys.configureAccess(shared.policy.keyAccess, keysExempt: gate.keysExempt)
        keys.releaseLocked(shared: shared, gate: gate, time: time, into: &output)
        if shared.holdsAll || gate.contacts == .suppressAll {
            endForwardedContacts(time: time, into: &output)
        }
        output.commitFrame(device: id, from: start, time: time)
    }

    /// When a key of this device waiting for slow keys counts, if one waits.
    var keyDeadline: Int64? { keys.accessDeadline }

    /// Counts the keys whose wait for slow keys ended by `time`, each press a frame of its own.
    mutating func advance(to time: Int64, shared: inout SharedState, into output: inout OutputBuffer) {
        keys.advanceAccess(to: time, device: id, gate: gate, shared: &shared, into: &output)
    }

    /// The allowed-device entry this device matches, if any (for the journal and replay).
    var allowance: AllowedDevice? { gate.allowance }

    private mutating func endForwardedContacts(time: InputEvent, into output: inout OutputBuffer) {
        switch kind {
        case .multitouchB: slotsB!.endForwardedContacts(time: time, into: &output)
        case .multitouchA: contactsA!.endForwardedContacts(time: time, into: &output)
        case .singleTouch: single!.endForwardedContacts(time: time, into: &output)
        case .strokes: strokes!.endForwardedContacts(time: time, into: &output)
        case .none: break
        }
    }

    /// State held at grab time: keys down were never forwarded; live contacts stay suppressed.
    mutating func adopt(initialState state: DeviceState, shared: inout SharedState) {
        for code in state.keysDown where Int(code) < KEY.count {
            if partOwnsKey(code) { continue }
            keys.adoptDown(code, shared: &shared)
        }
        switch kind {
        case .multitouchB: slotsB!.adopt(state)
        case .multitouchA: contactsA!.adopt(state)
        case .singleTouch: single!.adopt(state)
        case .strokes: strokes!.adopt(state)
        case .none: break
        }
    }

    func releaseSharedState(shared: inout SharedState) {
        keys.releaseShared(shared: &shared)
    }

    mutating func resync(to state: DeviceState, shared: inout SharedState, into output: inout OutputBuffer) {
        // The dropped stretch ends here: its partial frame is gone, and what follows is new.
        dropping = false
        frame.removeAll(keepingCapacity: true)
        let time = lastEvent
        // The access features' latches end, and they forget what was down: the state says it.
        let start = output.count
        keys.settleAccess(time: time, forget: true, gate: gate, shared: &shared, into: &output)
        output.commitFrame(device: id, from: start, time: time)
        syntheticFrame.removeAll(keepingCapacity: true)
        keys.appendDifferences(
            to: state,
            skipping: { [kind] code in
                switch kind {
                case .multitouchB: ProtocolBSlots.ownsKey(code)
                case .strokes: AbsoluteStrokes.ownsKey(code)
                // The contact says its own BTN_TOUCH, after the position it has.
                case .singleTouch: code == BTN.touch
                case .none, .multitouchA: false
                }
            }, time: time, into: &syntheticFrame)
        strokes?.appendButtonDifferences(to: state, time: time, into: &syntheticFrame)
        for (code, value) in state.absValues.sorted(by: { $0.key < $1.key }) where code < ABS.mtSlot {
            syntheticFrame.append(time.with(type: EV.abs, code: code, value: value))
        }
        single?.appendChanges(to: state, time: time, into: &syntheticFrame)
        let starts = slotsB?.appendChanges(to: state, time: time, into: &syntheticFrame) ?? []
        syntheticFrame.append(time.with(type: EV.syn, code: SYN.report, value: 0))
        processSyntheticFrame(shared: &shared, into: &output)

        guard !starts.isEmpty else { return }
        syntheticFrame.removeAll(keepingCapacity: true)
        ProtocolBSlots.appendStarts(starts, currentSlot: state.currentSlot, time: time, into: &syntheticFrame)
        syntheticFrame.append(time.with(type: EV.syn, code: SYN.report, value: 0))
        processSyntheticFrame(shared: &shared, into: &output)
    }

    /// Filters the frame built in `syntheticFrame` (as `processBufferedFrame` does `frame`).
    private mutating func processSyntheticFrame(shared: inout SharedState, into output: inout OutputBuffer) {
        var events: [InputEvent] = []
        swap(&events, &syntheticFrame)
        events.withUnsafeBufferPointer { processFrame($0, synthetic: true, shared: &shared, into: &output) }
        swap(&events, &syntheticFrame)
    }
}

/// What the policy lets one device do: how its contacts or strokes are decided, whether its
/// pointer events with no place on the screen pass, whether its keys pass the key locks (an
/// allowed device, ``AllowedDevice``).
struct DeviceGate {
    var contacts = ContactRule.forwardAll
    /// A touchscreen's limit of contacts forwarded at once (``FilterPolicy/maxContacts``); no
    /// limit for other devices and for a touchscreen an allowed device's entry lets through.
    var maxContacts = Int.max
    /// A touchscreen's edge margin (``FilterPolicy/edgeMargin``); 0 as `maxContacts`.
    var edgeMargin = 0.0
    /// `REL_*` and pointer buttons (and a relative pointer's or joystick's axes) pass.
    var pointerPasses = true
    /// An allowed device's pointer: even buttons the profile locks by name pass.
    var pointerExempt = false
    /// The device's absolute axes are a pointer's (a mouse's or a joystick's), not touch.
    var axesArePointer = false
    var keysExempt = false
    var allowance: AllowedDevice?
    /// Why the device's clone has no pointer (``FilterPolicy/pointerHiding(of:)``); nil: it has.
    var pointerHidden: PointerHiding?
    /// The clone without a pointer has no `EV_MSC` (nothing else of the device is left on it):
    /// the device's `MSC_*` events (a touchpad's `MSC_TIMESTAMP`) are not forwarded.
    var dropsMisc = false

    init() {}

    init(description: DeviceDescription, pointerKind: PointerKind, policy: FilterPolicy) {
        var hidingEntry: AllowedDevice?
        for entry in policy.allowedDevices where entry.matcher.matches(description) {
            if allowance == nil { allowance = entry }
            if hidingEntry == nil && entry.hidesPointer { hidingEntry = entry }
            keysExempt = keysExempt || entry.passesKeys
            pointerExempt = pointerExempt || entry.passesPointer
        }
        if hidingEntry != nil { pointerExempt = false }  // hiding wins: fail closed
        pointerPasses = hidingEntry == nil && (pointerExempt || policy.pointer == .allowed)
        let pointerLocked = hidingEntry != nil || policy.pointer == .locked
        axesArePointer = pointerKind == .relative || pointerKind == .joystick
        if let hidingEntry {
            pointerHidden = .entry(role: hidingEntry.role)
        } else {
            switch pointerKind {
            case .relative, .touchpad, .joystick: pointerHidden = pointerPasses ? nil : .locked
            case .absolute: pointerHidden = !pointerPasses && policy.pointer == .locked ? .locked : nil
            case .none: pointerHidden = nil
            }
        }
        // Cleaning holds the pointer and touch of every device but an allowed one's; its clone
        // keeps its pointer (none is made anew for a minute's wipe).
        if policy.cleaning && !pointerExempt { pointerPasses = false }
        if pointerHidden != nil, description.codes[EV.msc] != nil {
            dropsMisc = description.withoutPointer().codes[EV.msc] == nil
        }
        if policy.cleaning && !pointerExempt {
            contacts = .suppressAll
            return
        }
        switch pointerKind {
        case .touchpad:
            contacts = pointerPasses ? .forwardAll : .suppressAll
        case .absolute:
            contacts =
                pointerPasses ? .forwardAll : pointerLocked ? .suppressAll : .regions
        case .none, .relative, .joystick:
            // Touch contacts of a touchscreen (a relative pointer or joystick has none).
            if pointerExempt {
                contacts = .forwardAll
            } else {
                maxContacts = policy.maxContacts ?? Int.max
                edgeMargin = policy.edgeMargin
                switch policy.touch {
                case .all: contacts = .forwardAll
                case .none: contacts = .suppressAll
                case .regions: contacts = .regions
                }
            }
        }
    }
}
