import Testing

@testable import KioskInput

/// Inputs `make fuzz` found that broke the filter's invariants (docs/testing.md § Fuzzing), each
/// kept as the smallest stream that showed it.
@Suite struct FuzzRegressionTests {
    static let keyboard = DeviceDescription(name: "kbd", codes: [1: Set(1..<0x2ff), 4: [4]])

    static func run(_ filter: InputFilter, _ id: DeviceID, _ events: [InputEvent]) -> [InputEvent] {
        var output = OutputBuffer()
        for event in events { filter.process(event, device: id, into: &output) }
        return Array(output.events)
    }

    /// A key value no kernel driver sends (a userspace device can: 458753, −1) was forwarded as an
    /// autorepeat of a key the clone holds down. Now it is swallowed, whatever the key's state,
    /// and the press, repeat and release around it pass as before.
    @Test(arguments: [Int32(458_753), -1, 3, Int32.min, Int32.max])
    func keyValuesOutsideZeroToTwoAreSwallowed(value: Int32) {
        let filter = InputFilter()
        let id = filter.addDevice(Self.keyboard)
        let syn = InputEvent(type: 0, code: 0, value: 0)
        let out = Self.run(
            filter, id,
            [
                InputEvent(type: 1, code: 30, value: 1), syn, InputEvent(type: 1, code: 30, value: value), syn,
                InputEvent(type: 1, code: 31, value: value), syn, InputEvent(type: 1, code: 30, value: 2), syn,
                InputEvent(type: 1, code: 30, value: 0), syn,
            ])
        #expect(
            out == [
                InputEvent(type: 1, code: 30, value: 1), syn, InputEvent(type: 1, code: 30, value: 2), syn,
                InputEvent(type: 1, code: 30, value: 0), syn,
            ])
    }

    /// A read with events after its `SYN_DROPPED`: the run path took the read's last event (not
    /// read) as the latest, the event path the drop, so the resync's frame carried another time
    /// on each. Both now stamp it with the drop's.
    @Test func resyncAfterADropInARunIsStampedAsOnTheEventPath() {
        let drop = InputEvent(seconds: 1, microseconds: 0, type: 0, code: 3, value: 0)
        let run = [
            InputEvent(seconds: 1, type: 1, code: 31, value: 1), drop,
            InputEvent(seconds: 1, microseconds: 3000, type: 1, code: 30, value: 1),
            InputEvent(seconds: 1, microseconds: 3000, type: 0, code: 0, value: 0),
        ]
        let state = DeviceState(keysDown: [31])
        let byRun = InputFilter()
        let runID = byRun.addDevice(Self.keyboard)
        var runOutput = OutputBuffer()
        var keys: [PromptKey] = []
        let result = run.withUnsafeBufferPointer {
            byRun.process($0, device: runID, into: &runOutput, promptKeys: &keys)
        }
        #expect(result.resyncNeeded)
        byRun.resync(device: runID, to: state, into: &runOutput)

        let byEvent = InputFilter()
        let eventID = byEvent.addDevice(Self.keyboard)
        var eventOutput = OutputBuffer()
        for event in run where byEvent.process(event, device: eventID, into: &eventOutput).resyncNeeded { break }
        byEvent.resync(device: eventID, to: state, into: &eventOutput)

        #expect(Array(runOutput.events) == Array(eventOutput.events))
        #expect(
            Array(runOutput.events) == [drop.with(type: 1, code: 31, value: 1), drop.with(type: 0, code: 0, value: 0)])
    }

    /// A frame that starts two contacts in one slot, the second replacing the first with no −1
    /// between (a userspace device can send it): the position came between the two tracking
    /// ids, was not sent for the first (suppressed) contact, and was taken as sent for the
    /// second, so the clone placed it where the slot last was — there, in a locked region. The
    /// second contact now comes with its position.
    @Test func aContactReplacedWithinItsFrameComesWithItsPosition() {
        let axis = DeviceDescription.AbsInfo(minimum: 0, maximum: 999)
        let touchscreen = DeviceDescription(
            name: "ts", properties: [1], codes: [1: [330], 3: [0, 1, 0x2f, 0x35, 0x36, 0x39]],
            absInfo: [
                0: axis, 1: axis, 0x2f: .init(minimum: 0, maximum: 4), 0x35: axis, 0x36: axis,
                0x39: .init(minimum: 0, maximum: 65535),
            ])
        let filter = InputFilter(policy: FilterPolicy(touch: .regions([.rect(x: 0.5, y: 0, width: 0.5, height: 1)])))
        let id = filter.addDevice(touchscreen)
        let syn = InputEvent(type: 0, code: 0, value: 0)
        // The clone's slot 1 is left at x 900 (in the region) by a contact that lifts.
        _ = Self.run(
            filter, id,
            [
                InputEvent(type: 3, code: 0x2f, value: 1), InputEvent(type: 3, code: 0x39, value: 1),
                InputEvent(type: 3, code: 0x35, value: 100), InputEvent(type: 3, code: 0x36, value: 100), syn,
                InputEvent(type: 3, code: 0x35, value: 900), syn,
                InputEvent(type: 3, code: 0x39, value: -1), syn,
            ])
        let out = Self.run(
            filter, id,
            [
                InputEvent(type: 3, code: 0x39, value: 14), InputEvent(type: 3, code: 0x35, value: 300),
                InputEvent(type: 3, code: 0x36, value: 500), InputEvent(type: 3, code: 0x39, value: 546), syn,
            ])
        let start = out.firstIndex(of: InputEvent(type: 3, code: 0x39, value: 546))
        #expect(start != nil, "the contact was not forwarded: \(out)")
        if let start {
            #expect(out[start...].contains(InputEvent(type: 3, code: 0x35, value: 300)), "\(out)")
            #expect(out[start...].contains(InputEvent(type: 3, code: 0x36, value: 500)), "\(out)")
        }
    }

    /// A touchscreen whose x axis has max = min − 1 (an empty range) put every contact at an
    /// infinite x, which no region contains, so it passed a region lock (found by `make fuzz` in
    /// CI). A point no region can be judged against is suppressed under locked regions now; with
    /// no region locked the contact passes as before.
    @Test(arguments: [true, false])
    func aContactAtAPointNowhereIsSuppressedUnderLockedRegions(locked: Bool) {
        let axis = DeviceDescription.AbsInfo(minimum: 0, maximum: 999)
        let empty = DeviceDescription.AbsInfo(minimum: 5, maximum: 4)
        let touchscreen = DeviceDescription(
            name: "ts", properties: [1], codes: [1: [330], 3: [0, 1, 0x2f, 0x35, 0x36, 0x39]],
            absInfo: [
                0: empty, 1: axis, 0x2f: .init(minimum: 0, maximum: 4), 0x35: empty, 0x36: axis,
                0x39: .init(minimum: 0, maximum: 65535),
            ])
        let policy = FilterPolicy(touch: .regions(locked ? [.rect(x: 0.5, y: 0.5, width: 0.5, height: 0.5)] : []))
        let filter = InputFilter(policy: policy)
        let id = filter.addDevice(touchscreen)
        let syn = InputEvent(type: 0, code: 0, value: 0)
        let out = Self.run(
            filter, id,
            [
                InputEvent(type: 3, code: 0x2f, value: 0), InputEvent(type: 3, code: 0x39, value: 7),
                InputEvent(type: 3, code: 0x35, value: 5), InputEvent(type: 3, code: 0x36, value: 8), syn,
            ])
        #expect(out.contains(InputEvent(type: 3, code: 0x39, value: 7)) == !locked, "\(out)")
    }

    /// An absolute pointer (a single-touch device with a mouse button): an autorepeat of a
    /// button never pressed passed, even of a button the profile locks by name, since only
    /// presses and releases decide a button. It passes now only for a button the clone holds.
    @Test(arguments: [Set<UInt16>(), [BTN.left]])
    func aPointerButtonRepeatPassesOnlyForAButtonHeld(locked: Set<UInt16>) {
        let axis = DeviceDescription.AbsInfo(minimum: 0, maximum: 999)
        let pointer = DeviceDescription(
            name: "abs", codes: [1: [BTN.touch, BTN.left], 3: [0, 1]], absInfo: [0: axis, 1: axis])
        #expect(pointer.pointerKind == .absolute)
        let filter = InputFilter(policy: FilterPolicy(lockedKeys: locked))
        let id = filter.addDevice(pointer)
        let syn = InputEvent(type: 0, code: 0, value: 0)
        let repeatAlone = Self.run(filter, id, [InputEvent(type: 1, code: BTN.left, value: 2), syn])
        #expect(!repeatAlone.contains { $0.type == 1 }, "\(repeatAlone)")
        let held = Self.run(
            filter, id,
            [
                InputEvent(type: 1, code: BTN.left, value: 1), syn, InputEvent(type: 1, code: BTN.left, value: 2), syn,
            ])
        let buttons = held.filter { $0.type == 1 }.map(\.value)
        #expect(buttons == (locked.isEmpty ? [1, 2] : []), "\(held)")
    }
}
