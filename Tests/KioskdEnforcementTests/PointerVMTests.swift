import BusTestSupport
import Foundation
import Glibc
import InputTestSupport
import KioskCore
import KioskInput
import KioskdProcessTestSupport
import LinuxInput
import Testing

/// Kioskd brokering a mouse and a pen next to a touchscreen, a locked
/// keyboard and an accessibility switch, in a session with a locked region; read back with
/// python-evdev. Each negative check waits on a later event of the same clone (a clone keeps
/// its device's order), never on a fixed sleep.
@Suite(
    "Real kernel: pointers, pens and allowed devices under a session (VM, root, udev)", .serialized,
    .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct PointerVMTests {
    static let profile = """
        description = "VM test: keyboard locked, the top-left quarter locked, a switch allowed"
        [buttons]
        keyboard = "locked"
        [touch]
        mode = "regions"
        [[touch.locked-region]]
        name = "quarter"
        rect = { x = 0.0, y = 0.0, width = 0.5, height = 0.5 }
        [[device]]
        role = "accessibility"
        name = "kioskd test switch"
        passes = "keys"
        [[device]]
        role = "scanner"
        name = "no such scanner"
        passes = "keys"
        [passcode]
        hash = "\(demoPasscodeHash)"
        """

    static let (mousePhys, penPhys, switchPhys, keyboardPhys, touchPhys) = (
        "kioskd-vm-test/mouse", "kioskd-vm-test/pen", "kioskd-vm-test/switch", "kioskd-vm-test/keyboard",
        "i2c-ELAN0001:00"
    )
    static func clone(_ phys: String) -> String { "kioskd-clone/" + phys }

    @Test(
        "a mouse reaches nothing, a pen's stroke in the region never reaches its clone while hover and strokes outside do, the switch's keys pass while the keyboard is locked; an entry matching no device is a SessionWarning"
    )
    func pointersAndAllowedDevices() throws {
        let bus = try PrivateBus()
        let kioskd = try KioskdUnderTest(bus: bus)
        defer { bus.stop() }
        try kioskd.writeProfile("pointers", Self.profile)
        let mouse = try UInputClone(description: FakeDevice.mouse())
        let pen = try UInputClone(description: FakeDevice.pen())
        let keyboard = try UInputClone(description: FakeDevice.keyboard())
        let switchDevice = try UInputClone(
            description: FakeDevice.keyboard(name: "kioskd test switch", phys: Self.switchPhys))
        let touch = try UInputClone(description: FakeDevice.touchscreen())
        let watcher = try Probe.Watcher(
            spying: try [mouse, pen, keyboard, switchDevice, touch].map { try #require($0.devnode) })
        defer { watcher.stop() }
        try kioskd.start(input: true)
        defer { kioskd.stop() }
        for phys in [Self.mousePhys, Self.penPhys, Self.keyboardPhys, Self.switchPhys, Self.touchPhys] {
            _ = try watcher.clone(of: phys, timeout: .seconds(60))
        }

        try kioskd.call("StartSession", "s", ["pointers"])
        #expect(try kioskd.property("SessionState") == #"s "active""#)
        let warnings = try kioskd.property("SessionWarnings")
        #expect(warnings.hasPrefix("as 1 "), "\(warnings)")
        #expect(warnings.contains("no such scanner") && warnings.contains("matches no input device"), "\(warnings)")
        #expect(!warnings.contains("kioskd test switch"), "\(warnings)")
        #expect(kioskd.log.contains("Input device allowed through the session's locks"), "\(kioskd.log)")

        // The mouse: motion, wheel and clicks in the session.
        var mark = watcher.snapshot.events.count
        try mouse.write(frames: [
            [event("EV_REL", "REL_X", 5), event("EV_REL", "REL_Y", -3)],
            [event("EV_MSC", "MSC_SCAN", 0x90001), event("EV_KEY", "BTN_LEFT", 1)],
            [event("EV_MSC", "MSC_SCAN", 0x90001), event("EV_KEY", "BTN_LEFT", 0)],
            [event("EV_REL", "REL_WHEEL", -1)],
        ])
        // The pen: a stroke in the locked quarter (x 0.2, y 0.2), then hover and a stroke at
        // (0.75, 0.75): its tool coming near is the sentinel that the first stroke was handled.
        try pen.write(frames: FakeDevice.penStroke(x: 2000, y: 1200))
        try pen.write(frames: FakeDevice.penStroke(x: 7500, y: 4500))
        // The touchscreen next to them: a tap in the quarter never arrives, one outside does.
        try touch.write(frames: FakeDevice.tap(trackingID: 1, x: 1000, y: 600))
        try touch.write(frames: FakeDevice.tap(trackingID: 2, x: 3000, y: 1800))
        // The keyboard is locked; the switch's keys pass.
        try press(keyboard, ["KEY_A", "KEY_B"])
        try press(switchDevice, ["KEY_A", "KEY_B"])
        let penClone = Self.clone(Self.penPhys)
        var seen = Array(
            try watcher.wait("the pen's second stroke and the switch's KEY_B on their clones") { snapshot in
                let new = snapshot.events.dropFirst(mark)
                return new.keys(phys: penClone).contains("BTN_TOUCH 0")
                    && new.keys(phys: Self.clone(Self.switchPhys)).contains("KEY_B 0")
                    && new.nonSync(phys: Self.clone(Self.touchPhys)).contains("BTN_TOUCH 0")
            }.events[mark...])
        let penEvents = seen.nonSync(phys: penClone)
        #expect(penEvents.filter { $0.hasPrefix("BTN_TOUCH") } == ["BTN_TOUCH 1", "BTN_TOUCH 0"], "\(penEvents)")
        // Everything before the second stroke's hover is the first stroke's: its hover and the
        // catch-up after it (where the pen lifted), never its tip or its pressure.
        let second = try #require(penEvents.firstIndex(of: "ABS_X 7500"), "\(penEvents)")
        #expect(
            !penEvents[..<second].contains { $0.hasPrefix("ABS_PRESSURE") || $0.hasPrefix("BTN_TOUCH") },
            "the locked stroke reached the clone: \(penEvents)")
        #expect(penEvents[..<second].contains("ABS_X 2000"), "hover passes: \(penEvents)")
        #expect(penEvents.contains("ABS_X 7500") && penEvents.contains("ABS_PRESSURE 900"), "\(penEvents)")
        #expect(seen.keys(phys: Self.clone(Self.switchPhys)) == ["KEY_A 1", "KEY_A 0", "KEY_B 1", "KEY_B 0"])
        let touches = seen.nonSync(phys: Self.clone(Self.touchPhys)).filter { $0.hasPrefix("ABS_MT_TRACKING_ID") }
        #expect(touches == ["ABS_MT_TRACKING_ID 2", "ABS_MT_TRACKING_ID -1"], "\(touches)")

        // The session ends: the mouse and the keyboard work again. What reached their clones
        // before these events is what the session let through: nothing.
        try kioskd.endSession(passcode: "1234")
        mark = watcher.snapshot.events.count
        try mouse.write(frames: [[event("EV_REL", "REL_X", 7)]])
        try press(keyboard, ["KEY_B"])
        seen = Array(
            try watcher.wait("the mouse's and the keyboard's events after the session") { snapshot in
                snapshot.events.nonSync(phys: Self.clone(Self.mousePhys)).contains("REL_X 7")
                    && snapshot.events.dropFirst(mark).keys(phys: Self.clone(Self.keyboardPhys)).contains("KEY_B 0")
            }.events)
        #expect(seen.nonSync(phys: Self.clone(Self.mousePhys)) == ["REL_X 7"], "the mouse leaked in the session")
        #expect(seen.keys(phys: Self.clone(Self.keyboardPhys)) == ["KEY_B 1", "KEY_B 0"], "the keyboard leaked")
        #expect(try kioskd.property("SessionWarnings") == "as 0")
        #expect(seen.filter { !$0.phys.hasPrefix("kioskd-clone") }.isEmpty, "a grabbed node delivered")
    }
}
