/// The contacts of a multitouch protocol A device: anonymous groups separated by
/// `SYN_MT_REPORT`, matched frame to frame by tracking id when the device sends one, by
/// distance otherwise. A contact is decided when it first appears; its group is dropped from
/// every report while it is suppressed.
struct ProtocolAContacts: TouchContacts {
    private struct Contact {
        var trackingID: Int32 = -1, x: Int32 = 0, y: Int32 = 0, pressure: Int32 = 0
        var forwarded = false, sequence: UInt64 = 0, matched = false, hasData = false
        /// The contact first appears in this frame.
        var starts = false
    }

    private var pointer: PointerEmulation
    private let locator: TouchLocator
    /// The contacts of the current frame, by group.
    private var contacts: [Contact] = []
    /// The contacts of the previous frame (those with data).
    private var previous: [Contact] = []
    private var previousForwarded = 0
    /// The group being read (the count of `SYN_MT_REPORT`s so far in the frame).
    private var group = 0
    private var nextSequence: UInt64 = 1

    init(description: DeviceDescription) {
        pointer = PointerEmulation(description: description)
        locator = TouchLocator(description: description, x: ABS.mtPositionX, y: ABS.mtPositionY)
        contacts.reserveCapacity(32)
        previous.reserveCapacity(32)
    }

    mutating func prepare(
        _ events: UnsafeBufferPointer<InputEvent>, end: Int, gate: DeviceGate, shared: inout SharedState
    ) {
        group = 0
        contacts.removeAll(keepingCapacity: true)
        var current = Contact()
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
                contacts.append(current)
                current = Contact()
            } else if event.type == EV.key && event.code == BTN.touch && event.value == 0 {
                touchReleased = true
            }
        }
        if !sawReport && !touchReleased {
            // A frame without contact data (a key, a timestamp): the contacts are unchanged.
            for contact in previous { contacts.append(contact) }
            return
        }
        for index in previous.indices { previous[index].matched = false }
        for index in contacts.indices where contacts[index].hasData {
            var best = -1
            var bestDistance = Int64.max
            for candidate in previous.indices where !previous[candidate].matched {
                let earlier = previous[candidate]
                if contacts[index].trackingID >= 0 || earlier.trackingID >= 0 {
                    if earlier.trackingID == contacts[index].trackingID { best = candidate; break }
                    continue
                }
                let dx = Int64(earlier.x) - Int64(contacts[index].x)
                let dy = Int64(earlier.y) - Int64(contacts[index].y)
                let distance = dx * dx + dy * dy
                if distance < bestDistance { bestDistance = distance; best = candidate }
            }
            if best >= 0 {
                previous[best].matched = true
                contacts[index].forwarded =
                    previous[best].forwarded && !shared.holdsAll && gate.contacts != .suppressAll
                contacts[index].sequence = previous[best].sequence
            } else {
                contacts[index].forwarded = !locator.startIsLocked(
                    x: contacts[index].x, y: contacts[index].y, time: events[end].time, gate: gate,
                    shared: &shared)
                contacts[index].starts = true
                contacts[index].sequence = nextSequence
                nextSequence &+= 1
            }
        }
        if gate.maxContacts < contacts.count { limitStarts(to: gate.maxContacts) }
    }

    /// `[touch] max-contacts`: of the contacts this frame starts, in report order, those that
    /// would make more than `limit` forwarded at once are dropped for their whole life (a
    /// contact goes on forwarded only if it was: the matching keeps it so).
    @inline(never)
    private mutating func limitStarts(to limit: Int) {
        var forwarded = 0
        for index in contacts.indices where contacts[index].forwarded && !contacts[index].starts { forwarded += 1 }
        for index in contacts.indices where contacts[index].starts && contacts[index].forwarded {
            if forwarded >= limit {
                contacts[index].forwarded = false
            } else {
                forwarded += 1
            }
        }
    }

    @inline(__always)
    mutating func route(_ event: InputEvent, holding: Bool, into output: inout OutputBuffer) -> Bool {
        if event.type == EV.abs && ABS.isMT(event.code) {
            if group < contacts.count, contacts[group].forwarded { output.append(event) }
            return true
        }
        if event.type == EV.syn && event.code == SYN.mtReport {
            if group < contacts.count, contacts[group].forwarded { output.append(event) }
            group += 1
            return true
        }
        return pointer.isRecomputed(event)
    }

    mutating func finish(time: InputEvent, into output: inout OutputBuffer) {
        var count = 0
        var oldest = -1
        for index in contacts.indices where contacts[index].forwarded {
            count += 1
            if oldest < 0 || contacts[index].sequence < contacts[oldest].sequence { oldest = index }
        }
        if count == 0 && previousForwarded > 0 {
            output.append(time.with(type: EV.syn, code: SYN.mtReport, value: 0))
        }
        if oldest >= 0 {
            let contact = contacts[oldest]
            pointer.emit(
                count: count, x: contact.x, y: contact.y, pressure: contact.pressure, time: time, into: &output)
        } else {
            pointer.emitNoContact(time: time, into: &output)
        }
        previousForwarded = count
        swap(&previous, &contacts)
        previous.removeAll { !$0.hasData }
    }

    mutating func endForwardedContacts(time: InputEvent, into output: inout OutputBuffer) {
        for index in previous.indices { previous[index].forwarded = false }
        if previousForwarded > 0 { output.append(time.with(type: EV.syn, code: SYN.mtReport, value: 0)) }
        previousForwarded = 0
        pointer.emitNoContact(time: time, into: &output)
    }

    /// Protocol A has no state to read at grab time: a live contact is new at its next report.
    mutating func adopt(_ state: DeviceState) {}
}
