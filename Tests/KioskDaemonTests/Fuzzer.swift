import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskStore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// What kioskd should hold: the valid calls applied to the pure core, as the daemon wires it.
struct FuzzModel {
    /// kioskd's registry at its start: the built-in browsers (docs/browsers.md).
    var registry: Registry = {
        var state = KioskState()
        _ = try? state.declareBrowsers()
        return state.registry
    }()
    var session = GuidedSession()
    var failures = 0
}

/// Random calls to kioskd, valid ones tracked in a model, invalid ones expected to change nothing
/// (`Fuzzer+Invalid.swift`), one `step()` at a time.
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

    mutating func send(
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

    mutating func expectSuccess(_ member: String, _ arguments: [DBusValue]) -> [DBusValue]? {
        valid += 1
        switch send(member, arguments) {
        case .success(let values): return values
        case .failure(let error):
            failures.append("valid call \(member)\(arguments.map(\.description).prefix(3)) failed: \(error)")
            return nil
        }
    }

    mutating func expectError(
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

    mutating func randomApp() -> String { "org.fuzz.App\(Int.random(in: 0..<12, using: &rng))" }

    mutating func register() {
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

    mutating func knownRestriction() -> (Registry.Application, Restriction)? {
        guard let app = model.registry.applications.randomElement(using: &rng),
            let restriction = app.restrictions.randomElement(using: &rng)
        else { return nil }
        return (app, restriction)
    }

    mutating func setState() {
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

    mutating func read() {
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

    mutating func toggleSession() {
        if model.session.isActive {
            guard expectSuccess("ForceEndSession", []) != nil else { return }
            _ = try? model.session.end(registry: &model.registry)
        } else {
            guard expectSuccess("StartSession", [.string("fuzz")]) != nil else { return }
            _ = try? model.session.start(
                profileName: "fuzz", profile: profile, at: Timestamp(microseconds: 0), registry: &model.registry)
        }
    }

    /// A wrong passcode: NoSession with no session; else WrongPasscode (counted) or Throttled.
    mutating func endSession() {
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

    mutating func unknownMember() {
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
