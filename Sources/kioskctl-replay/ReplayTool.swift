import ArgumentParser
import Foundation
import KioskCore
import KioskCrypt
import KioskFiles
import KioskInput
import KioskTraces

/// `kioskctl-replay`: what `kioskctl replay --profile FILE TRACE` runs (kioskctl execs it with
/// its arguments), and runs alone on an admin's workstation without kioskd. A program of its
/// own, shipped in kioskd-tools, because the trace parsers need Yams, and Yams needs the whole of
/// Foundation and its ICU data (~40 MB), which a kiosk's kioskctl must not carry.
@main
struct ReplayTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kioskctl-replay",
        abstract:
            "Replay a recorded trace through a profile's input filter and print what would reach the kiosk (what `kioskctl replay` runs).",
        discussion: """
            TRACE is an evemu recording (evemu-record) or a `libinput record` file; '-' reads it from \
            stdin. The output is evemu E: lines of the events that would be forwarded, with \
            '# ExitRequested' where the exit gesture completes. With a profile that holds a \
            [passcode] hash, the gesture opens kioskd's prompt: nothing typed is forwarded, and \
            '# PasscodeAccepted' (after which everything passes: the session ended), \
            '# PasscodeRejected', '# PromptThrottled', '# PromptCancelled' or '# PromptTimeout' say \
            where it closes. With a [session] time-limit, the session's time runs from the \
            recording's first event: '# TimeLimitWarning N' (N seconds left) and '# SessionExpired', \
            after which nothing is forwarded. No daemon and no device is involved.
            """
    )

    @Option(help: "The profile whose session locks to apply.")
    var profile: String

    @Flag(
        help: "Replay as after the session's time limit ran out: nothing is forwarded, only the exit gesture is seen.")
    var expired = false

    @Argument(help: "The recording (evemu or libinput record), or '-' for stdin.")
    var trace: String

    func run() throws {
        let policy: FilterPolicy
        let recording: Trace
        let hash: String?
        let session: Profile.Session
        let idle: Profile.Idle
        do {
            let loaded = try Self.loadProfile(profile)
            var resolved = loaded.filterPolicy
            if expired { resolved.holdAllInput = true }
            policy = resolved
            hash = loaded.passcodeHash
            session = loaded.session
            idle = loaded.idle
            recording = try Self.loadTrace(trace)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode.failure
        }
        // The prompt is modelled when the profile holds the hash (the one set with `kioskctl
        // passcode set` is kioskd's, not in the file). A hash libcrypt cannot use rejects.
        let check = hash.map { hash in { (typed: String) in (try? Passcode.verify(typed, against: hash)) ?? false } }
        print(
            Replay.run(
                trace: recording, policy: policy, passcode: check, expired: expired, session: session, idle: idle),
            terminator: "")
    }

    /// kioskctl's `ProfileFile.load` (that one is in kioskctl, which this program does not
    /// link): a regular file of at most ``Profile/maximumFileSize``, read as kioskd reads it.
    static func loadProfile(_ path: String) throws -> Profile {
        let read: Files.Regular
        do {
            read = try Files.readRegular(path, limit: Profile.maximumFileSize)
        } catch {
            throw ReplayError("\(path): \(error.reason)")
        }
        return try ProfileParser.parse(bytes: read.bytes, file: path)
    }

    static func loadTrace(_ path: String) throws -> Trace {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else if let contents = FileManager.default.contents(atPath: path) {
            data = contents
        } else {
            throw ReplayError(
                "\(path): " + (FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file"))
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ReplayError("\(path): not UTF-8 text; expected an evemu or libinput record file")
        }
        do {
            return try Trace.parse(text)
        } catch {
            throw ReplayError("\(path):\(error.line): \(error.message)")
        }
    }
}

/// A file that cannot be read or parsed, as a sentence (kioskctl's `CommandError`).
struct ReplayError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
