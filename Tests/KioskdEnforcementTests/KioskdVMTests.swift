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

/// kioskd itself, brokering fake physical devices inside the VM (root, /dev/uinput, udev), read
/// back with python-evdev and driven over a private bus with busctl and python3-dbus.
@Suite(
    "Real kernel: kioskd enforcing sessions on input devices (VM, root, udev)", .serialized,
    .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct KioskdVMTests {
    static let profile = """
        description = "VM test: power and volume locked, the top-right corner of the touch surface locked"
        [buttons]
        power = "locked"
        volume = "locked"
        home = "locked"
        keyboard = "allowed"
        escape-chords = "blocked"
        [touch]
        mode = "regions"
        [[touch.locked-region]]
        name = "corner"
        rect = { x = 0.9, y = 0.0, width = 0.1, height = 0.2 }
        [session]
        exit-gesture = { key = "KEY_POWER", presses = 3, within = "1.5s" }
        [passcode]
        hash = "\(demoPasscodeHash)"
        """

    // Phys of the fakes and of their clones.
    static let keyboardPhys = "kioskd-vm-test/keyboard"
    static let powerPhys = "LNXPWRBN/button/input0"
    static let touchPhys = "i2c-ELAN0001:00"
    static func clone(_ phys: String) -> String { "kioskd-clone/" + phys }
    static let (kbd, pwr, ts) = (clone(keyboardPhys), clone(powerPhys), clone(touchPhys))

    /// The machine: a private bus, the three fake devices, kioskd, a python-evdev watcher of the
    /// clones that spies on the physical nodes too.
    final class Kiosk {
        let bus: PrivateBus
        let kioskd: KioskdUnderTest
        let keyboard: UInputClone
        let power: UInputClone
        let touch: UInputClone
        let physical: [String]
        let watcher: Probe.Watcher

        init() throws {
            bus = try PrivateBus()
            kioskd = try KioskdUnderTest(bus: bus)
            try kioskd.writeProfile("vm-test", KioskdVMTests.profile)
            keyboard = try UInputClone(description: FakeDevice.keyboard())
            power = try UInputClone(description: FakeDevice.powerButton())
            touch = try UInputClone(description: FakeDevice.touchscreen())
            physical = try [keyboard, power, touch].map { try #require($0.devnode) }
            watcher = try Probe.Watcher(spying: physical)
            try kioskd.start(input: true)
            try waitForClones()
        }

        func waitForClones() throws {
            for phys in [keyboardPhys, powerPhys, touchPhys] { _ = try watcher.clone(of: phys, timeout: .seconds(60)) }
        }

        var events: [SeenEvent] { watcher.snapshot.events }

        /// Waits until the keyboard's, the power node's and the touchscreen's latest events
        /// (KEY_B, KEY_PROG1, a lifted contact's BTN_TOUCH 0, the last event of its frame) reached their clones after `mark`: everything
        /// written before them has been through kioskd.
        @discardableResult
        func settle(
            after mark: Int, keyboard: Bool = true, power: Bool = true, touch: Bool = false
        ) throws -> [SeenEvent] {
            let all = try watcher.wait("the sentinels through kioskd", timeout: .seconds(60)) { snapshot in
                let new = snapshot.events.dropFirst(mark)
                return (!keyboard || new.keys(phys: kbd).contains("KEY_B 0"))
                    && (!power || new.keys(phys: pwr).contains("KEY_PROG1 0"))
                    && (!touch || new.nonSync(phys: ts).contains("BTN_TOUCH 0"))
            }.events
            return Array(all[mark...])
        }

        func stop() {
            kioskd.stop()
            watcher.stop()
            bus.stop()
        }
    }

    @Test(
        "a session end to end: nothing locked without one; with one, locked keys and touches in the region never reach the clones, the rest always; a keyboard plugged in is locked from its first event; the exit gesture raises ExitRequested; kill -9 and restart leak nothing; EndSession lifts the locks; SIGTERM gives the devices back"
    )
    func sessionEndToEnd() throws {
        let kiosk = try Kiosk()
        defer { kiosk.stop() }
        // The devices were taken before the name (and READY). The name is owned a moment
        // before the "Ready" line is written: wait for the line.
        let log = eventually(every: .milliseconds(50)) { kiosk.kioskd.log } until: { $0.contains("Ready") }
        let ready = try #require(log.range(of: "Ready"))
        #expect(log.ranges(of: "Brokering an input device").count >= 3)
        #expect(log.ranges(of: "Brokering an input device").allSatisfy { $0.upperBound < ready.lowerBound }, "\(log)")

        // No session: everything passes, and the grabbed physical nodes tell nobody else.
        var mark = kiosk.events.count
        try press(kiosk.keyboard, ["KEY_VOLUMEUP", "KEY_A", "KEY_B"])
        try press(kiosk.power, ["KEY_VOLUMEUP", "KEY_POWER", "KEY_PROG1"])
        try kiosk.touch.write(frames: FakeDevice.tap(trackingID: 1, x: 3900, y: 100))
        var seen = try kiosk.settle(after: mark, touch: true)
        #expect(
            seen.keys(phys: Self.kbd) == [
                "KEY_VOLUMEUP 1", "KEY_VOLUMEUP 0", "KEY_A 1", "KEY_A 0", "KEY_B 1", "KEY_B 0",
            ])
        #expect(
            seen.keys(phys: Self.pwr) == [
                "KEY_VOLUMEUP 1", "KEY_VOLUMEUP 0", "KEY_POWER 1", "KEY_POWER 0", "KEY_PROG1 1", "KEY_PROG1 0",
            ])
        #expect(seen.nonSync(phys: Self.ts).contains("ABS_MT_TRACKING_ID 1"))
        #expect(seen.filter { !$0.phys.hasPrefix("kioskd-clone") }.isEmpty, "a grabbed node delivered: \(seen)")

        // StartSession: locked keys never, allowed keys always; a touch in the region never, one outside whole.
        try kiosk.kioskd.call("StartSession", "s", ["vm-test"])
        #expect(try kiosk.kioskd.property("SessionState") == #"s "active""#)
        mark = kiosk.events.count
        try press(kiosk.keyboard, ["KEY_VOLUMEUP", "KEY_A", "KEY_LEFTMETA", "KEY_B"])
        try press(kiosk.power, ["KEY_VOLUMEUP", "KEY_VOLUMEDOWN", "KEY_MUTE", "KEY_PROG1"])
        try kiosk.touch.write(frames: FakeDevice.tap(trackingID: 2, x: 3900, y: 100))
        try kiosk.touch.write(frames: FakeDevice.tap(trackingID: 3, x: 1000, y: 1200))
        seen = try kiosk.settle(after: mark, touch: true)
        #expect(seen.keys(phys: Self.kbd) == ["KEY_A 1", "KEY_A 0", "KEY_B 1", "KEY_B 0"])
        #expect(seen.keys(phys: Self.pwr) == ["KEY_PROG1 1", "KEY_PROG1 0"])
        #expect(
            seen.nonSync(phys: Self.ts) == [
                "ABS_MT_TRACKING_ID 3", "ABS_MT_POSITION_X 1000", "ABS_MT_POSITION_Y 1200", "BTN_TOUCH 1", "ABS_X 1000",
                "ABS_Y 1200",
                "ABS_MT_POSITION_X 1008", "ABS_X 1008", "ABS_MT_TRACKING_ID -1", "BTN_TOUCH 0",
            ])

        // A keyboard plugged in during the session: a locked key from the moment its node exists.
        let plugged = "kioskd-vm-test/plugged-in"
        let pluggedIn = try UInputClone(description: FakeDevice.keyboard(name: "plugged-in keyboard", phys: plugged))
        try #require(
            try eventually(timeout: .seconds(60)) {
                if kiosk.events.keys(phys: Self.clone(plugged)).contains("KEY_A 0") { return true }
                try press(pluggedIn, ["KEY_VOLUMEUP", "KEY_A"])
                return false
            }, "the plugged-in keyboard's clone never showed KEY_A")
        try press(pluggedIn, ["KEY_VOLUMEUP", "KEY_B"])
        let pluggedKeys = try kiosk.watcher.wait("KEY_B on the plugged-in keyboard's clone") {
            $0.events.keys(phys: Self.clone(plugged)).contains("KEY_B 0")
        }.events.keys(phys: Self.clone(plugged))
        #expect(
            !pluggedKeys.contains { $0.hasPrefix("KEY_VOLUMEUP") }, "a locked key reached the clone: \(pluggedKeys)")
        pluggedIn.destroy()

        // The exit gesture on the locked power key: ExitRequested, and no KEY_POWER on the clone.
        // It also opens kioskd's passcode prompt, which holds all input: Esc closes it (and
        // reaches no clone either), then the sentinel goes through.
        let listener = try exitRequestedListener(address: kiosk.bus.address)
        defer { listener.stop() }
        mark = kiosk.events.count
        try press(kiosk.power, ["KEY_POWER", "KEY_POWER", "KEY_POWER"])
        try listener.wait("ExitRequested") { $0.contains("ExitRequested") }
        try press(kiosk.keyboard, ["KEY_ESC"])
        try #require(
            try eventually(timeout: .seconds(60)) { try kiosk.kioskd.property("PromptState") == #"s "closed""# },
            "the prompt never closed on Esc")
        try press(kiosk.power, ["KEY_PROG1"])
        seen = try kiosk.settle(after: mark, keyboard: false)
        #expect(!seen.keys(phys: Self.kbd).contains { $0.hasPrefix("KEY_ESC") }, "Esc at the prompt reached the kiosk")
        #expect(seen.keys(phys: Self.pwr) == ["KEY_PROG1 1", "KEY_PROG1 0"])
        #expect(listener.lines.filter { $0 == "ExitRequested" }.count == 1)

        // kill -9 mid-session while locked keys and locked touches keep coming, then a restart.
        let writer = Writer(keyboard: kiosk.keyboard, power: kiosk.power, touch: kiosk.touch)
        writer.start()
        let beforeKill = kiosk.events.count
        usleep(300_000)
        #expect(kiosk.kioskd.stop(SIGKILL) == 128 + SIGKILL)
        try kiosk.watcher.wait("the clones gone with kioskd") { snapshot in
            [Self.kbd, Self.pwr, Self.ts].allSatisfy { snapshot.openNow[$0] == nil }
        }
        usleep(300_000)  // the physical nodes are ungrabbed now
        let logBefore = kiosk.kioskd.log.count
        try kiosk.kioskd.start(input: true)
        #expect(try kiosk.kioskd.property("SessionState") == #"s "active""#)
        // The restored session's locks were in the filter before kioskd took any device.
        let restartLog = String(kiosk.kioskd.log.dropFirst(logBefore))
        let locks = try #require(restartLog.range(of: "Input locks changed"), "\(restartLog)")
        let firstGrab = try #require(restartLog.range(of: "Brokering an input device"), "\(restartLog)")
        #expect(locks.upperBound <= firstGrab.lowerBound, "\(restartLog)")
        #expect(
            restartLog[locks.lowerBound...].prefix(while: { $0 != "\n" }).contains("SESSION_STATE=active"),
            "\(restartLog)")
        try kiosk.waitForClones()
        let resumed = kiosk.events.count
        try kiosk.watcher.wait("KEY_A through the new keyboard clone") {
            $0.events.dropFirst(resumed).keys(phys: Self.kbd).contains("KEY_A 0")
        }
        usleep(300_000)
        let written = writer.stop()
        mark = kiosk.events.count
        try press(kiosk.keyboard, ["KEY_B"])
        try press(kiosk.power, ["KEY_PROG1"])
        seen = try kiosk.settle(after: beforeKill)
        let leaked = seen.filter {
            ($0.phys == Self.pwr && $0.type == type("EV_KEY") && $0.code != code("KEY_PROG1"))
                || ($0.phys == Self.ts && $0.type != type("EV_SYN"))
                || ($0.phys == Self.kbd && $0.code == code("KEY_VOLUMEUP"))
        }
        #expect(leaked.isEmpty, "locked events reached a clone across kill -9 and restart: \(leaked.prefix(10))")
        #expect(seen.keys(phys: Self.kbd).contains("KEY_A 1"))
        let meanwhile = seen.filter { kiosk.physical.contains($0.path) && !$0.phys.hasPrefix("kioskd-clone") }.count
        print(
            "kill -9 and restart: \(written) frames written across it; the clones showed no locked event; while kioskd was down the ungrabbed physical nodes delivered \(meanwhile) events to other readers"
        )

        // EndSession with the passcode lifts the locks.
        try kiosk.kioskd.endSession(passcode: "1234")
        #expect(try kiosk.kioskd.property("SessionState") == #"s "inactive""#)
        mark = kiosk.events.count
        try press(kiosk.power, ["KEY_VOLUMEUP", "KEY_PROG1"])
        try press(kiosk.keyboard, ["KEY_B"])
        try kiosk.touch.write(frames: FakeDevice.tap(trackingID: 4, x: 3900, y: 100))
        seen = try kiosk.settle(after: mark, touch: true)
        #expect(seen.keys(phys: Self.pwr) == ["KEY_VOLUMEUP 1", "KEY_VOLUMEUP 0", "KEY_PROG1 1", "KEY_PROG1 0"])
        #expect(seen.nonSync(phys: Self.ts).contains("ABS_MT_TRACKING_ID 4"))

        // SIGTERM: the clones go, the physical nodes deliver to everyone again.
        #expect(kiosk.kioskd.stop(SIGTERM) == 0)
        try kiosk.watcher.wait("the clones gone after SIGTERM") { snapshot in
            [Self.kbd, Self.pwr, Self.ts].allSatisfy { snapshot.openNow[$0] == nil }
        }
        mark = kiosk.events.count
        try press(kiosk.power, ["KEY_VOLUMEUP"])
        seen = Array(
            try kiosk.watcher.wait("the physical power node delivering") {
                $0.events.dropFirst(mark).keys(phys: Self.powerPhys).count == 2
            }.events[mark...])
        #expect(seen.keys(phys: Self.powerPhys) == ["KEY_VOLUMEUP 1", "KEY_VOLUMEUP 0"])
    }

    @Test(
        "a restored session whose profile broke: the strictest locks from the first frame, SessionProblem says why, the exit gesture still works, ForceEndSession lifts it"
    )
    func brokenProfileFailsClosed() throws {
        let kiosk = try Kiosk()
        defer { kiosk.stop() }
        try kiosk.kioskd.call("StartSession", "s", ["vm-test"])
        #expect(kiosk.kioskd.stop(SIGKILL) == 128 + SIGKILL)
        try kiosk.kioskd.writeProfile("vm-test", "[buttons]\npower = \"sometimes\"\n")
        try kiosk.kioskd.start(input: true)
        #expect(try kiosk.kioskd.property("SessionState") == #"s "active""#)
        let problem = try kiosk.kioskd.property("SessionProblem")
        #expect(problem.contains("could not be loaded") && problem.contains("vm-test"), "\(problem)")
        #expect(kiosk.kioskd.log.contains("enforcing the strictest locks"))
        try kiosk.waitForClones()

        let listener = try exitRequestedListener(address: kiosk.bus.address)
        defer { listener.stop() }
        let mark = kiosk.events.count
        try press(kiosk.keyboard, ["KEY_A", "KEY_B"])
        try kiosk.touch.write(frames: FakeDevice.tap(trackingID: 9, x: 1000, y: 1000))
        try press(kiosk.power, ["KEY_PROG1", "KEY_POWER", "KEY_POWER", "KEY_POWER"])
        try listener.wait("ExitRequested") { $0.contains("ExitRequested") }

        // Barriers, not a sleep: once the locks are lifted, one more key on the keyboard and the
        // power node and one more tap on the touchscreen pass. Each node's events reach its
        // clone in order, so anything the strictest locks had let through would show up on the
        // clones before these: what the clones carry after `mark` must be exactly them.
        try kiosk.kioskd.call("ForceEndSession")
        #expect(try kiosk.kioskd.property("SessionProblem") == #"s """#)
        try press(kiosk.keyboard, ["KEY_B"])
        try press(kiosk.power, ["KEY_PROG1"])
        try kiosk.touch.write(frames: FakeDevice.tap(trackingID: 10, x: 1000, y: 1000))
        let seen = try kiosk.settle(after: mark, touch: true)
        #expect(seen.keys(phys: Self.kbd) == ["KEY_B 1", "KEY_B 0"], "the strictest locks let through: \(seen)")
        #expect(
            seen.keys(phys: Self.pwr) == ["KEY_PROG1 1", "KEY_PROG1 0"], "the strictest locks let through: \(seen)")
        let touches = seen.nonSync(phys: Self.ts)
        // Only the tap after the locks were lifted: the one made under them would be a second touch-down.
        #expect(touches.filter { $0 == "BTN_TOUCH 1" }.count == 1, "the strictest locks let through: \(touches)")
    }

    @Test(
        "a keyboard python-evdev holds when a session starts: its locked key escapes while held; once let go, kioskd takes it within the retry back-off and the locked key reaches no one"
    )
    func busyKeyboardTakenOnceReleased() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try KioskdUnderTest(bus: bus)
        try kioskd.writeProfile("vm-test", Self.profile)
        let phys = "kioskd-vm-test/held-elsewhere"
        let keyboard = try UInputClone(description: FakeDevice.keyboard(name: "keyboard held elsewhere", phys: phys))
        let path = try #require(keyboard.devnode)
        let holder = try Probe.Holder(grabbing: path)
        defer { holder.stop() }
        let watcher = try Probe.Watcher(spying: [path])
        defer { watcher.stop() }
        try kioskd.start(input: true)
        defer { kioskd.stop() }
        eventually(timeout: .seconds(30), every: .milliseconds(50)) { kioskd.log.contains("Another process holds the grab") }
        #expect(kioskd.log.contains("kioskd takes it once it is released"), "\(kioskd.log)")

        try kioskd.call("StartSession", "s", ["vm-test"])
        eventually(timeout: .seconds(30), every: .milliseconds(50)) { kioskd.log.contains("escape the session's locks") }
        #expect(kioskd.log.contains("escape the session's locks"), "\(kioskd.log)")
        // Held elsewhere, the locked key escapes: the holder reads it (this is the hole).
        try press(keyboard, ["KEY_VOLUMEUP"])
        eventually(every: .milliseconds(10)) { holder.events.contains("KEY_VOLUMEUP 0") }
        #expect(holder.events.contains("KEY_VOLUMEUP 1"))

        try holder.release()
        let released = ContinuousClock.now
        _ = try watcher.clone(of: phys, timeout: .seconds(30))
        let took = ContinuousClock.now - released
        #expect(took < .seconds(10), "the next retry was due within a few seconds: \(took)")
        #expect(kioskd.log.contains("Took the grab of an input device another process had held"))
        let mark = watcher.snapshot.events.count
        let heldMark = holder.events.count
        try press(keyboard, ["KEY_VOLUMEUP", "KEY_B"])
        let seen = try watcher.wait("KEY_B on the clone", timeout: .seconds(60)) {
            $0.events.dropFirst(mark).keys(phys: Self.clone(phys)).contains("KEY_B 0")
        }.events
        #expect(seen[mark...].keys(phys: Self.clone(phys)) == ["KEY_B 1", "KEY_B 0"])
        #expect(seen[mark...].filter { $0.path == path }.isEmpty, "the node delivered to a reader: \(seen[mark...])")
        #expect(holder.events.count == heldMark, "the former holder still reads the node: \(holder.events.suffix(4))")
        let ms = String(
            format: "%.0f ms", Double(took.components.seconds) * 1e3 + Double(took.components.attoseconds) / 1e15)
        print("busy keyboard with kioskd: clone up \(ms) after python-evdev let go of the grab (session on)")
    }

    @Test("time from a device appearing to kioskd holding its grab (its clone's node appears right after), 20 devices")
    func hotplugToGrabbed() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try KioskdUnderTest(bus: bus)
        try kioskd.start(input: true)
        defer { kioskd.stop() }
        let nodes = try NodeWatch()
        var samples: [Duration] = []
        for i in 0..<20 {
            let phys = "kioskd-vm-test/timing-\(i)"
            let start = ContinuousClock.now
            let fake = try UInputClone(description: FakeDevice.keyboard(name: "timing keyboard \(i)", phys: phys))
            let appeared = try nodes.waitForNode(phys: Self.clone(phys), timeout: .seconds(30))
            samples.append(appeared - start)
            fake.destroy()
        }
        let sorted = samples.sorted()
        let ms = { (d: Duration) in
            String(format: "%.1f ms", Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15)
        }
        print(
            "hotplug with kioskd: UI_DEV_CREATE -> grabbed (clone node created): median \(ms(sorted[sorted.count / 2])), min \(ms(sorted.first!)), max \(ms(sorted.last!)) over \(samples.count) devices (TCG guest, udev)"
        )
        #expect(sorted[sorted.count / 2] < .seconds(2))
    }
}
