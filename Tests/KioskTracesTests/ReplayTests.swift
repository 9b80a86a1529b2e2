import KioskInput
import KioskTraces
import Testing

/// `Replay`, the offline dry run behind `kioskctl replay` (moved here from FilterTests with it).
@Suite struct ReplayTests {
    static let keyboard = DeviceDescription(name: "kbd", codes: [1: Set(1..<0x2ff), 4: [4]])

    @Test func replayResyncsAfterASynDroppedInTheRecording() throws {
        let text = """
            N: kbd
            I: 0003 046d c31c 0110
            B: 00 13 00 00 00 00 00 00 00
            E: 0.100000 0001 001e 0001
            E: 0.100000 0000 0000 0000
            E: 0.200000 0000 0003 0000
            E: 0.200000 0001 001e 0000
            E: 0.200000 0000 0000 0000
            E: 0.300000 0001 0030 0001
            E: 0.300000 0000 0000 0000
            E: 0.400000 0001 0030 0000
            E: 0.400000 0000 0000 0000
            """
        let lines = Replay.run(trace: try Trace.parse(text), policy: .passThrough)
            .split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
        #expect(
            lines == [
                "E: 0.100000 0001 001e 0001", "E: 0.100000 0000 0000 0000",
                "E: 0.200000 0001 001e 0000", "E: 0.200000 0000 0000 0000",
                "E: 0.300000 0001 0030 0001", "E: 0.300000 0000 0000 0000",
                "E: 0.400000 0001 0030 0000", "E: 0.400000 0000 0000 0000",
            ])
    }

    @Test func replayReportsTheExitGestureAndMergesDevicesInTimeOrder() throws {
        let power = DeviceDescription(name: "Power Button", codes: [1: [116]])
        func press(_ t: Int) -> [InputEvent] {
            [
                InputEvent(seconds: 0, microseconds: t, type: 1, code: 116, value: 1),
                InputEvent(seconds: 0, microseconds: t, type: 0, code: 0, value: 0),
                InputEvent(seconds: 0, microseconds: t + 1000, type: 1, code: 116, value: 0),
                InputEvent(seconds: 0, microseconds: t + 1000, type: 0, code: 0, value: 0),
            ]
        }
        let trace = Trace(devices: [
            Trace.Device(description: power, events: press(100_000) + press(500_000)),
            Trace.Device(description: Self.keyboard, events: press(300_000)),
        ])
        let policy = FilterPolicy(lockedKeys: [116], exitGesture: ExitGesture(key: 116, presses: 3, within: 1_000_000))
        #expect(Replay.run(trace: trace, policy: policy) == "# ExitRequested\n")
        let unlocked = Replay.run(trace: trace, policy: .passThrough).split(separator: "\n")
        #expect(
            unlocked.filter { $0.hasPrefix("# device") } == [
                "# device 0: Power Button", "# device 1: kbd", "# device 0: Power Button",
            ])
    }

    /// Replay honours `[pointer]` and `[[device]]` entries, matched on the recording's
    /// own `N:`/`I:` lines; a udev match cannot be judged offline, and replay says so.
    @Test func replayHonoursPointerRulesAndAllowedDevices() throws {
        let text = """
            N: AbleNet Switch
            I: 0003 0b00 0001 0110
            B: 00 13 00 00 00 00 00 00 00
            E: 0.100000 0001 0039 0001
            E: 0.100000 0000 0000 0000
            E: 0.200000 0001 0039 0000
            E: 0.200000 0000 0000 0000
            """
        let trace = try Trace.parse(text)
        let byName = AllowedDevice(
            role: "accessibility", matcher: DeviceMatcher(name: "AbleNet Switch"), passesKeys: true,
            passesPointer: false)
        let byPath = AllowedDevice(
            role: "scanner", matcher: DeviceMatcher(udev: [("ID_PATH", "pci-0000:00:14.0-usb-0:2:1.0")]),
            passesKeys: true, passesPointer: true)
        let locked = FilterPolicy(lockedKeys: [0x39], allowedDevices: [byName, byPath])
        let lines = Replay.run(trace: trace, policy: locked).split(separator: "\n").map {
            String($0.split(separator: "\t")[0])
        }
        #expect(
            lines == [
                "# [[device]] accessibility: lets through device 0 (AbleNet Switch): keys",
                "# [[device]] scanner: matches on udev properties (ID_PATH), which a recording does not have: here it lets no device through",
                "E: 0.100000 0001 0039 0001", "E: 0.100000 0000 0000 0000",
                "E: 0.200000 0001 0039 0000", "E: 0.200000 0000 0000 0000",
            ])
        // Matched by vendor and product from the I: line; without an entry, Space is locked.
        let byIDs = AllowedDevice(
            role: "keypad", matcher: DeviceMatcher(vendor: 0x0b00, product: 0x0001), passesKeys: true,
            passesPointer: false)
        #expect(
            Replay.run(trace: trace, policy: FilterPolicy(lockedKeys: [0x39], allowedDevices: [byIDs])).contains(
                "E: 0.100000 0001 0039 0001"))
        #expect(Replay.run(trace: trace, policy: FilterPolicy(lockedKeys: [0x39])) == "")
    }

    @Test func replayOfAMouseTraceUnderALockedPointerForwardsNothing() throws {
        let mouse = try Fixtures.trace("saitek-cyborg-rat5-mouse.motion-and-clicks.evemu")
        #expect(
            Replay.run(
                trace: mouse, policy: FilterPolicy(lockedKeys: EventCodes.keyboardKeys, touch: .none, pointer: .locked))
                == "")
        #expect(!Replay.run(trace: mouse, policy: .passThrough).isEmpty)
    }
}

/// `[touch] max-contacts` and `edge-margin` in `kioskctl replay`: the same filter, on a recording.
@Suite struct ReplayTouchLimitTests {
    /// The tracking ids the replay's output starts (`ABS_MT_TRACKING_ID` ≥ 0).
    static func startedContacts(_ output: String) -> [Int32] {
        output.split(separator: "\n").compactMap { line -> Int32? in
            let fields = line.split(separator: "\t")[0].split(separator: " ")
            guard fields.count == 5, fields[0] == "E:", fields[2] == "0003", fields[3] == "0039",
                let value = Int32(fields[4]), value >= 0
            else { return nil }
            return value
        }
    }

    @Test func aFourFingerDragUnderMaxContactsAndAnEdgeMargin() throws {
        let trace = try Fixtures.trace("atmel-maxtouch-ts.4-finger-drag-down.evemu")
        #expect(Self.startedContacts(Replay.run(trace: trace, policy: .passThrough)).count == 4)
        var one = FilterPolicy()
        one.maxContacts = 1
        #expect(Self.startedContacts(Replay.run(trace: trace, policy: one)) == [21], "the first finger down only")
        var two = FilterPolicy()
        two.maxContacts = 2
        #expect(Self.startedContacts(Replay.run(trace: trace, policy: two)).count == 2)
        // The panel is 0…799 × 0…479; the fingers start at x 415, 258, 133, 639 (ids 21 to 24):
        // a margin of a fifth (x below 160 or above 639.2) drops the one at x 133 alone.
        var margin = FilterPolicy()
        margin.edgeMargin = 0.2
        #expect(Self.startedContacts(Replay.run(trace: trace, policy: margin)).sorted() == [21, 23, 24])
    }
}
