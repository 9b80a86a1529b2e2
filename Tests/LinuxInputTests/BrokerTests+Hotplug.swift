import Foundation
import Glibc
import InputTestSupport
import KioskInput
import KioskTestSupport
import LinuxInput
import Logging
import SystemdKit
import Testing

/// Devices coming and going under the broker: hotplug during a session, a busy node retried, the
/// udev monitor overflowing, nodes that fail to clone, and how long a new device takes.
extension BrokerTests {
    @Test(
        "a keyboard plugged in during a session is under its locks from its first event; unplugged, it leaves the broker"
    )
    func hotplugDuringSession() throws {
        let harness = try BrokerHarness(policy: Self.session)
        defer { try? harness.stop() }
        let watcher = try Probe.Watcher()
        defer { watcher.stop() }
        let phys = "kioskd-vm-test/hotplugged"
        var fake: UInputClone? = try UInputClone(
            description: FakeDevice.keyboard(name: "hotplugged keyboard", phys: phys))
        let path = try #require(fake?.devnode)
        // From the moment the node exists, until its clone shows KEY_A: a locked key, then KEY_A.
        var rounds = 0
        try #require(
            try eventually(timeout: .seconds(30)) {
                if watcher.snapshot.events.keys(phys: "kioskd-clone/" + phys).contains("KEY_A 0") { return true }
                try press(fake!, ["KEY_VOLUMEUP", "KEY_A"])
                rounds += 1
                return false
            }, "the clone never showed KEY_A")
        try press(fake!, ["KEY_VOLUMEUP", "KEY_B"])
        let seen = try watcher.wait("KEY_B on the clone") {
            $0.events.keys(phys: "kioskd-clone/" + phys).contains("KEY_B 0")
        }.events
        let keys = seen.keys(phys: "kioskd-clone/" + phys)
        #expect(!keys.contains { $0.hasPrefix("KEY_VOLUMEUP") }, "a locked key reached the clone: \(keys)")
        #expect(keys.suffix(2) == ["KEY_B 1", "KEY_B 0"])
        print(
            "hotplug during a session: \(rounds) rounds of VOLUMEUP+A written from creation until the clone showed A; the clone showed \(keys.count) key events, no VOLUMEUP"
        )

        fake?.destroy()
        fake = nil
        try harness.waitUntil(path, brokered: false)
        try watcher.wait("the clone gone") { !$0.gone.isEmpty }
        #expect(harness.log.entries(containing: "Input device removed").contains { $0.metadata["device.path"] == path })
    }

    @Test(
        "a node another process has grabbed is logged once (warning, then error when a session starts) and tried again: once let go, the broker takes it within the back-off and its locked keys reach no one"
    )
    func busyNodeIsRetried() throws {
        // The test grabs the node right after creating it: the broker must not grab it first on
        // the kernel's uevent (BrokerTests+EarlyGrab covers that path).
        let harness = try BrokerHarness(grabEarly: false)
        defer { try? harness.stop() }
        let phys = "kioskd-vm-test/busy"
        let fake = try UInputClone(description: FakeDevice.keyboard(name: "busy keyboard", phys: phys))
        let path = try #require(fake.devnode)
        // The node exists as soon as it is created; the broker waits for udev's rules.
        let holder = try EvdevDevice(path: path)
        try holder.grab()
        func lines() -> [LogRecorder.Entry] {
            harness.log.entries(containing: "Another process holds the grab").filter {
                $0.metadata["device.path"] == path
            }
        }
        let warning = try waitFor("the busy log line") { lines().first }
        #expect(warning.level == .warning)
        // A session starts: tried at once, still busy: one more line, at error level.
        try harness.setPolicy(Self.session)
        let error = try waitFor("the busy line at error level") { lines().first { $0.level == .error } }
        #expect(error.message.contains("escape the session's locks"))
        // Retries at 1 s and 2 s after that: still busy, said at debug level only, no more lines.
        func retries() -> Int {
            harness.log.entries(containing: "still not brokered").filter { $0.metadata["device.path"] == path }.count
        }
        let retriedBefore = retries()
        _ = try waitFor("the retries at +1 s and +3 s") { retries() >= retriedBefore + 2 ? true : nil }
        #expect(lines().count == 2, "\(lines())")
        #expect(try !harness.devices.contains { $0.path == path })

        let watcher = try Probe.Watcher(spying: [path])
        defer { watcher.stop() }
        holder.close()
        let released = ContinuousClock.now
        try harness.waitUntil(path)
        let took = ContinuousClock.now - released
        #expect(took < .seconds(8), "the next retry was due within 4 s")
        #expect(!harness.log.entries(containing: "Took the grab of an input device another process had held").isEmpty)
        _ = try watcher.clone(of: phys)
        let mark = watcher.snapshot.events.count
        try press(fake, ["KEY_VOLUMEUP", "KEY_A"])
        let seen = try watcher.wait("KEY_A on the clone") {
            $0.events.dropFirst(mark).keys(phys: "kioskd-clone/" + phys).contains("KEY_A 0")
        }.events
        #expect(seen[mark...].keys(phys: "kioskd-clone/" + phys) == ["KEY_A 1", "KEY_A 0"])
        #expect(seen[mark...].filter { $0.path == path }.isEmpty, "the grabbed node delivered: \(seen[mark...])")
        print("busy node: taken \(milliseconds(took)) after the other process let go (retry back-off 1 s, 2 s, 4 s, …)")
    }

    @Test(
        "an overflowing udev monitor reports the uevents the kernel dropped, and the broker lists the devices again: keyboards whose add was lost are brokered all the same"
    )
    func monitorOverflow() throws {
        // The monitor alone, with the smallest buffer, its loop busy while devices come.
        let loop = try EventLoop()
        try loop.startThread()
        defer { loop.exit() }
        let lost = Locked<UInt32>(0)
        let seen = Locked<Int>(0)
        let monitor = Locked<DeviceMonitor?>(nil)
        let started = DispatchSemaphore(value: 0)
        loop.execute {
            monitor.value = try? DeviceMonitor(
                subsystem: "input", loop: loop, receiveBufferSize: 1,
                onOverflow: { n in lost.withLock { $0 += n } }
            ) { _ in seen.withLock { $0 += 1 } }
            started.signal()
        }
        started.wait()
        try #require(monitor.value != nil)
        loop.execute { usleep(4_000_000) }
        var fakes = try (0..<4).map {
            try UInputClone(
                description: FakeDevice.keyboard(name: "burst keyboard \($0)", phys: "kioskd-vm-test/burst-\($0)"))
        }
        _ = try waitFor("the dropped uevents reported", timeout: .seconds(30)) { lost.value > 0 ? true : nil }
        // Afterwards the monitor goes on: each of a later keyboard's two uevents (input, event)
        // is received or, when it came while the other was queued, counted as lost.
        usleep(3_000_000)
        let (seenBefore, lostBefore) = (seen.value, lost.value)
        let late = try UInputClone(description: FakeDevice.keyboard(name: "late keyboard", phys: "kioskd-vm-test/late"))
        _ = try waitFor("the later keyboard's uevents, received or counted", timeout: .seconds(20)) {
            (seen.value - seenBefore) + Int(lost.value - lostBefore) >= 2 ? true : nil
        }
        #expect(seen.value > seenBefore)
        print(
            "monitor overflow: \(lostBefore) uevents dropped, \(seenBefore) received (buffer at its minimum, 4 keyboards plugged while the loop slept 4 s); a keyboard plugged 3 s later: \(seen.value - seenBefore) received, \(lost.value - lostBefore) lost"
        )
        _ = late
        loop.execute { monitor.value?.stop() }
        fakes.removeAll()

        // The broker: the same burst; every keyboard ends up brokered.
        let harness = try BrokerHarness(monitorBufferSize: 1)
        defer { try? harness.stop() }
        harness.block(for: .seconds(4))
        usleep(100_000)
        fakes = try (0..<4).map {
            try UInputClone(
                description: FakeDevice.keyboard(name: "burst keyboard \($0)", phys: "kioskd-vm-test/burst-\($0)"))
        }
        for fake in fakes {
            do {
                try harness.waitUntil(try #require(fake.devnode))
            } catch {
                let listed = try DeviceEnumerator(subsystems: ["input"], sysnames: ["event*"], allowUninitialized: true)
                    .devices()
                print(
                    "not brokered; udev lists \(listed.map { "\($0.devnode ?? "-") initialized=\($0.isInitialized)" })")
                throw error
            }
        }
        let warning = try #require(
            harness.log.entries(containing: "The udev monitor dropped input device events").first)
        #expect(warning.level == .warning)
    }

    @Test("during a session a node that cannot be cloned stays grabbed and silent; lifting the locks lets it go")
    func aFailedNodeStaysGrabbedDuringASession() throws {
        var policy = FilterPolicy.passThrough
        policy.lockedKeys = [code("KEY_POWER")]
        let harness = try BrokerHarness(policy: policy, uinputPath: "/nonexistent/uinput")
        defer { try? harness.stop() }
        let fake = try UInputClone(description: FakeDevice.powerButton(phys: "kioskd-vm-test/no-clone"))
        let path = try #require(fake.devnode)
        // The VM's own nodes are held too; wait for this one's line.
        let entry = try waitFor("the held log line") {
            harness.log.entries(containing: "held silent until the session ends").first {
                $0.metadata["device.path"] == path
            }
        }
        #expect(entry.level == .error)
        // Still grabbed by the broker: a second grab is refused, so no one reads the node.
        let other = try EvdevDevice(path: path)
        defer { other.close() }
        #expect(throws: EvdevError.self) { try other.grab() }
        // The locks lifted: the node is let go (not brokered: it has no clone).
        try harness.setPolicy(.passThrough)
        try other.grab()
        try other.ungrab()
        #expect(try !harness.devices.contains { $0.path == path })
    }

    /// docs/input-enforcement.md § No cursor where no one may point: hiding a pointer clones its
    /// node again, and a clone that cannot be made fails closed.
    @Test(
        "a mouse whose clone cannot be made again when the session locks pointers stays grabbed and silent, its old clone (a pointer) gone"
    )
    func aFailedPointerRecloneHoldsTheNode() throws {
        // Clones are made through a link to /dev/uinput, which the test removes once the mouse
        // is brokered: the reclone the locked pointer calls for then fails.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-uinput-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let link = directory + "/uinput"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/uinput")
        let harness = try BrokerHarness(uinputPath: link)
        defer { try? harness.stop() }
        let mouse = try UInputClone(description: FakeDevice.mouse(phys: "kioskd-vm-test/reclone-fails"))
        let path = try #require(mouse.devnode)
        try harness.waitUntil(path)
        let clone = try #require(try harness.devices.first { $0.path == path }?.clonePath)
        #expect(FileManager.default.fileExists(atPath: clone))

        try FileManager.default.removeItem(atPath: link)
        try harness.setPolicy(FilterPolicy(pointer: .locked))
        let entry = try waitFor("the held log line") {
            harness.log.entries(containing: "held silent until the session ends").first {
                $0.metadata["device.path"] == path
            }
        }
        #expect(entry.level == .error)
        #expect(entry.message.hasPrefix("Could not clone an input device again to hide or show its pointer"))
        // Grabbed still: a second grab is refused. Its clone is gone, not left a pointer.
        let other = try EvdevDevice(path: path)
        defer { other.close() }
        #expect(throws: EvdevError.self) { try other.grab() }
        #expect(try !harness.devices.contains { $0.path == path })
        let gone = eventually(timeout: .seconds(10)) { !FileManager.default.fileExists(atPath: clone) }
        #expect(gone, "the mouse's old clone \(clone) is still there")
        #expect(harness.log.entries(containing: "Input device's pointer hidden").isEmpty)
    }

    @Test(
        "a node whose clone failed outside a session, and one held silent through a session, are tried again: the next session has both grabbed, cloned and locked"
    )
    func failedNodesAreRetried() throws {
        // Clones fail until the path the broker opens for uinput exists.
        let uinput = "/tmp/kioskd-test-uinput"
        try? FileManager.default.removeItem(atPath: uinput)
        defer { try? FileManager.default.removeItem(atPath: uinput) }
        let harness = try BrokerHarness(uinputPath: uinput)
        defer { try? harness.stop() }
        func line(_ text: String, _ path: String) throws -> LogRecorder.Entry {
            try waitFor("'\(text)' for \(path)") {
                harness.log.entries(containing: text).first { $0.metadata["device.path"] == path }
            }
        }
        let outside = try UInputClone(
            description: FakeDevice.keyboard(name: "retried keyboard", phys: "kioskd-vm-test/retried-outside"))
        let outsidePath = try #require(outside.devnode)
        #expect(try line("Could not create the clone", outsidePath).level == .warning)

        try harness.setPolicy(Self.session)
        // Tried again when the session starts: held silent, like one plugged in during it.
        _ = try line("held silent until the session ends", outsidePath)
        let held = try UInputClone(
            description: FakeDevice.keyboard(name: "held keyboard", phys: "kioskd-vm-test/retried-held"))
        let heldPath = try #require(held.devnode)
        _ = try line("held silent until the session ends", heldPath)
        for path in [outsidePath, heldPath] {
            let other = try EvdevDevice(path: path)
            defer { other.close() }
            #expect(throws: EvdevError.self, "\(path) is grabbed") { try other.grab() }
        }

        try harness.setPolicy(.passThrough)
        try FileManager.default.createSymbolicLink(atPath: uinput, withDestinationPath: "/dev/uinput")
        try harness.setPolicy(Self.session)
        for (fake, path, phys) in [
            (outside, outsidePath, "kioskd-vm-test/retried-outside"), (held, heldPath, "kioskd-vm-test/retried-held"),
        ] {
            try harness.waitUntil(path, timeout: .seconds(10))
            let watcher = try Probe.Watcher(spying: [path])
            defer { watcher.stop() }
            _ = try watcher.clone(of: phys)
            try press(fake, ["KEY_VOLUMEUP", "KEY_A"])
            let seen = try watcher.wait("KEY_A on the clone") {
                $0.events.keys(phys: "kioskd-clone/" + phys).contains("KEY_A 0")
            }.events
            #expect(seen.keys(phys: "kioskd-clone/" + phys) == ["KEY_A 1", "KEY_A 0"])
            #expect(seen.filter { $0.path == path }.isEmpty, "the grabbed node delivered: \(seen)")
        }
    }

    @Test("time from a device appearing to the broker holding its grab and clone, with udev (20 devices)")
    func hotplugTiming() throws {
        let harness = try BrokerHarness()
        defer { try? harness.stop() }
        var samples: [Duration] = []
        for i in 0..<20 {
            let start = ContinuousClock.now
            let fake = try UInputClone(
                description: FakeDevice.keyboard(name: "timing keyboard \(i)", phys: "kioskd-vm-test/timing-\(i)"))
            let path = try #require(fake.devnode)
            let at = try waitFor("\(path) brokered", poll: 1_000) {
                harness.brokeredTime(ofNodeNamed: "timing keyboard \(i)")
            }
            samples.append(at - start)
            fake.destroy()
            try harness.waitUntil(path, brokered: false)
        }
        let sorted = samples.sorted()
        print(
            "hotplug (broker alone): UI_DEV_CREATE -> grabbed + cloned: median \(milliseconds(sorted[sorted.count / 2])), min \(milliseconds(sorted.first!)), max \(milliseconds(sorted.last!)) over \(samples.count) devices (TCG guest, udev)"
        )
        #expect(sorted[sorted.count / 2] < .seconds(2))
    }
}
