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
        let apps = try await options.run("list the apps") { manager in
            var apps: [AppJSON] = []
            for id in try await manager.listApplications() {
                let restrictions = try await manager.listRestrictions(of: id)
                apps.append(AppJSON(id: id, restrictions: restrictions.count, denied: restrictions.filter { $0.state == .deny }.count))
            }
            return apps
        }
        if options.json { return Output.json(AppsJSON(apps: apps)) }
        guard !apps.isEmpty else { return Output.write("No apps are registered.\n") }
        let width = max(3, apps.map(\.id.count).max() ?? 0)
        var text = TextLayout.padded("APP", to: width) + "  RESTRICTIONS  DENIED\n"
        for app in apps {
            text += TextLayout.padded(app.id, to: width) + "  " + TextLayout.rightAligned("\(app.restrictions)", in: 12)
                + "  " + TextLayout.rightAligned("\(app.denied)", in: 6) + "\n"
        }
        Output.write(text)
    }
}

struct AppsJSON: Encodable {
    var apps: [AppJSON]
}

struct AppJSON: Encodable {
    var id: String
    var restrictions: Int
    var denied: Int
}

struct RestrictionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restrictions",
        abstract: "List an app's restrictions: state, id, title, detail.",
        discussion: "In the app's presentation order. Detail texts are wrapped to 80 columns and cut after 3 lines; --full shows them whole."
    )

    @OptionGroup var options: GlobalOptions

    @Flag(help: "Show detail texts whole.")
    var full = false

    @Argument(help: ArgumentHelp("The app id.", valueName: "app"))
    var app: String

    static let indent = String(repeating: " ", count: 7)

    func run() async throws {
        let list = try await options.run("list the restrictions of \(app)") { try await $0.listRestrictions(of: app) }
        if options.json {
            return Output.json(RestrictionsJSON(app: app, restrictions: list.map {
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

/// `allow APP ID` and `deny APP ID`: one command type for both states.
protocol SetStateCommand: AsyncParsableCommand {
    static var state: RestrictionState { get }
    var options: GlobalOptions { get }
    var app: String { get }
    var id: String { get }
}

extension SetStateCommand {
    func run() async throws {
        let verb = Self.state == .allow ? "allow" : "deny"
        try await options.run("\(verb) \(id)") { try await $0.setRestrictionState(Self.state, of: id, in: app) }
        if options.json {
            Output.json(StateJSON(app: app, id: id, state: Self.state.rawValue))
        } else {
            Output.write("\(Self.state == .allow ? "Allowed" : "Denied") \(id).\n")
        }
    }
}

struct StateJSON: Encodable {
    var app: String
    var id: String
    var state: String
}

struct AllowCommand: SetStateCommand {
    static let configuration = CommandConfiguration(
        commandName: "allow",
        abstract: "Allow a restriction of an app (admin)."
    )
    static let state = RestrictionState.allow

    @OptionGroup var options: GlobalOptions
    @Argument(help: ArgumentHelp("The app id.", valueName: "app")) var app: String
    @Argument(help: ArgumentHelp("The restriction id.", valueName: "id")) var id: String
}

struct DenyCommand: SetStateCommand {
    static let configuration = CommandConfiguration(
        commandName: "deny",
        abstract: "Deny a restriction of an app (admin)."
    )
    static let state = RestrictionState.deny

    @OptionGroup var options: GlobalOptions
    @Argument(help: ArgumentHelp("The app id.", valueName: "app")) var app: String
    @Argument(help: ArgumentHelp("The restriction id.", valueName: "id")) var id: String
}
