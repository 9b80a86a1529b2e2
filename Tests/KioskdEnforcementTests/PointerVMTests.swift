import BusTestSupport
import Foundation
import Glibc
import InputTestSupport
import KioskCore
import KioskInput
import KioskTestSupport
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

    // MARK: No cursor where no one may point

    static let lockedPointerProfile = """
        description = "VM test: pointers locked"
        [pointer]
        mode = "locked"
        [passcode]
        hash = "\(demoPasscodeHash)"
        """

    /// A clone of the device with phys `phys` as the kernel has it now: its node and the
    /// capability bitmasks of sysfs (`capabilities/ev`, `rel`, `key`, `abs`: hex words), once udev
    /// has processed it (libinput reads its record).
    struct CloneNow: Equatable {
        var node: String
        var ev: String, rel: String, key: String, abs: String, properties: String
        /// Nothing but EV_SYN.
        var isEmpty: Bool { ev == "1" }
        var hasPointer: Bool { rel != "0" || abs != "0" }
    }

    static func cloneNow(of phys: String) -> CloneNow? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/input")) ?? []
        for name in names where name.hasPrefix("event") {
            let device = "/sys/class/input/\(name)/device/"
            func read(_ file: String) -> String? {
                (try? String(contentsOfFile: device + file, encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard read("phys") == "kioskd-clone/" + phys,
                FileManager.default.fileExists(atPath: "/run/udev/data/c13:\(Int(name.dropFirst(5))! + 64)"),
                let ev = read("capabilities/ev"), let rel = read("capabilities/rel"),
                let key = read("capabilities/key"),
                let abs = read("capabilities/abs"), let properties = read("properties")
            else { continue }
            return CloneNow(
                node: "/dev/input/" + name, ev: ev, rel: rel, key: key, abs: abs, properties: properties)
        }
        return nil
    }

    /// Waits (60 s) for the clone of `phys` to be as `wanted` says.
    static func waitForClone(
        of phys: String, _ what: String, _ wanted: @escaping (CloneNow) -> Bool
    ) throws -> CloneNow {
        let found = eventually(
            timeout: .seconds(60), every: .milliseconds(50), { cloneNow(of: phys) },
            until: { $0.map(wanted) ?? false })
        guard let found, wanted(found) else {
            throw HarnessError("the clone of \(phys) never \(what) within 60 s: \(String(describing: found))")
        }
        return found
    }

    /// libinput's Capabilities of a device, nil when it does not list it.
    static func capabilities(_ node: String) throws -> String? {
        try CalibrationVMTests.listDevices()[node]?["Capabilities"]
    }

    static let hiddenEntryProfile = """
        description = "VM test: pointers allowed, one node's pointer hidden"
        [pointer]
        mode = "allowed"
        [[device]]
        role = "hdmi-cec"
        name = "kioskd test cec"
        hide-pointer = true
        [passcode]
        hash = "\(demoPasscodeHash)"
        """

    @Test(
        "[[device]] hide-pointer = true with pointers allowed: the node it names gets a clone with nothing in the session, another mouse keeps its pointer"
    )
    func hidePointerEntry() throws {
        let bus = try PrivateBus()
        let kioskd = try KioskdUnderTest(bus: bus)
        defer { bus.stop() }
        try kioskd.writeProfile("hide-cec", Self.hiddenEntryProfile)
        let cecPhys = "kioskd-vm-test/cec"
        let cec = try UInputClone(description: FakeDevice.mouse(name: "kioskd test cec", phys: cecPhys))
        let mouse = try UInputClone(description: FakeDevice.mouse())
        try kioskd.start(input: true)
        defer { kioskd.stop() }
        _ = try Self.waitForClone(of: cecPhys, "was made") { $0.hasPointer }
        let mouseBefore = try Self.waitForClone(of: Self.mousePhys, "was made") { $0.hasPointer }

        try kioskd.call("StartSession", "s", ["hide-cec"])
        #expect(try kioskd.property("SessionState") == #"s "active""#)
        let cecHidden = try Self.waitForClone(of: cecPhys, "lost its pointer") { $0.isEmpty }
        #expect(try Self.capabilities(cecHidden.node)?.contains("pointer") != true)
        // The policy change that made the CEC node's clone again is over (one pass on kioskd's
        // loop): the other mouse was not cloned again, and its clone is still a pointer.
        let hidden = kioskd.log.split(separator: "\n").filter { $0.contains("Input device's pointer hidden") }
        #expect(hidden.count == 1 && hidden.first?.contains("kioskd test cec") == true, "\(hidden)")
        #expect(hidden.first?.contains("hdmi-cec") == true, "\(hidden)")
        #expect(Self.cloneNow(of: Self.mousePhys) == mouseBefore)
        #expect(try Self.capabilities(mouseBefore.node)?.contains("pointer") == true)

        try kioskd.endSession(passcode: "1234")
        _ = try Self.waitForClone(of: cecPhys, "got its pointer back") { $0.hasPointer }
        withExtendedLifetime((cec, mouse)) {}
    }

    @Test(
        "[pointer] mode = locked: the mouse's clone has no capability and the keyboard-with-touchpad's only its keys (libinput list-devices), a mouse plugged in the session too; the session ended, the mouse's clone is a pointer again"
    )
    func lockedPointersHaveNoClonePointer() throws {
        let bus = try PrivateBus()
        let kioskd = try KioskdUnderTest(bus: bus)
        defer { bus.stop() }
        try kioskd.writeProfile("locked-pointer", Self.lockedPointerProfile)
        let mouse = try UInputClone(description: FakeDevice.mouse())
        let combo = try UInputClone(description: FakeDevice.keyboardTouchpad())
        let comboPhys = "kioskd-vm-test/combo"
        try kioskd.start(input: true)
        defer { kioskd.stop() }

        // No session: both clones are pointers to libinput. (libinput's touchpad code takes the
        // keyboard-with-touchpad whole: "pointer gesture", its keys not a keyboard of libinput's.)
        let mouseBefore = try Self.waitForClone(of: Self.mousePhys, "was made") { $0.hasPointer }
        let comboBefore = try Self.waitForClone(of: comboPhys, "was made") { $0.hasPointer }
        let mouseCaps = try Self.capabilities(mouseBefore.node)
        let comboCaps = try Self.capabilities(comboBefore.node)
        print(
            "libinput before the session: mouse clone \(mouseCaps ?? "not listed"), combo clone \(comboCaps ?? "not listed")"
        )
        #expect(mouseCaps?.contains("pointer") == true, "\(String(describing: mouseCaps))")
        #expect(
            comboCaps?.contains("pointer") == true,
            "\(String(describing: comboCaps))")

        // The session locks pointers: both are cloned again without their pointer.
        try kioskd.call("StartSession", "s", ["locked-pointer"])
        #expect(try kioskd.property("SessionState") == #"s "active""#)
        let mouseHidden = try Self.waitForClone(of: Self.mousePhys, "lost its pointer") { $0.isEmpty }
        let comboHidden = try Self.waitForClone(of: comboPhys, "lost its pointer") { !$0.hasPointer }
        #expect(mouseHidden.key.split(separator: " ").allSatisfy { Int($0, radix: 16) == 0 }, "\(mouseHidden)")
        #expect(mouseHidden.properties == "0", "\(mouseHidden)")
        #expect(comboHidden.ev != "1" && comboHidden.properties == "0", "\(comboHidden)")
        // udev gives the empty clone no class (ID_INPUT_MOUSE, _KEY, …): libinput leaves it out.
        let classes = try CalibrationVMTests.udevProperties(mouseHidden.node).keys.filter { $0.hasPrefix("ID_INPUT") }
        print("udev classes of the mouse's empty clone: \(classes.sorted())")
        #expect(!classes.contains { $0.hasPrefix("ID_INPUT_") }, "\(classes)")
        let mouseListed = try Self.capabilities(mouseHidden.node)
        let comboListed = try Self.capabilities(comboHidden.node)
        print(
            "libinput in the session: mouse clone \(mouseListed ?? "not listed"), combo clone \(comboListed ?? "not listed")"
        )
        #expect(mouseListed == nil || mouseListed?.contains("pointer") == false, "\(String(describing: mouseListed))")
        #expect(comboListed?.contains("keyboard") == true, "\(String(describing: comboListed))")
        #expect(comboListed?.contains("pointer") == false, "\(String(describing: comboListed))")
        #expect(kioskd.log.contains("Input device's pointer hidden from the kiosk"), "\(kioskd.log)")

        // The hidden clone still takes the combo's keys; its touchpad's finger and click, which
        // the session locks, never reach it (the key after them is the sentinel).
        let watcher = try Probe.Watcher()
        defer { watcher.stop() }
        _ = try watcher.clone(of: comboPhys, timeout: .seconds(60))
        try combo.write(frames: [
            [
                event("EV_ABS", "ABS_MT_SLOT", 0), event("EV_ABS", "ABS_MT_TRACKING_ID", 1),
                event("EV_ABS", "ABS_MT_POSITION_X", 500), event("EV_ABS", "ABS_MT_POSITION_Y", 300),
                event("EV_KEY", "BTN_TOUCH", 1), event("EV_KEY", "BTN_TOOL_FINGER", 1),
                event("EV_ABS", "ABS_X", 500), event("EV_ABS", "ABS_Y", 300),
            ],
            [event("EV_KEY", "BTN_LEFT", 1)], [event("EV_KEY", "BTN_LEFT", 0)],
            [
                event("EV_ABS", "ABS_MT_TRACKING_ID", -1), event("EV_KEY", "BTN_TOUCH", 0),
                event("EV_KEY", "BTN_TOOL_FINGER", 0),
            ],
        ])
        try press(combo, ["KEY_A"])
        let comboClone = Self.clone(comboPhys)
        let seen = try watcher.wait("KEY_A on the combo's clone") {
            $0.events.keys(phys: comboClone).contains("KEY_A 0")
        }
        #expect(seen.events.nonSync(phys: comboClone) == ["KEY_A 1", "KEY_A 0"], "\(seen.events)")

        // A mouse plugged in now gets a clone with nothing.
        let later = try UInputClone(
            description: FakeDevice.mouse(name: "kioskd test mouse 2", phys: "kioskd-vm-test/mouse2"))
        let laterClone = try Self.waitForClone(of: "kioskd-vm-test/mouse2", "was made") { _ in true }
        #expect(laterClone.isEmpty, "\(laterClone)")
        #expect(try Self.capabilities(laterClone.node)?.contains("pointer") != true)

        // The session ends: the mice's clones are pointers again, the combo's too.
        try kioskd.endSession(passcode: "1234")
        let mouseAfter = try Self.waitForClone(of: Self.mousePhys, "got its pointer back") { $0.hasPointer }
        let comboAfter = try Self.waitForClone(of: comboPhys, "got its pointer back") { $0.hasPointer }
        _ = try Self.waitForClone(of: "kioskd-vm-test/mouse2", "got its pointer back") { $0.hasPointer }
        let mouseAfterCaps = try Self.capabilities(mouseAfter.node)
        let comboAfterCaps = try Self.capabilities(comboAfter.node)
        print(
            "libinput after the session: mouse clone \(mouseAfterCaps ?? "not listed"), combo clone \(comboAfterCaps ?? "not listed")"
        )
        #expect(mouseAfterCaps?.contains("pointer") == true, "\(String(describing: mouseAfterCaps))")
        #expect(comboAfterCaps?.contains("pointer") == true, "\(String(describing: comboAfterCaps))")
        #expect(kioskd.log.contains("Input device's pointer shown to the kiosk again"), "\(kioskd.log)")
        withExtendedLifetime((mouse, combo, later)) {}
    }

    /// `SessionWarnings` for a `[[device]]` entry follows its device both ways: judged when the
    /// locks are put in force, cleared when a matching device is plugged in, back when it is
    /// unplugged (docs/dbus-api.md § Sessions).
    @Test("a [[device]] entry's warning goes when its device is plugged in and comes back when it is unplugged")
    func deviceEntryWarningFollowsPlugAndUnplug() throws {
        let bus = try PrivateBus()
        let kioskd = try KioskdUnderTest(bus: bus)
        defer { bus.stop() }
        try kioskd.writeProfile(
            "scanner",
            """
            description = "VM test: a scanner allowed, plugged in after the session starts"
            [buttons]
            keyboard = "locked"
            [[device]]
            role = "scanner"
            name = "kioskd test scanner"
            passes = "keys"
            [passcode]
            hash = "\(demoPasscodeHash)"
            """)
        try kioskd.start(input: true)
        defer { kioskd.stop() }
        try kioskd.call("StartSession", "s", ["scanner"])
        let unmatched = try kioskd.property("SessionWarnings")
        #expect(unmatched.hasPrefix("as 1 ") && unmatched.contains("kioskd test scanner"), "\(unmatched)")

        let scanner = try UInputClone(
            description: FakeDevice.keyboard(name: "kioskd test scanner", phys: "kioskd-vm-test/scanner"))
        let plugged = try eventually(timeout: .seconds(60), every: .milliseconds(20)) {
            try kioskd.property("SessionWarnings")
        } until: {
            $0 == "as 0"
        }
        #expect(plugged == "as 0", "\(kioskd.log)")

        scanner.destroy()
        let unplugged = try eventually(timeout: .seconds(60), every: .milliseconds(20)) {
            try kioskd.property("SessionWarnings")
        } until: {
            $0 != "as 0"
        }
        #expect(unplugged == unmatched, "\(kioskd.log)")
    }

}
