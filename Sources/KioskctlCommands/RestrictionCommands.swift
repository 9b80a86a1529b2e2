import ArgumentParser
import KioskClient
import KioskCore

struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "List the registered apps.",
        discussion: "Each app id with the number of restrictions it declares and how many of them are denied."
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let apps = try await options.run("list the apps") { try await AppCount.read($0) }
        if options.json { return Output.json(AppsJSON(apps: apps)) }
        guard !apps.isEmpty else { return Output.write("No apps are registered.\n") }
        let width = max(3, apps.map(\.id.count).max() ?? 0)
        var text = TextLayout.padded("APP", to: width) + "  RESTRICTIONS  DENIED\n"
        for app in apps {
            text +=
                TextLayout.padded(app.id, to: width) + "  " + TextLayout.rightAligned("\(app.restrictions)", in: 12)
                + "  " + TextLayout.rightAligned("\(app.denied)", in: 6) + "\n"
        }
        Output.write(text)
    }
}

struct AppsJSON: Encodable {
    var apps: [AppCount]
}

/// One registered app with how many restrictions it declares and how many are denied: a row
/// of `apps` (and its JSON object), and what `status` adds up.
struct AppCount: Encodable {
    var id: String
    var restrictions: Int
    var denied: Int

    init(id: String, restrictions: [RestrictionInfo]) {
        self.id = id
        self.restrictions = restrictions.count
        denied = restrictions.count(where: { $0.state == .deny })
    }

    /// How many `ListRestrictions` calls are in flight at once: a system bus lets a connection
    /// wait for at most 128 replies (dbus-daemon's `max_replies_per_connection`), and kioskd
    /// keeps up to 1,024 apps.
    static let callsInFlight = 32

    /// Every registered app's counts, in kioskd's order; the apps' lists are asked for
    /// ``callsInFlight`` at a time.
    static func read(_ manager: KioskManager) async throws -> [AppCount] {
        let apps = try await manager.listApplications()
        return try await withThrowingTaskGroup(of: (Int, AppCount).self) { group in
            var pending = apps.enumerated().makeIterator()
            func askNext() {
                guard let (index, app) = pending.next() else { return }
                group.addTask { (index, AppCount(id: app, restrictions: try await manager.listRestrictions(of: app))) }
            }
            for _ in 0..<callsInFlight { askNext() }
            var counts = [AppCount?](repeating: nil, count: apps.count)
            for try await (index, count) in group {
                counts[index] = count
                askNext()
            }
            return counts.compactMap { $0 }
        }
    }
}

struct RestrictionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restrictions",
        abstract: "List an app's restrictions: state, id, title, detail.",
        discussion:
            "In the app's presentation order. Detail texts are wrapped to 80 columns and cut after 3 lines; --full shows them whole."
    )

    @OptionGroup var options: GlobalOptions

    @Flag(help: "Show detail texts whole.")
    var full = false

    @Argument(help: ArgumentHelp("The app id.", valueName: "app"))
    var app: String

    static let indent = String(repeating: " ", count: 7)

    func validate() throws {
        try CommandLineValues.validateApp(app)
    }

    func run() async throws {
        let list = try await options.run("list the restrictions of \(app)") { try await $0.listRestrictions(of: app) }
        if options.json {
            return Output.json(
                RestrictionsJSON(
                    app: app,
                    restrictions: list.map {
                        RestrictionJSON(id: $0.id, state: $0.state.rawValue, title: $0.title, detail: $0.detail)
                    }))
        }
        guard !list.isEmpty else { return Output.write("\(app) declares no restrictions.\n") }
        var text = ""
        for restriction in list {
            text += TextLayout.padded(restriction.state.rawValue, to: 7) + restriction.id + "\n"
            var lines = TextLayout.wrap(restriction.title, width: 80 - 7)
            if !restriction.detail.isEmpty {
                lines += TextLayout.wrap(restriction.detail, width: 80 - 7, maxLines: full ? nil : 3)
            }
            // A blank line of a detail text is kept whole with --full, dropped otherwise.
            for line in lines where full || !line.isEmpty { text += line.isEmpty ? "\n" : Self.indent + line + "\n" }
        }
        Output.write(text)
    }
}

struct RestrictionsJSON: Encodable {
    var app: String
    var restrictions: [RestrictionJSON]
}

struct RestrictionJSON: Encodable {
    var id: String
    var state: String
    var title: String
    var detail: String
}

/// `forget APP`: `UnregisterApplication`.
struct ForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Forget an app: its id and every restriction with its state (admin).",
        discussion:
            "For an app id registered by the wrong uid, or an app that is gone: the next uid to register the id owns it. Refused while the active session's profile presets restrictions of the app."
    )

    @OptionGroup var options: GlobalOptions
    @Argument(help: ArgumentHelp("The app id.", valueName: "app")) var app: String

    func validate() throws { try CommandLineValues.validateApp(app) }

    func run() async throws {
        try await options.run("forget \(app)") { try await $0.unregisterApplication(app) }
        if options.json {
            Output.json(ForgetJSON(app: app, forgotten: true))
        } else {
            Output.write("Forgot \(app).\n")
        }
    }
}

struct ForgetJSON: Encodable {
    var app: String
    var forgotten: Bool
}

/// `allow APP ID` and `deny APP ID`: one command, specialised by the state it sets.
struct SetStateCommand<Verb: StateVerb>: AsyncParsableCommand {
    // A generic type cannot have a stored static property: the configuration is computed.
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: Verb.name, abstract: "\(Verb.abstract) a restriction of an app (admin).")
    }

    @OptionGroup var options: GlobalOptions
    @Argument(help: ArgumentHelp("The app id.", valueName: "app")) var app: String
    @Argument(help: ArgumentHelp("The restriction id.", valueName: "id")) var id: String

    func validate() throws {
        try CommandLineValues.validateApp(app)
        try CommandLineValues.validateRestriction(id)
    }

    func run() async throws {
        try await options.run("\(Verb.name) \(id)") { try await $0.setRestrictionState(Verb.state, of: id, in: app) }
        if options.json {
            Output.json(StateJSON(app: app, id: id, state: Verb.state.rawValue))
        } else {
            Output.write("\(Verb.done) \(id).\n")
        }
    }
}

/// What differs between `allow` and `deny`: the state, and how the verb is written.
protocol StateVerb {
    static var state: RestrictionState { get }
    static var name: String { get }
    /// The verb at the start of the abstract ("Allow").
    static var abstract: String { get }
    /// The verb in the confirmation ("Allowed ID.").
    static var done: String { get }
}

enum AllowVerb: StateVerb {
    static let state = RestrictionState.allow
    static let name = "allow", abstract = "Allow", done = "Allowed"
}

enum DenyVerb: StateVerb {
    static let state = RestrictionState.deny
    static let name = "deny", abstract = "Deny", done = "Denied"
}

typealias AllowCommand = SetStateCommand<AllowVerb>
typealias DenyCommand = SetStateCommand<DenyVerb>

struct StateJSON: Encodable {
    var app: String
    var id: String
    var state: String
}
