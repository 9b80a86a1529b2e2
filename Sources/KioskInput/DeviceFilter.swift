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

    private var frame: [InputEvent] = []
    private var syntheticFrame: [InputEvent] = []
    private var dropping = false
    private var lastEvent = InputEvent(type: EV.syn, code: SYN.report, value: 0)

    private var keys = KeyLedger()
    /// The device's touch protocol, which picks the touch part below that holds its contacts
    /// (the others are nil). The parts are stored apart rather than as the enum's payloads:
    /// mutating a payload means moving the part out and back, hundreds of bytes per frame.
    private let kind: DeviceDescription.TouchProtocol
    private var slotsB: ProtocolBSlots?
    private var contactsA: ProtocolAContacts?
    private var single: SingleTouchContact?

    init(id: DeviceID, description: DeviceDescription) {
        self.id = id
        self.description = description
        kind = description.touchProtocol
        switch kind {
        case .multitouchB(let slots): slotsB = ProtocolBSlots(description: description, slots: slots)
        case .multitouchA: contactsA = ProtocolAContacts(description: description)
        case .singleTouch: single = SingleTouchContact(description: description)
        case .none: break
        }
        frame.reserveCapacity(256)
        syntheticFrame.reserveCapacity(256)
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
                processFrame(frame, synthetic: false, shared: &shared, into: &output)
                frame.removeAll(keepingCapacity: true)
                return false
            }
        }
        if !dropping { frame.append(event) }
        return false
    }

    // MARK: - Frames

    /// Dispatches on the touch protocol once per frame, to the frame loop specialized for its
    /// part (the part is passed in place, next to the key ledger).
    private mutating func processFrame(
        _ events: [InputEvent], synthetic: Bool, shared: inout SharedState, into output: inout OutputBuffer
    ) {
        switch kind {
        case .multitouchB:
            Self.filterFrame(
                events, device: id, synthetic: synthetic, keys: &keys, touch: &slotsB!, shared: &shared, into: &output)
        case .multitouchA:
            Self.filterFrame(
                events, device: id, synthetic: synthetic, keys: &keys, touch: &contactsA!, shared: &shared,
                into: &output)
        case .singleTouch:
            Self.filterFrame(
                events, device: id, synthetic: synthetic, keys: &keys, touch: &single!, shared: &shared, into: &output)
        case .none:
            var none = NoTouch()
            Self.filterFrame(
                events, device: id, synthetic: synthetic, keys: &keys, touch: &none, shared: &shared, into: &output)
        }
    }

    private static func filterFrame<Touch: TouchContacts>(
        _ events: [InputEvent], device id: DeviceID, synthetic: Bool, keys: inout KeyLedger, touch: inout Touch,
        shared: inout SharedState, into output: inout OutputBuffer
    ) {
        let start = output.events.count
        let end = events.count - 1  // the SYN_REPORT
        touch.prepare(events, end: end, shared: shared)

        var pendingScan: InputEvent?
        var index = 0
        while index < end {
            let event = events[index]
            index += 1
            if event.type == EV.msc && event.code == MSC.scan {
                if let scan = pendingScan, !shared.holdsAll { output.append(scan) }
                pendingScan = event
                continue
            }
            if event.type == EV.key
                && !(Touch.ownsTouchKeys && (event.code == BTN.touch || BTN.isFingerCountTool(event.code)))
            {
                let forward = keys.decide(event, synthetic: synthetic, shared: &shared)
                if forward {
                    if let scan = pendingScan { output.append(scan) }
                    output.append(event)
                }
                pendingScan = nil
                continue
            }
            if let scan = pendingScan {
                if !shared.holdsAll { output.append(scan) }
                pendingScan = nil
            }
            if touch.route(event, holding: shared.holdsAll, into: &output) { continue }
            if event.type == EV.syn { continue }  // SYN_CONFIG, stray SYN_MT_REPORT
            if !shared.holdsAll { output.append(event) }
        }
        if let scan = pendingScan, !shared.holdsAll { output.append(scan) }

        touch.finish(time: events[end], into: &output)
        output.commitFrame(device: id, from: start, time: events[end])
    }

    // MARK: - Policy changes, grab-time state, resync

    mutating func applyPolicyChange(shared: inout SharedState, into output: inout OutputBuffer) {
        let start = output.events.count
        let time = lastEvent
        keys.releaseLocked(shared: shared, time: time, into: &output)
        if shared.touchIsOff {
            endForwardedContacts(time: time, into: &output)
        }
        output.commitFrame(device: id, from: start, time: time)
    }

    private mutating func endForwardedContacts(time: InputEvent, into output: inout OutputBuffer) {
        switch kind {
        case .multitouchB: slotsB!.endForwardedContacts(time: time, into: &output)
        case .multitouchA: contactsA!.endForwardedContacts(time: time, into: &output)
        case .singleTouch: single!.endForwardedContacts(time: time, into: &output)
        case .none: break
        }
    }

    /// State held at grab time: keys down were never forwarded; live contacts stay suppressed.
    mutating func adopt(initialState state: DeviceState, shared: inout SharedState) {
        for code in state.keysDown where Int(code) < KEY.count {
            if kind != .none && (code == BTN.touch || BTN.isFingerCountTool(code)) { continue }
            keys.adoptDown(code, shared: &shared)
        }
        switch kind {
        case .multitouchB: slotsB!.adopt(state)
        case .multitouchA: contactsA!.adopt(state)
        case .singleTouch: single!.adopt(state)
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
        syntheticFrame.removeAll(keepingCapacity: true)
        keys.appendDifferences(to: state, skippingTouchKeys: slotsB != nil, time: time, into: &syntheticFrame)
        for (code, value) in state.absValues.sorted(by: { $0.key < $1.key }) where code < ABS.mtSlot {
            syntheticFrame.append(time.with(type: EV.abs, code: code, value: value))
        }
        let starts = slotsB?.appendChanges(to: state, time: time, into: &syntheticFrame) ?? []
        syntheticFrame.append(time.with(type: EV.syn, code: SYN.report, value: 0))
        processFrame(syntheticFrame, synthetic: true, shared: &shared, into: &output)

        guard !starts.isEmpty else { return }
        syntheticFrame.removeAll(keepingCapacity: true)
        ProtocolBSlots.appendStarts(starts, currentSlot: state.currentSlot, time: time, into: &syntheticFrame)
        syntheticFrame.append(time.with(type: EV.syn, code: SYN.report, value: 0))
        processFrame(syntheticFrame, synthetic: true, shared: &shared, into: &output)
    }
}
