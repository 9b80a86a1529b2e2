/// The contacts of a multitouch protocol B device (`ABS_MT_SLOT`), slot by slot.
///
/// A contact is decided at the end of the frame that starts it, with that frame's final
/// position. `out[s]`: the clone has a live contact in slot s mirroring the source's; a source
/// contact that is live but not `out` is suppressed. The clone's slot is selected lazily, only
/// before an event that goes to it.
struct ProtocolBSlots: TouchContacts {
    private let slotCount: Int
    private var pointer: PointerEmulation
    private let locator: TouchLocator
    private var tracking: [Int32]
    private var out: [Bool]
    /// The `ABS_MT_*` values the clone holds per slot (same layout as `slotValues`).
    private var outValues: [Int32]
    private var sequence: [UInt64]
    private var startsInFrame: [Int]
    private var startDecision: [Bool]
    /// The source's `ABS_MT_*` values per slot, 16 per slot (index `code − ABS_MT_TOUCH_MAJOR`).
    private var slotValues: [Int32]
    /// Per slot, the `ABS_MT_*` axes (bit `code − ABS_MT_TOUCH_MAJOR`) written in this frame.
    private var writtenInFrame: [UInt16]
    private let mtAxes: [UInt16]
    /// The source's current slot (updated as the frame is read).
    private var inSlot = 0
    /// The clone's current slot.
    private var outSlot = 0
    /// The source selected a slot in this frame since the clone's was last selected.
    private var slotSelected = false
    private var nextSequence: UInt64 = 1

    init(description: DeviceDescription, slots: Int) {
        slotCount = slots
        pointer = PointerEmulation(description: description)
        locator = TouchLocator(description: description, x: ABS.mtPositionX, y: ABS.mtPositionY)
        mtAxes = (ABS.mtFirst...ABS.mtLast).filter {
            $0 != ABS.mtTrackingID && description.supports(type: EV.abs, code: $0)
        }
        tracking = Array(repeating: -1, count: slots)
        out = Array(repeating: false, count: slots)
        outValues = Array(repeating: 0, count: slots * 16)
        sequence = Array(repeating: 0, count: slots)
        startsInFrame = Array(repeating: 0, count: slots)
        startDecision = Array(repeating: false, count: slots)
        slotValues = Array(repeating: 0, count: slots * 16)
        writtenInFrame = Array(repeating: 0, count: slots)
    }

    // MARK: - Frames

    mutating func prepare(
        _ events: UnsafeBufferPointer<InputEvent>, end: Int, gate: DeviceGate, shared: inout SharedState
    ) {
        slotSelected = false
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
            startDecision[s] = !locator.startIsLocked(
                x: slotValues[s * 16 + Int(ABS.mtPositionX - ABS.mtFirst)],
                y: slotValues[s * 16 + Int(ABS.mtPositionY - ABS.mtFirst)], time: events[end].time,
                rule: gate.contacts, shared: &shared)
        }
    }

    @inline(__always)
    mutating func route(_ event: InputEvent, holding: Bool, into output: inout OutputBuffer) -> Bool {
        if event.type == EV.abs && ABS.isMT(event.code) {
            if event.code == ABS.mtSlot {
                inSlot = Int(event.value)
                slotSelected = true
            } else if inSlot >= 0 && inSlot < slotCount {
                forwardSlotEvent(event, slot: inSlot, holding: holding, into: &output)
            }
            return true
        }
        return pointer.isRecomputed(event)
    }

    mutating func finish(time: InputEvent, into output: inout OutputBuffer) {
        emitPointer(time: time, into: &output)
    }

    @inline(__always)
    private mutating func selectOutSlot(_ slot: Int, time: InputEvent, into output: inout OutputBuffer) {
        if slotSelected || outSlot != slot {
            output.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(slot)))
            outSlot = slot
            slotSelected = false
        }
    }

    /// Inlined into the frame loop. It was kept out of line while the loop read the frame from
    /// an array: inlined then, its writes made the optimizer check every slot array for
    /// uniqueness at the start of each frame. With the frame read in place, inlined costs fewer
    /// instructions per event on every touch workload measured (callgrind, `InputFilterBench
    /// --count`, a frame a run: the synthetic 10 fingers 190.6 → 172.8, the Atmel and EP0430M09
    /// recordings 3–4 % fewer; typing unchanged).
    @inline(__always)
    private mutating func forwardSlotEvent(
        _ event: InputEvent, slot: Int, holding: Bool, into output: inout OutputBuffer
    ) {
        if event.code == ABS.mtTrackingID {
            if event.value < 0 {
                if out[slot] {
                    selectOutSlot(slot, time: event, into: &output)
                    output.append(event)
                    out[slot] = false
                }
                tracking[slot] = -1
                return
            }
            startsInFrame[slot] -= 1
            let forward = startsInFrame[slot] == 0 && startDecision[slot]
            if forward {
                selectOutSlot(slot, time: event, into: &output)
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
                selectOutSlot(slot, time: event, into: &output)
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
            selectOutSlot(slot, time: event, into: &output)
            output.append(event)
            outValues[slot &* 16 &+ Int(event.code &- ABS.mtFirst)] = event.value
        }
    }

    /// Pointer emulation from the forwarded contacts: the oldest drives the axes.
    private mutating func emitPointer(time: InputEvent, into output: inout OutputBuffer) {
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
            pointer.emit(
                count: count,
                x: slotValues[base + Int(ABS.mtPositionX - ABS.mtFirst)],
                y: slotValues[base + Int(ABS.mtPositionY - ABS.mtFirst)],
                pressure: slotValues[base + Int(ABS.mtPressure - ABS.mtFirst)],
                time: time, into: &output)
        } else {
            pointer.emitNoContact(time: time, into: &output)
        }
    }

    // MARK: - Policy changes, grab-time state, resync

    mutating func endForwardedContacts(time: InputEvent, into output: inout OutputBuffer) {
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
        emitPointer(time: time, into: &output)
    }

    /// Contacts live at grab time stay suppressed: recorded as the source's, not `out`.
    mutating func adopt(_ state: DeviceState) {
        inSlot = state.currentSlot
        outSlot = state.currentSlot
        for (s, slotState) in state.slots.prefix(slotCount).enumerated() {
            tracking[s] = slotState.trackingID
            for (code, value) in slotState.axes where code >= ABS.mtFirst && code <= ABS.mtLast {
                slotValues[s * 16 + Int(code - ABS.mtFirst)] = value
            }
        }
    }

    /// Appends what `state` changed in the slots as libevdev's sync reports it: contacts ended
    /// or moved, then the source's slot. Returns the contacts begun meanwhile, which go in a
    /// frame of their own after this one (`appendStarts`).
    mutating func appendChanges(
        to state: DeviceState, time: InputEvent, into frame: inout [InputEvent]
    ) -> [(slot: Int, state: DeviceState.Slot)] {
        var starts: [(slot: Int, state: DeviceState.Slot)] = []
        for (s, slotState) in state.slots.prefix(slotCount).enumerated() {
            let old = tracking[s]
            let new = slotState.trackingID
            if old >= 0 && new != old {
                frame.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(s)))
                frame.append(time.with(type: EV.abs, code: ABS.mtTrackingID, value: -1))
            }
            if new >= 0 && new == old {
                var selected = false
                for (code, value) in slotState.axes.sorted(by: { $0.key < $1.key })
                where code >= ABS.mtFirst && code <= ABS.mtLast && code != ABS.mtTrackingID
                    && slotValues[s * 16 + Int(code - ABS.mtFirst)] != value
                {
                    if !selected {
                        frame.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(s)))
                        selected = true
                    }
                    frame.append(time.with(type: EV.abs, code: code, value: value))
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
            frame.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(state.currentSlot)))
        }
        return starts
    }

    /// Appends the contacts begun during a drop, each with its values, then the source's slot.
    static func appendStarts(
        _ starts: [(slot: Int, state: DeviceState.Slot)], currentSlot: Int, time: InputEvent,
        into frame: inout [InputEvent]
    ) {
        for (s, slotState) in starts {
            frame.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(s)))
            frame.append(time.with(type: EV.abs, code: ABS.mtTrackingID, value: slotState.trackingID))
            for (code, value) in slotState.axes.sorted(by: { $0.key < $1.key })
            where code >= ABS.mtFirst && code <= ABS.mtLast && code != ABS.mtTrackingID {
                frame.append(time.with(type: EV.abs, code: code, value: value))
            }
        }
        frame.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(currentSlot)))
    }
}
