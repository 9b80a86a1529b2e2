import Foundation
import Glibc
import InputTestSupport
import KioskInput
import LinuxInput
import Testing

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
