import BusTestSupport
import Foundation
import Glibc
import InputTestSupport
import KioskInput
import KioskTestSupport
import KioskdProcessTestSupport
import LinuxInput
import Testing

/// kioskd and libinput agreeing on where a touch lands: the admin calibrates the
/// touchscreen by its place on the bus, which kioskd's clone does not share, and libinput — what
/// a compositor runs — reads the clone. Read with the `libinput` tool (Debian's libinput-tools),
/// not only with python-evdev.
@Suite(
    "Real kernel: libinput places kioskd's touches with the calibration kioskd judged them with (VM, root, udev)",
    .serialized, .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct CalibrationVMTests {
    /// The top-left quarter of the screen locked.
    static let profile = """
        description = "VM test: the top-left quarter of the screen locked"
        [touch]
        mode = "regions"
        [[touch.locked-region]]
        name = "top-left"
        rect = { x = 0.0, y = 0.0, width = 0.5, height = 0.5 }
        [passcode]
        hash = "\(demoPasscodeHash)"
        """

    static let phys = "kioskd-vm-calibration/touch"
    static let libinput = "/usr/bin/libinput"
    static let packaging = VM.toolsDirectory.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("packaging")

    /// The admin's rules. A real touchscreen's ID_PATH comes from udev's path_id; the fake is a
    /// uinput device (virtual: no ID_PATH), so the first rule gives it one by its phys, which the
    /// clone does not copy. The calibration then matches ENV{ID_PATH} exactly as an admin's rule
    /// would, and, as for real hardware, never the clone. Then kioskd's rule, as installed but
    /// naming this tree's helper and the test kioskd's runtime directory.
    static func rules(runtimeDirectory: String) throws -> [(String, String)] {
        let installed = try String(
            contentsOf: packaging.appendingPathComponent("udev/99-zz-kioskd-calibration.rules"), encoding: .utf8)
        return [
            (
                "10-kioskd-vm-calibration-id-path.rules",
                #"SUBSYSTEM=="input", KERNEL=="event*", ATTRS{phys}==""# + phys
                    + #"", ENV{ID_PATH}="platform-kioskd-vm-i2c""#
            ),
            (
                "70-kioskd-vm-calibration.rules",
                #"SUBSYSTEM=="input", KERNEL=="event*", ENV{ID_PATH}=="platform-kioskd-vm-i2c", ENV{LIBINPUT_CALIBRATION_MATRIX}="-1 0 1 0 1 0""#
            ),
            (
                "99-zz-kioskd-calibration.rules",
                installed.replacingOccurrences(
                    of: "/usr/libexec/kioskd/", with: packaging.appendingPathComponent("libexec").path + "/"
                ).replacingOccurrences(of: "/run/kioskd/", with: runtimeDirectory + "/")
            ),
        ]
    }

    /// Where a touch at screen fractions (x, y) starts on the fake touchscreen (4096 × 2400)
    /// under the mirrored-x matrix: x′ = 1 − x.
    static func device(_ x: Double, _ y: Double) -> (x: Int32, y: Int32) {
        (Int32(((1 - x) * 4096).rounded()), Int32((y * 2400).rounded()))
    }

    /// The admin's rules and kioskd's, kioskd, then the touchscreen plugged in: grabbed on the
    /// kernel's uevent, cloned only once udev's record (ID_PATH, then the matrix) is in. Every
    /// rule in `extra` too; all removed after.
    static func withKiosk(
        extra: [(String, String)] = [],
        _ body: (KioskdUnderTest, UInputClone, _ physical: String, _ clone: (node: String, phys: String)) throws -> Void
    ) throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try KioskdUnderTest(bus: bus)
        try kioskd.writeProfile("calibration", Self.profile)
        let rules = try Self.rules(runtimeDirectory: kioskd.runtimeDirectory.path) + extra
        let installed = try UdevTestRules.install(rules)
        defer { installed.remove() }
        try kioskd.start(input: true)
        defer { kioskd.stop() }
        let touch = try UInputClone(
            description: FakeDevice.touchscreen(name: "kioskd calibrated touchscreen", phys: Self.phys))
        let clone = try Self.waitForClone(of: Self.phys)
        // udev's record of the touchscreen has the admin's matrix, and kioskd's first clone
        // carries it (file 1); if not, what udev recorded and what kioskd logged say whose it is.
        let physical = try #require(touch.devnode)
        let recorded = try Self.udevProperties(physical)
        try #require(recorded["LIBINPUT_CALIBRATION_MATRIX"] != nil, "udev's record of \(physical): \(recorded)")
        try #require(
            clone.phys == "kioskd-clone/\(Self.phys)/input-calibration-1", "\(clone); kioskd's log: \(kioskd.log)")
        try body(kioskd, touch, physical, clone)
    }

    /// The calibration files in the test kioskd's runtime directory.
    static func files(_ kioskd: KioskdUnderTest) -> [String] {
        let directory = kioskd.runtimeDirectory.appendingPathComponent("calibration").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    @Test(
        "calibration by ID_PATH on the physical node: the clone carries the same for libinput (list-devices), and the touches libinput would place in a locked region never reach it, the rest do, where libinput places them"
    )
    func libinputAgrees() throws {
        try Self.withKiosk { kioskd, touch, physical, clone in try Self.libinputAgrees(kioskd, touch, physical, clone) }
    }

    static func libinputAgrees(
        _ kioskd: KioskdUnderTest, _ touch: UInputClone, _ physical: String, _ clone: (node: String, phys: String)
    ) throws {
        #expect(clone.phys == "kioskd-clone/\(Self.phys)/input-calibration-1", "\(clone)")
        #expect(Self.files(kioskd) == ["1"])

        // udev: the admin's rule reached the physical node only; the clone has kioskd's copy.
        let physicalProperties = try Self.udevProperties(physical)
        let cloneProperties = try Self.udevProperties(clone.node)
        #expect(physicalProperties["ID_PATH"] == "platform-kioskd-vm-i2c")
        #expect(physicalProperties["LIBINPUT_CALIBRATION_MATRIX"] == "-1 0 1 0 1 0")
        #expect(cloneProperties["ID_PATH"] == nil)
        #expect(cloneProperties["LIBINPUT_CALIBRATION_MATRIX"] == "-1.0 0.0 1.0 0.0 1.0 0.0", "\(cloneProperties)")
        // The number in its phys leaves libinput's device group as an uncalibrated clone's.
        #expect(cloneProperties["LIBINPUT_DEVICE_GROUP"] == "18/4f3/2a1c:kioskd-clone/" + Self.phys)

        // libinput list-devices: the same Calibration line on both.
        let listed = try Self.listDevices()
        let physicalCalibration = listed[physical]?["Calibration"]
        let cloneCalibration = listed[clone.node]?["Calibration"]
        print(
            "libinput list-devices, Calibration: physical \(physicalCalibration ?? "?"), clone \(cloneCalibration ?? "?")"
        )
        #expect(physicalCalibration == "-1.00 0.00 1.00 0.00 1.00 0.00", "\(listed)")
        #expect(cloneCalibration == physicalCalibration)
        #expect(!kioskd.log.contains("another LIBINPUT_CALIBRATION_MATRIX"), "\(kioskd.log)")

        // libinput reading the clone, as a compositor would: with the default matrix libinput
        // took from udev. Newer libinput-tools (Debian 13's 1.28, not Debian 12's 1.22) give
        // debug-events a --set-calibration that applies the identity unless told otherwise, over
        // that default: it is handed the default list-devices printed, which a compositor keeps.
        let events = try LineCollector(
            "/usr/bin/stdbuf",
            ["-oL", Self.libinput, "debug-events", "--device", clone.node]
                + (try Self.debugEventsSetsCalibration() ? ["--set-calibration", try #require(cloneCalibration)] : []))
        defer { events.stop() }
        try events.wait("libinput's DEVICE_ADDED") { $0.contains { $0.contains("DEVICE_ADDED") } }

        // No session: a touch in the top-left corner of the screen passes, and libinput places
        // it there (10 %, 10 %): the clone is calibrated, mirrored.
        var id: Int32 = 1
        func tap(_ x: Double, _ y: Double) throws {
            let at = Self.device(x, y)
            try touch.write(frames: FakeDevice.tap(trackingID: id, x: at.x, y: at.y))
            id += 1
        }
        try tap(0.1, 0.1)
        var downs = try Self.touchDowns(events, count: 1)
        #expect(downs.count == 1 && Self.near(downs[0], (10, 10)), "\(downs)")

        // The session: touches libinput would place inside the locked quarter never reach it;
        // the rest do, where libinput places them. (0.75, 0.25) is the issue's: kioskd judged it
        // outside, and libinput, with the identity on the clone, placed it at (0.25, 0.25).
        try kioskd.call("StartSession", "s", ["calibration"])
        let mark = downs.count
        let inside = [(0.1, 0.1), (0.4, 0.4), (0.25, 0.25), (0.05, 0.45)]
        let outside = [(0.75, 0.25), (0.25, 0.75), (0.6, 0.1), (0.75, 0.75)]  // the last is the sentinel
        for (x, y) in inside { try tap(x, y) }
        for (x, y) in outside.dropLast() { try tap(x, y) }
        try tap(0.3, 0.3)  // inside, between allowed ones
        try tap(outside.last!.0, outside.last!.1)
        downs = Array(try Self.touchDowns(events, count: mark + outside.count).dropFirst(mark))
        print("libinput debug-events on the clone during the session, touch downs at (%): \(downs)")
        #expect(downs.count == outside.count, "\(downs)")
        for (seen, expected) in zip(downs, outside) {
            #expect(Self.near(seen, (expected.0 * 100, expected.1 * 100)), "\(seen) for \(expected)")
        }
        #expect(!downs.contains { $0.x < 50 && $0.y < 50 }, "libinput placed a touch in the locked quarter: \(downs)")
        try kioskd.endSession(passcode: KioskdUnderTest.passcode)
    }

    @Test(
        "a new calibration on the physical node (udev change): cloned again, the new clone carries the new matrix under a new number, the old file goes with the old clone"
    )
    func recalibrated() throws {
        try Self.withKiosk { kioskd, touch, physical, clone in
            // The admin's rule now mirrors y instead, applied with udevadm trigger.
            try UdevTestRules.install([
                (
                    "70-kioskd-vm-calibration.rules",
                    #"SUBSYSTEM=="input", KERNEL=="event*", ENV{ID_PATH}=="platform-kioskd-vm-i2c", ENV{LIBINPUT_CALIBRATION_MATRIX}="1 0 0 0 -1 1""#
                )
            ])
            let trigger = try runTool("/usr/bin/udevadm", ["trigger", "--action=change", "--settle", physical])
            #expect(trigger.status == 0, "\(trigger)")
            let renewed = try Self.waitForClone(of: Self.phys, other: clone.node)
            #expect(renewed.phys == "kioskd-clone/\(Self.phys)/input-calibration-2", "\(renewed)")
            #expect(try Self.udevProperties(physical)["LIBINPUT_CALIBRATION_MATRIX"] == "1 0 0 0 -1 1")
            let properties = try Self.udevProperties(renewed.node)
            #expect(properties["LIBINPUT_CALIBRATION_MATRIX"] == "1.0 0.0 0.0 0.0 -1.0 1.0", "\(properties)")
            #expect(try Self.listDevices()[renewed.node]?["Calibration"] == "1.00 0.00 0.00 0.00 -1.00 1.00")
            // The old clone is gone before its file (the order of unfilter): wait for both.
            #expect(eventually(every: .milliseconds(20)) { Self.files(kioskd) == ["2"] })
            #expect(kioskd.log.contains("Input device changed; cloned it again"))
            #expect(!kioskd.log.contains("another LIBINPUT_CALIBRATION_MATRIX"), "\(kioskd.log)")
        }
    }

    @Test("a rule sorting after 99-zz-kioskd-calibration.rules that sets the clone's matrix is logged at error level")
    func overriddenIsLogged() throws {
        let late = (
            "99-zzz-kioskd-vm-override.rules",
            #"SUBSYSTEM=="input", KERNEL=="event*", ATTRS{phys}=="kioskd-clone/*", ENV{LIBINPUT_CALIBRATION_MATRIX}="1 0 0 0 1 0""#
        )
        try Self.withKiosk(extra: [late]) { kioskd, _, _, clone in
            let properties = try Self.udevProperties(clone.node)
            #expect(properties["LIBINPUT_CALIBRATION_MATRIX"] == "1 0 0 0 1 0", "\(properties)")
            #expect(
                eventually(every: .milliseconds(20)) { kioskd.log.contains("another LIBINPUT_CALIBRATION_MATRIX") },
                "\(kioskd.log)")
        }
    }

    /// A clone's node and phys, found in sysfs by its source's phys (`kioskd-clone/<phys>…`), once
    /// udev has processed it; not `other`, if given.
    static func waitForClone(of phys: String, other: String? = nil) throws -> (node: String, phys: String) {
        func clone() -> (node: String, phys: String)? {
            let nodes = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/input")) ?? []
            for name in nodes where name.hasPrefix("event") {
                guard
                    let text = try? String(contentsOfFile: "/sys/class/input/\(name)/device/phys", encoding: .utf8)
                else { continue }
                let found = text.trimmingCharacters(in: .whitespacesAndNewlines)
                // Once udev has processed it: libinput reads the clone's udev record.
                if found.hasPrefix("kioskd-clone/" + phys) && "/dev/input/" + name != other
                    && FileManager.default.fileExists(atPath: "/run/udev/data/c13:\(Int(name.dropFirst(5))! + 64)")
                {
                    return ("/dev/input/" + name, found)
                }
            }
            return nil
        }
        guard let found = eventually(timeout: .seconds(60), every: .milliseconds(50), clone, until: { $0 != nil })
        else {
            throw HarnessError("no clone of \(phys) within 60 s")
        }
        return found
    }

    /// `udevadm info --query=property`.
    static func udevProperties(_ node: String) throws -> [String: String] {
        let out = try runTool("/usr/bin/udevadm", ["info", "--query=property", "--name=" + node])
        var properties: [String: String] = [:]
        for line in out.stdout.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            properties[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return properties
    }

    /// Whether `libinput debug-events` has --set-calibration (Debian 13's libinput-tools), which sets
    /// the matrix on every device it opens, the identity when not given one.
    static func debugEventsSetsCalibration() throws -> Bool {
        let out = try runTool(libinput, ["debug-events", "--help"], timeout: .seconds(60))
        return (out.stdout + out.stderr).contains("--set-calibration")
    }

    /// `libinput list-devices`, each device's fields by its Kernel: node.
    static func listDevices() throws -> [String: [String: String]] {
        let out = try runTool(libinput, ["list-devices"], timeout: .seconds(60))
        guard out.status == 0 else { throw HarnessError("libinput list-devices: \(out)") }
        var devices: [String: [String: String]] = [:]
        for block in out.stdout.components(separatedBy: "\n\n") {
            var fields: [String: String] = [:]
            for line in block.split(separator: "\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            if let node = fields["Kernel"] { devices[node] = fields }
        }
        return devices
    }

    /// The screen positions (%) of libinput's TOUCH_DOWN lines, once there are `count`
    /// (`… TOUCH_DOWN +1.234s 0 (0) 75.00/25.00 (…mm)`).
    static func touchDowns(_ events: LineCollector, count: Int) throws -> [(x: Double, y: Double)] {
        // The first "x/y" pair is the screen's (%5.2f: padded), the one in parentheses mm.
        let pair = /(-?[0-9]+\.[0-9]+)\/ *(-?[0-9]+\.[0-9]+)/
        func parse(_ lines: [String]) -> [(x: Double, y: Double)] {
            lines.filter { $0.contains("TOUCH_DOWN") }.compactMap { line in
                guard let match = line.firstMatch(of: pair) else { return nil }
                return (Double(match.1)!, Double(match.2)!)
            }
        }
        return parse(try events.wait("\(count) touch downs from libinput") { parse($0).count >= count })
    }

    /// Within 1 % of the screen (libinput and kioskd both scale by the axis range).
    static func near(_ seen: (x: Double, y: Double), _ expected: (Double, Double)) -> Bool {
        abs(seen.x - expected.0) < 1 && abs(seen.y - expected.1) < 1
    }
}
