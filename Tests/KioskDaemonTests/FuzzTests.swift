import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskStore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// Ten thousand random calls (unknown members, wrong signatures, malformed and overlong
/// strings, unknown ids and states) mixed with valid ones whose effects a model tracks, plus
/// garbage on raw connections to the bus. kioskd must keep serving, and end in exactly the
/// model's state: the valid calls' effects and nothing else.
@Suite(.serialized) struct FuzzTests {
    static let calls = 10_000
    static let profile = """
        [restrictions."org.fuzz.App0"]
        "org.fuzz.App0.r0" = "deny"
        "org.fuzz.App0.r5" = "deny"
        [restrictions."org.fuzz.App3"]
        "org.fuzz.App3.r1" = "deny"
        [restrictions."org.fuzz.App11"]
        "org.fuzz.App11.r2" = "allow"
        """
    static let passcode = "fuzz-passcode"

    @Test func randomCallsAndBusGarbageLeaveOnlyTheValidCallsEffects() throws {
        let seed =
            ProcessInfo.processInfo.environment["KIOSKD_FUZZ_SEED"].flatMap(UInt64.init)
            ?? UInt64(Date().timeIntervalSince1970 * 1000)
        print("FuzzTests seed \(seed) (rerun with KIOSKD_FUZZ_SEED=\(seed))")
        try withKioskd(profiles: ["fuzz": Self.profile]) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try client.call("SetPasscode", [.string(""), .string(Self.passcode)])

            var fuzzer = Fuzzer(
                seed: seed, client: client, profile: try ProfileParser.parse(source: Self.profile, file: "fuzz.toml"))
            let started = ContinuousClock.now
            for i in 0..<Self.calls {
                fuzzer.step()
                if i == Self.calls / 2 {
                    let garbage = try BusGarbage.run(address: bus.address, rng: &fuzzer.rng)
                    print("FuzzTests bus garbage: \(garbage)")
                    // The raw connection's control call got kioskd's answer; the invalid UTF-8 one got the door.
                    #expect(garbage.controlAnswered, "\(garbage)")
                    #expect(garbage.invalidUTF8Dropped, "\(garbage)")
                    #expect(garbage.nonCharacterAnswered, "\(garbage)")
                    #expect(
                        garbage.nonCharacterReply.contains(Fuzzer.invalidArgs)
                            && garbage.nonCharacterReply.contains("Malformed arguments to GetRestrictionState"),
                        "\(garbage)")
                }
                if i % 1000 == 999 {
                    #expect(
                        kioskd.process?.isRunning == true, "kioskd died after call \(i): \(kioskd.log.suffix(2000))")
                    fuzzer.checkApplications()
                }
                if !fuzzer.failures.isEmpty { break }
            }
            let elapsed = ContinuousClock.now - started
            print(
                "FuzzTests: \(fuzzer.count) calls (\(fuzzer.valid) valid, \(fuzzer.count - fuzzer.valid) invalid) in \(elapsed), seed \(seed)"
            )
            for failure in fuzzer.failures.prefix(20) { Issue.record("seed \(seed): \(failure)") }
            #expect(fuzzer.count >= Self.calls)

            // Still serving, and in the model's state: over the bus…
            #expect(kioskd.process?.isRunning == true)
            fuzzer.checkApplications()
            for app in fuzzer.model.registry.applications {
                let listed = try client.call("ListRestrictions", [.string(app.id.rawValue)])
                #expect(listed == [Fuzzer.wire(app.declared)], "\(app.id)")
            }
            #expect(try client.property("SessionState") == .string(fuzzer.model.session.state.rawValue))
            // …and in the state file.
            let saved = try StateStore(directory: kioskd.stateDirectory.path).load()
            #expect(saved.registry == fuzzer.model.registry)
            #expect(saved.session.state == fuzzer.model.session.state)
            #expect(saved.session.profileName == fuzzer.model.session.profileName)
            #expect(saved.session.saved == fuzzer.model.session.saved)
            #expect(saved.session.pendingPresets == fuzzer.model.session.pendingPresets)
            #expect(saved.throttles[.uid(geteuid())].failures == fuzzer.model.failures)
            #expect(saved.passcodeHash?.hasPrefix("$y$") == true)
            #expect(kioskd.stop(SIGTERM) == 0, "kioskd stops cleanly after the fuzzing")
        }
    }
}
