import ArgumentParser
import KioskClient

/// `kioskctl wake`: the display kioskd holds dark (`[idle]`) is wanted on (docs/kioskctl.md).
struct WakeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wake",
        abstract: "Turn the kiosk's display on again, if kioskd holds it dark (admin).")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run("wake the display") { try await $0.wake() }
        let summary = try await StatusSummary.readForJSON(options, after: "the display was woken")
        if let summary { return Output.json(summary.json) }
        Output.write("The display is wanted on.\n")
    }
}

/// `kioskctl blank`: the display went dark by other means; the next touch only wakes it.
struct BlankCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blank",
        abstract: "Say that the kiosk's display is dark: the next key or touch only wakes it (admin).")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run("say the display is dark") { try await $0.blank() }
        let summary = try await StatusSummary.readForJSON(options, after: "the display was blanked")
        if let summary { return Output.json(summary.json) }
        Output.write("The display is wanted off: the next key or touch only wakes it.\n")
    }
}
