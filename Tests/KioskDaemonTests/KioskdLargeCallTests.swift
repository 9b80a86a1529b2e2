import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// A RegisterApplication of tens of MiB was made into values on the loop before the
/// 256-restriction limit applied; now it is read no further than the limit.
@Suite(.serialized) struct KioskdLargeCallTests {
    static func peakMiB(_ pid: pid_t) throws -> Double {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kib = try #require(Double(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kib / 1024
    }

    @Test func aHugeRegistrationIsRefusedWhileItIsReadAndNeverMadeIntoValues() throws {
        try withKioskd { kioskd, bus in
            let pid = try #require(kioskd.process?.pid)
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            let before = try Self.peakMiB(pid)
            // 600,000 restrictions, about 19 MiB on the wire.
            let item = DBusValue.structure([.string("org.example.Huge.r"), .string("t"), .string("")])
            let huge: [DBusValue] = [
                .string("org.example.Huge"), .array(elementSignature: "(sss)", Array(repeating: item, count: 600_000)),
            ]
            let error = client.error("RegisterApplication", huge)
            #expect(error?.name == KioskError.Code.invalidArgument.dbusName)
            #expect(
                error?.message
                    == "The arguments to RegisterApplication are larger than it takes: at most 256 items in a list and 4096 bytes in a string.",
                "\(String(describing: error))")
            let grew = try Self.peakMiB(pid) - before
            print("a 600,000-restriction RegisterApplication raised kioskd's peak RSS by \(grew) MiB")
            // The message itself is in kioskd's memory once (about 19 MiB); made into values, it
            // took several times that.
            #expect(grew < 60, "kioskd's peak grew by \(grew) MiB")
            // A long string is refused the same way, and a call within the limits still works.
            let long = client.error(
                "RegisterApplication",
                [
                    .string("org.example.Huge"),
                    .array(
                        elementSignature: "(sss)",
                        [
                            .structure([
                                .string("org.example.Huge.r"), .string("t"),
                                .string(String(repeating: "x", count: 5000)),
                            ])
                        ]),
                ])
            #expect(long?.name == KioskError.Code.invalidArgument.dbusName)
            try client.register("org.example.Huge", [("org.example.Huge.r", "t", String(repeating: "x", count: 4096))])
            #expect(try client.call("ListApplications") == [.strings(KioskdBusTests.builtIn + [KioskdBusTests.app, "org.example.Huge"])])
        }
    }
}
