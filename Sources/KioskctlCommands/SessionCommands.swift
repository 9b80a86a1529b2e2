import ArgumentParser
import KioskClient
import KioskCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct StartCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start a guided-access session (admin).",
        discussion: """
            PROFILE is a name in kioskd's profile directory (/etc/kioskd/profiles/PROFILE.toml). \
            On the kiosk itself (no -H), it then warns on stderr about each key assistive \
            technology needs that the profile's group locks swallow (as `kioskctl profile check` \
            does), and reports which OS-level escape paths kioskd cannot \
            close are still open (sysrq, Ctrl+Alt+Del, logind's keys and VTs, gettys, usbguard); \
            README § "Locking down the kiosk image" says how to close each.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("The profile's name.", valueName: "profile"))
    var profile: String

    @Option(
        help: ArgumentHelp(
            "Start a trial that ends by itself after this long (like 5m) unless `kioskctl confirm` comes in time; a reboot ends it too.",
            valueName: "duration"))
    var trial: String?

    /// Where the escape-path audit reads the system's files (tests point it at a fake root).
    @Option(name: .customLong("escape-paths-root"), help: .hidden)
    var escapePathsRoot = "/"

    /// kioskd's profile directory, where the assistive-key check reads the profile (tests point
    /// it at their kioskd's).
    @Option(name: .customLong("profile-dir"), help: .hidden)
    var profileDirectory = "/etc/kioskd/profiles"

    func validate() throws {
        try CommandLineValues.validateProfileName(profile)
        if let trial { _ = try Self.trialSeconds(trial) }
    }

    static func trialSeconds(_ text: String) throws(ValidationError) -> UInt64 {
        guard !text.hasPrefix("-"), let seconds = try? ExtendCommand.seconds(text), (10...86_400).contains(seconds)
        else {
            throw ValidationError("--trial \"\(text)\": give a duration from 10s to 1d, like 5m.")
        }
        return UInt64(seconds)
    }

    func run() async throws {
        if let trial {
            let seconds = try Self.trialSeconds(trial)
            try await options.run("start the trial session") {
                try await $0.startTrialSession(profile: profile, seconds: seconds)
            }
        } else {
            try await options.run("start the session") { try await $0.startSession(profile: profile) }
        }
        let summary = try await StatusSummary.readForJSON(options, after: "the session was started")
        // What kioskd found wrong without weakening a lock (a [[device]] entry that matches no
        // device): said at once, on stderr, so an admin sees a mistyped entry when it matters.
        if summary == nil {
            let status = try await options.run("read the session's warnings (the session was started)") {
                try await $0.status()
            }
            for warning in status.sessionWarnings { printError("warning: \(warning)") }
        }
        // The keys a screen reader or sticky and slow keys need that the profile's group locks
        // swallow (docs/accessibility.md): read from the profile here, on the kiosk itself; the
        // session's start logged them too. A file that no longer parses was the daemon's to
        // judge: said nothing of here.
        if options.host == nil, let profile = try? ProfileFile.load("\(profileDirectory)/\(self.profile).toml") {
            for warning in profile.assistiveKeyWarnings { printError("warning: \(warning)") }
        }
        // Another host's escape paths cannot be read from here; its admin runs start there.
        let escapePaths = options.host == nil ? EscapePaths.audit(root: escapePathsRoot) : nil
        if var json = summary?.json {
            json.escapePaths = escapePaths?.map {
                EscapePathJSON(check: $0.check.rawValue, state: $0.state.rawValue, detail: $0.detail)
            }
            return Output.json(json)
        }
        Output.write("Started a guided-access session with the profile \(profile).\n")
        if let trial {
            Output.write("It is a trial: it ends by itself in \(trial) unless `kioskctl confirm` comes first.\n")
        }
        if let escapePaths { Output.write(EscapePaths.report(escapePaths)) }
    }
}

/// One escape path in `kioskctl start --json`.
struct EscapePathJSON: Encodable {
    var check: String
    var state: String
    var detail: String
}

struct EndCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "end",
        abstract: "End the session with its passcode.",
        discussion: """
            The passcode is read from the terminal without echo, or with --passcode-stdin from \
            the first line of stdin; never from the command line. Wrong passcodes are throttled \
            by kioskd. An admin who does not know the passcode uses force-end.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Flag(help: "Read the passcode from the first line of stdin instead of the terminal.")
    var passcodeStdin = false

    func run() async throws {
        try await options.run("end the session") { manager in
            let passcode =
                passcodeStdin
                ? try PasscodeReader.stdinLines(1, naming: ["the passcode"])[0]
                : try PasscodeReader.prompt("Passcode: ")
            try await manager.endSession(passcode: passcode)
        }
        let summary = try await StatusSummary.readForJSON(options, after: "the session was ended")
        if let summary { return Output.json(summary.json) }
        Output.write("Ended the guided-access session.\n")
    }
}

struct ForceEndCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "force-end",
        abstract: "End the session without the passcode (admin).",
        discussion: """
            For an admin who lost the passcode or is locked out by the throttle. It calls \
            ForceEndSession, which needs root or the polkit action \
            org.kioskd.GuidedAccess1.manage-session; kioskd journals who did it.
            """
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await options.run("force-end the session") { try await $0.forceEndSession() }
        let summary = try await StatusSummary.readForJSON(options, after: "the session was ended")
        if let summary { return Output.json(summary.json) }
        Output.write("Ended the guided-access session without the passcode.\n")
    }
}

struct PasscodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passcode",
        abstract: "Set the passcode that ends sessions, or clear its throttle.",
        subcommands: [Set.self, ResetThrottle.self]
    )

    struct ResetThrottle: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset-throttle",
            abstract: "Let attempts from the kiosk (or a uid) try the passcode again at once (admin).",
            discussion: """
                Wrong passcodes make the next attempt from the same place wait (30 s, doubling, \
                at most 5 min at the kiosk and 1 h for a uid on the bus). At the kiosk, a \
                visitor's guesses make staff wait too: this clears that count. A session's start \
                and end clear the kiosk's count as well.
                """
        )

        @OptionGroup var options: GlobalOptions

        @Option(
            help: ArgumentHelp(
                "Whose count to clear: kiosk (the prompt at the kiosk), a uid, or all.", valueName: "kiosk|UID|all"))
        var source = "kiosk"

        func validate() throws {
            guard Self.wireSource(source) != nil else {
                throw ValidationError("--source is kiosk, a uid (a number) or all, not '\(source)'.")
            }
        }

        /// The `ResetPasscodeThrottle` argument for `--source`: `kiosk`, `all`, `uid N`.
        static func wireSource(_ source: String) -> String? {
            if source == "kiosk" || source == "all" { return source }
            return UInt32(source).map { "uid \($0)" }
        }

        func run() async throws {
            let wire = Self.wireSource(source)!
            try await options.run("reset the passcode throttle") { try await $0.resetPasscodeThrottle(source: wire) }
            if options.json { return Output.json([String: String]()) }
            Output.write(
                source == "all"
                    ? "Cleared every wrong-passcode count.\n"
                    : "Cleared the wrong-passcode count of \(source == "kiosk" ? "the kiosk" : "uid \(source)").\n")
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the passcode (admin).",
            discussion: """
                Asks on the terminal, without echo, for the current passcode (leave it empty \
                while none is set) and twice for the new one; with --passcode-stdin, reads the \
                current passcode from the first line of stdin and the new one from the second. \
                A profile's own [passcode] hash takes precedence over this passcode. Staff type \
                the passcode at the kiosk on kioskd's prompt, digits only (a keyboard's digit keys \
                or the PIN pad): a passcode with anything else can end sessions only over the bus, \
                and setting one says so.
                """
        )

        @OptionGroup var options: GlobalOptions

        @Flag(help: "Read the current and the new passcode from the first two lines of stdin.")
        var passcodeStdin = false

        func run() async throws {
            var chosen = ""
            try await options.run("set the passcode") { manager in
                let current: String, new: String
                if passcodeStdin {
                    let lines = try PasscodeReader.stdinLines(2, naming: ["the current passcode", "the new passcode"])
                    (current, new) = (lines[0], lines[1])
                } else {
                    current = try PasscodeReader.prompt("Current passcode (empty if none is set): ")
                    new = try PasscodeReader.prompt("New passcode: ")
                    guard try PasscodeReader.prompt("New passcode again: ") == new else {
                        throw CommandError("the two new passcodes differ; nothing was changed.")
                    }
                }
                try await manager.setPasscode(current: current, new: new)
                chosen = new
            }
            if let warning = Self.kioskWarning(for: chosen) { printError("warning: \(warning)") }
            if options.json { return Output.json([String: String]()) }
            Output.write("Set the passcode.\n")
        }

        /// Why a passcode cannot be typed on kioskd's prompt at the kiosk, which reads digits
        /// only (by key code, so every layout types the same ones); nil when it can.
        static func kioskWarning(for passcode: String) -> String? {
            guard !passcode.isEmpty, !passcode.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
            return
                "the new passcode is not all digits, so staff cannot type it on the prompt at the kiosk (it reads digits only); it ends sessions over the bus (kioskctl end). Choose a PIN of at least 6 digits to end sessions at the kiosk."
        }
    }
}
