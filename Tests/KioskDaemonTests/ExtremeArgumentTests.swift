import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// Every method that takes an integer, sent the extremes of its type, by a uid polkit refuses
/// (nobody) and by root, against the real kioskd whose wall clock is a day behind, a day ahead
/// of, or level with its kiosk clock (the clock marker in its runtime directory says which:
/// docs/state-store.md § The kiosk clock). A time that only overflowed once converted between
/// the two clocks crashed kioskd before it had even asked who was calling (docs/threat-model.md).
@Suite(.serialized) struct ExtremeArgumentTests {
    static let timed = KioskdSessionTests.museum + "\n[session]\ntime-limit = \"1h\"\n"

    /// Wall clock minus kiosk clock, in microseconds.
    static let offsets: [Int64] = [-86_400_000_000, 0, 86_400_000_000]

    /// (member, signature, a Python literal for each extreme, the same as a `DBusValue`).
    static let calls: [(member: String, python: String, value: DBusValue)] = [
        ("SetSessionDeadline", "dbus.UInt64(0)", .uint64(0)),
        ("SetSessionDeadline", "dbus.UInt64(2**63 - 1)", .uint64(UInt64(Int64.max))),
        ("SetSessionDeadline", "dbus.UInt64(2**63)", .uint64(UInt64(Int64.max) + 1)),
        ("SetSessionDeadline", "dbus.UInt64(2**64 - 1)", .uint64(.max)),
        ("ExtendSession", "dbus.Int64(0)", .int64(0)),
        ("ExtendSession", "dbus.Int64(-1)", .int64(-1)),
        ("ExtendSession", "dbus.Int64(2**63 - 1)", .int64(.max)),
        ("ExtendSession", "dbus.Int64(-2**63)", .int64(.min)),
    ]

    /// StartTrialSession's seconds, with a session already active (so nothing may start).
    static let trials: [(python: String, value: DBusValue)] = [
        ("dbus.UInt64(0)", .uint64(0)), ("dbus.UInt64(2**63 - 1)", .uint64(UInt64(Int64.max))),
        ("dbus.UInt64(2**64 - 1)", .uint64(.max)),
    ]

    /// The marker kioskd keeps in its runtime directory for this boot: kiosk time is the wall
    /// clock of now minus `offset`, and `SessionDeadline` shows kiosk time plus `offset`.
    static func writeMarker(_ kioskd: KioskdProcess, wallMinusKiosk offset: Int64) throws {
        var boottime = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boottime)
        let boot = Int64(boottime.tv_sec) * 1_000_000 + Int64(boottime.tv_nsec) / 1000
        let wall = Int64(Date().timeIntervalSince1970 * 1e6)
        let kiosk = wall - offset
        try FileManager.default.createDirectory(at: kioskd.runtimeDirectory, withIntermediateDirectories: true)
        try "\(kiosk - boot) \(offset) \(kioskd.statePath)\n".write(
            to: kioskd.runtimeDirectory.appendingPathComponent("clock"), atomically: true, encoding: .utf8)
    }

    /// What a caller can see of the session, and the state file's bytes.
    static func snapshot(_ client: ManagerClient, _ kioskd: KioskdProcess) throws -> String {
        let properties = try ["SessionState", "SessionDeadline", "ActiveProfile"].map {
            "\($0)=\(String(describing: try client.property($0)))"
        }
        return properties.joined(separator: " ") + " state=\(kioskd.stateBytes?.count ?? -1)"
            + " \(kioskd.stateBytes.map { String(decoding: $0, as: UTF8.self) } ?? "")"
    }

    @Test(
        .enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to call as nobody through setpriv"))),
        arguments: offsets)
    func extremeIntegersCrashNothingAndChangeNothing_needsRoot(wallMinusKiosk offset: Int64) throws {
        try withKioskd(
            profiles: ["museum": Self.timed], setUp: { try Self.writeMarker($0, wallMinusKiosk: offset) }
        ) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            try client.call("StartSession", [.string("museum")])
            let before = try Self.snapshot(client, kioskd)

            // Nobody: every call refused (AccessDenied, or InvalidArgs for a value no clock holds),
            // and nothing changes.
            var script = "results = []\n"
            for call in Self.calls {
                script += "results.append(error_name(m.\(call.member), \(call.python)))\n"
            }
            for trial in Self.trials {
                script += "results.append(error_name(m.StartTrialSession, 'museum', \(trial.python)))\n"
            }
            script += "print('\\n'.join(results))\n"
            let nobody = try Python.run(script, bus: bus, as: 65534)
            let refusals = nobody.stdout.split(separator: "\n").map(String.init)
            #expect(refusals.count == Self.calls.count + Self.trials.count, "\(nobody)")
            for refusal in refusals {
                #expect(
                    refusal == KioskError.Code.accessDenied.dbusName || refusal == KioskError.Code.invalidArgument.dbusName,
                    "nobody's call was answered \(refusal)")
            }
            #expect(kioskd.process?.isRunning == true, "kioskd died: \(kioskd.log.suffix(2000))")
            #expect(try Self.snapshot(client, kioskd) == before)

            // Root: a value no clock can hold is InvalidArgs and changes nothing; kioskd lives.
            for call in Self.calls where call.value != .uint64(0) && call.value != .int64(-1) {
                let error = client.errorName(call.member, [call.value])
                #expect(
                    error == KioskError.Code.invalidArgument.dbusName,
                    "root's \(call.member)(\(call.value)) was answered \(error ?? "ok")")
                #expect(kioskd.process?.isRunning == true, "kioskd died: \(kioskd.log.suffix(2000))")
            }
            for trial in Self.trials {
                let error = client.errorName("StartTrialSession", [.string("museum"), trial.value])
                #expect(
                    error == KioskError.Code.invalidArgument.dbusName || error == KioskError.Code.sessionActive.dbusName,
                    "root's StartTrialSession(\(trial.value)) was answered \(error ?? "ok")")
            }
            #expect(try Self.snapshot(client, kioskd) == before)

            // Root's in-range extremes do what they say, on either clock: -1 s shortens the limit by
            // a second, 0 removes it.
            let deadline = try #require(try client.property("SessionDeadline")?.uint64)
            try client.call("ExtendSession", [.int64(-1)])
            #expect(try client.property("SessionDeadline")?.uint64 == deadline - 1_000_000)
            try client.call("SetSessionDeadline", [.uint64(0)])
            #expect(try client.property("SessionDeadline")?.uint64 == 0)
            #expect(kioskd.process?.isRunning == true, "kioskd died: \(kioskd.log.suffix(2000))")
        }
    }

    /// The same calls with no session at all: the shape of the arguments first, then who is
    /// calling, and only then the session's state — nobody learns nothing beyond AccessDenied.
    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to call as nobody through setpriv"))))
    func withoutASessionNobodyIsRefusedBeforeTheStateIsLookedAt_needsRoot() throws {
        try withKioskd(profiles: ["museum": Self.timed]) { kioskd, bus in
            let nobody = try Python.run(
                """
                print(error_name(m.ExtendSession, dbus.Int64(60)))
                print(error_name(m.SetSessionDeadline, dbus.UInt64(2000000000000000)))
                print(error_name(m.ConfirmSession))
                print(error_name(m.ForceEndSession))
                print(error_name(m.UnregisterApplication, "org.example.Nope"))
                """, bus: bus, as: 65534)
            #expect(
                nobody.stdout == String(repeating: KioskError.Code.accessDenied.dbusName + "\n", count: 5), "\(nobody)")
            let client = try ManagerClient(address: bus.address)
            #expect(client.errorName("ExtendSession", [.int64(60)]) == KioskError.Code.noSession.dbusName)
            #expect(client.errorName("ForceEndSession") == KioskError.Code.noSession.dbusName)
            #expect(kioskd.process?.isRunning == true)
        }
    }
}
