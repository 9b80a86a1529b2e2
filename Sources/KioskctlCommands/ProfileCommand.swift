import ArgumentParser
import Glibc
import KioskCore

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
                "Exits 1 if any file has an error. Warns (exit status 0) about a file that holds a passcode hash and is not private to root: kioskd refuses to use such a hash."
        )

        @OptionGroup(visibility: .hidden) var remote: HostOption

        @Argument(help: "The profile files to check.")
        var files: [String]

        func validate() throws {
            try remote.refuse(for: "profile check")
            guard !files.isEmpty else { throw ValidationError("Name at least one profile file.") }
        }

        func run() throws {
            var failed = false
            for file in files {
                do {
                    let profile = try ProfileFile.load(file)
                    print("\(file): ok")
                    if let warning = ProfileFile.hashWarning(file, profile) {
                        printError("\(file): warning: \(warning)")
                    }
                } catch {
                    failed = true
                    printError("\(error)")
                }
            }
            if failed { throw ExitCode.failure }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a profile as kioskd resolves it, defaults included."
        )

        @OptionGroup var options: JSONOption
        @OptionGroup(visibility: .hidden) var remote: HostOption

        @Argument(help: "The profile file.")
        var file: String

        func validate() throws {
            try remote.refuse(for: "profile show")
        }

        func run() throws {
            let profile: Profile
            do {
                profile = try ProfileFile.load(file)
            } catch {
                printError("\(error)")
                throw ExitCode.failure
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
    static func load(_ path: String) throws -> Profile {
        // What kioskd would refuse is refused here too, before reading: anything but a regular
        // file (a FIFO would block the read), and a file over kioskd's size cap.
        var stats = stat()
        if stat(path, &stats) == 0 {
            switch stats.st_mode & S_IFMT {
            case S_IFDIR: throw CommandError("\(path): is a directory")
            case S_IFREG: break
            default: throw CommandError("\(path): is not a regular file; kioskd reads a profile only from one")
            }
            if stats.st_size > Profile.maximumFileSize {
                throw CommandError(
                    "\(path): is larger than \(Profile.maximumFileSize >> 10) KiB, which kioskd refuses for a profile")
            }
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            let exists = stat(path, &stats) == 0
            throw CommandError("\(path): " + (exists ? "cannot be read" : "no such file"))
        }
        return try ProfileParser.parse(bytes: Array(data), file: path)
    }

    /// Why kioskd (as root) would refuse the passcode hash in `path`, if `profile` holds one.
    static func hashWarning(_ path: String, _ profile: Profile) -> String? {
        var stats = stat()
        guard profile.passcodeHash != nil, stat(path, &stats) == 0 else { return nil }
        return PasscodeFileSafety.problem(path: path, mode: stats.st_mode, owner: stats.st_uid, trustedOwners: [0])
            .map { "\($0) (kioskd refuses to use this hash)" }
    }
}
