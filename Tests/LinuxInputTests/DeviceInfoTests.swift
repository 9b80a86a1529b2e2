import InputTestSupport
import KioskInput
@testable import LinuxInput
import Testing


@Suite("Which nodes kioskd brokers (pure, runs anywhere)")
struct DeviceInfoTests {
    static let anyID = InputDeviceID(bustype: 0x19, vendor: 0, product: 1, version: 0)

    @Test("nodes with keys, buttons or multitouch are brokered", arguments: [
        ("Power Button", [("EV_KEY", ["KEY_POWER"])]),
        ("consumer control", [("EV_KEY", ["KEY_VOLUMEUP", "KEY_VOLUMEDOWN"]), ("EV_MSC", ["MSC_SCAN"])]),
        ("mouse", [("EV_KEY", ["BTN_LEFT"]), ("EV_REL", ["REL_X", "REL_Y"])]),
        ("MT touchscreen without BTN_TOUCH", [("EV_ABS", ["ABS_MT_SLOT", "ABS_MT_POSITION_X", "ABS_MT_POSITION_Y"])]),
    ])
    func brokered(name: String, codes: [(String, [String])]) {
        let info = Self.info(name: name, codes: codes)
        #expect(info.capabilities.isWorthBrokering)
        #expect(info.shouldBroker)
    }

    @Test("nodes with nothing a profile can lock are left alone", arguments: [
        ("Lid Switch", [("EV_SW", ["SW_LID"])]),
        ("accelerometer", [("EV_ABS", ["ABS_X", "ABS_Y", "ABS_Z"])]),
        ("empty", []),
    ])
    func notBrokered(name: String, codes: [(String, [String])]) {
        #expect(!Self.info(name: name, codes: codes).shouldBroker)
    }

    @Test("kioskd's own clones are never brokered, whatever they can report")
    func clonesAreSkipped() {
        var info = Self.info(name: "AT keyboard", codes: [("EV_KEY", ["KEY_A"])])
        info.phys = UInputClone.phys(forSource: "isa0060/serio0/input0")
        #expect(info.phys == "kioskd-clone/isa0060/serio0/input0")
        #expect(info.isKioskdClone)
        #expect(!info.shouldBroker)
        #expect(UInputClone.phys(forSource: nil) == UInputClone.physMarker)
        #expect(!UInputClone.isClone(phys: "usb-0000:00:14.0-1/input0"))
        #expect(!UInputClone.isClone(phys: nil))
    }

    @Test("the clone copies name, ids, codes and properties, drops EV_FF, EV_REP and the axes' fuzz")
    func cloneInfo() {
        var source = Self.info(name: "Touchscreen", codes: [
            ("EV_KEY", ["BTN_TOUCH"]), ("EV_ABS", ["ABS_MT_POSITION_X"]),
        ])
        source.capabilities.codes[type("EV_FF")] = [0x50]  // FF_RUMBLE: the name table has no FF_* codes
        source.capabilities.codes[type("EV_REP")] = [0, 1]  // REP_DELAY, REP_PERIOD
        source.phys = "i2c-ELAN0001:00"
        source.uniq = "1234"
        source.capabilities.properties = [EventCodes.property(named: "INPUT_PROP_DIRECT")!]
        source.capabilities.axes[code("ABS_MT_POSITION_X")] = AbsoluteAxis(minimum: 0, maximum: 4095, fuzz: 8, resolution: 12)
        let clone = UInputClone.cloneInfo(of: source)
        #expect(clone.name == source.name)
        #expect(clone.id == source.id)
        #expect(clone.phys == "kioskd-clone/i2c-ELAN0001:00")
        #expect(clone.capabilities.properties == source.capabilities.properties)
        #expect(clone.capabilities.codes[type("EV_FF")] == nil)
        #expect(clone.capabilities.codes[type("EV_REP")] == nil)
        #expect(clone.capabilities.codes[type("EV_KEY")] == [code("BTN_TOUCH")])
        #expect(clone.capabilities.axes[code("ABS_MT_POSITION_X")] == AbsoluteAxis(minimum: 0, maximum: 4095, fuzz: 0, resolution: 12))
    }

    @Test("names are cut to uinput's 79 bytes at a character boundary")
    func uinputName() {
        #expect(UInputClone.uinputName("Power Button") == "Power Button")
        let long = String(repeating: "é", count: 50)  // 100 bytes
        let cut = UInputClone.uinputName(long)
        #expect(cut.utf8.count == 78)
        #expect(cut == String(repeating: "é", count: 39))
    }

    @Test("the filter's description of a device carries its codes, axis ranges and calibration")
    func description() {
        var info = FakeDevice.touchscreen()
        info.capabilities.axes[code("ABS_MT_POSITION_X")]?.fuzz = 3
        let matrix = CalibrationMatrix(udevProperty: "0 -1 1 1 0 0")
        let description = DeviceDescription(info, calibration: matrix)
        #expect(description.name == "ELAN Touchscreen")
        #expect(description.id == DeviceDescription.ID(bus: 0x18, vendor: 0x04f3, product: 0x2a1c, version: 0x0100))
        #expect(description.properties == [EventCodes.property(named: "INPUT_PROP_DIRECT")!])
        #expect(description.codes == info.capabilities.codes)
        #expect(description.absInfo[code("ABS_MT_POSITION_X")] == DeviceDescription.AbsInfo(minimum: 0, maximum: 4095, fuzz: 3, resolution: 16))
        #expect(description.touchProtocol == .multitouchB(slots: 10))
        #expect(description.calibration == CalibrationMatrix(0, -1, 1, 1, 0, 0))
    }

    @Test("a udev change on a brokered node: kept if only where a finger is changed, cloned again if what the clone copies or the calibration changed, released if nothing is left to lock")
    func changeDecision() {
        let before = FakeDevice.touchscreen()
        let matrix = "-1 0 1 0 1 0"
        func decide(_ after: DeviceInfo, _ oldCalibration: String? = nil, _ newCalibration: String? = nil) -> BrokerChange {
            BrokerChange(old: before, oldCalibration: oldCalibration, new: after, newCalibration: newCalibration)
        }
        #expect(decide(before) == .keep)
        #expect(decide(before, matrix, matrix) == .keep)
        var moved = before
        moved.capabilities.axes[code("ABS_MT_POSITION_X")]?.value = 1234  // a contact moved: not a change
        #expect(decide(moved) == .keep)
        #expect(decide(before, nil, matrix) == .reclone)
        #expect(decide(before, matrix, nil) == .reclone)
        var ranges = before
        ranges.capabilities.axes[code("ABS_MT_POSITION_X")]?.maximum = 2047  // hwdb's EVDEV_ABS_00
        #expect(decide(ranges) == .reclone)
        var resolution = before
        resolution.capabilities.axes[code("ABS_MT_POSITION_Y")]?.resolution = 40
        #expect(decide(resolution) == .reclone)
        var keymap = before
        keymap.capabilities.codes[type("EV_KEY")]?.insert(code("KEY_POWER"))  // a keymap that adds a key
        #expect(decide(keymap) == .reclone)
        var renamed = before
        renamed.name = "ELAN Touchscreen (recalibrated)"
        #expect(decide(renamed) == .reclone)
        let nothingToLock = Self.info(name: "ELAN Touchscreen", codes: [("EV_ABS", ["ABS_X", "ABS_Y"])])
        #expect(decide(nothingToLock) == .release)
        #expect(decide(nothingToLock, nil, matrix) == .release)
    }

    static func info(name: String, codes: [(String, [String])]) -> DeviceInfo {
        var caps = DeviceCapabilities()
        for (typeName, names) in codes {
            caps.codes[type(typeName)] = Set(names.map(code))
        }
        return DeviceInfo(name: name, id: anyID, capabilities: caps)
    }
}
