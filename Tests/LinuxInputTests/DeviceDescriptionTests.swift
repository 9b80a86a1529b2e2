import InputTestSupport
import KioskInput
import Testing

@testable import LinuxInput

@Suite("Which nodes kioskd brokers, and what their clones copy (pure, runs anywhere)")
struct DeviceDescriptionTests {
    static let anyID = DeviceDescription.ID(bus: 0x19, vendor: 0, product: 1, version: 0)

    @Test(
        "nodes with keys, buttons or multitouch are brokered",
        arguments: [
            ("Power Button", [("EV_KEY", ["KEY_POWER"])]),
            ("consumer control", [("EV_KEY", ["KEY_VOLUMEUP", "KEY_VOLUMEDOWN"]), ("EV_MSC", ["MSC_SCAN"])]),
            ("mouse", [("EV_KEY", ["BTN_LEFT"]), ("EV_REL", ["REL_X", "REL_Y"])]),
            (
                "MT touchscreen without BTN_TOUCH",
                [("EV_ABS", ["ABS_MT_SLOT", "ABS_MT_POSITION_X", "ABS_MT_POSITION_Y"])]
            ),
        ])
    func brokered(name: String, codes: [(String, [String])]) {
        let description = Self.description(name: name, codes: codes)
        #expect(description.isWorthBrokering)
        #expect(description.shouldBroker)
    }

    @Test(
        "nodes with nothing a profile can lock are left alone",
        arguments: [
            ("Lid Switch", [("EV_SW", ["SW_LID"])]),
            ("accelerometer", [("EV_ABS", ["ABS_X", "ABS_Y", "ABS_Z"])]),
            ("empty", []),
        ])
    func notBrokered(name: String, codes: [(String, [String])]) {
        #expect(!Self.description(name: name, codes: codes).shouldBroker)
    }

    @Test("kioskd's own clones are never brokered, whatever they can report")
    func clonesAreSkipped() {
        var description = Self.description(name: "AT keyboard", codes: [("EV_KEY", ["KEY_A"])])
        description.phys = UInputClone.phys(forSource: "isa0060/serio0/input0")
        #expect(description.phys == "kioskd-clone/isa0060/serio0/input0")
        #expect(description.isKioskdClone)
        #expect(!description.shouldBroker)
        #expect(!UInputClone.isClone(phys: "usb-0000:00:14.0-1/input0"))
        #expect(!UInputClone.isClone(phys: nil))
    }

    /// One naming rule, the one 70-kioskd.rules matches (`kioskd-clone/*`): a clone of a device
    /// without phys (every uinput-made keyboard) is `kioskd-clone/`, never a bare `kioskd-clone`
    /// that the rule would hide from libinput.
    @Test(
        "every clone's phys starts with kioskd-clone/, with or without a source phys",
        arguments: [
            ("isa0060/serio0/input0", "kioskd-clone/isa0060/serio0/input0"), ("", "kioskd-clone/"),
        ] as [(String, String)])
    func clonePhysRule(source: String, clone: String) {
        #expect(UInputClone.phys(forSource: source) == clone)
        #expect(UInputClone.isClone(phys: clone))
        // A calibrated clone names its file (99-zz-kioskd-calibration.rules), still under the
        // marker, after "/input": libinput's device group (the phys cut there) stays the same.
        let calibrated = UInputClone.phys(forSource: source, calibration: 7)
        #expect(calibrated == "kioskd-clone/" + source + "/input-calibration-7")
        #expect(UInputClone.isClone(phys: calibrated))
        func group(_ phys: String) -> Substring {  // what libinput-device-group keeps
            phys[..<(phys.firstRange(of: "/input")?.lowerBound ?? phys.endIndex)]
        }
        #expect(group(calibrated) == group(clone))
        #expect(UInputClone.phys(forSource: nil) == "kioskd-clone/")
        #expect(UInputClone.isClone(phys: UInputClone.phys(forSource: nil)))
        #expect(!UInputClone.isClone(phys: "kioskd-clone"))
        #expect(!UInputClone.isClone(phys: "kioskd-clonefoo/x"))
        #expect(!UInputClone.isClone(phys: "usb-0000:00:14.0-1/input0"))
        #expect(!UInputClone.isClone(phys: nil))
    }

    @Test(
        "the clone copies name, ids, codes and properties, drops EV_FF, EV_REP, the axes' fuzz, uniq and the calibration"
    )
    func cloneDescription() {
        var source = Self.description(
            name: "Touchscreen",
            codes: [
                ("EV_KEY", ["BTN_TOUCH"]), ("EV_ABS", ["ABS_MT_POSITION_X"]),
            ])
        source.codes[type("EV_FF")] = [0x50]  // FF_RUMBLE: the name table has no FF_* codes
        source.codes[type("EV_REP")] = [0, 1]  // REP_DELAY, REP_PERIOD
        source.phys = "i2c-ELAN0001:00"
        source.uniq = "1234"
        source.properties = [EventCodes.property(named: "INPUT_PROP_DIRECT")!]
        source.absInfo[code("ABS_MT_POSITION_X")] = .init(minimum: 0, maximum: 4095, fuzz: 8, resolution: 12)
        source.calibration = CalibrationMatrix(-1, 0, 1, 0, 1, 0)
        let clone = UInputClone.cloneDescription(of: source)
        #expect(clone.name == source.name)
        #expect(clone.id == source.id)
        #expect(clone.phys == "kioskd-clone/i2c-ELAN0001:00")
        #expect(clone.uniq == nil)
        #expect(clone.calibration == nil)
        #expect(clone.properties == source.properties)
        #expect(clone.codes[type("EV_FF")] == nil)
        #expect(clone.codes[type("EV_REP")] == nil)
        #expect(clone.codes[type("EV_KEY")] == [code("BTN_TOUCH")])
        #expect(clone.absInfo[code("ABS_MT_POSITION_X")] == .init(minimum: 0, maximum: 4095, fuzz: 0, resolution: 12))
    }

    @Test("names are cut to uinput's 79 bytes at a character boundary")
    func uinputName() {
        #expect(UInputClone.uinputName("Power Button") == "Power Button")
        let long = String(repeating: "é", count: 50)  // 100 bytes
        let cut = UInputClone.uinputName(long)
        #expect(cut.utf8.count == 78)
        #expect(cut == String(repeating: "é", count: 39))
    }

    @Test(
        "a udev change on a brokered node: kept if nothing the clone copies changed, cloned again if it or the calibration did, released if nothing is left to lock"
    )
    func changeDecision() {
        let before = FakeDevice.touchscreen()
        let matrix = "-1 0 1 0 1 0"
        func decide(
            _ after: DeviceDescription, _ oldCalibration: String? = nil, _ newCalibration: String? = nil
        ) -> BrokerChange {
            BrokerChange(old: before, oldCalibration: oldCalibration, new: after, newCalibration: newCalibration)
        }
        #expect(decide(before) == .keep)
        #expect(decide(before, matrix, matrix) == .keep)
        #expect(decide(before, nil, matrix) == .reclone)
        #expect(decide(before, matrix, nil) == .reclone)
        var ranges = before
        ranges.absInfo[code("ABS_MT_POSITION_X")]?.maximum = 2047  // hwdb's EVDEV_ABS_00
        #expect(decide(ranges) == .reclone)
        var resolution = before
        resolution.absInfo[code("ABS_MT_POSITION_Y")]?.resolution = 40
        #expect(decide(resolution) == .reclone)
        var keymap = before
        keymap.codes[type("EV_KEY")]?.insert(code("KEY_POWER"))  // a keymap that adds a key
        #expect(decide(keymap) == .reclone)
        var renamed = before
        renamed.name = "ELAN Touchscreen (recalibrated)"
        #expect(decide(renamed) == .reclone)
        var moved = before
        moved.phys = "i2c-ELAN0001:01"
        #expect(decide(moved) == .reclone)
        let nothingToLock = Self.description(name: "ELAN Touchscreen", codes: [("EV_ABS", ["ABS_X", "ABS_Y"])])
        #expect(decide(nothingToLock) == .release)
        #expect(decide(nothingToLock, nil, matrix) == .release)
    }

    static func description(name: String, codes: [(String, [String])]) -> DeviceDescription {
        var description = DeviceDescription(name: name, id: anyID)
        for (typeName, names) in codes {
            description.codes[type(typeName)] = Set(names.map(code))
        }
        return description
    }
}
