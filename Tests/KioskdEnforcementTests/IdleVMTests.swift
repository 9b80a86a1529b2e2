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

/// Idle time with a real (uinput) keyboard through kioskd's broker: typing keeps the kiosk from
/// its idle reset (the broker's stamp of each read, on the events' monotonic clock, moved onto
/// kioskd's kiosk clock), silence brings `IdleReset` once (read by python3-dbus); on the dark
/// display (`Blank`) the first key only wakes it, its press and release never reach the clone,
/// and the next key does. Read with python-evdev.
@Suite(
    "Real kernel: idle reset and the swallowed wake (VM, root, udev)", .serialized,
    .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct IdleVMTests {
    static let profile = """
        description = "VM test: idle reset after 10 s"
        [idle]
        reset-after = "10s"
        """
    static let kbd = "kioskd-clone/kioskd-vm-test/keyboard"

    @Test("typing holds the idle reset off, silence brings it once; a key on the dark display only wakes it")
    func idleResetAndWake() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try KioskdUnderTest(bus: bus)
        try kioskd.writeProfile("idle", Self.profile)
        let keyboard = try UInputClone(description: FakeDevice.keyboard())
        let watcher = try Probe.Watcher(spying: [try #require(keyboard.devnode)])
        defer { watcher.stop() }
        try kioskd.start(input: true)
        defer { kioskd.stop() }
        _ = try watcher.clone(of: "kioskd-vm-test/keyboard", timeout: .seconds(60))
        let resets = try signalListener(
            address: bus.address, member: "IdleReset", interface: "org.kioskd.GuidedAccess1.Manager",
            line: "'IdleReset'")
        defer { resets.stop() }

        try kioskd.call("StartSession", "s", ["idle"])
        let started = Date()
        // A key every 2 s for 14 s: more than reset-after in all, never 10 s apart.
        for _ in 0..<7 {
            try press(keyboard, ["KEY_A"])
            usleep(2_000_000)
        }
        // Had the typing not counted, the reset would have come 10 s into the session, while
        // typing: it comes 10 s after the last key.
        let typed = Date()
        try resets.wait("IdleReset") { $0.contains("IdleReset") }
        let after = Date().timeIntervalSince(typed)
        #expect(after >= 7 && after < 30, "IdleReset \(after) s after the last key (reset-after 10 s)")
        print(
            "IdleReset \(String(format: "%.1f", after)) s after the last key, \(String(format: "%.1f", Date().timeIntervalSince(started))) s into the session"
        )
        #expect(kioskd.log.contains("Nobody used the kiosk for a while: idle reset"), "\(kioskd.log)")

        // The dark display: the first key wakes it and reaches nothing; KEY_ESC after it does.
        try kioskd.call("Blank", "", [])
        #expect(try kioskd.property("DisplayPower") == #"s "off""#)
        let mark = watcher.snapshot.events.count
        try press(keyboard, ["KEY_B"])
        let woke = try eventually(timeout: .seconds(30)) {
            try kioskd.property("DisplayPower")
        } until: {
            $0 == #"s "on""#
        }
        #expect(woke == #"s "on""#)
        try press(keyboard, ["KEY_ESC"])
        let seen = Array(
            try watcher.wait("KEY_ESC on the keyboard's clone") {
                $0.events.dropFirst(mark).keys(phys: Self.kbd).contains("KEY_ESC 0")
            }.events[mark...])
        #expect(seen.keys(phys: Self.kbd) == ["KEY_ESC 1", "KEY_ESC 0"], "the key that woke the display reached the kiosk")
        #expect(resets.lines.filter { $0.contains("IdleReset") }.count == 1, "\(resets.lines)")
    }
}
