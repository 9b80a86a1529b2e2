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

/// Cleaning the screen at the kiosk with a real (uinput) keyboard: the profile's cleaning
/// gesture (three presses of F11) starts it through the broker (`CleaningUntil`, read by busctl),
/// a key pressed during it never reaches the clone while the key `[accessibility]` allows does,
/// the cleaning's timer ends it by itself, and keys flow again. Read with python-evdev.
@Suite(
    "Real kernel: the cleaning gesture holds the keyboard but the allowed key (VM, root, udev)", .serialized,
    .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct CleaningVMTests {
    /// Esc is the allowed key, not a lock key: a Caps Lock pressed here would stay on in the
    /// console's keyboard handler, which lights its LED on every keyboard plugged in later (a
    /// later test's clone would see `LED_CAPSL`).
    static let profile = """
        description = "VM test: cleaning the screen"
        [buttons]
        keyboard = "allowed"
        [session]
        exit-gesture = { key = "KEY_VOLUMEUP", presses = 3, within = "2s" }
        cleaning-gesture = { key = "KEY_F11", presses = 3, within = "2s" }
        cleaning-time = "5s"
        [accessibility]
        allowed-keys = ["KEY_ESC"]
        """
    static let kbd = "kioskd-clone/kioskd-vm-test/keyboard"

    @Test("the gesture holds KEY_B, lets the allowed Esc through, and ends by itself")
    func theGestureHoldsKeysUntilItsTimeIsUp() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try KioskdUnderTest(bus: bus)
        try kioskd.writeProfile("clean", Self.profile)
        let keyboard = try UInputClone(description: FakeDevice.keyboard())
        let watcher = try Probe.Watcher(spying: [try #require(keyboard.devnode)])
        defer { watcher.stop() }
        try kioskd.start(input: true)
        defer { kioskd.stop() }
        _ = try watcher.clone(of: "kioskd-vm-test/keyboard", timeout: .seconds(60))
        try kioskd.call("StartSession", "s", ["clean"])

        try press(keyboard, ["KEY_F11", "KEY_F11", "KEY_F11"])
        let started = try eventually(timeout: .seconds(30)) {
            try kioskd.property("CleaningUntil")
        } until: {
            $0 != "t 0"
        }
        try #require(started != "t 0", "no cleaning within 30 s of the gesture: \(kioskd.log)")
        let mark = watcher.snapshot.events.count
        try press(keyboard, ["KEY_B", "KEY_ESC"])
        let held = Array(
            try watcher.wait("KEY_ESC on the keyboard's clone") {
                $0.events.dropFirst(mark).keys(phys: Self.kbd).contains("KEY_ESC 0")
            }.events[mark...])
        #expect(held.keys(phys: Self.kbd) == ["KEY_ESC 1", "KEY_ESC 0"], "KEY_B reached the kiosk")

        // The cleaning's timer (5 s, CLOCK_BOOTTIME) ends it; KEY_A then reaches the clone.
        let ended = try eventually(timeout: .seconds(30)) {
            try kioskd.property("CleaningUntil")
        } until: {
            $0 == "t 0"
        }
        #expect(ended == "t 0", "the cleaning did not end by itself within 30 s")
        let after = watcher.snapshot.events.count
        try press(keyboard, ["KEY_A"])
        let flowing = Array(
            try watcher.wait("KEY_A on the keyboard's clone") {
                $0.events.dropFirst(after).keys(phys: Self.kbd).contains("KEY_A 0")
            }.events[after...])
        #expect(flowing.keys(phys: Self.kbd) == ["KEY_A 1", "KEY_A 0"])
        #expect(kioskd.log.contains("Cleaning the screen: input is held"), "\(kioskd.log)")
        #expect(kioskd.log.contains("Cleaning the screen ended"), "\(kioskd.log)")
    }
}
