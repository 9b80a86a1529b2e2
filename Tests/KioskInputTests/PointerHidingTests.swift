import Testing

@testable import KioskInput

/// What a clone presents when the policy hides its device's pointer
/// (`FilterPolicy.pointerHiding(of:)`, `DeviceDescription.withoutPointer()`;
/// docs/input-enforcement.md § No cursor where no one may point), and that the filter never
/// writes such a clone an event of a code it lacks.
@Suite struct PointerHidingTests {
    static func c(_ name: String) -> UInt16 { EventCodes.code(named: name)!.code }
    static func p(_ name: String) -> UInt16 { EventCodes.property(named: name)! }
    static func axis(_ max: Int32) -> DeviceDescription.AbsInfo { .init(minimum: 0, maximum: max) }

    static let mouse = DeviceDescription(
        name: "mouse", properties: [p("INPUT_PROP_POINTER")],
        codes: [
            EV.key: [c("BTN_LEFT"), c("BTN_RIGHT"), c("BTN_MIDDLE"), c("BTN_SIDE")],
            EV.rel: [c("REL_X"), c("REL_Y"), c("REL_WHEEL")], EV.msc: [c("MSC_SCAN")],
        ])
    /// A keyboard with a touchpad on one node (as Logitech's K400): KEY_ESC…KEY_F12 and a clickpad.
    static let combo = DeviceDescription(
        name: "combo", properties: [p("INPUT_PROP_POINTER"), p("INPUT_PROP_BUTTONPAD")],
        codes: [
            EV.key: Set(1...88).union([
                c("KEY_VOLUMEUP"), c("KEY_OK"), c("BTN_LEFT"), c("BTN_TOOL_FINGER"), c("BTN_TOUCH"),
                c("BTN_TOOL_DOUBLETAP"),
            ]),
            EV.abs: [
                c("ABS_X"), c("ABS_Y"), c("ABS_MT_SLOT"), c("ABS_MT_POSITION_X"), c("ABS_MT_POSITION_Y"),
                c("ABS_MT_TRACKING_ID"),
            ],
            EV.msc: [c("MSC_SCAN"), c("MSC_TIMESTAMP")], EV.led: [0, 1, 2],
        ],
        absInfo: [
            c("ABS_X"): axis(1000), c("ABS_Y"): axis(600), c("ABS_MT_SLOT"): axis(4),
            c("ABS_MT_POSITION_X"): axis(1000), c("ABS_MT_POSITION_Y"): axis(600),
            c("ABS_MT_TRACKING_ID"): axis(65535),
        ])
    /// A touchpad alone, with MSC_TIMESTAMP (which libinput reads for jumps).
    static let touchpad = DeviceDescription(
        name: "touchpad", properties: [p("INPUT_PROP_POINTER"), p("INPUT_PROP_BUTTONPAD"), p("INPUT_PROP_SEMI_MT")],
        codes: [
            EV.key: [c("BTN_LEFT"), c("BTN_TOOL_FINGER"), c("BTN_TOUCH"), c("BTN_TOOL_DOUBLETAP")],
            EV.abs: [
                c("ABS_X"), c("ABS_Y"), c("ABS_MT_SLOT"), c("ABS_MT_POSITION_X"), c("ABS_MT_POSITION_Y"),
                c("ABS_MT_TRACKING_ID"),
            ],
            EV.msc: [c("MSC_TIMESTAMP")],
        ],
        absInfo: combo.absInfo)
    static let pen = DeviceDescription(
        name: "pen", properties: [p("INPUT_PROP_DIRECT")],
        codes: [
            EV.key: [c("BTN_TOOL_PEN"), c("BTN_TOUCH"), c("BTN_STYLUS")],
            EV.abs: [c("ABS_X"), c("ABS_Y"), c("ABS_PRESSURE")], EV.msc: [c("MSC_SERIAL")],
        ],
        absInfo: [c("ABS_X"): axis(9999), c("ABS_Y"): axis(5999), c("ABS_PRESSURE"): axis(2047)])
    /// A gamepad with a remote's keys: KEY_OK and KEY_MENU stay, its buttons go.
    static let gamepad = DeviceDescription(
        name: "gamepad",
        codes: [
            EV.key: [
                c("BTN_SOUTH"), c("BTN_EAST"), c("BTN_DPAD_UP"), c("BTN_TRIGGER_HAPPY1"), c("KEY_OK"),
                c("KEY_MENU"),
            ],
            EV.abs: [c("ABS_X"), c("ABS_Y"), c("ABS_HAT0X")],
        ],
        absInfo: [c("ABS_X"): axis(255), c("ABS_Y"): axis(255), c("ABS_HAT0X"): .init(minimum: -1, maximum: 1)])
    static let touchscreen = DeviceDescription(
        name: "touchscreen", properties: [p("INPUT_PROP_DIRECT")],
        codes: [
            EV.key: [c("BTN_TOUCH")],
            EV.abs: [
                c("ABS_X"), c("ABS_Y"), c("ABS_MT_SLOT"), c("ABS_MT_POSITION_X"), c("ABS_MT_POSITION_Y"),
                c("ABS_MT_TRACKING_ID"),
            ],
        ],
        absInfo: combo.absInfo)
    /// A touchscreen's side node with a lone BTN_LEFT and nothing else (no pointer kind).
    static let sideNode = DeviceDescription(name: "side", codes: [EV.key: [c("BTN_LEFT")]])

    static let locked = FilterPolicy(pointer: .locked)
    static func entry(_ name: String, passesPointer: Bool = false, hides: Bool = false) -> AllowedDevice {
        AllowedDevice(
            role: "test", matcher: DeviceMatcher(name: name), passesKeys: false, passesPointer: passesPointer,
            hidesPointer: hides)
    }

    // MARK: The mask

    @Test func aMouseWithoutItsPointerHasNothingLeft() {
        let hidden = Self.mouse.withoutPointer()
        #expect(hidden.codes.isEmpty, "\(hidden.codes)")
        #expect(hidden.absInfo.isEmpty && hidden.properties.isEmpty)
        #expect(hidden.name == "mouse")
    }

    @Test func aKeyboardWithATouchpadKeepsItsKeysOnly() {
        let hidden = Self.combo.withoutPointer()
        #expect(hidden.codes[EV.key] == Set(1...88).union([Self.c("KEY_VOLUMEUP"), Self.c("KEY_OK")]))
        #expect(hidden.codes[EV.abs] == nil && hidden.absInfo.isEmpty)
        #expect(hidden.codes[EV.msc] == [Self.c("MSC_SCAN"), Self.c("MSC_TIMESTAMP")])
        #expect(hidden.codes[EV.led] == [0, 1, 2])
        #expect(hidden.properties.isEmpty)
        #expect(hidden.pointerKind == .none)
    }

    @Test func aGamepadLosesItsButtonsDpadAndTriggerHappyNotItsKeys() {
        let hidden = Self.gamepad.withoutPointer()
        #expect(hidden.codes[EV.key] == [Self.c("KEY_OK"), Self.c("KEY_MENU")])
        #expect(hidden.codes[EV.abs] == nil)
    }

    @Test func aTouchscreenKeepsItsTouchAndDirect() {
        #expect(Self.touchscreen.withoutPointer() == Self.touchscreen)
        var withSideButton = Self.touchscreen
        withSideButton.codes[EV.key]?.insert(Self.c("BTN_LEFT"))
        withSideButton.properties.insert(Self.p("INPUT_PROP_POINTER"))
        #expect(withSideButton.withoutPointer() == Self.touchscreen)
        #expect(Self.sideNode.withoutPointer().codes.isEmpty)
    }

    // MARK: Which devices

    @Test(
        arguments: [
            ("mouse", FilterPolicy.passThrough, nil),
            ("mouse", FilterPolicy(pointer: .allowed), nil),
            ("mouse", FilterPolicy(pointer: .locked), PointerHiding.locked),
            ("mouse", FilterPolicy(pointer: .regions), .locked),
            ("touchpad", FilterPolicy(pointer: .regions), .locked),
            ("combo", FilterPolicy(pointer: .locked), .locked),
            ("gamepad", FilterPolicy(pointer: .locked), .locked),
            // An absolute pointer under regions is judged like touch: it keeps its pointer.
            ("pen", FilterPolicy(pointer: .regions), nil),
            ("pen", FilterPolicy(pointer: .locked), .locked),
            ("touchscreen", FilterPolicy(touch: .none, pointer: .locked), nil),
            ("side", FilterPolicy(pointer: .locked), nil),
            // Entries: one that lets the pointer through keeps it; one that hides it wins.
            ("mouse", FilterPolicy(pointer: .locked, allowedDevices: [entry("mouse", passesPointer: true)]), nil),
            ("pen", FilterPolicy(pointer: .locked, allowedDevices: [entry("pen", passesPointer: true)]), nil),
            (
                "side", FilterPolicy(pointer: .allowed, allowedDevices: [entry("side", hides: true)]),
                .entry(role: "test")
            ),
            (
                "mouse", FilterPolicy(pointer: .allowed, allowedDevices: [entry("mouse", hides: true)]),
                .entry(role: "test")
            ),
            (
                "mouse",
                FilterPolicy(
                    pointer: .allowed,
                    allowedDevices: [entry("mouse", passesPointer: true), entry("mouse", hides: true)]),
                .entry(role: "test")
            ),
            ("mouse", FilterPolicy(pointer: .locked, allowedDevices: [entry("other", hides: true)]), .locked),
        ] as [(String, FilterPolicy, PointerHiding?)])
    func hidden(_ name: String, _ policy: FilterPolicy, _ expected: PointerHiding?) throws {
        let device = try #require(Self.devices.first { $0.name == name })
        #expect(policy.pointerHiding(of: device) == expected)
    }

    static let devices = [mouse, combo, touchpad, pen, gamepad, touchscreen, sideNode]

    /// A hidden entry's device sends nothing of its pointer, whatever `[pointer]` says.
    @Test func anEntryThatHidesThePointerLocksIt() {
        let filter = InputFilter(
            policy: FilterPolicy(pointer: .allowed, allowedDevices: [Self.entry("mouse", hides: true)]))
        let id = filter.addDevice(Self.mouse)
        var output = OutputBuffer()
        for event in Self.exercise(Self.mouse) { filter.process(event, device: id, into: &output) }
        #expect(Array(output.events).filter { $0.type != EV.syn }.isEmpty, "\(Array(output.events))")
    }

    // MARK: Nothing reaches a clone a code it lacks

    /// Every key of the device pressed and let go on its own, every relative axis moved, every
    /// absolute axis set (a contact down and lifted, for a multitouch one), every `EV_MSC` code:
    /// whatever the filter lets through under the policy.
    static func exercise(_ device: DeviceDescription) -> [InputEvent] {
        var events: [InputEvent] = []
        func frame(_ body: [InputEvent]) { events += body + [InputEvent(type: EV.syn, code: SYN.report, value: 0)] }
        let msc = (device.codes[EV.msc] ?? []).sorted().map { InputEvent(type: EV.msc, code: $0, value: 7) }
        for code in (device.codes[EV.key] ?? []).sorted() {
            frame(msc + [InputEvent(type: EV.key, code: code, value: 1)])
            frame(msc + [InputEvent(type: EV.key, code: code, value: 0)])
        }
        frame((device.codes[EV.rel] ?? []).sorted().map { InputEvent(type: EV.rel, code: $0, value: 3) } + msc)
        let axes = (device.codes[EV.abs] ?? []).sorted().map { code in
            let info = device.absInfo[code] ?? .init(minimum: 0, maximum: 1)
            let value = code == c("ABS_MT_SLOT") ? 0 : code == c("ABS_MT_TRACKING_ID") ? 5 : info.maximum / 2 + 1
            return InputEvent(type: EV.abs, code: code, value: value)
        }
        let down = (device.codes[EV.key] ?? []).filter { $0 >= c("BTN_TOOL_PEN") && $0 <= 0x14f }.sorted()
        frame(axes + down.map { InputEvent(type: EV.key, code: $0, value: 1) } + msc)
        var lift = down.map { InputEvent(type: EV.key, code: $0, value: 0) }
        if device.supports(type: EV.abs, code: c("ABS_MT_TRACKING_ID")) {
            lift.append(InputEvent(type: EV.abs, code: c("ABS_MT_TRACKING_ID"), value: -1))
        }
        frame(lift + msc)
        return events
    }

    @Test(
        arguments: [
            ("mouse", FilterPolicy(pointer: .locked)),
            ("mouse", FilterPolicy(pointer: .regions)),
            ("combo", FilterPolicy(pointer: .locked)),
            ("touchpad", FilterPolicy(pointer: .locked)),
            ("pen", FilterPolicy(pointer: .locked)),
            ("gamepad", FilterPolicy(pointer: .locked)),
            ("touchscreen", FilterPolicy(pointer: .allowed, allowedDevices: [entry("touchscreen", hides: true)])),
            ("side", FilterPolicy(pointer: .allowed, allowedDevices: [entry("side", hides: true)])),
            ("mouse", FilterPolicy(pointer: .allowed, allowedDevices: [entry("mouse", hides: true)])),
        ] as [(String, FilterPolicy)])
    func nothingReachesAHiddenCloneThatItLacks(_ name: String, _ policy: FilterPolicy) throws {
        let device = try #require(Self.devices.first { $0.name == name })
        try #require(policy.pointerHiding(of: device) != nil)
        let clone = device.withoutPointer()
        let filter = InputFilter(policy: policy)
        let id = filter.addDevice(device)
        var output = OutputBuffer()
        for event in Self.exercise(device) { filter.process(event, device: id, into: &output) }
        let written = Array(output.events)
        let lacking = written.filter { $0.type != EV.syn && !clone.supports(type: $0.type, code: $0.code) }
        #expect(lacking.isEmpty, "written to a clone that lacks them: \(lacking)")
        // Not vacuous: what the clone keeps still comes through.
        let kept = written.filter { $0.type != EV.syn }
        switch name {
        case "combo": #expect(kept.contains(InputEvent(type: EV.key, code: Self.c("KEY_A"), value: 1)), "\(kept)")
        case "gamepad": #expect(kept.contains(InputEvent(type: EV.key, code: Self.c("KEY_OK"), value: 1)), "\(kept)")
        case "touchscreen":
            #expect(kept.contains(InputEvent(type: EV.abs, code: Self.c("ABS_MT_TRACKING_ID"), value: 5)), "\(kept)")
        default: #expect(kept.isEmpty, "\(kept)")
        }
    }

    /// The same events with the pointer in force reach codes the hidden clone lacks: the check
    /// above would see them.
    @Test func withThePointerAllowedTheyWouldNotFit() {
        let filter = InputFilter(policy: FilterPolicy(pointer: .allowed))
        let id = filter.addDevice(Self.touchpad)
        var output = OutputBuffer()
        for event in Self.exercise(Self.touchpad) { filter.process(event, device: id, into: &output) }
        let clone = Self.touchpad.withoutPointer()
        #expect(Array(output.events).contains { $0.type != EV.syn && !clone.supports(type: $0.type, code: $0.code) })
    }
}
