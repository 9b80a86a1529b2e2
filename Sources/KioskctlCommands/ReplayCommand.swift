import ArgumentParser
import Glibc

/// `kioskctl replay --profile FILE TRACE`: a dry run of a profile on a recording of the kiosk's
/// own devices, offline, through the same filter kioskd runs.
///
/// The replay itself is `kioskctl-replay`, from the kioskd-tools package: the trace parsers need
/// Yams, which brings the whole of Foundation and its ICU data, and a kiosk's kioskctl is kept
/// small. kioskctl parses and checks the arguments (the help and the usage errors are its own),
/// then execs the tool, which prints what `kioskctl replay` always printed. Like git's and
/// cargo's external subcommands, it is found on $PATH.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a recorded trace through a profile's input filter and print what would reach the kiosk.",
        discussion: """
            TRACE is an evemu recording (evemu-record) or a `libinput record` file; '-' reads it from \
            stdin. The output is evemu E: lines of the events that would be forwarded, with \
            '# ExitRequested' where the exit gesture completes. No daemon and no device is involved. \
            Needs the kioskd-tools package.
            """
    )

    @Option(help: "The profile whose session locks to apply.")
    var profile: String

    @Flag(
        help: "Replay as after the session's time limit ran out: nothing is forwarded, only the exit gesture is seen.")
    var expired = false

    @Argument(help: "The recording (evemu or libinput record), or '-' for stdin.")
    var trace: String

    @OptionGroup(visibility: .hidden) var remote: HostOption

    func validate() throws {
        try remote.refuse(for: "replay")
    }

    func run() throws {
        try ToolExec.exec(
            "kioskctl-replay", ["--profile", profile] + (expired ? ["--expired"] : []) + ["--", trace],
            verb: "replay", otherwise: "replay the trace on a machine that has it")
    }
}
