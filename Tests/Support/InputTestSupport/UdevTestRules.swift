import Foundation
import Glibc
import KioskInput
import KioskTestSupport
import LinuxInput

/// Rule files a VM test puts in /run/udev/rules.d for its duration, in force before the test
/// plugs anything.
///
/// `udevadm control --reload` returns once udevd has read the rules, and a device plugged after
/// it gets them: as udev documents it, and as it almost always goes. In the arm64 guest (Debian
/// 13's udevd, TCG, a busy host) a device plugged right after the reload twice looked processed
/// with the rules from before it (2026-11-28: an 8-s `PROGRAM` rule that did not run; a
/// calibration rule that did not match; the cause is not known: udevd's debug log of passing runs
/// shows the reload done before udevadm returns), and a test that plugs its device then tests
/// nothing it means to.
/// So ``install(_:)`` proves the rules are in force the way the test would see them: it adds one
/// rule of its own, tagging a switch-only device (which kioskd never brokers) with a token new
/// to this install, plugs such a device after the reload, and waits for udev's record of it. No
/// token: the reload is asked for again (said on stdout), at most `attempts` times.
public struct UdevTestRules {
    public static let directory = "/run/udev/rules.d"
    /// The probe's rule file: sorts first, so the probe is tagged whatever the test's rules do.
    static let probeFile = "00-kioskd-test-rules-probe.rules"
    static let probeName = "kioskd udev rules probe"

    /// The file names written, the probe's included.
    public let names: [String]

    /// Writes `files` (name, text) and the probe's rule, has udev reload, and returns once a
    /// device plugged after that reload is processed with them. Throws if udevadm fails or udev
    /// never applies them.
    @discardableResult
    public static func install(_ files: [(String, String)], attempts: Int = 5) throws -> UdevTestRules {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let token = UUID().uuidString
        let probeRule =
            #"SUBSYSTEM=="input", KERNEL=="event*", ATTRS{name}==""# + probeName
            + #"", ENV{KIOSKD_TEST_RULES}=""# + token + #"""#
        let all = files + [(probeFile, probeRule)]
        for (name, text) in all {
            try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
        }
        let installed = UdevTestRules(names: all.map(\.0))
        for attempt in 1...attempts {
            try udevadm(["control", "--reload"])
            let seen = try probe()
            if seen == token { return installed }
            print(
                "udev processed a device plugged after `udevadm control --reload` with the rules from before it (attempt \(attempt) of \(attempts), KIOSKD_TEST_RULES=\(seen ?? "unset")); reloading again"
            )
        }
        installed.remove()
        throw UdevRulesError("udev did not apply the rules in \(installed.names) after \(attempts) reloads")
    }

    /// Removes the files and has udev reload (what a test's `defer` calls).
    public func remove() {
        for name in names { try? FileManager.default.removeItem(atPath: Self.directory + "/" + name) }
        _ = try? Self.udevadm(["control", "--reload"])
    }

    /// A switch-only device named for the probe rule, plugged and, once udev has processed it
    /// (`udevadm settle`), its KIOSKD_TEST_RULES as udev recorded it; the device is gone after.
    static func probe() throws -> String? {
        var codes: [UInt16: Set<UInt16>] = [:]
        codes[type("EV_SW")] = [code("SW_LID")]
        let device = try UInputClone(
            description: DeviceDescription(
                name: probeName, phys: "kioskd-vm-test/udev-rules-probe",
                id: .init(bus: 0x19, vendor: 0, product: 5, version: 0), codes: codes))
        guard let node = device.devnode else { throw UdevRulesError("the probe device has no node") }
        try udevadm(["settle", "--timeout=120"])
        let properties = try udevadm(["info", "--query=property", "--name=" + node])
        return properties.split(separator: "\n").first { $0.hasPrefix("KIOSKD_TEST_RULES=") }
            .map { String($0.dropFirst("KIOSKD_TEST_RULES=".count)) }
    }

    /// Runs udevadm; its stdout, or a throw with what it said when it fails.
    @discardableResult
    static func udevadm(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/udevadm")
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw UdevRulesError(
                "udevadm \(arguments.joined(separator: " ")) exited \(process.terminationStatus): "
                    + (String(data: errors, encoding: .utf8) ?? ""))
        }
        return String(data: output, encoding: .utf8) ?? ""
    }
}

public struct UdevRulesError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
