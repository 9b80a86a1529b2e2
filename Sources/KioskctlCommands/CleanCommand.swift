import ArgumentParser
import KioskClient
import KioskCore

/// `kioskctl clean DURATION`, `kioskctl clean --stop`: hold the kiosk's input while its screen
/// is wiped (docs/kioskctl.md, docs/dbus-api.md § Cleaning the screen).
struct CleanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clean",
        abstract: "Hold every touch, pointer and key while the screen is wiped (admin).",
        discussion: """
            DURATION is 5s to 5m, like 30s or 2m; the kiosk shows a countdown. What the \
            session's profile lets assistive technology do ([accessibility], [[device]]) keeps \
            working, and the exit gesture still opens the passcode prompt. Works with or without \
            a session. --stop ends it early; run again, it starts over from now.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: ArgumentHelp("How long to hold input, 5s to 5m.", valueName: "duration"))
    var duration: String?

    @Flag(help: "End the cleaning now.")
    var stop = false

    func validate() throws {
        if stop {
            guard duration == nil else { throw ValidationError("Give a duration or --stop, not both.") }
            return
        }
        _ = try Self.seconds(duration)
    }

    /// Whole seconds of `text`, within the bounds kioskd takes.
    static func seconds(_ text: String?) throws(ValidationError) -> UInt64 {
        guard let text else { throw ValidationError("Give how long to hold input (5s to 5m), or --stop.") }
        let range = Profile.Session.cleaningTimeRange
        guard let duration = Duration(kioskText: text), duration > .zero else {
            throw ValidationError(
                "\"\(text)\" is not a duration; write a number with a unit (s, m), like 30s or 2m.")
        }
        guard range.contains(duration) else {
            throw ValidationError(
                "Cleaning takes \(range.lowerBound.kioskText) to \(range.upperBound.kioskText), not \(duration.kioskText)."
            )
        }
        return UInt64(duration.components.seconds + (duration.components.attoseconds > 0 ? 1 : 0))
    }

    func run() async throws {
        if stop {
            try await options.run("stop cleaning the screen") { try await $0.stopCleaning() }
            if options.json { return try await report() }
            print("Cleaning ended: input reaches the kiosk again as the locks say.")
            return
        }
        let seconds = try Self.seconds(duration)
        try await options.run("start cleaning the screen") { try await $0.startCleaning(seconds: seconds) }
        if options.json { return try await report() }
        print(
            "Cleaning: touch, pointers and keys are held for \(Duration.seconds(Int64(seconds)).kioskText); `kioskctl clean --stop` ends it early."
        )
    }

    /// `--json`: when the cleaning ends now, `{"cleaning_until_usec": N}` (0: none runs).
    private func report() async throws {
        let status = try await options.run("read the status") { try await $0.status() }
        Output.json(["cleaning_until_usec": UInt64(max(0, status.cleaningUntil?.microseconds ?? 0))])
    }
}
