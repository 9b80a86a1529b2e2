import Foundation
import Glibc
import InputTestSupport
import KioskInput
import LinuxInput
import Logging
import SystemdKit
import Testing

/// The window before the grab: the broker grabs a new node on the kernel's own uevent, before
/// udev has run its rules, and forwards nothing until udev's record completes the decision.
extension BrokerTests {
    /// CLOCK_MONOTONIC in µs: the clock the broker stamps its early grabs with.
    static func monotonicMicroseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
    }

    @Test(
        "a node is grabbed on the kernel's uevent while udev still runs its rules: no other reader gets its events, nothing reaches a clone, the wait is logged; udev's record then brokers it under the locks"
    )
    func grabbedBeforeUdev() throws {
        // udev takes 8 s over this device's rules (PROGRAM runs before the event is done).
        let name = "kioskd slow-udev keyboard"
        let rules = try UdevTestRules.install([
            (
                "99-kioskd-slow-udev.rules",
                #"SUBSYSTEM=="input", KERNEL=="event*", ATTRS{name}==""# + name + #"", PROGRAM="/bin/sleep 8""#
            )
        ])
        defer { rules.remove() }

        let harness = try BrokerHarness(policy: Self.session, udevWait: .seconds(1))
        defer { try? harness.stop() }
        let phys = "kioskd-vm-test/slow-udev"
        let created = Self.monotonicMicroseconds()
        let fake = try UInputClone(description: FakeDevice.keyboard(name: name, phys: phys))
        let path = try #require(fake.devnode)
        let grab = try waitFor("the early grab of \(path)") { harness.earlyGrabs.first { $0.path == path } }
        // udev is asleep in this device's rules for 8 s from its creation: it is not brokered yet,
        // and its grab is kioskd's.
        let other = try EvdevDevice(path: path)
        #expect(throws: EvdevError.self, "\(path) is grabbed before udev's record") { try other.grab() }
        #expect(try !harness.devices.contains { $0.path == path })
        let spy = try Probe.Watcher(spying: [path])
        defer { spy.stop() }
        try press(fake, ["KEY_VOLUMEUP", "KEY_A"])
        // udevWait (1 s) passes before udev's 8 s: said at error level, the node stays grabbed.
        let waited = try waitFor("the line saying udev has not processed it") {
            harness.log.entries(containing: "udev has not processed a new input device").first {
                $0.metadata["device.path"] == path
            }
        }
        #expect(waited.level == .error)
        #expect(throws: EvdevError.self, "\(path) is still grabbed") { try other.grab() }
        let stillWaiting = Self.monotonicMicroseconds() - created
        try #require(stillWaiting < 8_000_000, "udev's 8 s were over before the checks: \(stillWaiting) µs")
        #expect(try !harness.devices.contains { $0.path == path })

        // udev's record: brokered under the session's locks, on the grab taken early.
        try harness.waitUntil(path)
        let clone = try spy.clone(of: phys)
        try press(fake, ["KEY_VOLUMEUP", "KEY_B"])
        let seen = try spy.wait("KEY_B on the clone") {
            $0.events.keys(phys: "kioskd-clone/" + phys).contains("KEY_B 0")
        }
        let keys = seen.events.keys(phys: "kioskd-clone/" + phys)
        #expect(!keys.contains { $0.hasPrefix("KEY_VOLUMEUP") }, "a locked key reached the clone: \(keys)")
        #expect(seen.events.filter { $0.path == path }.isEmpty, "the physical node delivered: \(seen.events)")
        #expect(harness.log.entries(containing: "Another process holds the grab").isEmpty)
        print(
            "early grab: \(path) grabbed \(Double(grab.grabbedAt - created) / 1000) ms after UI_DEV_CREATE began, udev's rules took 8 s, clone \(clone)"
        )
    }

    /// Every plug is grabbed on its kernel uevent (each `waitFor` fails the test if the early
    /// grab never comes), and the time it took is printed. The time is not asserted: a debug
    /// build under emulation with trace logging measured p50 63–105 ms across CI runs of the
    /// same tree, so a bound here would test the host. The figure the issue sets a goal for is
    /// the release build's, `make bench-hotplug` (Benchmarks/HotplugBench).
    @Test("50 hot-plugs of a uinput keyboard, each grabbed on its kernel uevent; prints uevent -> grabbed p50 / p99")
    func earlyGrabLatency() throws {
        let harness = try BrokerHarness()
        defer { try? harness.stop() }
        var fromCreate: [UInt64] = []
        var fromUevent: [UInt64] = []
        for i in 0..<50 {
            let phys = "kioskd-vm-test/latency-\(i)"
            let created = Self.monotonicMicroseconds()
            var fake: UInputClone? = try UInputClone(
                description: FakeDevice.keyboard(name: "latency keyboard \(i)", phys: phys))
            let path = try #require(fake?.devnode)
            let grab = try waitFor("the early grab of keyboard \(i)") {
                harness.earlyGrabs.last { $0.path == path && $0.grabbedAt >= created }
            }
            fromCreate.append(grab.grabbedAt - created)
            fromUevent.append(grab.grabbedAt - grab.receivedAt)
            // Brokered once udev's record comes, then unplugged and gone before the next.
            try harness.waitUntil(path)
            fake?.destroy()
            fake = nil
            try harness.waitUntil(path, brokered: false)
        }
        func percentile(_ values: [UInt64], _ p: Double) -> Double {
            let sorted = values.sorted()
            return Double(sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]) / 1000
        }
        let line = String(
            format:
                "early grab over %d hot-plugs: UI_DEV_CREATE begun -> grabbed p50 %.2f ms, p99 %.2f ms; kernel uevent read -> grabbed p50 %.2f ms, p99 %.2f ms",
            fromCreate.count, percentile(fromCreate, 0.5), percentile(fromCreate, 0.99), percentile(fromUevent, 0.5),
            percentile(fromUevent, 0.99))
        print(line)
        #expect(fromCreate.count == 50)
    }
}
