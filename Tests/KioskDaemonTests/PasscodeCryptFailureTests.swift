import BusTestSupport
import KioskCore
import KioskDaemonTestSupport
import SystemdKit
import Testing

/// A passcode hash libcrypt cannot hash with (it passes `PasscodeHash`'s shape check) is
/// kioskd's problem, not the caller's: `Failed`, not `InvalidArgs`, and not a wrong passcode
/// counted in the throttle.
@Suite(.serialized) struct PasscodeCryptFailureTests {
    static let app = "org.example.MuseumMap"
    static let controls = "org.example.MuseumMap.controls"

    @Test(arguments: [
        "$2b$99$abcdefghijklmnopqrstuv0123456789012345678901234567890",  // bcrypt cost 99: EINVAL
        "$y$zzzz$abcdefghijklmnop$0123456789012345678901234567890123456789012",  // bad yescrypt params
    ])
    func aProfileHashLibcryptRejectsMakesEndSessionFailedAndUncounted(_ hash: String) async throws {
        #expect(PasscodeHash.problem(with: hash) == nil, "the profile must load")
        let profile = """
            [restrictions."\(Self.app)"]
            "\(Self.controls)" = "deny"

            [passcode]
            hash = "\(hash)"
            """
        let manager = try await InProcessManager(uid: 0, profiles: ["broken": profile])
        do {
            let client = try ManagerClient(address: manager.bus.address)
            try client.call(
                "RegisterApplication",
                [
                    .string(Self.app),
                    .array(
                        elementSignature: "(sss)",
                        [.structure([.string(Self.controls), .string("Map controls"), .string("d")])]),
                ])
            try client.call("StartSession", [.string("broken")])
            let error = client.error("EndSession", [.string("1234")])
            #expect(error?.name == BusError.failed, "\(String(describing: error))")
            #expect(error?.message.hasPrefix("libcrypt could not hash with the setting $") == true)
            #expect(error?.message.contains("1234") == false)
            #expect(manager.store.saved.last?.throttles.counts.isEmpty ?? true)
            #expect(manager.store.saved.last?.session.isActive == true)
        } catch {
            await manager.stop()
            throw error
        }
        await manager.stop()
    }
}
