import ArgumentParser
import KioskClient
import KioskCore

/// The options every verb that talks to kioskd takes (before or after the verb).
struct GlobalOptions: ParsableArguments {
    @OptionGroup var output: JSONOption
    @OptionGroup var remote: HostOption

    var json: Bool { output.json }
    var host: String? { remote.host }

    var target: BusTarget { host.map { .remote(host: $0) } ?? .system }

    /// Connects to kioskd's bus and runs `body`; a failure is printed as
    /// "Failed to <what>: <cause>" (the daemon's own message when it refused) and exits 1.
    /// The connection is closed afterwards unless `keepingConnection` (for a stream it returns).
    func run<T>(
        _ what: String, keepingConnection: Bool = false, _ body: (KioskManager) async throws -> T
    ) async throws -> T {
        do {
            let manager = try KioskManager.connect(to: target)
            defer { if !keepingConnection { manager.close() } }
            return try await body(manager)
        } catch {
            printError("Failed to \(what): \(Self.cause(error))")
            throw ExitCode.failure
        }
    }

    static func cause(_ error: any Error) -> String {
        switch error {
        case let error as KioskError: error.message
        case let error as KioskClientError: error.message
        default: "\(error)"
        }
    }
}

/// `--json`, on its own so that `profile show` takes it too. ArgumentParser decodes the root's
/// option groups first, wherever on the line the option is, and hands the decoded group to
/// every subcommand that declares the same type: so `kioskctl --json status` and
/// `kioskctl status --json` are the same.
struct JSONOption: ParsableArguments {
    @Flag(help: "Print JSON with stable keys instead of text.")
    var json = false
}

/// `-H`, on its own so that the offline verbs can refuse it: like `--json`, it is decoded wherever
/// it is on the line and handed to every verb that declares this type.
struct HostOption: ParsableArguments {
    @Option(
        name: [.customShort("H"), .customLong("host")],
        help: ArgumentHelp(
            "Operate on the system bus of a remote host over SSH, as systemctl -H does.",
            valueName: "user@host"))
    var host: String?

    /// For `profile` and `replay`, which read files on this machine: `-H` is a usage error, not
    /// silently ignored (an admin who asked for another machine must not get this one's answer).
    func refuse(for verb: String) throws {
        guard let host else { return }
        throw ValidationError(
            "\(verb) reads files on this machine; -H \(host) does not apply. Copy the file here, or run kioskctl on \(host)."
        )
    }
}

/// A failure of kioskctl's own (no terminal to prompt on, passcodes that differ, a file that
/// cannot be read), as a sentence.
struct CommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
