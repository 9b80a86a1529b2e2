import ArgumentParser
import Foundation
import KioskCore
import KioskInput
import KioskTraces

/// `kioskctl replay --profile FILE TRACE`: a dry run of a profile on a recording of the kiosk's
/// own devices, offline, through the same filter kioskd runs.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a recorded trace through a profile's input filter and print what would reach the kiosk.",
        discussion: """
            TRACE is an evemu recording (evemu-record) or a `libinput record` file; '-' reads it from \
            stdin. The output is evemu E: lines of the events that would be forwarded, with \
            '# ExitRequested' where the exit gesture completes. No daemon and no device is involved.
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
        let policy: FilterPolicy
        let recording: Trace
        do {
            var resolved = try ProfileFile.load(profile).filterPolicy
            if expired { resolved.holdAllInput = true }
            policy = resolved
            recording = try Self.loadTrace(trace)
        } catch {
            printError("\(error)")
            throw ExitCode.failure
        }
        print(Replay.run(trace: recording, policy: policy), terminator: "")
    }

    static func loadTrace(_ path: String) throws -> Trace {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else if let contents = FileManager.default.contents(atPath: path) {
            data = contents
        } else {
            throw CommandError("\(path): " + (FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file"))
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CommandError("\(path): not UTF-8 text; expected an evemu or libinput record file")
        }
        do {
            return try Trace.parse(text)
        } catch {
            throw CommandError("\(path):\(error.line): \(error.message)")
        }
    }
}
