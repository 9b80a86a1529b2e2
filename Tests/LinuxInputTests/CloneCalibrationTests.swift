import Foundation
import KioskInput
import Testing

@testable import LinuxInput

/// The file that gives a clone the physical node's calibration (``CloneCalibration``), and the
/// helper `99-zz-kioskd-calibration.rules` runs on it: no udev, no kernel.
@Suite("A clone's calibration file for udev, and the helper that reads it (pure files, runs anywhere)")
struct CloneCalibrationTests {
    static let helper = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("packaging/libexec/kioskd-clone-calibration").path

    /// What the helper prints for `phys`, and its exit status.
    static func helper(_ directory: String, _ phys: String) throws -> (out: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: helper)
        process.arguments = [directory, phys]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (String(decoding: data, as: UTF8.self), process.terminationStatus)
    }

    @Test(
        "the file's line reads back as exactly the matrix the filter judges with",
        arguments: [
            CalibrationMatrix(-1, 0, 1, 0, 1, 0), CalibrationMatrix(0, -1, 1, 1, 0, 0), .identity,
            CalibrationMatrix(1.0 / 3, 0.1, -0.05, 0, 0.9999999, 1e-9),
        ])
    func lineRoundTrips(matrix: CalibrationMatrix) throws {
        let line = CloneCalibration.line(matrix)
        #expect(line.hasPrefix("LIBINPUT_CALIBRATION_MATRIX=") && line.hasSuffix("\n"))
        let value = line.dropFirst("LIBINPUT_CALIBRATION_MATRIX=".count).dropLast()
        #expect(CalibrationMatrix(udevProperty: String(value)) == matrix)
        // What libinput's safe_atod reads: plain decimal numbers, no exponent, nothing
        // locale-dependent.
        #expect(value.allSatisfy { "0123456789.- ".contains($0) }, "\(value)")
    }

    @Test(
        "each clone gets its own numbered file, written before the clone and removed after it; the helper prints it for that clone's phys only"
    )
    func filesAndHelper() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-calibration-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        var files = CloneCalibration(directory: root.appendingPathComponent("calibration").path)
        let mirrored = CalibrationMatrix(-1, 0, 1, 0, 1, 0)
        let first = try files.write(mirrored)
        let second = try files.write(.identity)  // a clone made again after a change: never the same file
        #expect(first != second)
        let directory = files.directory
        let attributes = try FileManager.default.attributesOfItem(atPath: directory)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)

        let phys = UInputClone.phys(forSource: "i2c-ELAN0001:00", calibration: first)
        #expect(try Self.helper(directory, phys) == ("LIBINPUT_CALIBRATION_MATRIX=-1.0 0.0 1.0 0.0 1.0 0.0\n", 0))
        // A clone without a file of kioskd's, and a phys that only looks like one: nothing.
        #expect(try Self.helper(directory, UInputClone.phys(forSource: "i2c-ELAN0001:00")) == ("", 0))
        #expect(try Self.helper(directory, "kioskd-clone/x/input-calibration-../\(first)") == ("", 0))
        #expect(try Self.helper(directory, "kioskd-clone/input-calibration-\(first)/x") == ("", 0))
        #expect(try Self.helper(directory, "usb-0000:00:14.0-1/input0") == ("", 0))

        files.remove(first)
        #expect(!FileManager.default.fileExists(atPath: directory + "/\(first)"))
        #expect(try Self.helper(directory, phys).status != 0, "a removed file imports nothing")
        #expect(FileManager.default.fileExists(atPath: directory + "/\(second)"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["\(second)"], "no temporary left")
    }

    @Test("a directory that cannot be made fails the write, naming it: no clone is made without its file")
    func unwritable() {
        var files = CloneCalibration(directory: "/nonexistent-kioskd-test/calibration")
        #expect(throws: EvdevError.self) { _ = try files.write(.identity) }
    }
}
