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

/// Kioskd reads the passcode at the kiosk from real (uinput) devices. Staff
/// press power three times, type on the keyboard; nothing typed reaches the keyboard's clone (the
/// kiosk), a wrong PIN is refused, the right one ends the session. Read with python-evdev and
/// python3-dbus (PromptClosed).
@Suite(
    "Real kernel: the passcode prompt at the kiosk (VM, root, udev)", .serialized,
    .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct PromptVMTests {
    static let profile = """
        description = "VM test: the exit gesture opens kioskd's prompt"
        [buttons]
        power = "locked"
        [session]
        exit-gesture = { key = "KEY_POWER", presses = 3, within = "1.5s" }
        [passcode]
        hash = "\(demoPasscodeHash)"
        """
    static let keyboardPhys = "kioskd-vm-test/keyboard"
    static let powerPhys = "LNXPWRBN/button/input0"
    static let kbd = "kioskd-clone/" + keyboardPhys

    /// A keyboard with the digit keys and Enter as well.
    static func keyboard() -> DeviceDescription {
        var description = FakeDevice.keyboard()
        description.codes[type("EV_KEY"), default: []].formUnion(
            ["KEY_1", "KEY_2", "KEY_3", "KEY_4", "KEY_9", "KEY_ENTER", "KEY_KP1"].map(code))
        return description
    }

    /// Polls a property (busctl) until it reads `value`, at most 60 s.
    func waitFor(_ kioskd: KioskdUnderTest, _ property: String, _ value: String) throws {
        let last = try eventually(timeout: .seconds(60)) { try kioskd.property(property) } until: { $0 == value }
        try #require(last == value, "\(property) never became \(value)")
    }

    @Test(
        "the gesture opens the prompt; digits typed never reach the kiosk; a wrong PIN is refused, the right one ends the session and input flows again"
    )
    func passcodeTypedAtTheKiosk() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try KioskdUnderTest(bus: bus)
        try kioskd.writeProfile("prompt", Self.profile)
        let keyboard = try UInputClone(description: Self.keyboard())
        let power = try UInputClone(description: FakeDevice.powerButton())
        let watcher = try Probe.Watcher(spying: try [keyboard, power].map { try #require($0.devnode) })
        defer { watcher.stop() }
        try kioskd.start(input: true)
        defer { kioskd.stop() }
        for phys in [Self.keyboardPhys, Self.powerPhys] { _ = try watcher.clone(of: phys, timeout: .seconds(60)) }
        let closed = try signalListener(
            address: bus.address, member: "PromptClosed", interface: "org.kioskd.GuidedAccess1.Manager",
            line: "str(args[0])")
        defer { closed.stop() }

        try kioskd.call("StartSession", "s", ["prompt"])
        var mark = watcher.snapshot.events.count
        let gesture = ContinuousClock.now
        try press(power, ["KEY_POWER", "KEY_POWER", "KEY_POWER"])
        try waitFor(kioskd, "PromptState", #"s "open""#)
        let opened = ContinuousClock.now - gesture
        // A wrong PIN, typed on the top row and the keypad.
        try press(keyboard, ["KEY_9", "KEY_KP1", "KEY_ENTER"])
        try closed.wait("PromptClosed rejected") { $0.contains("rejected") }
        #expect(try kioskd.property("SessionState") == #"s "active""#)
        // The keyboard works again with the prompt closed: KEY_B is the sentinel that everything
        // typed before it was handled; none of that reached the clone.
        try press(keyboard, ["KEY_B"])
        var seen = Array(
            try watcher.wait("KEY_B on the keyboard's clone") {
                $0.events.dropFirst(mark).keys(phys: Self.kbd).contains("KEY_B 0")
            }.events[mark...])
        #expect(seen.keys(phys: Self.kbd) == ["KEY_B 1", "KEY_B 0"], "typed at the prompt reached the kiosk")

        // The gesture again, the right PIN: the session ends.
        mark = watcher.snapshot.events.count
        try press(power, ["KEY_POWER", "KEY_POWER", "KEY_POWER"])
        try waitFor(kioskd, "PromptState", #"s "open""#)
        try press(keyboard, ["KEY_1", "KEY_2", "KEY_3", "KEY_4", "KEY_ENTER"])
        try closed.wait("PromptClosed accepted") { $0.contains("accepted") }
        #expect(try kioskd.property("SessionState") == #"s "inactive""#)
        try press(keyboard, ["KEY_A"])
        seen = Array(
            try watcher.wait("KEY_A on the keyboard's clone") {
                $0.events.dropFirst(mark).keys(phys: Self.kbd).contains("KEY_A 0")
            }.events[mark...])
        #expect(seen.keys(phys: Self.kbd) == ["KEY_A 1", "KEY_A 0"], "the PIN reached the kiosk")
        #expect(seen.keys(phys: "kioskd-clone/" + Self.powerPhys).isEmpty, "the locked power key reached its clone")
        print("exit gesture → PromptState open (as busctl saw it): \(opened)")
    }
}
