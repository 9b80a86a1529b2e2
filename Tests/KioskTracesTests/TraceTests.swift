import Testing

@testable import KioskInput
@testable import KioskTraces

@Suite struct TraceTests {
    static func slotsOf(_ description: DeviceDescription) -> Int {
        if case .multitouchB(let slots) = description.touchProtocol { return slots }
        return 0
    }

    /// The first contact of a trace: its tracking id and where it lands (end of its first frame).
    static func firstContact(_ events: [InputEvent]) -> (id: Int32, x: Int32, y: Int32) {
        var id: Int32 = -1, x: Int32 = 0, y: Int32 = 0
        for event in events {
            if event.type == 3 && event.code == 0x39 && id < 0 { id = event.value }
            if id >= 0 && event.type == 3 && event.code == 0x35 { x = event.value }
            if id >= 0 && event.type == 3 && event.code == 0x36 { y = event.value }
            if id >= 0 && event.isSynReport { break }
        }
        return (id, x, y)
    }

    static func policies(for description: DeviceDescription, events: [InputEvent]) -> [(String, FilterPolicy)] {
        let first = firstContact(events)
        let xAxis = description.absInfo[0x35]!, yAxis = description.absInfo[0x36]!
        return [
            ("pass-through", .passThrough),
            ("touch none", FilterPolicy(touch: .none)),
            ("left half locked", FilterPolicy(touch: .regions([.rect(x: 0, y: 0, width: 0.5, height: 1)]))),
            ("top half locked", FilterPolicy(touch: .regions([.rect(x: 0, y: 0, width: 1, height: 0.5)]))),
            (
                "first contact locked",
                FilterPolicy(
                    touch: .regions([
                        .rect(
                            x: xAxis.fraction(of: first.x), y: yAxis.fraction(of: first.y), width: 0, height: 0)
                    ]))
            ),
            ("at most 1 contact", Self.limited(1)),
            ("at most 2 contacts", Self.limited(2)),
            ("edge margin 0.2", Self.margin(0.2)),
        ]
    }

    static func limited(_ count: Int) -> FilterPolicy {
        var policy = FilterPolicy()
        policy.maxContacts = count
        return policy
    }

    static func margin(_ fraction: Double) -> FilterPolicy {
        var policy = FilterPolicy()
        policy.edgeMargin = fraction
        return policy
    }

    /// `[touch] max-contacts` on real recordings (two to four fingers): never more than N
    /// contacts live at the clone, each forwarded contact forwarded whole (its events as
    /// recorded, from its first to its lift), and N of them forwarded (every finger of these
    /// recordings is down before the first lifts).
    @Test(arguments: Fixtures.touchTraces, [1, 2])
    func maxContactsOnRecordings(name: String, limit: Int) throws {
        let device = try Fixtures.trace(name).devices[0]
        let slots = Self.slotsOf(device.description)
        let frames = filterFrames(device.description, device.events, policy: Self.limited(limit))
        var slot = 0
        var live: [Int: Int32] = [:]
        var most = 0
        for frame in frames {
            for event in frame where event.type == 3 {
                if event.code == 0x2f { slot = Int(event.value) }
                if event.code == 0x39 { live[slot] = event.value >= 0 ? event.value : nil }
            }
            most = max(most, live.count)
        }
        #expect(most <= limit, "\(name): \(most) contacts live at once under a limit of \(limit)")
        let input = eventsByContact(device.events, slots: slots)
        let output = eventsByContact(frames.flatMap { $0 }, slots: slots)
        #expect(!output.isEmpty, "\(name): nothing forwarded")
        for (id, events) in output { #expect(events == input[id], "\(name): contact \(id) not forwarded whole") }
        // In these recordings every finger comes down before the first lifts: the first `limit`.
        #expect(output.count == min(limit, input.count), "\(name): \(output.count) of \(input.count) forwarded")
        print(
            "\(name), max-contacts \(limit): \(output.count) of \(input.count) contacts forwarded, at most \(most) at once"
        )
    }

    @Test(arguments: Fixtures.touchTraces)
    func fixturesParseAsMultitouchB(name: String) throws {
        let trace = try Fixtures.trace(name)
        #expect(trace.devices.count == 1)
        let device = trace.devices[0]
        #expect(device.description.properties.contains(1), "INPUT_PROP_DIRECT")
        guard case .multitouchB(let slots) = device.description.touchProtocol else {
            Issue.record("not protocol B"); return
        }
        #expect(slots == (name.hasPrefix("ep0430") ? 5 : 10))
        let expectedEvents = try Fixtures.text(name).split(separator: "\n").filter { $0.hasPrefix("E:") }.count
        #expect(device.events.count == expectedEvents)
        #expect(device.events.last?.isSynReport == true)
    }

    @Test(arguments: Fixtures.touchTraces)
    func passThroughIsByteIdentical(name: String) throws {
        let device = try Fixtures.trace(name).devices[0]
        let output = filterFrames(device.description, device.events, policy: .passThrough).flatMap { $0 }
        #expect(output == device.events)
    }

    @Test(arguments: Fixtures.touchTraces)
    func frameInvariantsHoldUnderEveryPolicy(name: String) throws {
        let device = try Fixtures.trace(name).devices[0]
        for (label, policy) in Self.policies(for: device.description, events: device.events) {
            var checker = CloneChecker(device.description)
            for frame in filterFrames(device.description, device.events, policy: policy) { checker.check(frame) }
            checker.checkNeutral()
            #expect(checker.problems.isEmpty, "\(name) with \(label): \(checker.problems.prefix(5))")
            if case .none = policy.touch { #expect(checker.seenTrackingIDs.isEmpty, "\(label) forwarded a contact") }
        }
    }

    @Test(arguments: Fixtures.touchTraces)
    func regionOverFirstContactRemovesItAndLeavesOthersIdentical(name: String) throws {
        let device = try Fixtures.trace(name).devices[0]
        let (_, policy) = Self.policies(for: device.description, events: device.events).first {
            $0.0 == "first contact locked"
        }!
        let first = Self.firstContact(device.events)
        let slots = Self.slotsOf(device.description)
        let output = filterFrames(device.description, device.events, policy: policy).flatMap { $0 }

        var input = eventsByContact(device.events, slots: slots)
        let outputByContact = eventsByContact(output, slots: slots)
        #expect(input[first.id] != nil)
        #expect(outputByContact[first.id] == nil, "the first contact leaked")
        input[first.id] = nil
        #expect(!input.isEmpty)
        #expect(outputByContact == input)
        // And nothing is ever sent to the slot while the suppressed contact lives in it.
        var checker = CloneChecker(device.description)
        for frame in filterFrames(device.description, device.events, policy: policy) { checker.check(frame) }
        #expect(!checker.seenTrackingIDs.contains(first.id))
        #expect(checker.problems.isEmpty, "\(checker.problems.prefix(5))")
    }

    /// Splices a SYN_DROPPED into the trace, as the two ways a drop reaches the filter:
    /// - `libevdev` (the broker): the kernel's events after the drop never reach the filter;
    ///   it is resynced right after `SYN_DROPPED` with the state libevdev read, and the next
    ///   event starts a new frame;
    /// - `stream` (a recording, `Replay`): the rest of the kernel's stream follows the drop; the
    ///   filter discards it up to the next `SYN_REPORT`, and is resynced there.
    /// Either way the clone is left with nothing stuck.
    @Test(arguments: Fixtures.touchTraces, [0.3, 0.6, 0.97])
    func synDroppedSplicedIntoTraceRecovers(name: String, at fraction: Double) throws {
        let device = try Fixtures.trace(name).devices[0]
        let frames = InputFrame.split(device.events)
        let dropFrame = Int(Double(frames.count) * fraction)
        let lost = 3
        for path in ["libevdev", "stream"] {
            var events: [InputEvent] = []
            var truth = DeviceState(for: device.description)
            var stateAfterDrop = DeviceState()
            var resyncIndex = -1
            for (index, frame) in frames.enumerated() {
                if index == dropFrame {
                    // The kernel threw these frames away and told us with SYN_DROPPED.
                    events.append(
                        InputEvent(
                            seconds: frame.events[0].seconds, microseconds: frame.events[0].microseconds,
                            type: 0, code: 3, value: 0))
                    for lostFrame in frames[index..<min(frames.count, index + lost)] {
                        for event in lostFrame.events { truth.apply(event) }
                    }
                    stateAfterDrop = truth
                    if path == "stream" {
                        // What follows the drop up to the next SYN_REPORT is discarded by the filter.
                        events.append(contentsOf: frames[index].events)
                    }
                    resyncIndex = events.count - 1
                    continue
                }
                if index > dropFrame && index < dropFrame + lost { continue }
                for event in frame.events { truth.apply(event) }
                events.append(contentsOf: frame.events)
            }
            for (label, policy) in Self.policies(for: device.description, events: device.events) {
                var flagged = false
                var resynced = false
                let output = filterFrames(device.description, events, policy: policy) { index, result in
                    if result.resyncNeeded { flagged = true }
                    guard index == resyncIndex else { return nil }
                    resynced = true
                    return stateAfterDrop
                }
                #expect(flagged && resynced)
                var checker = CloneChecker(device.description)
                for frame in output { checker.check(frame) }
                checker.checkNeutral()
                #expect(
                    checker.problems.isEmpty,
                    "\(name) drop (\(path)) at \(fraction) with \(label): \(checker.problems.prefix(5))")
            }
        }
    }

    /// A keyboard node (the razer multimedia node's description) under random presses and
    /// random lock changes: the clone never sees a stuck, doubled or orphaned key, and never
    /// a locked key pressed.
    @Test(arguments: [1, 2, 3, 4, 5])
    func keyLedgerUnderRandomLockChanges(seed: UInt64) throws {
        let description = try Fixtures.trace(Fixtures.keyboardDescription).devices[0].description
        #expect(description.supports(type: 1, code: 116), "KEY_POWER")
        let keys: [UInt16] = [113, 114, 115, 116, 142]  // MUTE, VOLUMEDOWN, VOLUMEUP, POWER, SLEEP
        var random = seed &* 6364136223846793005 &+ 1442695040888963407
        func next(_ bound: Int) -> Int {
            random = random &* 6364136223846793005 &+ 1442695040888963407
            return Int((random >> 33) % UInt64(bound))
        }
        let filter = InputFilter()
        let id = filter.addDevice(description)
        var output = OutputBuffer()
        var checker = CloneChecker(description)
        var down: Set<UInt16> = []
        var time = 0
        for _ in 0..<2000 {
            time += 1000
            if next(10) == 0 {
                let locked = Set(keys.filter { _ in next(2) == 0 })
                filter.setPolicy(FilterPolicy(lockedKeys: locked, holdAllInput: next(8) == 0), into: &output)
            } else {
                let key = keys[next(keys.count)]
                let value: Int32 = down.contains(key) ? (next(3) == 0 ? 2 : 0) : 1
                if value == 1 { down.insert(key) } else if value == 0 { down.remove(key) }
                let t = (time / 1_000_000, time % 1_000_000)
                filter.process(
                    InputEvent(seconds: t.0, microseconds: t.1, type: 4, code: 4, value: 0x0c_0000 + Int32(key)),
                    device: id, into: &output)
                filter.process(
                    InputEvent(seconds: t.0, microseconds: t.1, type: 1, code: key, value: value), device: id,
                    into: &output)
                filter.process(
                    InputEvent(seconds: t.0, microseconds: t.1, type: 0, code: 0, value: 0), device: id, into: &output)
            }
            for frame in output.frames {
                let events = Array(output.events(of: frame))
                for event in events where event.type == 1 && event.value == 1 {
                    #expect(!filter.policy.lockedKeys.contains(event.code) && !filter.policy.holdAllInput)
                }
                // MSC_SCAN only ever travels with its key.
                let scans = events.filter { $0.type == 4 }.count
                let keysIn = events.filter { $0.type == 1 }.count
                if scans > keysIn { Issue.record("MSC_SCAN without its key in \(events)") }
                checker.check(events)
            }
            // A lock (or hold) that engaged has released its keys on the clone at once.
            let mustBeUp = filter.policy.holdAllInput ? Set(keys) : filter.policy.lockedKeys
            if !checker.keysDown.isDisjoint(with: mustBeUp) && checker.problems.isEmpty {
                checker.problems.append(
                    "locked keys still down on the clone: \(checker.keysDown.intersection(mustBeUp))")
            }
            output.removeAll()
        }
        for key in down {
            filter.process(InputEvent(type: 1, code: key, value: 0), device: id, into: &output)
            filter.process(InputEvent(type: 0, code: 0, value: 0), device: id, into: &output)
        }
        for frame in output.frames { checker.check(Array(output.events(of: frame))) }
        checker.checkNeutral()
        #expect(checker.problems.isEmpty, "\(checker.problems.prefix(5))")
    }
}
