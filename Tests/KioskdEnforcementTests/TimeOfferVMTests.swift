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

/// The visitor extends the session's time limit at the kiosk with a real (uinput) keyboard: the
/// offer comes `warn-before` before the end, a key pressed and let go takes it and never reaches
/// the kiosk, kioskd sends `TimeExtended` (read by python3-dbus) and moves `SessionDeadline`
/// (read by busctl), and input flows again. Read with python-evdev.
@Suite(
    "Real kernel: the visitor takes the offer of more time (VM, root, udev)", .serialized,
    .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct TimeOfferVMTests {
    /// Offered 20 s before the end of a 22-second limit: 2 s after the start.
    static let profile = """
        description = "VM test: the visitor may extend the time limit"
        [session]
        time-limit = "22s"
        visitor-extensions = 10
        extend-by = "1m"
        warn-before = "20s"
        """
    static let kbd = "kioskd-clone/kioskd-vm-test/keyboard"

    @Test("a key let go during the offer extends the session and reaches no one; the keys after it do")
    func aKeyTakesTheOffer() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try KioskdUnderTest(bus: bus)
        try kioskd.writeProfile("visitor", Self.profile)
        let keyboard = try UInputClone(description: FakeDevice.keyboard())
        let watcher = try Probe.Watcher(spying: [try #require(keyboard.devnode)])
        defer { watcher.stop() }
        try kioskd.start(input: true)
        defer { kioskd.stop() }
        _ = try watcher.clone(of: "kioskd-vm-test/keyboard", timeout: .seconds(60))
        let extended = try signalListener(
            address: bus.address, member: "TimeExtended", interface: "org.kioskd.GuidedAccess1.Manager",
            line: "'%d %d' % (int(args[0]), int(args[1]))")
        defer { extended.stop() }

        try kioskd.call("StartSession", "s", ["visitor"])
        let before = try kioskd.property("SessionDeadline")
        let offered = try eventually(timeout: .seconds(60)) {
            try kioskd.property("TimeOffer")
        } until: {
            $0 == #"s "open""#
        }
        try #require(offered == #"s "open""#, "no offer within 60 s")
        let mark = watcher.snapshot.events.count
        try press(keyboard, ["KEY_B"])
        try extended.wait("TimeExtended 60 9") { $0.contains("60 9") }
        #expect(try kioskd.property("SessionDeadline") != before)
        #expect(try kioskd.property("TimeOffer") == #"s "closed""#)
        // The sentinel: KEY_A after the offer went reaches the clone; KEY_B never did.
        try press(keyboard, ["KEY_A"])
        let seen = Array(
            try watcher.wait("KEY_A on the keyboard's clone") {
                $0.events.dropFirst(mark).keys(phys: Self.kbd).contains("KEY_A 0")
            }.events[mark...])
        #expect(seen.keys(phys: Self.kbd) == ["KEY_A 1", "KEY_A 0"], "the key that took the offer reached the kiosk")
        #expect(kioskd.log.contains("Session time extended at the kiosk"), "\(kioskd.log)")
    }
}
