import ArgumentParser
import KioskClient
import KioskCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Print changes as they happen, until interrupted.",
        discussion: """
            The first line is the session as it is now (or that kioskd is not running). Then one \
            line per change: a restriction's new state, the session's new state, an exit request \
            (the exit gesture), the passcode prompt at the kiosk, a time-limit warning, kioskd \
            stopping or starting. With --json, one JSON object per line, with an "event" key: \
            session, restriction, exit-requested, prompt-closed, time-limit-warning, \
            kioskd-started, kioskd-stopped.
            """
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let events = try await options.run("monitor kioskd", keepingConnection: true) { await $0.events() }
        var last = ""
        for await event in events {
            if event == .disconnected {
                printError("Failed to monitor kioskd: the bus connection was lost.")
                throw ExitCode.failure
            }
            // A stroke being drawn at the kiosk changes the status many times a second and prints
            // nothing new: while staff draw, a line the same as the last one is not printed again.
            let line = options.json ? Output.jsonText(EventJSON(event), compact: true) : Self.line(event)
            if case .statusChanged(let status) = event, !status.drawing.isEmpty, line == last { continue }
            last = line
            Output.write(line + "\n")
        }
    }

    static func line(_ event: ManagerEvent) -> String {
        switch event {
        case .restrictionStateChanged(let app, let id, let state):
            return "restriction \(id) (\(app)): \(state.rawValue)"
        case .statusChanged(let status):
            var line = "session \(status.sessionState.rawValue)"
            if !status.activeProfile.isEmpty { line += ", profile \(status.activeProfile)" }
            if let deadline = status.sessionDeadline {
                line += ", deadline \(StatusSummary.deadline(deadline, now: Date()))"
            }
            if let problem = status.sessionProblem { line += "; problem: \(problem)" }
            if status.prompt.state != .closed {
                line += "; prompt \(status.prompt.state.rawValue), \(status.prompt.length) typed"
            }
            if let until = status.cleaningUntil {
                line += "; cleaning until \(StatusSummary.deadline(until, now: Date()))"
            }
            if !status.drawing.isEmpty {
                let drawing = status.drawingState
                line += "; drawing the regions of \(status.drawing): \(drawing.shapes.count) region\(drawing.shapes.count == 1 ? "" : "s")"
                if let selected = drawing.selected, drawing.shapes.indices.contains(selected) {
                    line += ", \(drawing.shapes[selected].name) selected"
                }
                if !drawing.notice.isEmpty { line += ", not added: \(drawing.notice)" }
            }
            return line
        case .idleReset:
            return "idle reset: nobody used the kiosk, back to the start"
        case .exitRequested:
            return "exit requested: show the passcode prompt"
        case .promptClosed(let reason):
            return "prompt closed: \(reason.rawValue)"
        case .timeLimitWarning(let seconds):
            return "time limit warning: \(Duration.seconds(Int64(clamping: seconds)).kioskText) left"
        case .timeExtended(let seconds, let left):
            return
                "time extended by the visitor: \(Duration.seconds(Int64(clamping: seconds)).kioskText) more, \(left) extensions left"
        case .cleaningStarted(let seconds):
            return "cleaning: input held for \(Duration.seconds(Int64(clamping: seconds)).kioskText)"
        case .cleaningEnded:
            return "cleaning ended: input flows again"
        case .daemonStarted:
            return "kioskd is running"
        case .daemonStopped:
            return "kioskd is not running"
        case .disconnected:
            return "disconnected"
        }
    }
}

/// One line of `monitor --json`: only the keys of its event are present.
struct EventJSON: Encodable {
    var event: String
    var app: String?
    var id: String?
    var state: String?
    var sessionState: String?
    var activeProfile: String?
    var sessionDeadline: UInt64?
    var sessionProblem: String?
    var secondsLeft: UInt64?
    var secondsAdded: UInt64?
    var extensionsLeft: UInt32?
    /// Only while the prompt is not closed, so the lines of a kiosk without one stay as they were.
    var promptState: String?
    var promptLength: Int?
    var reason: String?
    var seconds: UInt64?
    /// Only while the screen is cleaned, as the prompt's keys.
    var cleaningUntil: UInt64?
    /// Only while staff draw regions: the profile, how many regions there are, the one selected
    /// and why the last stroke added nothing.
    var drawing: String?
    var regions: Int?
    var selected: String?
    var notice: String?

    enum CodingKeys: String, CodingKey {
        case event, app, id, state
        case sessionState = "session_state", activeProfile = "active_profile", sessionDeadline = "session_deadline_usec"
        case sessionProblem = "session_problem", secondsLeft = "seconds_left"
        case secondsAdded = "seconds_added", extensionsLeft = "extensions_left"
        case promptState = "prompt_state", promptLength = "prompt_length", reason, seconds
        case cleaningUntil = "cleaning_until_usec"
        case drawing, regions, selected, notice
    }

    init(_ event: ManagerEvent) {
        switch event {
        case .restrictionStateChanged(let app, let id, let state):
            self.event = "restriction"
            (self.app, self.id, self.state) = (app, id, state.rawValue)
        case .statusChanged(let status):
            self.event = "session"
            sessionState = status.sessionState.rawValue
            activeProfile = status.activeProfile
            sessionDeadline = UInt64(max(0, status.sessionDeadline?.microseconds ?? 0))
            sessionProblem = status.sessionProblem
            if status.prompt.state != .closed {
                (promptState, promptLength) = (status.prompt.state.rawValue, status.prompt.length)
            }
            cleaningUntil = status.cleaningUntil.map { UInt64(max(0, $0.microseconds)) }
            if !status.drawing.isEmpty {
                let drawn = status.drawingState
                drawing = status.drawing
                regions = drawn.shapes.count
                selected = drawn.selected.flatMap { drawn.shapes.indices.contains($0) ? drawn.shapes[$0].name : nil }
                notice = drawn.notice.isEmpty ? nil : drawn.notice
            }
        case .idleReset:
            self.event = "idle-reset"
        case .exitRequested:
            self.event = "exit-requested"
        case .promptClosed(let why):
            self.event = "prompt-closed"
            reason = why.rawValue
        case .timeLimitWarning(let seconds):
            self.event = "time-limit-warning"
            secondsLeft = seconds
        case .timeExtended(let seconds, let left):
            self.event = "time-extended"
            (secondsAdded, extensionsLeft) = (seconds, left)
        case .cleaningStarted(let length):
            self.event = "cleaning-started"
            seconds = length
        case .cleaningEnded:
            self.event = "cleaning-ended"
        case .daemonStarted:
            self.event = "kioskd-started"
        case .daemonStopped:
            self.event = "kioskd-stopped"
        case .disconnected:
            self.event = "disconnected"
        }
    }
}
