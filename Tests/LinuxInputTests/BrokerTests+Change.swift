import Foundation
import Glibc
import InputTestSupport
import KioskInput
import LinuxInput
import Logging
import SystemdKit
import Testing

/// udev change events: a changed node is recloned, and a finger lifted during the change still
/// ends its contact on the clone.
extension BrokerTests {
    @Test(
        "a udev change on a brokered node: nothing new keeps its clone; a new calibration clones it again; touches written all through reach no other reader of the node: its grab is never let go"
    )
    func changeEventReclones() throws {
        let harness = try BrokerHarness(
            policy: FilterPolicy(touch: .regions([.rect(x: 0.9, y: 0, width: 0.1, height: 1)])))
        defer { try? harness.stop() }
        let phys = "kioskd-vm-test/recalibrated"
        let fake = try UInputClone(
            description: FakeDevice.touchscreen(name: "kioskd recalibrated touchscreen", phys: phys))
        let path = try #require(fake.devnode)
        try harness.waitUntil(path)
        let watcher = try Probe.Watcher(spying: [path])
        defer { watcher.stop() }
        _ = try watcher.clone(of: phys)
        let brokered = try #require(try harness.devices.first { $0.path == path })
        let clonePhys = "kioskd-clone/" + phys
        try fake.write(frames: FakeDevice.tap(trackingID: 21, x: 100, y: 1000))  // x ≈ 0.02: outside
        try watcher.wait("the first tap") { $0.events.nonSync(phys: clonePhys).contains("BTN_TOUCH 0") }

        // Taps in the middle of the screen (passed before and after the new calibration) from
        // another thread all through both changes: a broker that let the grab go for a moment
        // would let the watcher's plain reader of the node see some.
        let writer = Locked(fake)
        let stopWriting = Locked(false)
        let written = Locked(0)
        let lastID = Locked<Int32>(0)
        let writerDone = DispatchSemaphore(value: 0)
        Thread {
            var id: Int32 = 1000
            while !stopWriting.value {
                writer.withLock { fake in
                    if (try? fake.write(frames: FakeDevice.tap(trackingID: id, x: 2000, y: 1200))) != nil {
                        written.withLock { $0 += 1 }
                        lastID.value = id
                    }
                }
                id += 1
                usleep(2_000)
            }
            writerDone.signal()
        }.start()
        var writing = true
        func stopWriter() {
            guard writing else { return }
            writing = false
            stopWriting.value = true
            writerDone.wait()
        }
        defer { stopWriter() }
        _ = try waitFor("the writer's first taps") { written.value >= 5 ? true : nil }

        // A change that changes nothing: the same clone.
        try runTool("/usr/bin/udevadm", ["trigger", "--action=change", "--settle", brokered.syspath])
        _ = try waitFor("the unchanged line") {
            harness.log.entries(containing: "its clone still matches it").first { $0.metadata["device.path"] == path }
        }
        #expect(try harness.devices.first { $0.path == path }?.clonePath == brokered.clonePath)

        // A calibration that mirrors x: cloned again, and x=100 is now in the locked region.
        let rules = try UdevTestRules.install([
            (
                "99-kioskd-change-test.rules",
                #"SUBSYSTEM=="input", KERNEL=="event*", ATTRS{name}=="kioskd recalibrated touchscreen", ENV{LIBINPUT_CALIBRATION_MATRIX}="-1 0 1 0 1 0""#
            )
        ])
        defer { rules.remove() }
        try runTool("/usr/bin/udevadm", ["trigger", "--action=change", "--settle", brokered.syspath])
        _ = try waitFor("the re-clone line") {
            harness.log.entries(containing: "cloned it again").first { $0.metadata["device.path"] == path }
        }
        let recloned = try #require(try harness.devices.first { $0.path == path })
        #expect(recloned.clonePath != nil && recloned.clonePath != brokered.clonePath)
        try watcher.wait("the new clone open") { $0.openNow[clonePhys] == recloned.clonePath }
        let writtenBefore = written.value
        _ = try waitFor("the writer's taps after the re-clone") { written.value >= writtenBefore + 5 ? true : nil }
        stopWriter()
        let trackingID = code("ABS_MT_TRACKING_ID")
        let writerTaps = try watcher.wait("the writer's last tap on the new clone") {
            $0.events.contains {
                $0.path == recloned.clonePath && $0.type == type("EV_ABS") && $0.code == trackingID
                    && $0.value == lastID.value
            }
        }.events.filter {
            $0.phys == clonePhys && $0.type == type("EV_ABS") && $0.code == trackingID && $0.value >= 1000
        }
        #expect(writerTaps.count >= 10, "\(written.value) taps written, \(writerTaps.count) reached the clones")
        let mark = watcher.snapshot.events.count
        try fake.write(frames: FakeDevice.tap(trackingID: 22, x: 100, y: 1000))  // mirrored: x ≈ 0.98, in the region
        try fake.write(frames: FakeDevice.tap(trackingID: 23, x: 3900, y: 1000))  // mirrored: x ≈ 0.05
        let seen = try watcher.wait("the third tap") {
            $0.events.dropFirst(mark).nonSync(phys: clonePhys).contains("ABS_MT_TRACKING_ID -1")
        }.events
        let after = seen[mark...].nonSync(phys: clonePhys)
        #expect(after.contains("ABS_MT_TRACKING_ID 23"))
        #expect(!after.contains("ABS_MT_TRACKING_ID 22"), "\(after)")
        // The physical node never delivered to anyone else, though touches came all through
        // both changes: its grab was kept throughout.
        #expect(seen.filter { $0.path == path }.isEmpty, "the node delivered: \(seen.filter { $0.path == path })")
        print(
            "udev change: \(written.value) taps written while the node was judged twice and cloned again; none reached another reader"
        )
    }

    @Test("a finger lifted between the drain and the re-read of a udev change still ends the contact on the clone")
    func liftDuringAChangeReachesTheClone() throws {
        let harness = try BrokerHarness(
            policy: FilterPolicy(touch: .regions([.rect(x: 0.9, y: 0, width: 0.1, height: 1)])))
        defer { try? harness.stop() }
        let phys = "kioskd-vm-test/lifted-in-change"
        let fake = try UInputClone(description: FakeDevice.touchscreen(name: "kioskd lifted touchscreen", phys: phys))
        let path = try #require(fake.devnode)
        try harness.waitUntil(path)
        let brokered = try #require(try harness.devices.first { $0.path == path })
        let watcher = try Probe.Watcher()
        defer { watcher.stop() }
        _ = try watcher.clone(of: phys)
        let clonePhys = "kioskd-clone/" + phys
        let tap = FakeDevice.tap(trackingID: 31, x: 100, y: 1000)  // x ≈ 0.02: outside the region
        try fake.write(frames: Array(tap.prefix(2)))
        try watcher.wait("the finger down on the clone") {
            $0.events.nonSync(phys: clonePhys).contains("ABS_MT_TRACKING_ID 31")
        }

        // The lift comes in the window: the kernel's state has the slot ended when the broker
        // re-reads the node, and the lift's events are still queued behind.
        let lifted = Locked(false)
        let writeFailed = Locked<String?>(nil)
        try harness.change(brokered.syspath) {
            do { try fake.write(frame: tap[2]) } catch { writeFailed.value = "\(error)" }
            lifted.value = true
        }
        _ = try waitFor("the unchanged line") {
            harness.log.entries(containing: "its clone still matches it").first { $0.metadata["device.path"] == path }
        }
        #expect(lifted.value)
        #expect(writeFailed.value == nil)
        // The whole frame of the lift: the probe reads event by event, so its SYN_REPORT, not
        // its first event, says the frame is all there.
        let seen = try watcher.wait("the lift's frame on the clone", timeout: .seconds(5)) {
            let clone = $0.events.filter { $0.phys == clonePhys }.map(\.description)
            guard let lift = clone.firstIndex(of: "ABS_MT_TRACKING_ID -1") else { return false }
            return clone[(lift + 1)...].contains("SYN_REPORT 0")
        }.events.nonSync(phys: clonePhys)
        #expect(seen.contains("BTN_TOUCH 0"), "\(seen)")
        #expect(try harness.devices.first { $0.path == path }?.clonePath == brokered.clonePath)
    }
}
