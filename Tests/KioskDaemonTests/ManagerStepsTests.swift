import BusTestSupport
import Foundation
import KioskCore
import KioskDaemonTestSupport
import KioskTestSupport
import SystemdKit
import Testing

/// The method shapes of ManagerObject (validate → no-op → authorize → load/apply → persist →
/// signal → reply), in process with the fakes: no kioskd is spawned, the store is in memory and
/// polkit answers what the test says.
@Suite(.serialized) struct ManagerStepsTests {
    static let app = "org.example.MuseumMap"
    static let controls = "org.example.MuseumMap.controls"
    static let manageRestrictions = KioskWire.Action.manageRestrictions
    static let manageSession = KioskWire.Action.manageSession
    static let museum = """
        [restrictions."org.example.MuseumMap"]
        "org.example.MuseumMap.controls" = "deny"
        """

    func registration(_ title: String = "Map controls") -> [DBusValue] {
        [
            .string(Self.app),
            .array(elementSignature: "(sss)", [.structure([.string(Self.controls), .string(title), .string("d")])]),
        ]
    }

    /// Runs `body` against a fresh in-process manager and stops it after.
    func withManager(
        uid: UInt32 = 1000, authorize answer: ScriptedAuthorizer.Answer = .result(.allowed),
        profiles: [String: String] = ["museum": museum],
        _ body: (InProcessManager, ManagerClient) async throws -> Void
    ) async throws {
        let manager = try await InProcessManager(uid: uid, authorize: answer, profiles: profiles)
        do {
            let client = try ManagerClient(address: manager.bus.address)
            try await body(manager, client)
        } catch {
            await manager.stop()
            throw error
        }
        await manager.stop()
    }

    // MARK: Validation comes before everything

    @Test func anInvalidCallIsAnsweredBeforeIdentifyingOrAuthorizing() async throws {
        try await withManager { manager, client in
            try client.call("RegisterApplication", registration())
            manager.journal.removeAll()
            let calls: [(String, [DBusValue], KioskError.Code)] = [
                (
                    "SetRestrictionState", [.string(Self.app), .string(Self.controls), .string("maybe")],
                    .invalidArgument
                ),
                (
                    "SetRestrictionState", [.string("org.example.Other"), .string(Self.controls), .string("deny")],
                    .unknownApplication
                ),
                ("StartSession", [.string("../etc/passwd")], .invalidArgument),
                ("EndSession", [.string("1234")], .noSession),
                ("ExtendSession", [.int64(0)], .invalidArgument),
                ("SetSessionDeadline", [.uint64(.max)], .invalidArgument),
                ("ResetPasscodeThrottle", [.string("everyone")], .invalidArgument),
                ("SetPasscode", [.string(""), .string("")], .invalidArgument),
                (
                    "RegisterApplication", [.string("1bad.app"), .array(elementSignature: "(sss)", [])],
                    .invalidArgument
                ),
            ]
            for (member, arguments, code) in calls {
                #expect(client.errorName(member, arguments) == code.dbusName, "\(member)")
            }
            #expect(manager.journal.all == [], "nothing identified, authorized or saved")
        }
    }

    /// What the session's state says is the caller's to learn only once authorized: a
    /// well-formed call is refused for the state (NoSession, SessionActive) after polkit.
    @Test func theSessionsStateIsLookedAtOnlyAfterAuthorizing() async throws {
        try await withManager(uid: 0, authorize: .result(.denied)) { manager, client in
            manager.identity.become(1000)
            for (member, arguments) in [
                ("ForceEndSession", []), ("ExtendSession", [DBusValue.int64(60)]),
                ("SetSessionDeadline", [.uint64(2_000_000_000_000_000)]), ("ConfirmSession", []),
            ] as [(String, [DBusValue])] {
                manager.journal.removeAll()
                #expect(client.errorName(member, arguments) == KioskError.Code.accessDenied.dbusName, "\(member)")
                #expect(manager.journal.all == ["identify", "authorize \(KioskWire.Action.manageSession)"], "\(member)")
            }
            manager.authorizer.answer(.result(.allowed))
            #expect(client.errorName("ForceEndSession") == KioskError.Code.noSession.dbusName)
            #expect(client.errorName("ExtendSession", [.int64(60)]) == KioskError.Code.noSession.dbusName)
            manager.identity.become(0)
            try client.call("StartSession", [.string("museum")])
            manager.identity.become(1000)
            manager.journal.removeAll()
            #expect(client.errorName("StartSession", [.string("museum")]) == KioskError.Code.sessionActive.dbusName)
            #expect(
                manager.journal.all.filter { !$0.hasPrefix("signal") }
                    == ["identify", "authorize \(KioskWire.Action.manageSession)"])
        }
    }

    // MARK: A no-op is answered before authorizing, and nothing is saved

    @Test func settingTheCurrentStateAsksNothingAndSavesNothing() async throws {
        try await withManager(authorize: .result(.denied)) { manager, client in
            try client.call("RegisterApplication", registration())
            let saves = manager.store.saved.count
            try client.call("SetRestrictionState", [.string(Self.app), .string(Self.controls), .string("allow")])
            #expect(manager.authorizer.askedActions == [])
            #expect(manager.store.saved.count == saves)
        }
    }

    @Test func theOwnersIdenticalRegistrationIsANoOpWithoutAuthorization() async throws {
        try await withManager(authorize: .result(.denied)) { manager, client in
            try client.call("RegisterApplication", registration())
            #expect(manager.store.saved.count == 1)
            manager.journal.removeAll()
            try client.call("RegisterApplication", registration())
            #expect(manager.journal.all == ["identify"], "no authorization, no save")
        }
    }

    @Test func anotherUIDIsAuthorizedBeforeTheNoOp() async throws {
        try await withManager(authorize: .result(.denied)) { manager, client in
            try client.call("RegisterApplication", registration())
            manager.identity.become(1001)
            // Identical, but not theirs: AccessDenied, not a no-op success.
            #expect(client.errorName("RegisterApplication", registration()) == KioskError.Code.accessDenied.dbusName)
            #expect(manager.authorizer.askedActions == [Self.manageRestrictions])
            manager.authorizer.answer(.result(.allowed))
            try client.call("RegisterApplication", registration())
            #expect(manager.store.saved.count == 1, "allowed, and identical: still nothing to save")
            #expect(try manager.store.saved.last?.registry.application(AppID(Self.app)).ownerUID == 1000)
        }
    }

    @Test func unregisterValidatesThenAuthorizesThenSaves() async throws {
        try await withManager(authorize: .result(.denied)) { manager, client in
            try client.call("RegisterApplication", registration())
            manager.journal.removeAll()
            // Whether the app exists is said only to a caller who may forget it.
            #expect(
                client.errorName("UnregisterApplication", [.string("org.example.Other")])
                    == KioskError.Code.accessDenied.dbusName)
            #expect(manager.journal.all == ["identify", "authorize \(Self.manageRestrictions)"])
            manager.journal.removeAll()
            #expect(
                client.errorName("UnregisterApplication", [.string(Self.app)]) == KioskError.Code.accessDenied.dbusName)
            #expect(manager.journal.all == ["identify", "authorize \(Self.manageRestrictions)"], "denied: no save")
            manager.authorizer.answer(.result(.allowed))
            #expect(
                client.errorName("UnregisterApplication", [.string("org.example.Other")])
                    == KioskError.Code.unknownApplication.dbusName)
            manager.journal.removeAll()
            try client.call("UnregisterApplication", [.string(Self.app)])
            #expect(manager.journal.all == ["identify", "authorize \(Self.manageRestrictions)", "save", "saved"])
            #expect(manager.store.saved.last?.registry.isEmpty == true)
        }
    }

    // MARK: Authorization comes before loading

    @Test func startSessionAuthorizesBeforeReadingTheProfile() async throws {
        try await withManager(authorize: .result(.denied), profiles: ["broken": "[buttons\n"]) { manager, client in
            for name in ["nope", "broken"] {
                let error = client.error("StartSession", [.string(name)])
                #expect(error?.name == KioskError.Code.accessDenied.dbusName, "\(name): \(String(describing: error))")
            }
            #expect(manager.authorizer.askedActions == [Self.manageSession, Self.manageSession])
            manager.authorizer.answer(.result(.allowed))
            #expect(client.errorName("StartSession", [.string("nope")]) == KioskError.Code.unknownProfile.dbusName)
            #expect(client.errorName("StartSession", [.string("broken")]) == KioskError.Code.invalidArgument.dbusName)
            #expect(manager.store.saved.isEmpty)
        }
    }

    @Test func polkitUnavailableOrFailingDeniesEveryoneButRoot() async throws {
        for answer in [ScriptedAuthorizer.Answer.result(.unavailable), .result(.challenge), .failure("no polkit")] {
            try await withManager(authorize: answer) { manager, client in
                try client.call("RegisterApplication", registration())
                #expect(
                    client.errorName(
                        "SetRestrictionState", [.string(Self.app), .string(Self.controls), .string("deny")])
                        == KioskError.Code.accessDenied.dbusName)
                #expect(manager.store.saved.count == 1)
                manager.identity.become(0)
                try client.call("SetRestrictionState", [.string(Self.app), .string(Self.controls), .string("deny")])
                #expect(manager.authorizer.askedActions == [Self.manageRestrictions], "root is never asked about")
            }
        }
    }

    // MARK: Persist → signal → reply

    @Test func aChangeIsSavedBeforeItIsSeenSignalledOrAnswered() async throws {
        try await withManager { manager, client in
            try client.call("RegisterApplication", registration())
            manager.store.closeGate()
            manager.journal.removeAll()
            let address = manager.bus.address
            let journal = manager.journal
            DispatchQueue.global().async {
                let other = try? ManagerClient(address: address)
                let error = other.map {
                    $0.errorName("SetRestrictionState", [.string(Self.app), .string(Self.controls), .string("deny")])
                }
                journal.note(error == .some(nil) ? "reply" : "error \(String(describing: error))")
            }
            #expect(eventually { manager.store.waitingAtGate == 1 })
            // Held at the gate: not signalled (every signal sent so far is in the journal once the
            // listener's round trip is back), not answered (the reply's order against the save is
            // checked below), and reads still see the old state.
            try await manager.signalsSent()
            #expect(manager.journal.all == ["identify", "authorize \(Self.manageRestrictions)", "save"])
            #expect(try client.state(Self.app, Self.controls) == "allow")
            manager.store.openGate()
            #expect(
                await eventually {
                    manager.journal.all.contains("reply")
                        && manager.journal.all.contains("signal RestrictionStateChanged")
                })
            let log = manager.journal.all
            let saved = try #require(log.firstIndex(of: "saved"))
            #expect(saved < log.firstIndex(of: "signal RestrictionStateChanged")!, "\(log)")
            #expect(saved < log.firstIndex(of: "reply")!, "\(log)")
            #expect(try client.state(Self.app, Self.controls) == "deny")
        }
    }

    @Test func aFailedSaveChangesNothingSignalsNothingAndAnswersFailed() async throws {
        try await withManager { manager, client in
            try client.call("RegisterApplication", registration())
            manager.store.failNextSave(with: StoreTestError())
            manager.journal.removeAll()
            manager.changedProperties.watch(["StateStorage", "SessionState", "BrowserPolicies", "LockedRegions"])
            #expect(
                client.errorName("SetRestrictionState", [.string(Self.app), .string(Self.controls), .string("deny")])
                    == "org.freedesktop.DBus.Error.Failed")
            #expect(try client.state(Self.app, Self.controls) == "allow")
            try await manager.signalsSent()
            // Only StateStorage's PropertiesChanged (the disk fails), no signal of the change.
            let signals = manager.journal.all.filter { $0.hasPrefix("signal") }
            #expect(signals == ["signal PropertiesChanged"], "\(manager.journal.all)")
            let changed = manager.changedProperties.all
            #expect(changed.count == 1 && changed[0].hasPrefix("StateStorage="), "\(changed)")
            #expect(!changed.contains { $0.contains("SessionState=") || $0.contains("LockedRegions=") }, "\(changed)")
        }
    }

    @Test func aSessionStartIsSavedBeforeItsSignalsAndWithoutAPasscodeEndSessionIsWrongAndCounted() async throws {
        try await withManager(uid: 0) { manager, client in
            try client.call("RegisterApplication", registration())
            manager.journal.removeAll()
            try client.call("StartSession", [.string("museum")])
            let log = manager.journal.all
            let saved = try #require(log.firstIndex(of: "saved"))
            #expect(eventually { manager.journal.all.contains("signal PropertiesChanged") })
            #expect(saved < manager.journal.all.firstIndex(of: "signal PropertiesChanged")!)
            #expect(manager.store.saved.last?.session.isActive == true)
            // No passcode set anywhere: WrongPasscode (pointing at ForceEndSession), counted and saved.
            let error = client.error("EndSession", [.string("1234")])
            #expect(error?.name == KioskError.Code.wrongPasscode.dbusName)
            #expect(error?.message.contains("ForceEndSession") == true)
            #expect(manager.store.saved.last?.throttles[.uid(0)].failures == 1)
            try client.call("ForceEndSession")
            #expect(manager.store.saved.last?.session.isActive == false)
            #expect(manager.store.saved.last?.throttles[.uid(0)].failures == 1, "ForceEndSession leaves the count")
        }
    }

    // MARK: The passcode queue

    /// Seven attempts from `uid` at once, the first one's outcome held at the gate until all
    /// have arrived; the answers.
    func sevenParallelWrongPasscodes(_ manager: InProcessManager) async throws -> CallJournal {
        manager.journal.removeAll()
        manager.store.closeGate()
        let address = manager.bus.address
        let answers = CallJournal()
        let group = DispatchGroup()
        for _ in 0..<7 {
            group.enter()
            Thread.detachNewThread {  // a thread each: seven calls block at once
                let other = try? ManagerClient(address: address)
                answers.note(other?.errorName("EndSession", [.string("0000")]) ?? "no connection")
                group.leave()
            }
        }
        #expect(eventually { manager.journal.count(of: "identify") == 7 && manager.store.waitingAtGate == 1 })
        // The caller is identified on the loop and the attempt queued in the same turn: once the
        // loop has run a turn after the seventh, all seven are queued.
        try await manager.onLoop { _ in }
        manager.store.openGate()
        group.wait()
        return answers
    }

    @Test func parallelWrongPasscodesMeetTheThrottleOneAtATime() async throws {
        try await withManager(uid: 0) { manager, client in
            try client.call("StartSession", [.string("museum")])
            let answers = try await sevenParallelWrongPasscodes(manager)
            // 5 free attempts, the 6th counted, the 7th meets the 30 s wait: each attempt meets
            // the throttle only after the one before it is saved, so none slips past it.
            #expect(answers.count(of: KioskError.Code.wrongPasscode.dbusName) == 6, "\(answers.all)")
            #expect(answers.count(of: KioskError.Code.throttled.dbusName) == 1, "\(answers.all)")
            #expect(manager.store.saved.map { $0.throttles[.uid(0)].failures }.suffix(6) == [1, 2, 3, 4, 5, 6])
        }
    }

    /// A uid other than root has at most 4 attempts waiting (root is never refused
    /// for a full queue), so no uid can fill the queue ahead of root's.
    @Test func aUIDOtherThanRootHasAtMostFourPasscodeAttemptsWaiting() async throws {
        try await withManager(uid: 0) { manager, client in
            try client.call("StartSession", [.string("museum")])
            manager.identity.become(1000)
            let answers = try await sevenParallelWrongPasscodes(manager)
            // One in flight and four waiting are checked; two are refused without hashing.
            #expect(answers.count(of: KioskError.Code.wrongPasscode.dbusName) == 5, "\(answers.all)")
            #expect(answers.count(of: KioskError.Code.throttled.dbusName) == 2, "\(answers.all)")
            #expect(manager.store.saved.last?.throttles[.uid(1000)].failures == 5)
        }
    }
}

struct StoreTestError: Error, CustomStringConvertible {
    var description: String { "the disk said no" }
}
