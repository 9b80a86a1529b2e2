import ArgumentParser
import Glibc
import KioskClient
import KioskCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the session and how many restrictions are denied.",
        discussion:
            "The session state, its profile and deadline, the number of apps and of their restrictions, how many are denied, and kioskd's version."
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let summary = try await options.run("read the status") { try await StatusSummary.read($0) }
        if options.json {
            Output.json(summary.json)
        } else {
            Output.write(summary.text(now: Date()))
        }
    }
}

/// What `kioskctl status` shows: the manager's properties and counts over every app.
struct StatusSummary {
    var status: KioskStatus
    var apps: Int
    var restrictions: Int
    var denied: Int

    /// With `--json`, the status a verb prints once its change is made; nil otherwise. Read on
    /// its own, after the change's call returned, so that a failure to read it says the change
    /// was made (`done`) instead of reporting the change as failed.
    static func readForJSON(_ options: GlobalOptions, after done: String) async throws -> StatusSummary? {
        guard options.json else { return nil }
        return try await options.run("read the status (\(done))") { try await read($0) }
    }

    static func read(_ manager: KioskManager) async throws -> StatusSummary {
        let status = try await manager.status()
        let apps = try await AppCount.read(manager)
        return StatusSummary(
            status: status, apps: apps.count, restrictions: apps.reduce(0) { $0 + $1.restrictions },
            denied: apps.reduce(0) { $0 + $1.denied })
    }

    func text(now: Date) -> String {
        var lines = [
            "session      \(status.sessionState.rawValue)",
            "profile      \(status.activeProfile.isEmpty ? "none" : status.activeProfile)",
            "deadline     \(status.sessionDeadline.map { Self.deadline($0, now: now) } ?? "none")",
        ]
        if let problem = status.sessionProblem {
            let wrapped = TextLayout.wrap(problem, width: 80 - 13, maxLines: 3)
            lines.append("problem      " + wrapped.joined(separator: "\n             "))
        }
        for warning in status.sessionWarnings {
            let wrapped = TextLayout.wrap(warning, width: 80 - 13, maxLines: 4)
            lines.append("warning      " + wrapped.joined(separator: "\n             "))
        }
        // Saves of the state failing (`StateStorage`, docs/state-store.md § When the disk fails).
        if let storage = status.stateStorage {
            let text = "failing since \(Self.localTime(storage.since)): \(storage.problem)"
            let wrapped = TextLayout.wrap(text, width: 80 - 13, maxLines: 6)
            lines.append("storage      " + wrapped.joined(separator: "\n             "))
        }
        if status.displayPower.isOff {
            lines.append("display      off: the next key or touch only wakes it")
        }
        if let until = status.cleaningUntil {
            lines.append("cleaning     input held until \(Self.deadline(until, now: now))")
        }
        if let reset = status.idleWarning {
            lines.append("still there? shown: idle reset at \(Self.deadline(reset, now: now))")
        }
        // Each browser policy in force and the restriction that put it there (docs/browsers.md).
        for policy in status.browserPolicies {
            lines.append("browser      \(policy.browser) \(policy.policy) = \(policy.value)")
            lines.append("               because \(policy.cause)")
        }
        if let set = status.passcodeSet {
            lines.append("passcode     \(set ? "set" : "none")")
        }
        lines += [
            "apps         \(apps)",
            "restrictions \(restrictions), \(denied) denied",
            "version      \(status.version)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// `2026-11-21 05:50:00 UTC, 44m59s left` in the local time zone.
    static func deadline(_ time: Timestamp, now: Date) -> String {
        let date = Date(timeIntervalSince1970: Double(time.microseconds) / 1_000_000)
        let left = Int64(date.timeIntervalSince(now).rounded(.up))
        return localTime(time) + (left > 0 ? ", \(Duration.seconds(left).kioskText) left" : ", passed")
    }

    /// `2026-11-21 05:50:00 UTC`: the time in the local time zone, with the zone's abbreviation
    /// (localtime_r and strftime's `%Z`; FoundationEssentials has no DateFormatter, and the
    /// abbreviation needs no ICU).
    static func localTime(_ time: Timestamp) -> String {
        var seconds = time_t(time.microseconds.quotientAndRemainder(dividingBy: 1_000_000).quotient)
        if time.microseconds < 0 && time.microseconds % 1_000_000 != 0 { seconds -= 1 }
        var fields = tm()
        guard localtime_r(&seconds, &fields) != nil else { return "@\(seconds)" }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S %Z", &fields)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    var json: StatusJSON {
        StatusJSON(
            sessionState: status.sessionState.rawValue, activeProfile: status.activeProfile,
            sessionDeadline: UInt64(max(0, status.sessionDeadline?.microseconds ?? 0)),
            sessionProblem: status.sessionProblem,
            sessionWarnings: status.sessionWarnings.isEmpty ? nil : status.sessionWarnings, apps: apps,
            restrictions: restrictions, denied: denied, version: status.version,
            displayPower: status.displayPower.isOff ? "off" : "on",
            idleWarning: status.idleWarning.map { UInt64(max(0, $0.microseconds)) },
            cleaningUntil: status.cleaningUntil.map { UInt64(max(0, $0.microseconds)) },
            stateStorage: status.stateStorage.map {
                StateStorageJSON(failingSince: UInt64(max(0, $0.since.microseconds)), problem: $0.problem)
            },
            passcodeSet: status.passcodeSet,
            browserPolicies: status.browserPolicies.isEmpty
                ? nil
                : status.browserPolicies.map {
                    BrowserPolicyJSON(browser: $0.browser, policy: $0.policy, value: $0.value, cause: $0.cause)
                })
    }
}

/// `kioskctl status --json`; also what `start`, `end` and `force-end` print with `--json`.
struct StatusJSON: Encodable {
    var sessionState: String
    var activeProfile: String
    /// µs since the epoch (CLOCK_REALTIME), 0 when the session has no time limit.
    var sessionDeadline: UInt64
    /// Only present when kioskd reports a problem with the session.
    var sessionProblem: String?
    /// Only present when kioskd reports warnings about the session (`SessionWarnings`).
    var sessionWarnings: [String]?
    var apps: Int
    var restrictions: Int
    var denied: Int
    var version: String
    /// `on` or `off`: the display as kioskd wants it (`DisplayPower`, `[idle]`).
    var displayPower: String = "on"
    /// Only while "Still there?" is up: when the idle reset comes (µs, CLOCK_REALTIME).
    var idleWarning: UInt64? = nil
    /// Only while the screen is being cleaned: when the hold ends (µs, CLOCK_REALTIME).
    var cleaningUntil: UInt64? = nil
    /// Only while saves of the state fail (`StateStorage`): since when, and why.
    var stateStorage: StateStorageJSON? = nil
    /// Only from `start` on the kiosk itself: which OS-level escape paths are still open.
    var escapePaths: [EscapePathJSON]? = nil
    /// Whether a passcode set with `passcode set` is stored (`PasscodeSet`); absent from a
    /// kioskd without the property.
    var passcodeSet: Bool? = nil
    /// Only while kioskd has browser policies in force (`BrowserPolicies`).
    var browserPolicies: [BrowserPolicyJSON]? = nil

    enum CodingKeys: String, CodingKey {
        case sessionState = "session_state", activeProfile = "active_profile", sessionDeadline = "session_deadline_usec"
        case sessionProblem = "session_problem", sessionWarnings = "session_warnings", apps, restrictions, denied
        case version
        case displayPower = "display_power", idleWarning = "idle_warning_usec"
        case cleaningUntil = "cleaning_until_usec"
        case stateStorage = "state_storage"
        case escapePaths = "escape_paths"
        case passcodeSet = "passcode_set"
        case browserPolicies = "browser_policies"
    }
}

/// One browser policy in `kioskctl status --json`: the browser, the policy's name, its value as
/// JSON text, and what put it there (a restriction id, or web apps' ids).
struct BrowserPolicyJSON: Encodable {
    var browser: String
    var policy: String
    var value: String
    var cause: String
}

/// `state_storage` in `kioskctl status --json`: when saves of the state began to fail (µs,
/// CLOCK_REALTIME) and the problem.
struct StateStorageJSON: Encodable {
    var failingSince: UInt64
    var problem: String

    enum CodingKeys: String, CodingKey {
        case failingSince = "failing_since_usec", problem
    }
}
