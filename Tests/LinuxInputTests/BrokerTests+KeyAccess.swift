import Foundation
import Glibc
import InputTestSupport
import KioskInput
import LinuxInput
import Testing

/// Slow keys on the broker's loop (docs/profiles.md#keyboard-access-features): a key held down
/// reaches the clone when its delay ends, though no event follows it (the broker's timer).
extension BrokerTests {
    @Test(
        "slow keys: a key let go before its delay never reaches the clone; one held reaches it when the delay ends, with no event after it"
    )
    func slowKeysCountAtTheirDeadline() throws {
        var policy = FilterPolicy()
        policy.keyAccess = KeyAccessSettings(slowKeys: 300_000)
        let harness = try BrokerHarness(policy: policy)
        defer { try? harness.stop() }
        // The power button node: no EV_REP, so the kernel sends no autorepeat while a key is
        // held (a repeat after the delay would count the key without the timer).
        let phys = "kioskd-vm-test/slow-keys"
        let button = try UInputClone(description: FakeDevice.powerButton(phys: phys))
        let path = try #require(button.devnode)
        try harness.waitUntil(path)
        let watcher = try Probe.Watcher(spying: [path])
        defer { watcher.stop() }
        _ = try watcher.clone(of: phys)
        let clonePhys = "kioskd-clone/" + phys

        // Let go after 50 ms: never counted.
        try button.write(frame: key("KEY_VOLUMEUP", 1))
        usleep(50_000)
        try button.write(frame: key("KEY_VOLUMEUP", 0))
        // Held: counted by the timer 300 ms after the press, then let go.
        let pressed = ContinuousClock.now
        try button.write(frame: key("KEY_PROG1", 1))
        try watcher.wait("KEY_PROG1 down on the clone with no event after it", timeout: .seconds(5)) {
            $0.events.keys(phys: clonePhys).contains("KEY_PROG1 1")
        }
        let waited = ContinuousClock.now - pressed
        try button.write(frame: key("KEY_PROG1", 0))
        let seen = try watcher.wait("KEY_PROG1 up on the clone") {
            $0.events.keys(phys: clonePhys).contains("KEY_PROG1 0")
        }.events
        // KEY_VOLUMEUP came before KEY_PROG1: its moment has passed.
        #expect(seen.keys(phys: clonePhys) == ["KEY_PROG1 1", "KEY_PROG1 0"])
        #expect(waited >= .milliseconds(300), "counted after \(milliseconds(waited))")
        #expect(waited < .seconds(2), "counted after \(milliseconds(waited))")
    }
}
