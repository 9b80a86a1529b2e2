import Testing

@testable import KioskInput

@Suite struct FilterTests {
    static let keyboard = DeviceDescription(name: "kbd", codes: [1: Set(1..<0x2ff), 4: [4]])
    static let touchscreen: DeviceDescription = {
        let axis = DeviceDescription.AbsInfo(minimum: 0, maximum: 999)
        return DeviceDescription(
            name: "ts", properties: [1], codes: [1: [330], 3: [0, 1, 0x2f, 0x35, 0x36, 0x39]],
            absInfo: [
                0: axis, 1: axis, 0x2f: .init(minimum: 0, maximum: 4), 0x35: axis, 0x36: axis,
                0x39: .init(minimum: 0, maximum: 65535),
            ])
    }()

    static func key(_ code: UInt16, _ value: Int32) -> [InputEvent] {
        [InputEvent(type: 1, code: code, value: value), InputEvent(type: 0, code: 0, value: 0)]
    }

    static func run(_ filter: InputFilter, _ id: DeviceID, _ events: [InputEvent]) -> [InputEvent] {
        var output = OutputBuffer()
        for event in events { filter.process(event, device: id, into: &output) }
        return Array(output.events)
    }

    @Test func keysHeldAtGrabAreNeverReleasedOnTheClone() {
        let filter = InputFilter()
        let id = filter.addDevice(Self.keyboard, state: DeviceState(keysDown: [30]))
        #expect(Self.run(filter, id, Self.key(30, 2) + Self.key(30, 0)).isEmpty)
        #expect(Self.run(filter, id, Self.key(30, 1)) == Self.key(30, 1))
    }

    @Test func contactLiveAtGrabStaysSuppressedUntilLifted() {
        let filter = InputFilter()
        let state = DeviceState(
            keysDown: [330],
            slots: [DeviceState.Slot(trackingID: 9, axes: [0x35: 10, 0x36: 10])]
                + Array(repeating: DeviceState.Slot(), count: 4))
        let id = filter.addDevice(Self.touchscreen, state: state)
        let moved = Self.run(
            filter, id,
            [
                InputEvent(type: 3, code: 0x35, value: 20), InputEvent(type: 3, code: 0, value: 20),
                InputEvent(type: 0, code: 0, value: 0),
                InputEvent(type: 3, code: 0x39, value: -1), InputEvent(type: 1, code: 330, value: 0),
                InputEvent(type: 0, code: 0, value: 0),
            ])
        #expect(moved.isEmpty)
        let next = Self.run(
            filter, id,
            [
                InputEvent(type: 3, code: 0x39, value: 10), InputEvent(type: 3, code: 0x35, value: 30),
                InputEvent(type: 1, code: 330, value: 1), InputEvent(type: 0, code: 0, value: 0),
            ])
        #expect(next.contains(InputEvent(type: 3, code: 0x39, value: 10)))
        #expect(next.contains(InputEvent(type: 1, code: 330, value: 1)))
    }

    /// A read holding SYN_DROPPED: the events after it are not judged (a contact begun in the
    /// dropped stretch comes without its start; its position would pass as a value for a later
    /// contact); the run says so, and the resync from the device's state brings the rest.
    @Test func aRunStopsAtSynDropped() {
        let filter = InputFilter()
        let id = filter.addDevice(Self.touchscreen, state: DeviceState(slots: Array(repeating: .init(), count: 5)))
        let run = [
            InputEvent(type: 1, code: 330, value: 0), InputEvent(type: 0, code: 3, value: 0),
            InputEvent(type: 3, code: 0x2f, value: 2), InputEvent(type: 3, code: 0x35, value: 500),
            InputEvent(type: 0, code: 0, value: 0),
            InputEvent(type: 3, code: 0x35, value: 510), InputEvent(type: 0, code: 0, value: 0),
        ]
        var output = OutputBuffer()
        var keys: [PromptKey] = []
        let result = run.withUnsafeBufferPointer { filter.process($0, device: id, into: &output, promptKeys: &keys) }
        #expect(result.resyncNeeded)
        #expect(Array(output.events).isEmpty, "events after SYN_DROPPED were judged: \(Array(output.events))")
        let slot = DeviceState.Slot(trackingID: 4, axes: [0x35: 510, 0x36: 20])
        filter.resync(
            device: id, to: DeviceState(keysDown: [330], slots: [.init(), .init(), slot, .init(), .init()]),
            into: &output)
        #expect(Array(output.events).contains(InputEvent(type: 3, code: 0x39, value: 4)))
    }

    @Test func removedKeyboardNoLongerHoldsAChordModifier() {
        let filter = InputFilter(policy: FilterPolicy(blockEscapeChords: true))
        let first = filter.addDevice(Self.keyboard)
        let second = filter.addDevice(Self.keyboard)
        _ = Self.run(filter, first, Self.key(29, 1))  // Ctrl on the first keyboard
        _ = Self.run(filter, second, Self.key(56, 1))  // Alt on the second
        #expect(Self.run(filter, second, Self.key(111, 1)).isEmpty)  // Ctrl+Alt+Del: blocked
        _ = Self.run(filter, second, Self.key(111, 0))
        filter.removeDevice(first)  // unplugged with Ctrl held
        #expect(Self.run(filter, second, Self.key(111, 1)) == Self.key(111, 1))  // Alt+Del passes
        let third = filter.addDevice(Self.keyboard)
        #expect(third == first, "device ids are reused")
    }

    @Test func swallowedFramesProduceNoOutputFrames() {
        let filter = InputFilter(policy: FilterPolicy(lockedKeys: [116]))
        let id = filter.addDevice(Self.keyboard)
        var output = OutputBuffer()
        for event in [InputEvent(type: 4, code: 4, value: 0x10082)] + Self.key(116, 1) {
            filter.process(event, device: id, into: &output)
        }
        #expect(output.isEmpty && output.events.isEmpty)
        filter.process(InputEvent(type: 9, code: 0, value: 0), device: DeviceID(rawValue: 42), into: &output)
        #expect(output.isEmpty, "an unknown device is ignored")
    }

    @Test func outputBufferGrowsPastItsCapacityKeepingEveryFrame() {
        let filter = InputFilter()
        let id = filter.addDevice(Self.keyboard)
        var output = OutputBuffer(capacity: 1)  // the smallest storage: grown by the appends
        var expected: [InputEvent] = []
        for code in UInt16(2)..<42 {
            for event in Self.key(code, 1) { filter.process(event, device: id, into: &output) }
            expected += Self.key(code, 1)
        }
        #expect(Array(output.events) == expected)
        #expect(output.frames.count == 40)
        #expect(output.frames.map { Array(output.events(of: $0)) } == (2..<42).map { Self.key($0, 1) })
        output.removeAll()
        #expect(output.isEmpty && output.events.isEmpty && output.frames.isEmpty)
    }

    @Test func outputBufferCopyKeepsItsOwnEvents() {
        let filter = InputFilter()
        let id = filter.addDevice(Self.keyboard)
        var output = OutputBuffer()
        for event in Self.key(30, 1) { filter.process(event, device: id, into: &output) }
        var copy = output
        copy.removeAll()
        for event in Self.key(31, 1) { filter.process(event, device: id, into: &copy) }
        #expect(Array(output.events) == Self.key(30, 1), "the copy's appends do not reach the original")
        #expect(Array(copy.events) == Self.key(31, 1))
        for event in Self.key(32, 1) { filter.process(event, device: id, into: &output) }
        #expect(Array(output.events) == Self.key(30, 1) + Self.key(32, 1))
        #expect(Array(copy.events) == Self.key(31, 1), "the original's appends do not reach the copy")
    }
}
