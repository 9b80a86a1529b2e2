import ArgumentParser
import Glibc

/// `kioskctl replay --profile FILE TRACE`: a dry run of a profile on a recording of the kiosk's
/// own devices, offline, through the same filter kioskd runs.
///
/// The replay itself is `kioskctl-replay`, from the kioskd-tools package: the trace parsers need
/// Yams, which brings the whole of Foundation and its ICU data, and a kiosk's kioskctl is kept
/// small. kioskctl parses and checks the arguments (the help and the usage errors are its own),
/// then execs the tool, which prints what `kioskctl replay` always printed.
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

    @Flag(help: "Replay as after the session's time limit ran out: nothing is forwarded, only the exit gesture is seen.")
    var expired = false

    @Argument(help: "The recording (evemu or libinput record), or '-' for stdin.")
    var trace: String

    @OptionGroup(visibility: .hidden) var remote: HostOption

    func validate() throws {
        try remote.refuse(for: "replay")
    }

    func run() throws {
        let candidates = Self.toolCandidates()
        guard let tool = candidates.first(where: { access($0, X_OK) == 0 }) else {
            printError("replay needs kioskctl-replay, from the kioskd-tools package, which is not installed here. Install kioskd-tools (apt install kioskd-tools), or replay the trace on a machine that has it.")
            throw ExitCode.failure
        }
        let arguments = [tool, "--profile", profile] + (expired ? ["--expired"] : []) + ["--", trace]
        var argv = arguments.map { strdup($0) } + [nil]
        execv(tool, &argv)
        printError("replay could not run \(tool): \(String(cString: strerror(errno))).")
        throw ExitCode.failure
    }

    /// Where kioskctl-replay may be, by where this kioskctl is: next to it (a build tree), then
    /// in ../libexec/kioskd/ (installed: /usr/bin/kioskctl, /usr/libexec/kioskd/kioskctl-replay).
    static func toolCandidates() -> [String] {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return ["/usr/libexec/kioskd/kioskctl-replay"] }
        let executable = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let directory = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return [directory + "/kioskctl-replay", directory + "/../libexec/kioskd/kioskctl-replay"]
    }
}
