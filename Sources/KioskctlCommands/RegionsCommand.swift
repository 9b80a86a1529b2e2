import ArgumentParser
import Glibc
import KioskClient
import KioskCore
import KioskFiles
import SystemPackage

/// `kioskctl regions draw PROFILE`: staff draw the profile's locked touch regions on the kiosk's
/// screen, and kioskctl writes them into the profile file (docs/kioskctl.md § regions,
/// docs/dbus-api.md § Drawing the regions, docs/profiles.md § Editing regions at the kiosk).
struct RegionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "regions",
        abstract: "Draw a profile's locked touch regions at the kiosk (admin).",
        subcommands: [Draw.self]
    )

    struct Draw: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Draw PROFILE's locked touch regions on the kiosk's screen, then write them into the profile.",
            discussion: """
                While staff draw, no input reaches the kiosk's app. Drag for a rectangle; drag back \
                to the start for an outline; tap a shape to select it; the bar at the top of the \
                screen has Cancel, Delete and Done (Esc, Delete, Enter on a keyboard). On Done the \
                regions replace the profile's (comments and everything else in the file are kept; \
                the file must not change meanwhile) and, if the session runs this profile, it is \
                reloaded. Cancel, 3 minutes without a touch, or Ctrl+C here leave the file as it was. \
                Runs on the kiosk itself (it edits the file there).
                """
        )

        @OptionGroup var options: GlobalOptions

        @Argument(help: ArgumentHelp("The profile's name in kioskd's profile directory.", valueName: "profile"))
        var profile: String

        /// kioskd's profile directory (tests point it at their kioskd's).
        @Option(name: .customLong("profile-dir"), help: .hidden)
        var profileDirectory = "/etc/kioskd/profiles"

        func validate() throws {
            try CommandLineValues.validateProfileName(profile)
            if let host = options.host {
                throw ValidationError(
                    "regions draw edits the profile file on the kiosk; -H \(host) does not apply. Run kioskctl on \(host)."
                )
            }
        }

        func run() async throws {
            let path = "\(profileDirectory)/\(profile).toml"
            let before = try read(path)
            let source = try text(before, path)
            // What kioskd would refuse is said before anyone walks to the kiosk.
            do {
                _ = try ProfileRegionEdit.apply([], to: source, file: path)
            } catch {
                printError("Failed to draw the regions: \(error.message)")
                throw ExitCode.failure
            }
            if !options.json {
                print(
                    "Draw the regions on the kiosk's screen: drag for a rectangle, drag back to the start for an outline, tap a shape to select it; Done, Delete and Cancel are at the top."
                )
            }
            let drawn = try await options.run("draw the regions") { try await $0.drawRegions(profile: profile) }
            // The admin's file as it is now: it must be the one the drawing began from.
            let now = try read(path)
            guard now.bytes == before.bytes else {
                printError("Failed to write the regions: \(path) changed while they were drawn; it was left as it is now.")
                throw ExitCode.failure
            }
            let regions = try drawn.map(Self.region)
            let edited: String
            do {
                edited = try ProfileRegionEdit.apply(regions, to: source, file: path)
            } catch {
                printError("Failed to write the regions: \(error.message)")
                throw ExitCode.failure
            }
            try write(edited, to: path, like: path)
            let kept = regions.count { if case .kept = $0 { true } else { false } }
            let status = try await options.run("read the session (the regions were written)") { try await $0.status() }
            let reload = status.sessionState != .inactive && status.activeProfile == profile
            if reload {
                try await options.run("reload the session's profile (the regions were written)") {
                    try await $0.reloadProfiles()
                }
            }
            if options.json {
                Output.json(
                    Written(profile: path, regions: regions.count, kept: kept, drawn: regions.count - kept, reloaded: reload))
            } else {
                print(
                    "\(path): \(regions.count) locked region\(regions.count == 1 ? "" : "s") written (\(kept) kept, \(regions.count - kept) drawn)\(reload ? "; the session's profile was reloaded" : "")."
                )
            }
        }

        /// `--json`: what was written.
        struct Written: Encodable {
            var profile: String
            var regions: Int
            var kept: Int
            var drawn: Int
            var reloaded: Bool
        }

        static func region(_ drawn: KioskManager.DrawnRegion) throws -> ProfileRegionEdit.Region {
            if let index = drawn.kept { return .kept(index) }
            let n = drawn.numbers
            let shape: Profile.Shape =
                n.count == 4
                ? .rect(x: n[0], y: n[1], width: n[2], height: n[3])
                : .polygon(stride(from: 0, to: n.count - 1, by: 2).map { Profile.Point(x: n[$0], y: n[$0 + 1]) })
            return .new(Profile.Region(name: drawn.name, shape: shape))
        }

        private func read(_ path: String) throws -> Files.Regular {
            do {
                return try Files.readRegular(path, limit: Profile.maximumFileSize)
            } catch {
                printError("Failed to draw the regions: \(path): \(error.reason)")
                throw ExitCode.failure
            }
        }

        private func text(_ read: Files.Regular, _ path: String) throws -> String {
            do {
                return try Text.decode(read.bytes, what: "profile")
            } catch {
                printError("Failed to draw the regions: \(path) is not valid UTF-8")
                throw ExitCode.failure
            }
        }

        /// Replaces `path` atomically (fsynced) with `text`, with the owner, group and mode the
        /// file has.
        private func write(_ text: String, to path: String, like original: String) throws {
            var stats = stat()
            guard stat(original, &stats) == 0 else {
                printError("Failed to write the regions: \(path): \(String(cString: strerror(errno)))")
                throw ExitCode.failure
            }
            let temporary = Files.temporaryPath(for: path)
            do {
                try Files.replace(
                    path, permissions: FilePermissions(rawValue: stats.st_mode & 0o7777), durable: true
                ) { writer in
                    // Owner and group as the file had them, before the rename makes it the file.
                    _ = chown(temporary, stats.st_uid, stats.st_gid)
                    _ = chmod(temporary, stats.st_mode & 0o7777)
                    try writer.write(Array(text.utf8))
                }
            } catch let error as FileError {
                printError("Failed to write the regions: \(error.reason)")
                throw ExitCode.failure
            }
        }
    }
}
