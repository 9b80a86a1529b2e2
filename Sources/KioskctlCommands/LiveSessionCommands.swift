import ArgumentParser
import Glibc
import KioskClient
import KioskCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `kioskctl extend DURATION`: more (or less) time for the session (docs/kioskctl.md).
struct ExtendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extend",
        abstract: "Give the session more time, or less (admin).",
        discussion: """
            DURATION is like 15m or 1h30m; a negative one shortens the time limit: kioskctl \
            extend -- -5m. The time is added to the limit's end, or to now when the session has \
            expired (it is active again). A session without a time limit gets one with \
            `kioskctl deadline`.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("How much time to add (negative: take away).", valueName: "duration"))
    var duration: String

    func validate() throws {
        _ = try Self.seconds(duration)
    }

    /// Whole seconds of a signed duration text (`15m`, `-5m`, `1h30m`).
    static func seconds(_ text: String) throws(ValidationError) -> Int64 {
        let negative = text.hasPrefix("-")
        let body = negative ? String(text.dropFirst()) : text
        guard let duration = Duration(kioskText: body), duration > .zero else {
            throw ValidationError(
                "\"\(text)\" is not a duration; write a number with a unit (s, m, h, d), like 15m, 1h30m or -5m.")
        }
        let seconds = duration.components.seconds + (duration.components.attoseconds > 0 ? 1 : 0)
        return negative ? -seconds : seconds
    }

    func run() async throws {
        let seconds = try Self.seconds(duration)
        try await options.run("extend the session") { try await $0.extendSession(bySeconds: seconds) }
        try await DeadlineCommand.report(options, after: "the time limit was changed")
    }
}

/// `kioskctl deadline TIME|none`: when the session's time limit ends (docs/kioskctl.md).
struct DeadlineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deadline",
        abstract: "Set when the session's time limit ends, or remove it (admin).",
        discussion: """
            TIME is HH:MM (today, local time), or YYYY-MM-DD HH:MM; `none` removes the time \
            limit. A time already past expires the session now.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("HH:MM, \"YYYY-MM-DD HH:MM\" or none.", valueName: "time"))
    var time: String

    func validate() throws {
        _ = try Self.parse(time, now: Date())
    }

    /// The wall-clock time `text` names (local time), nil for `none`.
    static func parse(_ text: String, now: Date) throws(ValidationError) -> Timestamp? {
        if text == "none" { return nil }
        let parts = text.split(separator: " ")
        let clock = parts.last.map(String.init) ?? ""
        let hm = clock.split(separator: ":").compactMap { Int($0) }
        var fields = tm()
        var seconds = time_t(now.timeIntervalSince1970)
        localtime_r(&seconds, &fields)
        if parts.count == 2 {
            let ymd = parts[0].split(separator: "-").compactMap { Int($0) }
            guard ymd.count == 3 else { throw Self.invalid(text) }
            fields.tm_year = Int32(ymd[0] - 1900)
            fields.tm_mon = Int32(ymd[1] - 1)
            fields.tm_mday = Int32(ymd[2])
        }
        guard parts.count <= 2, hm.count == 2, (0..<24).contains(hm[0]), (0..<60).contains(hm[1]) else {
            throw Self.invalid(text)
        }
        fields.tm_hour = Int32(hm[0])
        fields.tm_min = Int32(hm[1])
        fields.tm_sec = 0
        fields.tm_isdst = -1
        let epoch = mktime(&fields)
        guard epoch != -1 else { throw Self.invalid(text) }
        return Timestamp(microseconds: Int64(epoch) * 1_000_000)
    }

    static func invalid(_ text: String) -> ValidationError {
        ValidationError("\"\(text)\" is not a time; write HH:MM (today), \"YYYY-MM-DD HH:MM\", or none.")
    }

    func run() async throws {
        let deadline = try Self.parse(time, now: Date())
        try await options.run("set the session's deadline") { try await $0.setSessionDeadline(deadline) }
        try await Self.report(options, after: "the time limit was changed")
    }

    /// What `extend` and `deadline` print once the change is made: the session's end now.
    static func report(_ options: GlobalOptions, after done: String) async throws {
        let summary = try await options.run("read the status (\(done))") { try await StatusSummary.read($0) }
        if options.json { return Output.json(summary.json) }
        let status = summary.status
        if status.sessionState == .expired {
            return Output.write("The session has expired: it takes no input until the passcode ends it.\n")
        }
        guard let deadline = status.sessionDeadline else { return Output.write("The session has no time limit.\n") }
        Output.write("The session ends at \(StatusSummary.deadline(deadline, now: Date())).\n")
    }
}

/// `kioskctl profiles`: the installed profiles, as kioskd sees them (docs/kioskctl.md).
struct ProfilesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profiles",
        abstract: "List the installed profiles (admin).",
        discussion: """
            Each profile in kioskd's profile directory: whether it can start a session (it \
            parses, and a passcode hash it holds is in a private file; `kioskctl profile check` \
            says why not), whether it holds a passcode hash, and its description.
            """
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let profiles = try await options.run("list the profiles") { try await $0.listProfiles() }
        if options.json {
            return Output.json(profiles.map { ProfileJSON(name: $0.name, description: $0.description, checks: $0.checks, holdsHash: $0.holdsHash) })
        }
        if profiles.isEmpty { return Output.write("No profiles are installed.\n") }
        let width = max(7, profiles.map(\.name.count).max() ?? 0)
        func pad(_ name: String) -> String { name + String(repeating: " ", count: max(0, width - name.count)) }
        var text = pad("profile") + "  checks  hash  description\n"
        for profile in profiles {
            text += pad(profile.name)
            text += profile.checks ? "  yes   " : "  NO    "
            text += profile.holdsHash ? "  yes " : "  no  "
            text += " " + (profile.description.split(separator: "\n").first.map(String.init) ?? "") + "\n"
        }
        Output.write(text)
    }
}

/// One profile in `kioskctl profiles --json`.
struct ProfileJSON: Encodable {
    var name: String
    var description: String
    var checks: Bool
    var holdsHash: Bool

    enum CodingKeys: String, CodingKey {
        case name, description, checks
        case holdsHash = "holds_hash"
    }
}

/// `kioskctl reload`: the session takes its edited profile (docs/kioskctl.md); what
/// `systemctl reload kioskd` runs.
struct ReloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Put the session's edited profile in force (admin).",
        discussion: """
            kioskd reads the active session's profile file again: its locks change at once, its \
            time limit counts from the session's start. A file that does not load leaves the \
            last good profile in force, and reload fails with the reason (so does \
            `systemctl reload kioskd`, which runs this).
            """
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run("reload the session's profile") { try await $0.reloadProfiles() }
        let summary = try await StatusSummary.readForJSON(options, after: "the profile was reloaded")
        if let summary { return Output.json(summary.json) }
        Output.write("Reloaded the session's profile.\n")
    }
}

/// `kioskctl confirm`: the trial session stays (docs/kioskctl.md).
struct ConfirmCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "confirm",
        abstract: "Keep a trial session started with `start --trial` (admin).")

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run("confirm the session") { try await $0.confirmSession() }
        let summary = try await StatusSummary.readForJSON(options, after: "the session was confirmed")
        if let summary { return Output.json(summary.json) }
        Output.write("Confirmed the session: it stays until it is ended.\n")
    }
}
