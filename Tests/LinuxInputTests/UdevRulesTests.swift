import Foundation
import Glibc
import InputTestSupport
import KioskInput
import Testing

@testable import LinuxInput

/// kioskd's udev rules (packaging/udev/) as `udevadm test` applies them to real nodes: a fake
/// physical device and kioskd's clone of it. The rules go to /run/udev/rules.d for the test,
/// with the `kioskd.service` enable link they look for (the VM's root is a throw-away overlay).
@Suite(
    "udev rules on real nodes: udevadm test (VM, root)", .serialized,
    .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct UdevRulesTests {
    static let packaging = VM.toolsDirectory.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("packaging/udev")
    static let enableLink = "/etc/systemd/system/multi-user.target.wants/kioskd.service"

    /// Installs the rule files for the test's duration, as if kioskd were enabled.
    static func withRules<T>(_ names: [String], _ body: () throws -> T) throws -> T {
        let manager = FileManager.default
        try manager.createDirectory(atPath: "/run/udev/rules.d", withIntermediateDirectories: true)
        try manager.createDirectory(
            atPath: (enableLink as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let madeLink = !manager.fileExists(atPath: enableLink)
        if madeLink { try manager.createSymbolicLink(atPath: enableLink, withDestinationPath: "/dev/null") }
        for name in names {
            try? manager.removeItem(atPath: "/run/udev/rules.d/\(name)")
            try manager.copyItem(
                atPath: packaging.appendingPathComponent(name).path, toPath: "/run/udev/rules.d/\(name)")
        }
        defer {
            for name in names { try? manager.removeItem(atPath: "/run/udev/rules.d/\(name)") }
            if madeLink { try? manager.removeItem(atPath: enableLink) }
        }
        return try body()
    }

    /// What `udevadm test --action=add` makes of a node: its properties (TAGS and CURRENT_TAGS
    /// among them).
    static func udevTest(_ devnode: String) throws -> [String: String] {
        let syspath = "/sys/class/input/" + (devnode as NSString).lastPathComponent
        // Its properties go to stdout (the rules' log to stderr); a failure throws.
        let out = try runTool("/usr/bin/udevadm", ["test", "--action=add", syspath])
        return Self.properties(out)
    }

    /// What udevd recorded for a node once it handled its add event. What a rule imports from a
    /// program (IMPORT{program}) is only there: systemd 257's `udevadm test` (Debian 13) runs no
    /// program, where 252's (Debian 12) did. The VM runs udevd (VM_UDEV=1).
    static func udevRecord(_ devnode: String) throws -> [String: String] {
        try runTool("/usr/bin/udevadm", ["wait", "--initialized=true", "--timeout=60", devnode])  // a failure throws
        return Self.properties(try runTool("/usr/bin/udevadm", ["info", "--query=property", "--name=" + devnode]))
    }

    /// KEY=value lines of udevadm's output.
    static func properties(_ out: String) -> [String: String] {
        var properties: [String: String] = [:]
        for line in out.split(separator: "\n") {
            let text = String(line).trimmingCharacters(in: CharacterSet.whitespaces)
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else { continue }
            let key = text[..<equals]
            guard key.allSatisfy({ $0.isUppercase || $0.isNumber || $0 == "_" || $0 == "." }) else { continue }
            properties[String(key)] = String(text[text.index(after: equals)...])
        }
        return properties
    }

    @Test(
        "a clone of a device without phys is kioskd-clone/ and 70-kioskd.rules leaves it visible to libinput; its source is hidden"
    )
    func cloneOfPhysLessDeviceStaysVisible() throws {
        var description = FakeDevice.keyboard(name: "kioskd phys-less keyboard")
        description.phys = nil  // as python-evdev's UInput and most uinput-made keyboards
        let fake = try UInputClone(description: description)
        let physical = try #require(fake.devnode)
        let device = try EvdevDevice(path: physical)
        try device.grab()
        let clone = try UInputClone(cloning: device)
        let cloneNode = try #require(clone.devnode)
        #expect(clone.deviceDescription.phys == "kioskd-clone/")

        try Self.withRules(["70-kioskd.rules"]) {
            let source = try Self.udevTest(physical)
            let cloned = try Self.udevTest(cloneNode)
            #expect(source["LIBINPUT_IGNORE_DEVICE"] == "1", "the physical node: \(source)")
            #expect(cloned["LIBINPUT_IGNORE_DEVICE"] == nil, "the clone: \(cloned)")
            #expect(cloned["ID_INPUT_KEY"] == "1", "udevadm test ran the rules on the clone: \(cloned)")
        }
    }

    /// `99-zz-kioskd-calibration.rules` as installed, but naming the helper in this tree and
    /// `directory` where kioskd would use /run/kioskd/calibration (`make install`'s substitution).
    static func calibrationRule(directory: String) throws -> String {
        let libexec = packaging.deletingLastPathComponent().appendingPathComponent("libexec").path
        return try String(
            contentsOf: packaging.appendingPathComponent("99-zz-kioskd-calibration.rules"), encoding: .utf8
        )
        .replacingOccurrences(of: "/usr/libexec/kioskd/", with: libexec + "/")
        .replacingOccurrences(of: "/run/kioskd/calibration", with: directory)
    }

    /// Rule files written for the test's duration (name, text), in force (UdevTestRules).
    static func withRuleTexts<T>(_ rules: [(String, String)], _ body: () throws -> T) throws -> T {
        let installed = try UdevTestRules.install(rules)
        defer { installed.remove() }
        return try body()
    }

    /// An admin's calibration by the touchscreen's place on the bus. The fake touchscreen is a
    /// uinput device (virtual: no ID_PATH), so an earlier rule gives it the ID_PATH a real one's
    /// path_id would, by its phys, which its clone does not copy: the clone misses both, as a
    /// real clone misses path_id's.
    static let idPathRules: [(String, String)] = [
        (
            "10-kioskd-test-id-path.rules",
            #"SUBSYSTEM=="input", KERNEL=="event*", ATTRS{phys}=="kioskd-vm-test/calibrated", ENV{ID_PATH}="platform-kioskd-test-i2c""#
        ),
        (
            "70-kioskd-test-calibration.rules",
            #"SUBSYSTEM=="input", KERNEL=="event*", ENV{ID_PATH}=="platform-kioskd-test-i2c", ENV{LIBINPUT_CALIBRATION_MATRIX}="-1 0 1 0 1 0""#
        ),
    ]

    @Test(
        "an admin's calibration matched by ID_PATH reaches the physical node only; 99-zz-kioskd-calibration.rules gives the clone the file kioskd wrote for it, and nothing to a clone without one"
    )
    func calibrationReachesTheClone() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-udev-calibration").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var files = CloneCalibration(directory: directory)
        let number = try files.write(CalibrationMatrix(-1, 0, 1, 0, 1, 0))
        let rules =
            Self.idPathRules + [("99-zz-kioskd-calibration.rules", try Self.calibrationRule(directory: directory))]
        try Self.withRuleTexts(rules) {
            let fake = try UInputClone(
                description: FakeDevice.touchscreen(
                    name: "kioskd udev calibrated touchscreen", phys: "kioskd-vm-test/calibrated"))
            let physical = try #require(fake.devnode)
            let device = try EvdevDevice(path: physical)
            try device.grab()
            let calibrated = try UInputClone(cloning: device, calibration: number)
            let plain = try UInputClone(cloning: device)

            let source = try Self.udevTest(physical)
            #expect(source["ID_PATH"] == "platform-kioskd-test-i2c", "\(source)")
            #expect(source["LIBINPUT_CALIBRATION_MATRIX"] == "-1 0 1 0 1 0", "\(source)")
            let clone = try Self.udevRecord(try #require(calibrated.devnode))
            #expect(clone["ID_PATH"] == nil, "the admin's rule cannot match the clone: \(clone)")
            #expect(clone["ID_INPUT_TOUCHSCREEN"] == "1", "\(clone)")
            #expect(clone["LIBINPUT_CALIBRATION_MATRIX"] == "-1.0 0.0 1.0 0.0 1.0 0.0", "the file's matrix: \(clone)")
            let without = try Self.udevRecord(try #require(plain.devnode))
            #expect(without["LIBINPUT_CALIBRATION_MATRIX"] == nil, "no number, no file: \(without)")
        }
    }

    /// Tags as udev writes them, ":a:b:", as a set.
    static func tags(_ value: String?) -> Set<String> {
        Set((value ?? "").split(separator: ":").map(String.init))
    }

    @Test(
        "with 71-kioskd-power-switch.rules a brokered physical key node loses power-switch; its clone and a switch-only node (lid) keep it"
    )
    func powerSwitchOnlyOnClones() throws {
        let fake = try UInputClone(description: FakeDevice.powerButton(phys: "kioskd-vm-test/power"))
        let physical = try #require(fake.devnode)
        let device = try EvdevDevice(path: physical)
        try device.grab()
        let clone = try UInputClone(cloning: device)
        let cloneNode = try #require(clone.devnode)
        let lid = try UInputClone(
            description: DeviceDescription(
                name: "kioskd test Lid Switch", phys: "PNP0C0D/button/input0",
                id: .init(bus: 0x19, vendor: 0, product: 5, version: 0),
                codes: [type("EV_SW"): [0]]))  // SW_LID
        let lidNode = try #require(lid.devnode)
        #expect(!lid.deviceDescription.shouldBroker)

        // Without kioskd's file, 70-power-switch.rules tags all three: the window this closes.
        let before = try Self.udevTest(physical)
        #expect(Self.tags(before["CURRENT_TAGS"]).contains("power-switch"), "\(before)")

        try Self.withRules(["70-kioskd.rules", "71-kioskd-power-switch.rules"]) {
            let source = try Self.udevTest(physical)
            let cloned = try Self.udevTest(cloneNode)
            let switchOnly = try Self.udevTest(lidNode)
            #expect(source["ID_INPUT_KEY"] == "1", "\(source)")
            #expect(Self.tags(source["CURRENT_TAGS"]) == ["kioskd-brokered"], "the physical node: \(source)")
            #expect(Self.tags(cloned["CURRENT_TAGS"]).contains("power-switch"), "the clone: \(cloned)")
            #expect(Self.tags(switchOnly["CURRENT_TAGS"]).contains("power-switch"), "the lid: \(switchOnly)")
        }
    }
}
