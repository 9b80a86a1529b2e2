/// The contacts of a multitouch protocol B device (`ABS_MT_SLOT`), slot by slot.
///
/// A contact is decided at the end of the frame that starts it, with that frame's final
/// position. A slot's `out`: the clone has a live contact in it mirroring the source's; a source
/// contact that is live but not `out` is suppressed. The clone's slot is selected lazily, only
/// before an event that goes to it.
struct ProtocolBSlots: TouchContacts {
    /// What the contacts know of one slot.
    struct Slot {
        /// The source's tracking id in the slot (−1: none).
        var tracking: Int32 = -1
        /// The clone has a live contact in the slot mirroring the source's.
        var out = false
        /// The decision for the contact the slot starts in this frame.
        var startDecision = false
        /// The `ABS_MT_*` axes (bit `code − ABS_MT_TOUCH_MAJOR`) written in this frame.
        var writtenInFrame: UInt16 = 0
        /// Contacts the slot starts in this frame not yet routed.
        var startsInFrame: Int32 = 0
        /// When the slot's contact started, in the order of starts (the oldest drives the pointer).
        var sequence: UInt64 = 0
        /// The frame (``ProtocolBSlots/frameNumber``) in which the source last lifted the slot's
        /// contact: a frame number, not a flag, so that no frame has to clear it.
        var liftedInFrame: UInt64 = 0
    }

    /// The slots and their axis values on raw memory the contacts own: a slot's field is read
    /// and written with a load or a store, where the arrays before checked their uniqueness at
    /// every store (four calls a frame) and their bounds at every access. Every index is a slot
    /// checked against `slotCount` first, as it was. A value like any other: the entries that
    /// begin a frame or change the slots outside one (`prepare`, `endForwardedContacts`,
    /// `adopt`, `appendChanges`) make the table the contacts' own first (``makeUnique()``);
    /// `route` and `finish` run after `prepare` in the same frame.
    final class Table {
        let slotCount: Int
        let slots: UnsafeMutablePointer<Slot>
        /// The source's `ABS_MT_*` values, then the clone's: 16 per slot each (index
        /// `slot × 16 + code − ABS_MT_TOUCH_MAJOR`).
        let values: UnsafeMutablePointer<Int32>
        let outValues: UnsafeMutablePointer<Int32>

        init(slotCount: Int) {
            self.slotCount = slotCount
            slots = .allocate(capacity: max(slotCount, 1))
            slots.initialize(repeating: Slot(), count: slotCount)
            values = .allocate(capacity: max(slotCount * 16, 1))
            values.initialize(repeating: 0, count: slotCount * 16)
            outValues = .allocate(capacity: max(slotCount * 16, 1))
            outValues.initialize(repeating: 0, count: slotCount * 16)
        }

        convenience init(copying other: Table) {
            self.init(slotCount: other.slotCount)
            slots.update(from: other.slots, count: slotCount)
            values.update(from: other.values, count: slotCount * 16)
            outValues.update(from: other.outValues, count: slotCount * 16)
        }

        deinit {
            // `Slot` and `Int32` are trivial: nothing to deinitialize.
            slots.deallocate()
            values.deallocate()
            outValues.deallocate()
        }
    }

    private let slotCount: Int
    private var pointer: PointerEmulation
    private let locator: TouchLocator
    private var table: Table
    /// The table's memory, copied beside it so that an access does not go through the reference.
    private var perSlot: UnsafeMutablePointer<Slot>
    /// The source's `ABS_MT_*` values per slot, 16 per slot (index `code − ABS_MT_TOUCH_MAJOR`).
    private var slotValues: UnsafeMutablePointer<Int32>
    /// The `ABS_MT_*` values the clone holds per slot (same layout as `slotValues`).
    private var outValues: UnsafeMutablePointer<Int32>
    private let mtAxes: [UInt16]
    /// The source's current slot (updated as the frame is read).
    private var inSlot = 0
    /// The clone's current slot.
    private var outSlot = 0
    /// The source selected a slot in this frame since the clone's was last selected.
    private var slotSelected = false
    private var nextSequence: UInt64 = 1
    /// Counts the frames `prepare` read (``Slot/liftedInFrame``).
    private var frameNumber: UInt64 = 1

    init(description: DeviceDescription, slots: Int) {
        slotCount = slots
        pointer = PointerEmulation(description: description)
        locator = TouchLocator(description: description, x: ABS.mtPositionX, y: ABS.mtPositionY)
        mtAxes = (ABS.mtFirst...ABS.mtLast).filter {
            $0 != ABS.mtTrackingID && description.supports(type: EV.abs, code: $0)
        }
        table = Table(slotCount: slots)
        perSlot = table.slots
        slotValues = table.values
        outValues = table.outValues
    }

    /// Makes the table the contacts' own (copying it if another value shares it).
    @inline(__always)
    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&table) { makeUniqueCopy() }
    }

    @inline(never)
    private mutating func makeUniqueCopy() {
        table = Table(copying: table)
        perSlot = table.slots
        slotValues = table.values
        outValues = table.outValues
    }

    // MARK: - Frames

    mutating func prepare(
        _ events: UnsafeBufferPointer<InputEvent>, end: Int, gate: DeviceGate, shared: inout SharedState
    ) {
        makeUnique()
        slotSelected = false
        frameNumber &+= 1
        var current = inSlot
        var index = 0
        var anyStart = false
        for s in 0..<slotCount { perSlot[s].writtenInFrame = 0 }
        while index < end {
            let event = events[index]
            index += 1
            guard event.type == EV.abs, ABS.isMT(event.code) else { continue }
            if event.code == ABS.mtSlot {
                current = Int(event.value)
            } else if current >= 0 && current < slotCount {
                if event.code == ABS.mtTrackingID {
                    if event.value >= 0 {
                        perSlot[current].startsInFrame &+= 1
                        anyStart = true
                    } else {
                        perSlot[current].liftedInFrame = frameNumber
                    }
                } else {
                    let axis = Int(event.code &- ABS.mtFirst)
                    slotValues[current &* 16 &+ axis] = event.value
                    perSlot[current].writtenInFrame |= 1 << UInt16(axis)
                }
            }
        }
        guard anyStart else { return }
        for s in 0..<slotCount where perSlot[s].startsInFrame > 0 {
            perSlot[s].startDecision = !locator.startIsLocked(
                x: slotValues[s * 16 + Int(ABS.mtPositionX - ABS.mtFirst)],
                y: slotValues[s * 16 + Int(ABS.mtPositionY - ABS.mtFirst)], time: events[end].time,
                gate: gate, shared: &shared)
        }
        if gate.maxContacts < slotCount { limitStarts(to: gate.maxContacts) }
    }

    /// `[touch] max-contacts`: of the contacts this frame starts, in slot order, those that would
    /// make more than `limit` forwarded at once are dropped for their whole life. Forwarded at
    /// once: the clone's live contacts that this frame neither lifts nor replaces, and the
    /// starts taken before. Only on a frame that starts a contact under a limit.
    @inline(never)
    private mutating func limitStarts(to limit: Int) {
        var forwarded = 0
        for s in 0..<slotCount
        where perSlot[s].out && perSlot[s].startsInFrame == 0 && perSlot[s].liftedInFrame != frameNumber {
            forwarded += 1
        }
        for s in 0..<slotCount where perSlot[s].startsInFrame > 0 && perSlot[s].startDecision {
            if forwarded >= limit {
                perSlot[s].startDecision = false
            } else {
                forwarded += 1
            }
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
                if perSlot[slot].out {
                    selectOutSlot(slot, time: event, into: &output)
                    output.append(event)
                    perSlot[slot].out = false
                }
                perSlot[slot].tracking = -1
                return
            }
            perSlot[slot].startsInFrame &-= 1
            let forward = perSlot[slot].startsInFrame == 0 && perSlot[slot].startDecision
            if forward {
                selectOutSlot(slot, time: event, into: &output)
                output.append(event)
                // The clone may have missed values while the slot held a suppressed contact:
                // send those that differ and that this frame does not carry.
                let base = slot &* 16
                for code in mtAxes where perSlot[slot].writtenInFrame & (1 << (code - ABS.mtFirst)) == 0 {
                    let axis = base + Int(code - ABS.mtFirst)
                    if outValues[axis] != slotValues[axis] {
                        output.append(event.with(type: EV.abs, code: code, value: slotValues[axis]))
                        outValues[axis] = slotValues[axis]
                    }
                }
            } else if perSlot[slot].out {
                // A new contact replaces a forwarded one in the same slot but is suppressed.
                selectOutSlot(slot, time: event, into: &output)
                output.append(event.with(type: EV.abs, code: ABS.mtTrackingID, value: -1))
            }
            perSlot[slot].out = forward
            perSlot[slot].tracking = event.value
            perSlot[slot].sequence = nextSequence
            nextSequence &+= 1
            return
        }
        let forward: Bool
        if perSlot[slot].tracking >= 0 {
            forward = perSlot[slot].out
        } else if perSlot[slot].startsInFrame > 0 {
            forward = perSlot[slot].startsInFrame == 1 && perSlot[slot].startDecision
        } else {
            // No contact in the slot: values for a later contact, nothing visible.
            forward = !holding
        }
        if forward {
            selectOutSlot(slot, time: event, into: &output)
            output.append(event)
            outValues[slot &* 16 &+ Int(event.code &- ABS.mtFirst)] = event.value
        } else {
            // Not sent: a contact this frame still starts in the slot (a second tracking id
            // after this value) sends it with its start, or the clone would place that contact
            // where its slot last was.
            perSlot[slot].writtenInFrame &= ~(1 << UInt16(event.code &- ABS.mtFirst))
        }
    }

    /// Pointer emulation from the forwarded contacts: the oldest drives the axes.
    private mutating func emitPointer(time: InputEvent, into output: inout OutputBuffer) {
        var count = 0
        var oldest = -1
        var oldestSequence = UInt64.max
        for s in 0..<slotCount where perSlot[s].out {
            count += 1
            if perSlot[s].sequence < oldestSequence {
                oldestSequence = perSlot[s].sequence
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
        makeUnique()
        for s in 0..<slotCount where perSlot[s].out {
            if outSlot != s {
                output.append(time.with(type: EV.abs, code: ABS.mtSlot, value: Int32(s)))
                outSlot = s
            }
            output.append(time.with(type: EV.abs, code: ABS.mtTrackingID, value: -1))
            perSlot[s].out = false
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
        makeUnique()
        inSlot = state.currentSlot
        outSlot = state.currentSlot
        for (s, slotState) in state.slots.prefix(slotCount).enumerated() {
            perSlot[s].tracking = slotState.trackingID
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
        makeUnique()
        var starts: [(slot: Int, state: DeviceState.Slot)] = []
        for (s, slotState) in state.slots.prefix(slotCount).enumerated() {
            let old = perSlot[s].tracking
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
