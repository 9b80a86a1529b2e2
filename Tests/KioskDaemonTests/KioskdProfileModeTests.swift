import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// kioskd takes a passcode hash only from a profile private to root or its own uid
/// (sshd's StrictModes); anyone could otherwise copy the hash and guess the passcode offline.
@Suite(.serialized) struct KioskdProfileModeTests {
    static let withHash = KioskdSessionTests.museum + "\n[passcode]\nhash = \"\(KioskdProcess.passcodeHash)\"\n"

    static func chmod(_ kioskd: Kioskd, _ name: String, _ mode: Int) throws -> String {
        let path = kioskd.profileDirectory.appendingPathComponent(name + ".toml").path
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    @Test func startSessionRefusesAHashOthersCanReadAndChangesNothing() throws {
        try withKioskd(profiles: ["museum": Self.withHash, "plain": KioskdSessionTests.museum]) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            let path = try Self.chmod(kioskd, "museum", 0o644)
            let before = kioskd.stateBytes
            let error = client.error("StartSession", [.string("museum")])
            #expect(error?.name == KioskError.Code.invalidArgument.dbusName)
            #expect(
                error?.message
                    == "The profile \"museum\" cannot be used: \(path) holds a passcode hash but is mode 0644, so group or others may read or change it: anyone on the machine could copy the hash and guess the passcode offline. Make it private to its owner: chmod 600 \(path)."
            )
            #expect(try client.property("SessionState") == .string("inactive"))
            #expect(kioskd.stateBytes == before)
            // A profile without a hash holds no secret: its mode does not matter.
            _ = try Self.chmod(kioskd, "plain", 0o644)
            try client.call("StartSession", [.string("plain")])
            try client.call("ForceEndSession")
            // Made private, the hash is used and ends the session.
            _ = try Self.chmod(kioskd, "museum", 0o600)
            try client.call("StartSession", [.string("museum")])
            try client.call("EndSession", [.string(KioskdProcess.passcode)])
        }
    }

    @Test func aRestoredSessionWhoseProfileBecameUnsafeKeepsItsLocksAndSaysSo() throws {
        try withKioskd(profiles: ["museum": Self.withHash]) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            try client.call("StartSession", [.string("museum")])
            kioskd.stop()
            let path = try Self.chmod(kioskd, "museum", 0o640)
            try kioskd.start()
            let again = try ManagerClient(address: bus.address)
            #expect(try again.property("SessionState") == .string("active"))
            #expect(try again.state(KioskdSessionTests.app, KioskdSessionTests.share) == "deny")
            let problem = try #require(try again.property("SessionProblem")?.string)
            #expect(problem.contains("every key, button and touch stays locked"), "\(problem)")
            #expect(problem.contains("\(path) holds a passcode hash but is mode 0640"), "\(problem)")
            // The profile's hash is not used: the passcode does not end it; an admin still can.
            #expect(
                again.errorName("EndSession", [.string(KioskdProcess.passcode)])
                    == KioskError.Code.wrongPasscode.dbusName)
            try again.call("ForceEndSession")
        }
    }
}
