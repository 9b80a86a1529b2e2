import Testing

@testable import KioskInput
@testable import KioskTraces

@Suite struct ParserTests {
    @Test func evemuDescriptionOfTheAtmelTouchscreen() throws {
        let trace = try Fixtures.trace("atmel-maxtouch-ts.2-fingers-touch-release.evemu")
        let description = trace.devices[0].description
        #expect(description.name == "Atmel maXTouch Touchscreen")
        #expect(description.id == DeviceDescription.ID(bus: 0x18, vendor: 0, product: 0, version: 0))
        #expect(description.properties == [1])
        #expect(description.codes[1] == [330])
        #expect(description.codes[3] == [0, 1, 0x2f, 0x35, 0x36, 0x37, 0x39, 0x3b])
        #expect(description.absInfo[0x35] == DeviceDescription.AbsInfo(minimum: 0, maximum: 799))
        #expect(description.absInfo[0x2f]?.maximum == 9)
        #expect(trace.devices[0].events.first == InputEvent(seconds: 0, microseconds: 1, type: 3, code: 0x39, value: 7))
        #expect(
            trace.devices[0].events.contains(
                InputEvent(seconds: 0, microseconds: 810270, type: 3, code: 0x39, value: -1)))
    }

    @Test func evemuKeyboardNodeDescription() throws {
        let trace = try Fixtures.trace(Fixtures.keyboardDescription)
        let description = trace.devices[0].description
        #expect(description.id.vendor == 0x1532 && description.id.product == 0x011b)
        for key: UInt16 in [113, 114, 115, 116, 142] { #expect(description.supports(type: 1, code: key)) }
        #expect(description.touchProtocol == .none)
        #expect(trace.devices[0].events.isEmpty)
    }

    @Test func evemuRoundTripsThroughReplayFormat() throws {
        let trace = try Fixtures.trace("ep0430m09-ts.2-finger-scroll-down.evemu")
        let printed = Replay.run(trace: trace, policy: .passThrough)
        let reparsed = try EvemuParser.parse(printed)
        #expect(reparsed.devices[0].events == trace.devices[0].events)
        #expect(printed.hasPrefix("E: 0.000001 0003 002f 0000\t# EV_ABS / ABS_MT_SLOT 0\n"))
    }

    @Test(arguments: [
        ("N: x\nE: 0.1 0003 0039\n", 2, TraceParseError.Code.missingField),
        ("N: x\nE: 0.000001 0003 zz39 0007\n", 2, .badNumber),
        ("N: x\nE: 0.0000001 0003 0039 0007\n", 2, .badNumber),
        ("N: x\nE: 1 0003 0039 0007\n", 2, .badNumber),
        ("N: x\nE: 0.000001 0003 0039 99999999999\n", 2, .badNumber),
        ("N: x\nI: 0018 0000\n", 2, .missingField),
        ("N: x\n\nB: 01 0g\n", 3, .badNumber),
        ("N: x\nA: 35 0 799\n", 2, .missingField),
        ("N: x\nQ: what\n", 2, .unknownLine),
        // Numbers the replay's arithmetic could not take: refused, not a trap later.
        ("N: x\nE: 9223372036854.775807 0000 0000 0\n", 2, .badNumber),
        ("N: x\nE: -1.000000 0000 0000 0\n", 2, .badNumber),
        ("N: x\nB: 01 " + String(repeating: "00 ", count: 8192) + "ff\n", 2, .badValue),
        ("N: x\nP: " + String(repeating: "00 ", count: 8192) + "01\n", 2, .badValue),
        ("garbage\n", 1, .unknownLine),
        ("", 1, .noDevice),
    ])
    func malformedEvemuNamesTheLine(text: String, line: Int, code: TraceParseError.Code) {
        #expect {
            _ = try EvemuParser.parse(text)
        } throws: { error in
            guard let error = error as? TraceParseError else { return false }
            return error.line == line && error.code == code && error.description.hasPrefix("line \(line): ")
        }
    }

    static let libinputRecord = """
        # libinput record
        version: 1
        ndevices: 1
        libinput:
          version: "1.30.3"
        system:
          kernel: "6.1.0"
        devices:
        - node: /dev/input/event5
          evdev:
            # Name: Kiosk Touch
            name: "Kiosk Touch"
            id: [3, 1267, 12345, 273]
            codes:
              0: [0, 1, 2, 3] # EV_SYN
              1: [330] # EV_KEY
              3: [0, 1, 47, 53, 54, 57] # EV_ABS
            absinfo:
              0: [0, 4095, 0, 0, 10]
              1: [0, 4095, 0, 0, 10]
              47: [0, 9, 0, 0, 0]
              53: [0, 4095, 0, 0, 10]
              54: [0, 4095, 0, 0, 10]
              57: [0, 65535, 0, 0, 0]
            properties: [1]
          hid: [5, 13]
          udev:
            properties:
            - ID_INPUT=1
            - ID_INPUT_TOUCHSCREEN=1
            - LIBINPUT_CALIBRATION_MATRIX=0 -1 1 1 0 0
          quirks:
          events:
          # Current time is 12:00:00
          - evdev:
            - [  0,      0,   3,  57,     4] # EV_ABS / ABS_MT_TRACKING_ID 4
            - [  0,      0,   3,  53,   100] # EV_ABS / ABS_MT_POSITION_X 100
            - [  0,      0,   3,  54,  4000] # EV_ABS / ABS_MT_POSITION_Y 4000
            - [  0,      0,   1, 330,     1] # EV_KEY / BTN_TOUCH 1
            - [  0,      0,   3,   0,   100]
            - [  0,      0,   3,   1,  4000]
            - [  0,      0,   0,   0,     0] # ------------ SYN_REPORT (0) ---------- +0ms
          - libinput:
            - {type: TOUCH_DOWN, time: 0.0}
          - evdev:
            - [  0,  12000,   3,  57,    -1]
            - [  0,  12000,   1, 330,     0]
            - [  0,  12000,   0,   0,     0]
        """

    @Test func libinputRecordParses() throws {
        let trace = try Trace.parse(Self.libinputRecord)
        #expect(trace.devices.count == 1)
        let device = trace.devices[0]
        #expect(device.description.name == "Kiosk Touch")
        #expect(device.description.id == DeviceDescription.ID(bus: 3, vendor: 1267, product: 12345, version: 273))
        #expect(device.description.touchProtocol == .multitouchB(slots: 10))
        #expect(device.description.absInfo[53] == DeviceDescription.AbsInfo(minimum: 0, maximum: 4095, resolution: 10))
        #expect(device.description.calibration == CalibrationMatrix(0, -1, 1, 1, 0, 0))
        #expect(device.events.count == 10)
        #expect(device.events[7] == InputEvent(seconds: 0, microseconds: 12000, type: 3, code: 57, value: -1))
    }

    @Test func libinputRecordCalibrationDrivesRegions() throws {
        // Rotated 90° (0 -1 1 / 1 0 0): device (x small, y large) is screen top-left.
        let trace = try Trace.parse(Self.libinputRecord)
        let locked = Replay.run(
            trace: trace, policy: FilterPolicy(touch: .regions([.rect(x: 0, y: 0, width: 0.1, height: 0.1)])))
        #expect(locked.isEmpty)
        let other = Replay.run(
            trace: trace, policy: FilterPolicy(touch: .regions([.rect(x: 0.9, y: 0.9, width: 0.1, height: 0.1)])))
        #expect(other.split(separator: "\n").count == 10)
    }

    /// A "billion laughs": 1,000 aliases of a device whose events are 1,000 aliases of one entry
    /// of 10 events, 10 million events from 12 KB. Refused at the first repeat, before any
    /// event is made.
    @Test func yamlAliasesAreRefusedBeforeTheyExpand() throws {
        let events = Array(repeating: "[0, 0, 0, 0, 0]", count: 10).joined(separator: ", ")
        var text = "version: 1\ndevices:\n- &d\n  evdev: {name: bomb}\n  events:\n  - &f {evdev: [\(events)]}\n"
        text += String(repeating: "  - *f\n", count: 999)
        text += String(repeating: "- *d\n", count: 999)
        #expect(text.utf8.count < 13_000)
        let error = try #require(throws: TraceParseError.self) { _ = try Trace.parse(text) }
        #expect(error.code == .yaml)
        #expect(error.message.contains("YAML alias"), "\(error)")
        // A scalar's alias copies one value and is let be.
        let scalar = "version: 1\ndevices:\n- evdev: {name: &n kiosk}\n  udev: {properties: [*n]}\n"
        #expect(try Trace.parse(scalar).devices.first?.description.name == "kiosk")
    }

    @Test(arguments: [
        ("devices: [\n", TraceParseError.Code.yaml),
        ("version: 1\ndevices: []\n", .noDevice),
        ("version: 1\ndevices:\n- node: x\n", .missingField),
        ("version: 1\ndevices:\n- evdev:\n    name: a\n  events:\n  - evdev:\n    - [0, 0, 3]\n", .badValue),
        ("version: 1\ndevices:\n- evdev:\n    name: a\n  events:\n  - evdev:\n    - [0, 0, 3, x, 1]\n", .badNumber),
        ("version: 1\ndevices:\n- evdev:\n    id: [1, 2]\n", .badValue),
        (
            "version: 1\ndevices:\n- evdev:\n    name: a\n  events:\n  - evdev:\n    - [9223372036854775807, 0, 0, 0, 0]\n",
            .badValue
        ),
        (
            "version: 1\ndevices:\n- evdev:\n    name: a\n  udev:\n    properties:\n    - LIBINPUT_CALIBRATION_MATRIX=1 0\n",
            .badValue
        ),
    ])
    func malformedLibinputRecordIsATypedError(text: String, code: TraceParseError.Code) {
        #expect {
            _ = try Trace.parse(text)
        } throws: { error in
            guard let error = error as? TraceParseError else { return false }
            return error.code == code && error.line >= 1
        }
    }

    /// A description claiming 2^31 slots (a hand-made trace) sizes nothing by it: libevdev's 256.
    @Test func slotCountsAreCappedAtLibevdevs() throws {
        let trace = try EvemuParser.parse("N: x\nB: 03 00 00 00 00 00 80 00 00\nA: 2f 0 2147483647 0 0\n")
        #expect(trace.devices[0].description.touchProtocol == .multitouchB(slots: DeviceDescription.maximumSlots))
    }

    @Test func malformedLibinputRecordNamesTheLine() {
        let text =
            "version: 1\ndevices:\n- evdev:\n    name: a\n  events:\n  - evdev:\n    - [0, 0, 3, 57, 1]\n    - [0, 0, 3]\n"
        #expect {
            _ = try Trace.parse(text)
        } throws: { error in
            (error as? TraceParseError)?.line == 8
        }
    }
}
