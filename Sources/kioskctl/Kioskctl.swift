import ArgumentParser
import KioskCore

@main
struct Kioskctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kioskctl",
        abstract: "Control kioskd, guided access for Linux kiosks.",
        discussion: """
            Exit status: 0 ok, 1 the operation failed (stderr names the cause), 64 usage error.
            """,
        version: KioskAPI.version,
        subcommands: [ProfileCommand.self, ReplayCommand.self]
    )
}
