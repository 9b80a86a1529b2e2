import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskStore
import KioskdTestSupport
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
            #expect(saved.throttle.failures == fuzzer.model.failures)
            #expect(saved.passcodeHash?.hasPrefix("$y$") == true)
            #expect(kioskd.stop(SIGTERM) == 0, "kioskd stops cleanly after the fuzzing")
        }
    }
}

/// What kioskd should hold: the valid calls applied to the pure core, as the daemon wires it.
struct FuzzModel {
    var registry = Registry()
    var session = GuidedSession()
    var failures = 0
}

struct Fuzzer {
    var rng: SplitMix64
    let client: ManagerClient
    let profile: Profile
    var model = FuzzModel()
    private(set) var count = 0
    private(set) var valid = 0
    private(set) var failures: [String] = []

    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    static let contentErrors: Set<String> = Set(
        [
            KioskError.Code.invalidArgument, .unknownApplication, .unknownRestriction,
            .unknownProfile, .noSession, .sessionActive,
        ].map(\.dbusName))
    static let dispatchErrors: Set<String> = [
        invalidArgs, "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownObject",
        "org.freedesktop.DBus.Error.UnknownInterface", "org.freedesktop.DBus.Error.UnknownProperty",
        "org.freedesktop.DBus.Error.PropertyReadOnly",
    ]
    static let members: [(String, String)] = [
        ("RegisterApplication", "sa(sss)"), ("ListApplications", ""), ("ListRestrictions", "s"),
        ("GetRestrictionState", "ss"),
        ("SetRestrictionState", "sss"), ("StartSession", "s"), ("EndSession", "s"), ("ForceEndSession", ""),
        ("SetPasscode", "ss"),
    ]

    init(seed: UInt64, client: ManagerClient, profile: Profile) {
        rng = SplitMix64(seed: seed)
        self.client = client
        self.profile = profile
    }

    static func wire(_ restrictions: [Restriction]) -> DBusValue {
        .array(
            elementSignature: "(ssss)",
            restrictions.map {
                .structure([.string($0.id.rawValue), .string($0.title), .string($0.detail), .string($0.state.rawValue)])
            })
    }

    // MARK: Calls

    private mutating func send(
        _ member: String, _ arguments: [DBusValue], path: String = KioskWire.objectPath,
        interface: String = KioskWire.managerInterface
    ) -> Result<[DBusValue], BusError> {
        count += 1
        do {
            let m = try client.bus.makeMethodCall(
                destination: KioskWire.busName, path: path, interface: interface, member: member)
            try m.append(arguments)
            return .success(try client.bus.callBlocking(m, timeout: .seconds(10)).readAll())
        } catch let error as BusError {
            return .failure(error)
        } catch {
            return .failure(BusError(name: "local", message: "\(error)"))
        }
    }

    private mutating func expectSuccess(_ member: String, _ arguments: [DBusValue]) -> [DBusValue]? {
        valid += 1
        switch send(member, arguments) {
        case .success(let values): return values
        case .failure(let error):
            failures.append("valid call \(member)\(arguments.map(\.description).prefix(3)) failed: \(error)")
            return nil
        }
    }

    private mutating func expectError(
        _ member: String, _ arguments: [DBusValue], in names: Set<String>,
        path: String = KioskWire.objectPath, interface: String = KioskWire.managerInterface
    ) {
        switch send(member, arguments, path: path, interface: interface) {
        case .success:
            failures.append(
                "invalid call \(interface).\(member) \(arguments.map { String($0.description.prefix(80)) }) succeeded")
        case .failure(let error) where !names.contains(error.name):
            failures.append("invalid call \(member) got \(error.name): \(error.message.prefix(200))")
        case .failure:
            break
        }
    }

    mutating func step() {
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<14: register()
        case 14..<24: setState()
        case 24..<34: read()
        case 34..<36: toggleSession()
        case 36..<38: endSession()
        case 38..<52: unknownMember()
        case 52..<72: wrongSignature()
        default: badContent()
        }
    }

    // MARK: Valid calls, tracked

    private mutating func randomApp() -> String { "org.fuzz.App\(Int.random(in: 0..<12, using: &rng))" }

    private mutating func register() {
        let app = randomApp()
        let ids = (0..<8).shuffled(using: &rng).prefix(Int.random(in: 0...6, using: &rng))
        let titles = ["Controls", "Zoom ✓", "Título", "T"], details = ["", "Two\nlines", "tab\there", "Détail"]
        let restrictions = ids.map { j in
            ("\(app).r\(j)", titles.randomElement(using: &rng)!, details.randomElement(using: &rng)!)
        }
        guard
            expectSuccess(
                "RegisterApplication",
                [
                    .string(app),
                    .array(
                        elementSignature: "(sss)",
                        restrictions.map {
                            .structure([.string($0.0), .string($0.1), .string($0.2)])
                        }),
                ]) != nil
        else { return }
        var session = model.session
        let declarations = restrictions.map { try! RestrictionDeclaration(id: $0.0, title: $0.1, detail: $0.2) }
        if (try? model.registry.declare(
            AppID(app), restrictions: declarations, uid: 0, isAdmin: true,
            initialState: {
                session.isActive ? session.initialState(for: $0, in: try! AppID(app)) : .allow
            })) == true
        {
            model.session = session
        }
    }

    private mutating func knownRestriction() -> (Registry.Application, Restriction)? {
        guard let app = model.registry.applications.randomElement(using: &rng),
            let restriction = app.restrictions.randomElement(using: &rng)
        else { return nil }
        return (app, restriction)
    }

    private mutating func setState() {
        guard let (app, restriction) = knownRestriction() else { return register() }
        let state = RestrictionState.allCases.randomElement(using: &rng)!
        guard
            expectSuccess(
                "SetRestrictionState",
                [.string(app.id.rawValue), .string(restriction.id.rawValue), .string(state.rawValue)]) != nil
        else { return }
        if (try? model.registry.setState(state, of: restriction.id, in: app.id)) == true, model.session.isActive {
            model.session.noteAdminChange(of: restriction.id, in: app.id)
        }
    }

    private mutating func read() {
        guard let (app, restriction) = knownRestriction() else { return register() }
        switch Int.random(in: 0..<3, using: &rng) {
        case 0:
            let got = expectSuccess(
                "GetRestrictionState", [.string(app.id.rawValue), .string(restriction.id.rawValue)])
            if let got, got != [.string(restriction.state.rawValue)] {
                failures.append("GetRestrictionState \(restriction.id) = \(got), the model has \(restriction.state)")
            }
        case 1:
            let got = expectSuccess("ListRestrictions", [.string(app.id.rawValue)])
            if let got, got != [Self.wire(app.declared)] { failures.append("ListRestrictions \(app.id) = \(got)") }
        default:
            checkApplications()
        }
    }

    mutating func checkApplications() {
        let got = expectSuccess("ListApplications", [])
        if let got, got != [.strings(model.registry.applicationIDs.map(\.rawValue))] {
            failures.append("ListApplications = \(got), the model has \(model.registry.applicationIDs)")
        }
    }

    private mutating func toggleSession() {
        if model.session.isActive {
            guard expectSuccess("ForceEndSession", []) != nil else { return }
            _ = try? model.session.end(registry: &model.registry)
        } else {
            guard expectSuccess("StartSession", [.string("fuzz")]) != nil else { return }
            _ = try? model.session.start(
                profileName: "fuzz", profile: profile, at: WallClockTime(microseconds: 0), registry: &model.registry)
        }
    }

    /// A wrong passcode: NoSession with no session; else WrongPasscode (counted) or Throttled.
    private mutating func endSession() {
        let guess = randomString(maxLength: Bool.random(using: &rng) ? 20 : 2000)
        guard guess != FuzzTests.passcode else { return }
        switch send("EndSession", [.string(guess)]) {
        case .success:
            failures.append("EndSession with a wrong passcode succeeded")
        case .failure(let error):
            let expected: Set<String> =
                model.session.isActive
                ? [KioskError.Code.wrongPasscode.dbusName, KioskError.Code.throttled.dbusName]
                : [KioskError.Code.noSession.dbusName]
            if !expected.contains(error.name) { failures.append("EndSession got \(error.name): \(error.message)") }
            if error.name == KioskError.Code.wrongPasscode.dbusName { model.failures += 1 }
        }
    }

    // MARK: Invalid calls: nothing may change

    private mutating func unknownMember() {
        let known = Set(Self.members.map(\.0))
        var name = randomMemberName()
        while known.contains(name) { name = randomMemberName() }
        switch Int.random(in: 0..<6, using: &rng) {
        case 0:
            expectError(name, randomValues(), in: Self.dispatchErrors)
        case 1:  // a known member at a path that does not exist
            expectError(
                Self.members.randomElement(using: &rng)!.0, [], in: Self.dispatchErrors,
                path: ["/", "/org/kioskd", "/org/kioskd/GuidedAccess1/\(name)"].randomElement(using: &rng)!)
        case 2:
            expectError(
                Self.members.randomElement(using: &rng)!.0, [], in: Self.dispatchErrors, interface: "org.kioskd.\(name)"
            )
        case 3:
            expectError(
                "Get", [.string(KioskWire.managerInterface), .string(name)], in: Self.dispatchErrors,
                interface: "org.freedesktop.DBus.Properties")
        case 4:
            expectError(
                "Set", [.string(KioskWire.managerInterface), .string("SessionState"), .variant(.string("inactive"))],
                in: Self.dispatchErrors, interface: "org.freedesktop.DBus.Properties")
        default:
            count += 1  // harmless reads of other interfaces
            _ = try? client.call("Introspect", interface: "org.freedesktop.DBus.Introspectable")
        }
    }

    private mutating func wrongSignature() {
        let (member, signature) = Self.members.randomElement(using: &rng)!
        var values = randomValues()
        while values.map(\.signature).joined() == signature { values = randomValues() }
        expectError(member, values, in: [Self.invalidArgs])
    }

    private mutating func badContent() {
        let app = model.registry.applications.randomElement(using: &rng)
        let appID = app?.id.rawValue ?? "org.fuzz.App0"
        let restrictionID = app?.restrictions.randomElement(using: &rng)?.id.rawValue ?? "\(appID).r0"
        let errors = Self.contentErrors
        switch Int.random(in: 0..<11, using: &rng) {
        case 0:
            expectError("SetRestrictionState", [.string(badID()), .string(restrictionID), .string("deny")], in: errors)
        case 1: expectError("SetRestrictionState", [.string(appID), .string(badID()), .string("deny")], in: errors)
        case 2:
            expectError(
                "SetRestrictionState", [.string(appID), .string(restrictionID), .string(badState())], in: errors)
        case 3:
            expectError(
                "GetRestrictionState", [.string(Bool.random(using: &rng) ? badID() : appID), .string(badID())],
                in: errors)
        case 4: expectError("ListRestrictions", [.string(badID())], in: errors)
        case 5:
            expectError(
                "RegisterApplication",
                [
                    .string(badID(malformed: true)),
                    .array(
                        elementSignature: "(sss)",
                        [
                            .structure([.string("org.fuzz.X.r0"), .string("t"), .string("d")])
                        ]),
                ], in: errors)
        case 6, 7: expectError("RegisterApplication", [.string(appID), badDeclarations(appID)], in: errors)
        case 8:
            let name =
                Bool.random(using: &rng)
                ? "nope\(Int.random(in: 0..<1000, using: &rng))" : randomString(maxLength: 300) + "/x"
            expectError("StartSession", [.string(name)], in: errors)
        case 9:
            let new = [
                "", "bell\u{7}", "tab\tin", String(repeating: "p", count: Int.random(in: 1025...5000, using: &rng)),
            ]
            .randomElement(using: &rng)!
            expectError("SetPasscode", [.string(randomString(maxLength: 40)), .string(new)], in: errors)
        default:
            if !model.session.isActive {
                expectError("ForceEndSession", [], in: errors)
            } else {
                expectError("StartSession", [.string("fuzz")], in: errors)
            }
        }
    }

    // MARK: Random values

    /// An id that breaks the reverse-DNS rules in one of many ways, or (unless `malformed`) a
    /// valid one kioskd does not know.
    private mutating func badID(malformed: Bool = false) -> String {
        let base = ["org.fuzz.App1", "org.example.Museum", "a.b"].randomElement(using: &rng)!
        switch Int.random(in: 0..<(malformed ? 10 : 12), using: &rng) {
        case 0: return ""
        case 1: return "single\(Int.random(in: 0..<99, using: &rng))"
        case 2: return "1" + base
        case 3: return base + "." + "\(Int.random(in: 0..<9, using: &rng))x"
        case 4: return base.replacingOccurrences(of: ".", with: "..")
        case 5: return base + "."
        case 6: return "." + base
        case 7:
            var s = Array(base)
            s.insert(
                [" ", "/", "!", "é", "\u{1}", "\n", "\u{7F}", "✓", ":"].randomElement(using: &rng)!,
                at: Int.random(in: 0...s.count, using: &rng))
            return String(s)
        case 8: return String(repeating: "ab.", count: Int.random(in: 86...3000, using: &rng)) + "c"
        case 9: return randomString(maxLength: 300) + " "
        case 10: return "org.unknown.U\(Int.random(in: 0..<1_000_000, using: &rng))"
        default: return base + ".unknown\(Int.random(in: 0..<1000, using: &rng))"
        }
    }

    private mutating func badState() -> String {
        var s = ["", "Allow", "DENY", "deny ", " allow", "maybe", "0", "1", "true", "allow\u{1}"].randomElement(
            using: &rng)!
        if Bool.random(using: &rng) { s = randomString(maxLength: 100) }
        return s == "allow" || s == "deny" ? "deny!" : s
    }

    /// A restriction list for `app` with one thing wrong.
    private mutating func badDeclarations(_ app: String) -> DBusValue {
        func item(_ id: String, _ title: String = "t", _ detail: String = "d") -> DBusValue {
            .structure([.string(id), .string(title), .string(detail)])
        }
        var items = (0..<Int.random(in: 0...3, using: &rng)).map { item("\(app).ok\($0)") }
        let bad: [DBusValue]
        switch Int.random(in: 0..<7, using: &rng) {
        case 0: bad = [item(badID(malformed: true))]
        case 1: bad = [item("\(app).t", String(repeating: "t", count: Int.random(in: 257...2000, using: &rng)))]
        case 2: bad = [item("\(app).t", "two\nlines")]
        case 3: bad = [item("\(app).t", "t", String(repeating: "d", count: Int.random(in: 4097...9000, using: &rng)))]
        case 4: bad = [item("\(app).t", "t", "bell\u{7}")]
        case 5: bad = [item("\(app).dup"), item("\(app).dup")]
        default: bad = (0...KioskWire.Limits.restrictionsPerApp).map { item("\(app).many\($0)") }
        }
        items.insert(contentsOf: bad, at: Int.random(in: 0...items.count, using: &rng))
        return .array(elementSignature: "(sss)", items)
    }

    private mutating func randomMemberName() -> String {
        let first = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
        let rest = first + Array("0123456789")
        return String(first.randomElement(using: &rng)!)
            + String((0..<Int.random(in: 0...30, using: &rng)).map { _ in rest.randomElement(using: &rng)! })
    }

    /// Valid UTF-8 (sd-bus refuses anything else in an `s`), with controls, non-ASCII and
    /// astral characters; no NUL.
    mutating func randomString(maxLength: Int) -> String {
        let length = Int.random(in: 0...maxLength, using: &rng)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            let value: UInt32
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: value = UInt32.random(in: 1..<0x20, using: &rng)
            case 1: value = UInt32.random(in: 0x80..<0xD800, using: &rng)
            case 2: value = UInt32.random(in: 0x10000..<0x110000, using: &rng)
            default: value = UInt32.random(in: 0x20..<0x7F, using: &rng)
            }
            // sd-bus refuses noncharacters (U+FDD0…U+FDEF, U+xFFFE, U+xFFFF) at the client, as
            // invalid UTF-8; BusGarbage sends them raw.
            let nonCharacter = (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE
            scalars.append(nonCharacter ? "?" : Unicode.Scalar(value) ?? "?")
        }
        return String(scalars)
    }

    private mutating func randomValue(depth: Int = 0) -> DBusValue {
        switch Int.random(in: 0..<(depth > 1 ? 12 : 16), using: &rng) {
        case 0: return .byte(.random(in: 0...255, using: &rng))
        case 1: return .bool(.random(using: &rng))
        case 2: return .int16(.random(in: .min ... .max, using: &rng))
        case 3: return .uint16(.random(in: 0 ... .max, using: &rng))
        case 4: return .int32(.random(in: .min ... .max, using: &rng))
        case 5: return .uint32(.random(in: 0 ... .max, using: &rng))
        case 6: return .int64(.random(in: .min ... .max, using: &rng))
        case 7: return .uint64(.random(in: 0 ... .max, using: &rng))
        case 8: return .double(.random(in: -1e9...1e9, using: &rng))
        case 9: return .objectPath("/x/y\(Int.random(in: 0..<9, using: &rng))")
        case 10: return .signature(["s", "a(sss)", "ay", ""].randomElement(using: &rng)!)
        case 11, 12: return .string(Bool.random(using: &rng) ? randomString(maxLength: 50) : badID())
        case 13:  // bytes that are not UTF-8, where an `s` is expected: the bus allows them in `ay`
            let invalid: [UInt8] = [0xC3, 0x28, 0xFF, 0xFE, 0xED, 0xA0, 0x80, 0xF8, 0x88, 0x80, 0x80, 0x80]
            return .array(
                elementSignature: "y",
                (0..<Int.random(in: 0...64, using: &rng)).map { _ in .byte(invalid.randomElement(using: &rng)!) })
        case 14:
            return .array(elementSignature: "s", (0..<Int.random(in: 0...4, using: &rng)).map { _ in .string(badID()) })
        default:
            return Bool.random(using: &rng)
                ? .variant(randomValue(depth: depth + 1))
                : .structure((0..<Int.random(in: 1...3, using: &rng)).map { _ in randomValue(depth: depth + 1) })
        }
    }

    private mutating func randomValues() -> [DBusValue] {
        (0..<Int.random(in: 0...4, using: &rng)).map { _ in randomValue() }
    }
}

/// A seeded generator (SplitMix64), so a failing run can be repeated.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
