/// The filter state of one device: the frame being read, the key ledger, and the contacts.
/// A struct, mutated in place inside `InputFilter`'s array, so its fields need no dynamic
/// exclusivity checks on the per-event path.
///
/// Keys are decided event by event inside the frame (so `MSC_SCAN` stays with its key); touch
/// is decided per contact at the end of the frame that starts it, with that frame's final
/// position. Source `BTN_TOUCH`/`ABS_X`/`ABS_Y`/`BTN_TOOL_*` of multitouch devices are never
/// forwarded: they are recomputed from forwarded contacts by the kernel's rule
/// (`input_mt_report_pointer_emulation`: the oldest contact drives the pointer axes).
struct DeviceFilter {
    let id: DeviceID
    let description: DeviceDescription
    private let kind: DeviceDescription.TouchProtocol

    private var frame: [InputEvent] = []
    private var syntheticFrame: [InputEvent] = []
    private var dropping = false
    private var lastEvent = InputEvent(type: EV.syn, code: SYN.report, value: 0)

    private var keys = KeyLedger()

    private var pointer: PointerEmulation
    private let locator: TouchLocator

    // Protocol B, per slot. `out[s]`: the clone has a live contact in slot s mirroring the
    // source's; a source contact that is live but not `out` is suppressed.
    private let slotCount: Int
    private var tracking: [Int32] = []
    private var out: [Bool] = []
    /// The `ABS_MT_*` values the clone holds per slot (same layout as `slotValues`).
    private var outValues: [Int32] = []
    private var sequence: [UInt64] = []
    private var startsInFrame: [Int] = []
    private var startDecision: [Bool] = []
    private var slotValues: [Int32] = []
    /// Per slot, the `ABS_MT_*` axes (bit `code − ABS_MT_TOUCH_MAJOR`) written in this frame.
    private var writtenInFrame: [UInt16] = []
    private let mtAxes: [UInt16]
    private var inSlot = 0
    private var outSlot = 0
    private var nextSequence: UInt64 = 1

    // Single-touch: the current contact's decision and the source position.
    private enum SingleContact { case idle, forwarded, suppressed }
    private var single = SingleContact.idle
    private var singleX: Int32?, singleY: Int32?

    // Protocol A: contacts of the previous and current frame, and the current frame's groups.
    private struct ContactA {
        var trackingID: Int32 = -1, x: Int32 = 0, y: Int32 = 0, pressure: Int32 = 0
        var forwarded = false, sequence: UInt64 = 0, matched = false, hasData = false
    }
    private var contactsA: [ContactA] = []
    private var previousA: [ContactA] = []
    private var previousForwardedA = 0

    init(id: DeviceID, description: DeviceDescription) {
        self.id = id
        self.description = description
        kind = description.touchProtocol
        frame.reserveCapacity(256)
        syntheticFrame.reserveCapacity(256)
        pointer = PointerEmulation(description: description)
        switch kind {
        case .multitouchB(let slots):
            slotCount = slots
            locator = TouchLocator(description: description, x: ABS.mtPositionX, y: ABS.mtPositionY)
        case .multitouchA:
            slotCount = 0
            locator = TouchLocator(description: description, x: ABS.mtPositionX, y: ABS.mtPositionY)
        case .singleTouch, .none:
            slotCount = 0
            locator = TouchLocator(description: description, x: ABS.x, y: ABS.y)
        }
        mtAxes = (ABS.mtFirst...ABS.mtLast).filter {
            $0 != ABS.mtTrackingID && description.supports(type: EV.abs, code: $0)
        }
        tracking = Array(repeating: -1, count: slotCount)
        out = Array(repeating: false, count: slotCount)
        outValues = Array(repeating: 0, count: slotCount * 16)
        sequence = Array(repeating: 0, count: slotCount)
        startsInFrame = Array(repeating: 0, count: slotCount)
        startDecision = Array(repeating: false, count: slotCount)
        slotValues = Array(repeating: 0, count: slotCount * 16)
        writtenInFrame = Array(repeating: 0, count: slotCount)
        contactsA.reserveCapacity(32)
        previousA.reserveCapacity(32)
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

    private mutating func processFrame(
        _ events: [InputEvent], synthetic: Bool, shared: inout SharedState, into output: inout OutputBuffer
    ) {
        let start = output.events.count
        let end = events.count - 1  // the SYN_REPORT
        switch kind {
        case .multitouchB: prepareSlots(events, end: end, shared: shared)
        case .multitouchA: prepareContactsA(events, end: end, shared: shared)
        case .singleTouch: prepareSingle(events, end: end, shared: shared)
        case .none: break
        }

        var slot = inSlot
        var slotSelected = false
        var groupA = 0
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
            if event.type == EV.key && !isTouchKey(event.code) {
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
            switch kind {
            case .multitouchB:
                if event.type == EV.abs && ABS.isMT(event.code) {
                    if event.code == ABS.mtSlot {
                        slot = Int(event.value)
                        slotSelected = true
                    } else if slot >= 0 && slot < slotCount {
                        forwardSlotEvent(event, slot: slot, selected: &slotSelected, holding: shared.holdsAll, into: &output)
                    }
                    continue
                }
                if pointer.isRecomputed(event) { continue }
            case .multitouchA:
                if event.type == EV.abs && ABS.isMT(event.code) {
                    if groupA < contactsA.count, contactsA[groupA].forwarded { output.append(event) }
                    continue
                }
                if event.type == EV.syn && event.code == SYN.mtReport {
                    if groupA < contactsA.count, contactsA[groupA].forwarded { output.append(event) }
                    groupA += 1
                    continue
                }
                if pointer.isRecomputed(event) { continue }
            case .singleTouch:
                if isSingleTouchAxis(event) {
                    if single != .suppressed && !shared.holdsAll {
                        output.append(event)
                        pointer.noteForwarded(event)
                    }
                    continue
                }
            case .none:
                break
            }
            if event.type == EV.syn { continue }  // SYN_CONFIG, stray SYN_MT_REPORT
            if !shared.holdsAll { output.append(event) }
        }
        if let scan = pendingScan, !shared.holdsAll { output.append(scan) }

        switch kind {
        case .multitouchB:
            inSlot = slot
            emitLegacyB(time: events[end], into: &output)
        case .multitouchA:
            finishContactsA(time: events[end], into: &output)
        case .singleTouch:
            finishSingle(events, end: end, time: events[end], into: &output)
        case .none:
            break
        }
        output.commitFrame(device: id, from: start, time: events[end])
    }

    @inline(__always)
    private func isTouchKey(_ code: UInt16) -> Bool {
        switch kind {
        case .none: return false
        default: return code == BTN.touch || BTN.isFingerCountTool(code)
        }
    }

    @inline(__always)
    private func isSingleTouchAxis(_ event: InputEvent) -> Bool {
        if event.type == EV.key { return event.code == BTN.touch || BTN.isFingerCountTool(event.code) }
        if event.type == EV.abs { return event.code == ABS.x || event.code == ABS.y || event.code == ABS.pressure }
        return false
    }

    // MARK: - Protocol B

    private mutating func prepareSlots(_ events: [InputEvent], end: Int, shared: SharedState) {
        var slot = inSlot
        var index = 0
        var anyStart = false
        for s in 0..<slotCount { writtenInFrame[s] = 0 }
        while index < end {
            let event = events[index]
            index += 1
            guard event.type == EV.abs, ABS.isMT(event.code) else { continue }
            if event.code == ABS.mtSlot {
                slot = Int(event.value)
            } else if slot >= 0 && slot < slotCount {
                if event.code == ABS.mtTrackingID {
                    if event.value >= 0 {
                        startsInFrame[slot] += 1
                        anyStart = true
                    }
                } else {
                    let axis = Int(event.code &- ABS.mtFirst)
                    slotValues[slot &* 16 &+ axis] = event.value
                    writtenInFrame[slot] |= 1 << UInt16(axis)
                }
            }
        }
        guard anyStart else { return }
        for s in 0..<slotCount where startsInFrame[s] > 0 {
            startDecision[s] = !locator.isLocked(
                x: slotValues[s * 16 + Int(ABS.mtPositionX - ABS.mtFirst)],
                y: slotValues[s * 16 + Int(ABS.mtPositionY - ABS.mtFirst)], shared: shared)
        }
    }

    @inline(__always)
    private mutating func selectOutSlot(_ slot: Int, selected: inout Bool, time: InputEvent, into output: inout OutputBuffer) {
        if selected || outSlot != slot {
            output.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(slot)))
            outSlot = slot
            selected = false
        }
    }

    @inline(__always)
    private mutating func forwardSlotEvent(
        _ event: InputEvent, slot: Int, selected: inout Bool, holding: Bool, into output: inout OutputBuffer
    ) {
        if event.code == ABS.mtTrackingID {
            if event.value < 0 {
                if out[slot] {
                    selectOutSlot(slot, selected: &selected, time: event, into: &output)
                    output.append(event)
                    out[slot] = false
                }
                tracking[slot] = -1
                return
            }
            startsInFrame[slot] -= 1
            let forward = startsInFrame[slot] == 0 && startDecision[slot]
            if forward {
                selectOutSlot(slot, selected: &selected, time: event, into: &output)
                output.append(event)
                // The clone may have missed values while the slot held a suppressed contact:
                // send those that differ and that this frame does not carry.
                let base = slot &* 16
                for code in mtAxes where writtenInFrame[slot] & (1 << (code - ABS.mtFirst)) == 0 {
                    let axis = base + Int(code - ABS.mtFirst)
                    if outValues[axis] != slotValues[axis] {
                        output.append(event.with(type: EV.abs, code: code, value: slotValues[axis]))
                        outValues[axis] = slotValues[axis]
                    }
                }
            } else if out[slot] {
                // A new contact replaces a forwarded one in the same slot but is suppressed.
                selectOutSlot(slot, selected: &selected, time: event, into: &output)
                output.append(event.with(type: EV.abs, code: ABS.mtTrackingID, value: -1))
            }
            out[slot] = forward
            tracking[slot] = event.value
            sequence[slot] = nextSequence
            nextSequence &+= 1
            return
        }
        let forward: Bool
        if tracking[slot] >= 0 {
            forward = out[slot]
        } else if startsInFrame[slot] > 0 {
            forward = startsInFrame[slot] == 1 && startDecision[slot]
        } else {
            // No contact in the slot: values for a later contact, nothing visible.
            forward = !holding
        }
        if forward {
            selectOutSlot(slot, selected: &selected, time: event, into: &output)
            output.append(event)
            outValues[slot &* 16 &+ Int(event.code &- ABS.mtFirst)] = event.value
        }
    }

    private mutating func emitLegacyB(time: InputEvent, into output: inout OutputBuffer) {
        var count = 0
        var oldest = -1
        var oldestSequence = UInt64.max
        for s in 0..<slotCount where out[s] {
            count += 1
            if sequence[s] < oldestSequence {
                oldestSequence = sequence[s]
                oldest = s
            }
        }
        if oldest >= 0 {
            let base = oldest * 16
            pointer.emit(count: count,
                       x: slotValues[base + Int(ABS.mtPositionX - ABS.mtFirst)],
                       y: slotValues[base + Int(ABS.mtPositionY - ABS.mtFirst)],
                       pressure: slotValues[base + Int(ABS.mtPressure - ABS.mtFirst)],
                       time: time, into: &output)
        } else {
            pointer.emitNoContact(time: time, into: &output)
        }
    }

    // MARK: - Protocol A

    private mutating func prepareContactsA(_ events: [InputEvent], end: Int, shared: SharedState) {
        contactsA.removeAll(keepingCapacity: true)
        var current = ContactA()
        var sawReport = false
        var touchReleased = false
        var index = 0
        while index < end {
            let event = events[index]
            index += 1
            if event.type == EV.abs {
                switch event.code {
                case ABS.mtPositionX: current.x = event.value; current.hasData = true
                case ABS.mtPositionY: current.y = event.value; current.hasData = true
                case ABS.mtPressure: current.pressure = event.value
                case ABS.mtTrackingID: current.trackingID = event.value
                default: if ABS.isMT(event.code) { current.hasData = true }
                }
            } else if event.type == EV.syn && event.code == SYN.mtReport {
                sawReport = true
                contactsA.append(current)
                current = ContactA()
            } else if event.type == EV.key && event.code == BTN.touch && event.value == 0 {
                touchReleased = true
            }
        }
        if !sawReport && !touchReleased {
            // A frame without contact data (a key, a timestamp): the contacts are unchanged.
            for contact in previousA { contactsA.append(contact) }
            return
        }
        for index in previousA.indices { previousA[index].matched = false }
        for index in contactsA.indices where contactsA[index].hasData {
            var best = -1
            var bestDistance = Int64.max
            for candidate in previousA.indices where !previousA[candidate].matched {
                let previous = previousA[candidate]
                if contactsA[index].trackingID >= 0 || previous.trackingID >= 0 {
                    if previous.trackingID == contactsA[index].trackingID { best = candidate; break }
                    continue
                }
                let dx = Int64(previous.x) - Int64(contactsA[index].x)
                let dy = Int64(previous.y) - Int64(contactsA[index].y)
                let distance = dx * dx + dy * dy
                if distance < bestDistance { bestDistance = distance; best = candidate }
            }
            if best >= 0 {
                previousA[best].matched = true
                contactsA[index].forwarded = previousA[best].forwarded && !shared.touchIsOff
                contactsA[index].sequence = previousA[best].sequence
            } else {
                contactsA[index].forwarded = !locator.isLocked(x: contactsA[index].x, y: contactsA[index].y, shared: shared)
                contactsA[index].sequence = nextSequence
                nextSequence &+= 1
            }
        }
    }

    private mutating func finishContactsA(time: InputEvent, into output: inout OutputBuffer) {
        var count = 0
        var oldest = -1
        for index in contactsA.indices where contactsA[index].forwarded {
            count += 1
            if oldest < 0 || contactsA[index].sequence < contactsA[oldest].sequence { oldest = index }
        }
        if count == 0 && previousForwardedA > 0 {
            output.append(time.with(type: EV.syn, code: SYN.mtReport, value: 0))
        }
        if oldest >= 0 {
            let contact = contactsA[oldest]
            pointer.emit(count: count, x: contact.x, y: contact.y, pressure: contact.pressure, time: time, into: &output)
        } else {
            pointer.emitNoContact(time: time, into: &output)
        }
        previousForwardedA = count
        swap(&previousA, &contactsA)
        previousA.removeAll { !$0.hasData }
    }

    // MARK: - Single touch

    private var singleDownInFrame = false
    private var singleUpInFrame = false

    private mutating func prepareSingle(_ events: [InputEvent], end: Int, shared: SharedState) {
        singleDownInFrame = false
        singleUpInFrame = false
        var index = 0
        while index < end {
            let event = events[index]
            index += 1
            if event.type == EV.abs && event.code == ABS.x { singleX = event.value }
            if event.type == EV.abs && event.code == ABS.y { singleY = event.value }
            if event.type == EV.key && event.code == BTN.touch {
                if event.value == 1 { singleDownInFrame = true } else if event.value == 0 { singleUpInFrame = true }
            }
        }
        if singleDownInFrame && single == .idle {
            let locked = locator.isLocked(x: singleX ?? 0, y: singleY ?? 0, shared: shared)
            single = locked ? .suppressed : .forwarded
        }
    }

    private mutating func finishSingle(_ events: [InputEvent], end: Int, time: InputEvent, into output: inout OutputBuffer) {
        if singleDownInFrame && single == .forwarded {
            // The clone may hold another position (it missed a suppressed contact's moves).
            pointer.restorePosition(x: singleX, y: singleY, time: time, into: &output)
        }
        if singleUpInFrame { single = .idle }
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
        case .multitouchB:
            for s in 0..<slotCount where out[s] {
                if outSlot != s {
                    output.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(s)))
                    outSlot = s
                }
                output.append(time.with(type: EV.abs, code: ABS.mtTrackingID, value: -1))
                out[s] = false
            }
            if outSlot != inSlot, inSlot >= 0, inSlot < slotCount {
                // Keep the clone's slot where the source's is, so lazy selection stays right.
                output.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(inSlot)))
                outSlot = inSlot
            }
            emitLegacyB(time: time, into: &output)
        case .multitouchA:
            for index in previousA.indices { previousA[index].forwarded = false }
            if previousForwardedA > 0 { output.append(time.with(type: EV.syn, code: SYN.mtReport, value: 0)) }
            previousForwardedA = 0
            pointer.emitNoContact(time: time, into: &output)
        case .singleTouch:
            if single == .forwarded {
                single = .suppressed
                pointer.emitNoContact(time: time, into: &output)
            }
        case .none:
            break
        }
    }

    /// State held at grab time: keys down were never forwarded; live contacts stay suppressed.
    mutating func adopt(initialState state: DeviceState, shared: inout SharedState) {
        for code in state.keysDown where Int(code) < KEY.count {
            if kind != .none && (code == BTN.touch || BTN.isFingerCountTool(code)) {
                if code == BTN.touch && kind == .singleTouch { single = .suppressed }
                continue
            }
            keys.adoptDown(code, shared: &shared)
        }
        singleX = state.absValues[ABS.x]
        singleY = state.absValues[ABS.y]
        inSlot = state.currentSlot
        outSlot = state.currentSlot
        for (s, slotState) in state.slots.prefix(slotCount).enumerated() {
            tracking[s] = slotState.trackingID
            for (code, value) in slotState.axes where code >= ABS.mtFirst && code <= ABS.mtLast {
                slotValues[s * 16 + Int(code - ABS.mtFirst)] = value
            }
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
        var starts: [(slot: Int, state: DeviceState.Slot)] = []
        keys.appendDifferences(to: state, skippingTouchKeys: slotCount > 0, time: time, into: &syntheticFrame)
        for (code, value) in state.absValues.sorted(by: { $0.key < $1.key }) where code < ABS.mtSlot {
            syntheticFrame.append(time.with(type: EV.abs, code: code, value: value))
        }
        for (s, slotState) in state.slots.prefix(slotCount).enumerated() {
            let old = tracking[s]
            let new = slotState.trackingID
            if old >= 0 && new != old {
                syntheticFrame.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(s)))
                syntheticFrame.append(time.with(type: EV.abs, code: ABS.mtTrackingID, value: -1))
            }
            if new >= 0 && new == old {
                var selected = false
                for (code, value) in slotState.axes.sorted(by: { $0.key < $1.key })
                where code >= ABS.mtFirst && code <= ABS.mtLast && code != ABS.mtTrackingID
                    && slotValues[s * 16 + Int(code - ABS.mtFirst)] != value {
                    if !selected {
                        syntheticFrame.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(s)))
                        selected = true
                    }
                    syntheticFrame.append(time.with(type: EV.abs, code: code, value: value))
                }
            } else if new >= 0 {
                starts.append((s, slotState))
            } else {
                for (code, value) in slotState.axes where code >= ABS.mtFirst && code <= ABS.mtLast {
                    slotValues[s * 16 + Int(code - ABS.mtFirst)] = value
                }
            }
        }
        if slotCount > 0 {
            syntheticFrame.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(state.currentSlot)))
        }
        syntheticFrame.append(time.with(type: EV.syn, code: SYN.report, value: 0))
        processFrame(syntheticFrame, synthetic: true, shared: &shared, into: &output)

        guard !starts.isEmpty else { return }
        syntheticFrame.removeAll(keepingCapacity: true)
        for (s, slotState) in starts {
            syntheticFrame.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(s)))
            syntheticFrame.append(time.with(type: EV.abs, code: ABS.mtTrackingID, value: slotState.trackingID))
            for (code, value) in slotState.axes.sorted(by: { $0.key < $1.key })
            where code >= ABS.mtFirst && code <= ABS.mtLast && code != ABS.mtTrackingID {
                syntheticFrame.append(time.with(type: EV.abs, code: code, value: value))
            }
        }
        syntheticFrame.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(state.currentSlot)))
        syntheticFrame.append(time.with(type: EV.syn, code: SYN.report, value: 0))
        processFrame(syntheticFrame, synthetic: true, shared: &shared, into: &output)
    }
}
