import Foundation
import Glibc
import InputTestSupport
import KioskInput
import LinuxInput
import Logging
import SystemdKit
import Testing

/// The broker alone on a real kernel (and udev: the VM runs systemd-udevd), read back by
/// python-evdev: fake physical devices through /dev/uinput, the broker's clones watched.
@Suite(
    "Real kernel: the input broker on its loop (VM, root, udev)", .serialized,
    .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct BrokerTests {
    static let power = code("KEY_POWER")
    /// Volume and power locked; touches starting in the top-right corner locked; power ×3 exits.
    static let session = FilterPolicy(
        lockedKeys: [code("KEY_VOLUMEUP"), code("KEY_VOLUMEDOWN"), code("KEY_MUTE"), power],
        blockEscapeChords: true,
        touch: .regions([.rect(x: 0.9, y: 0, width: 0.1, height: 0.2)]),
        exitGesture: ExitGesture(key: power, presses: 3, within: 1_500_000))

    @Test(
        "sd-device lists input nodes once udev has them, and the monitor reports add and remove with udev's properties")
    func deviceDiscovery() throws {
        let loop = try EventLoop()
        try loop.startThread()
        defer { loop.exit() }
        let seen = Locked<[Device]>([])
        let monitor = Locked<DeviceMonitor?>(nil)
        let started = DispatchSemaphore(value: 0)
        loop.execute {
            monitor.value = try? DeviceMonitor(subsystem: "input", loop: loop) { device in
                seen.withLock { $0.append(device) }
            }
            started.signal()
        }
        started.wait()
        try #require(monitor.value != nil)

        var fake: UInputClone? = try UInputClone(description: FakeDevice.powerButton(phys: "kioskd-vm-test/discovery"))
        let path = try #require(fake?.devnode)
        let added = try waitFor("the monitor's add of \(path)") {
            seen.value.first { $0.devnode == path && $0.action == .add }
        }
        #expect(added.subsystem == "input")
        #expect(added.sysname.hasPrefix("event"))
        #expect(added.isInitialized)
        var node = stat()
        #expect(stat(path, &node) == 0 && added.devnum == UInt64(node.st_rdev))
        #expect(added.inputClasses.contains([.input, .key]))
        #expect(!added.inputClasses.contains(.touchscreen))

        let listed = try DeviceEnumerator(subsystems: ["input"], sysnames: ["event*"]).devices()
        let entry = try #require(listed.first { $0.devnode == path })
        #expect(entry.syspath == added.syspath)
        #expect(entry.action == nil)
        #expect(entry[property: "ID_INPUT_KEY"] == "1")
        #expect(listed.allSatisfy { $0.sysname.hasPrefix("event") && $0.subsystem == "input" })

        fake?.destroy()
        fake = nil
        let removed = try waitFor("the monitor's remove of \(path)") {
            seen.value.first { $0.syspath == added.syspath && $0.action == .remove }
        }
        #expect(removed.devnode == path)
        loop.execute { monitor.value?.stop() }
    }

    @Test(
        "with no session every event passes; with one, locked keys and touches in a locked region never reach the clones, the rest does, whole; grabbed nodes stay silent; stop gives them back"
    )
    func filtersWhatTheClonesShow() throws {
        let harness = try BrokerHarness()
        defer { try? harness.stop() }
        let keyboard = try UInputClone(description: FakeDevice.keyboard())
        let power = try UInputClone(description: FakeDevice.powerButton())
        let touch = try UInputClone(description: FakeDevice.touchscreen())
        let fakes = [keyboard, power, touch]
        let physical = try fakes.map { try #require($0.devnode) }
        for path in physical { try harness.waitUntil(path) }
        let watcher = try Probe.Watcher(spying: physical)
        defer { watcher.stop() }
        let (kbd, pwr, ts) = (
            "kioskd-clone/kioskd-vm-test/keyboard", "kioskd-clone/LNXPWRBN/button/input0",
            "kioskd-clone/i2c-ELAN0001:00"
        )
        for phys in [kbd, pwr, ts] { _ = try watcher.clone(of: String(phys.dropFirst("kioskd-clone/".count))) }

        // No session: everything passes.
        try press(keyboard, ["KEY_A", "KEY_VOLUMEUP", "KEY_B"])
        try press(power, ["KEY_VOLUMEUP", "KEY_POWER", "KEY_PROG1"])
        try touch.write(frames: FakeDevice.tap(trackingID: 5, x: 3900, y: 100))
        var seen = try watcher.wait("everything through") {
            $0.events.keys(phys: kbd).contains("KEY_B 0") && $0.events.keys(phys: pwr).contains("KEY_PROG1 0")
                && $0.events.nonSync(phys: ts).contains("BTN_TOUCH 0")
        }.events
        #expect(
            seen.keys(phys: kbd) == ["KEY_A 1", "KEY_A 0", "KEY_VOLUMEUP 1", "KEY_VOLUMEUP 0", "KEY_B 1", "KEY_B 0"])
        #expect(
            seen.keys(phys: pwr) == [
                "KEY_VOLUMEUP 1", "KEY_VOLUMEUP 0", "KEY_POWER 1", "KEY_POWER 0", "KEY_PROG1 1", "KEY_PROG1 0",
            ])
        #expect(
            seen.nonSync(phys: ts) == [
                "ABS_MT_TRACKING_ID 5", "ABS_MT_POSITION_X 3900", "ABS_MT_POSITION_Y 100", "BTN_TOUCH 1", "ABS_X 3900",
                "ABS_Y 100",
                "ABS_MT_POSITION_X 3908", "ABS_X 3908", "ABS_MT_TRACKING_ID -1", "BTN_TOUCH 0",
            ])

        // A session: locked keys and a touch starting in the region never arrive; the rest does.
        try harness.setPolicy(Self.session)
        var mark = seen.count
        try press(keyboard, ["KEY_VOLUMEUP", "KEY_A"])
        try power.write(frames: [
            key("KEY_VOLUMEDOWN", 1), key("KEY_VOLUMEDOWN", 0), key("KEY_MUTE", 1), key("KEY_MUTE", 0),
        ])
        try touch.write(frames: FakeDevice.tap(trackingID: 6, x: 3900, y: 100))  // in the region
        try touch.write(frames: FakeDevice.tap(trackingID: 7, x: 1000, y: 1000))  // outside
        for _ in 0..<3 { try press(power, ["KEY_POWER"]) }  // the exit gesture
        try press(power, ["KEY_PROG1"])
        seen = try watcher.wait("the session's events through") {
            $0.events.dropFirst(mark).filter { $0.phys == pwr }.map(\.description).contains("KEY_PROG1 0")
                && $0.events.dropFirst(mark).keys(phys: kbd).contains("KEY_A 0")
                && $0.events.dropFirst(mark).nonSync(phys: ts).contains("BTN_TOUCH 0")
        }.events
        let during = Array(seen[mark...])
        #expect(during.keys(phys: kbd) == ["KEY_A 1", "KEY_A 0"])
        #expect(during.keys(phys: pwr) == ["KEY_PROG1 1", "KEY_PROG1 0"])
        #expect(
            during.nonSync(phys: ts) == [
                "ABS_MT_TRACKING_ID 7", "ABS_MT_POSITION_X 1000", "ABS_MT_POSITION_Y 1000", "BTN_TOUCH 1", "ABS_X 1000",
                "ABS_Y 1000",
                "ABS_MT_POSITION_X 1008", "ABS_X 1008", "ABS_MT_TRACKING_ID -1", "BTN_TOUCH 0",
            ])
        // The loop calls onExitRequested after it wrote the batch the gesture ended in, which may
        // hold KEY_PROG1 too: the watcher can see that before the call is made.
        _ = try waitFor("the exit request", timeout: .seconds(5)) { harness.exitRequests > 0 ? true : nil }
        #expect(harness.exitRequests == 1)

        // A key held through the clone when its lock engages is released on the clone at once.
        mark = seen.count
        try keyboard.write(frame: key("KEY_B", 1))
        try watcher.wait("KEY_B down on the clone") { $0.events.dropFirst(mark).keys(phys: kbd) == ["KEY_B 1"] }
        var locked = Self.session
        locked.lockedKeys.insert(code("KEY_B"))
        try harness.setPolicy(locked)
        try watcher.wait("KEY_B released by the lock") {
            $0.events.dropFirst(mark).keys(phys: kbd) == ["KEY_B 1", "KEY_B 0"]
        }
        try keyboard.write(frames: [key("KEY_B", 0), key("KEY_A", 1), key("KEY_A", 0)])
        seen = try watcher.wait("KEY_A after the physical release of B") {
            $0.events.dropFirst(mark).keys(phys: kbd).contains("KEY_A 0")
        }.events
        #expect(seen[mark...].keys(phys: kbd) == ["KEY_B 1", "KEY_B 0", "KEY_A 1", "KEY_A 0"])
        try harness.setPolicy(Self.session)

        // Nothing reached anyone else while the nodes were grabbed.
        #expect(seen.filter { physical.contains($0.path) && !$0.phys.hasPrefix("kioskd-clone") }.isEmpty)

        // An LED set on a clone reaches the physical keyboard.
        try Probe.setLED(try watcher.clone(of: "kioskd-vm-test/keyboard"), code: code("LED_CAPSL"), value: 1)
        var atPhysical: [InputEvent] = []
        _ = try waitFor("LED_CAPSL at the physical keyboard") { () -> Bool? in
            try keyboard.readFeedback(into: &atPhysical)
            return atPhysical.contains { $0.type == type("EV_LED") && $0.code == code("LED_CAPSL") && $0.value == 1 }
                ? true : nil
        }

        // Stopped, the broker destroys its clones and the nodes deliver to everyone again.
        try harness.stop()
        try watcher.wait("the clones gone") { $0.gone.count >= 3 }
        mark = watcher.snapshot.events.count
        try press(power, ["KEY_VOLUMEUP"])
        seen = try watcher.wait("the physical node delivering") {
            $0.events.dropFirst(mark).keys(phys: "LNXPWRBN/button/input0").count == 2
        }.events
        #expect(seen[mark...].keys(phys: "LNXPWRBN/button/input0") == ["KEY_VOLUMEUP 1", "KEY_VOLUMEUP 0"])
        #expect(harness.log.entries(containing: "Brokering an input device").count >= 3)
    }

    @Test(
        "a SYN_DROPPED while the loop is busy resyncs: a forwarded key's release arrives, a locked key pressed meanwhile does not"
    )
    func synDroppedResyncs() throws {
        var policy = FilterPolicy.passThrough
        policy.lockedKeys = [code("KEY_B")]
        let harness = try BrokerHarness(policy: policy)
        defer { try? harness.stop() }
        let phys = "kioskd-vm-test/overflow"
        let fake = try UInputClone(description: FakeDevice.keyboard(name: "overflowing keyboard", phys: phys))
        try harness.waitUntil(try #require(fake.devnode))
        let watcher = try Probe.Watcher()
        defer { watcher.stop() }
        let clone = "kioskd-clone/" + phys
        _ = try watcher.clone(of: phys)
        try fake.write(frame: key("KEY_A", 1))
        try watcher.wait("KEY_A down on the clone") { $0.events.keys(phys: clone) == ["KEY_A 1"] }

        harness.block(for: .seconds(2))
        usleep(100_000)
        try fake.write(frame: key("KEY_A", 0))
        for _ in 0..<200 { try press(fake, ["KEY_ESC"]) }
        try fake.write(frame: key("KEY_B", 1))
        let seen = try watcher.wait("KEY_A released on the clone") { $0.events.keys(phys: clone).contains("KEY_A 0") }
            .events
        try fake.write(frames: [key("KEY_B", 0), key("KEY_CAPSLOCK", 1), key("KEY_CAPSLOCK", 0)])
        let after = try watcher.wait("CAPSLOCK after the drop") {
            $0.events.keys(phys: clone).contains("KEY_CAPSLOCK 0")
        }.events
        let keys = after.keys(phys: clone)
        #expect(!keys.contains("KEY_B 1"), "\(keys)")
        #expect(keys.filter { $0 == "KEY_A 0" }.count == 1)
        #expect(keys.suffix(2) == ["KEY_CAPSLOCK 1", "KEY_CAPSLOCK 0"])
        #expect(!harness.log.entries(containing: "dropped input events").isEmpty)
        print(
            "SYN_DROPPED through the broker: the clone saw \(seen.keys(phys: clone).count) key events up to A's release (of 402 frames written while the loop slept)"
        )
    }

    @Test("LIBINPUT_CALIBRATION_MATRIX from a udev rule maps touches to the screen before the region test")
    func calibrationFromUdev() throws {
        let rules = try UdevTestRules.install([
            (
                "99-kioskd-test.rules",
                #"SUBSYSTEM=="input", KERNEL=="event*", ATTRS{name}=="kioskd mirrored touchscreen", ENV{LIBINPUT_CALIBRATION_MATRIX}="-1 0 1 0 1 0""#
            )
        ])
        defer { rules.remove() }

        let harness = try BrokerHarness(
            policy: FilterPolicy(touch: .regions([.rect(x: 0.9, y: 0, width: 0.1, height: 1)])))
        defer { try? harness.stop() }
        let phys = "kioskd-vm-test/mirrored"
        let fake = try UInputClone(description: FakeDevice.touchscreen(name: "kioskd mirrored touchscreen", phys: phys))
        try harness.waitUntil(try #require(fake.devnode))
        let watcher = try Probe.Watcher()
        defer { watcher.stop() }
        _ = try watcher.clone(of: phys)
        try fake.write(frames: FakeDevice.tap(trackingID: 11, x: 100, y: 1000))  // mirrored: x ≈ 0.98, in the region
        try fake.write(frames: FakeDevice.tap(trackingID: 12, x: 3900, y: 1000))  // mirrored: x ≈ 0.05
        let seen = try watcher.wait("the second tap") {
            $0.events.nonSync(phys: "kioskd-clone/" + phys).contains("ABS_MT_TRACKING_ID -1")
        }.events.nonSync(phys: "kioskd-clone/" + phys)
        #expect(seen.contains("ABS_MT_TRACKING_ID 12"))
        #expect(!seen.contains("ABS_MT_TRACKING_ID 11"))
        #expect(!seen.contains("ABS_MT_POSITION_X 100"))
    }
}
