import ArgumentParser
import Glibc
import KioskCore
import KioskFiles

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct ProfileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Validate and show guided-access profiles, without a daemon.",
        subcommands: [Check.self, Show.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate profiles; print file:line:col: message for each error.",
            discussion:
                "Exits 1 if any file has an error. Warns (exit status 0) about a file that holds a passcode hash and is not private to root (kioskd refuses to use such a hash), about a time limit of 20 hours or less that the person at the kiosk cannot extend (session.visitor-extensions), and about a screen reader's or sticky keys' key that a group lock swallows ([accessibility]). With --json, prints one JSON array for all the files instead: file, ok, errors (line, column, message) and warnings for each."
        )

        @OptionGroup var options: JSONOption
        @OptionGroup(visibility: .hidden) var remote: HostOption

        @Argument(help: "The profile files to check.")
        var files: [String]

        func validate() throws {
            try remote.refuse(for: "profile check")
            guard !files.isEmpty else { throw ValidationError("Name at least one profile file.") }
        }

        func run() throws {
            let checks = files.map(Self.check)
            if options.json {
                Output.json(checks)
            } else {
                for check in checks {
                    if check.ok { print("\(check.file): ok") }
                    for error in check.errors { printError(Self.text(error, file: check.file)) }
                    for warning in check.warnings { printError("\(check.file): warning: \(warning)") }
                }
            }
            if checks.contains(where: { !$0.ok }) { throw ExitCode.failure }
        }

        /// `file` loaded as kioskd loads it, with its errors or its warnings.
        static func check(_ file: String) -> FileCheck {
            let profile: Profile
            do {
                profile = try ProfileFile.load(file)
            } catch {
                return .failed(file, error)
            }
            let warnings =
                [
                    ProfileFile.hashWarning(file, profile), profile.session.extensionWarning,
                    profile.touch.pinchWarning, profile.idle.warningWarning,
                ].compactMap { $0 } + profile.assistiveKeyWarnings
            return .passed(file, warnings: warnings)
        }

        /// An error as text: `file:line:col: message`, or `file: message` for a file not read.
        static func text(_ error: FileCheck.Problem, file: String) -> String {
            guard let line = error.line, let column = error.column else { return "\(file): \(error.message)" }
            return "\(file):\(line):\(column): \(error.message)"
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a profile as kioskd resolves it, defaults included.",
            discussion:
                "With --png, draw its locked touch regions, edge margin and gesture corners over a screenshot (--over) or a blank frame (--size, default 1280x800) instead, and print the legend in pixels; needs the kioskd-tools package."
        )

        @OptionGroup var options: JSONOption
        @OptionGroup(visibility: .hidden) var remote: HostOption

        @Option(help: ArgumentHelp("Draw the profile's touch locks into this PNG file.", valueName: "file"))
        var png: String?

        @Option(help: ArgumentHelp("With --png: a screenshot (PNG) to draw over, at its size.", valueName: "screenshot"))
        var over: String?

        @Option(help: ArgumentHelp("With --png: the blank frame's size (default 1280x800).", valueName: "WxH"))
        var size: String?

        @Argument(help: "The profile file.")
        var file: String

        func validate() throws {
            try remote.refuse(for: "profile show")
            if png == nil, over != nil || size != nil {
                throw ValidationError("--over and --size go with --png.")
            }
            if png != nil, options.json { throw ValidationError("--png and --json exclude each other.") }
            if let problem = ProfilePicture.optionsProblem(over: over, size: size) { throw ValidationError(problem) }
        }

        func run() throws {
            let profile: Profile
            do {
                profile = try ProfileFile.load(file)
            } catch {
                printError("\(error)")
                throw ExitCode.failure
            }
            if let png {
                // The profile parsed, as `profile check` reads it; kioskctl-profile-png reads it
                // again and draws.
                let options = ["--png", png] + (over.map { ["--over", $0] } ?? []) + (size.map { ["--size", $0] } ?? [])
                try ToolExec.exec(
                    "kioskctl-profile-png", options + ["--", file], verb: "profile show --png",
                    otherwise: "draw the profile on a machine that has it")
            }
            if options.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(profile), as: UTF8.self))
            } else {
                print(ProfileReport.text(profile, name: file), terminator: "")
            }
        }
    }
}

/// Reads a profile file from disk; the parsing and every rule live in ``ProfileParser``.
enum ProfileFile {
    /// What kioskd would refuse is refused here too, as kioskd reads it (KioskFiles): only a
    /// regular file (a FIFO is refused, never waited on), at most ``Profile/maximumFileSize``.
    static func load(_ path: String) throws -> Profile {
        let read: Files.Regular
        do {
            read = try Files.readRegular(path, limit: Profile.maximumFileSize)
        } catch {
            throw UnreadableFile(path: path, reason: error.reason)
        }
        return try ProfileParser.parse(bytes: read.bytes, file: path)
    }

    /// Why kioskd (as root) would refuse the passcode hash in `path`, if `profile` holds one.
    static func hashWarning(_ path: String, _ profile: Profile) -> String? {
        var stats = stat()
        guard profile.passcodeHash != nil, stat(path, &stats) == 0 else { return nil }
        return PasscodeFileSafety.problem(path: path, mode: stats.st_mode, owner: stats.st_uid, trustedOwners: [0])
            .map { "\($0) (kioskd refuses to use this hash)" }
    }
}
