import BusTestSupport
import Foundation
import KioskCore
import KioskCrypt
import KioskDaemonTestSupport
import KioskInput
import KioskTestSupport
import KioskTraces
import SystemdKit
import Testing

@testable import KioskDaemon

/// One table of what happens at the kiosk — the exit gesture, the PIN typed, Esc, time passing —
/// run through kioskd's manager in process and through `kioskctl replay`'s `Replay` on a
/// recording of the same keys: both run ``SessionMachine``, so both must close the prompt for the
/// same reasons, in the same order (docs/architecture.md § The session machine); the PIN pad's
/// rows tap the pad on a recorded touchscreen, which the replay's filter reads. Rows marked
/// `daemonOnly` need a bus call in the middle, which a recording cannot hold.
@Suite(.serialized) struct KioskSequenceTests {
    enum Step: Sendable, CustomStringConvertible {
        case gesture, digits(String), enter, esc
        /// Keys of the prompt's PIN pad touched on the touchscreen: digits, then `OK`.
        case pad(String), padOK
        /// Time passes with no key (a recording's next event comes this much later).
        case wait(seconds: Int64)
        /// An admin reloads the session's profile (`ReloadProfiles`): the daemon only.
        case reload
        /// An admin ends the session (`ForceEndSession`): the daemon only.
        case forceEnd
        /// Someone ends the session with the passcode over the bus (`EndSession`): the daemon only.
        case endSession(String)

        var description: String {
            switch self {
            case .gesture: "gesture"
            case .digits(let text): text
            case .enter: "Enter"
            case .pad(let text): "pad \(text)"
            case .padOK: "pad OK"
            case .esc: "Esc"
            case .wait(let seconds): "wait \(seconds) s"
            case .reload: "reload"
            case .forceEnd: "ForceEndSession"
            case .endSession(let passcode): "EndSession \(passcode)"
            }
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var steps: [Step]
        var outcomes: [PromptCloseReason]
        var expired = false
        var daemonOnly = false
        var testDescription: String { name }
    }

    static let wrongSix: [Step] = Array(repeating: [Step.gesture, .digits("9999"), .enter], count: 6).flatMap { $0 }

    static let rows: [Row] = [
        Row(name: "right", steps: [.gesture, .digits("1234"), .enter], outcomes: [.accepted]),
        Row(name: "wrong", steps: [.gesture, .digits("9999"), .enter], outcomes: [.rejected]),
        Row(
            name: "wrong then right", steps: [.gesture, .digits("9999"), .enter, .gesture, .digits("1234"), .enter],
            outcomes: [.rejected, .accepted]),
        Row(name: "cancel", steps: [.gesture, .digits("12"), .esc], outcomes: [.cancelled]),
        Row(name: "touch pad", steps: [.gesture, .pad("1234"), .padOK], outcomes: [.accepted]),
        Row(name: "touch pad, wrong", steps: [.gesture, .pad("12"), .padOK], outcomes: [.rejected]),
        Row(name: "timeout", steps: [.gesture, .digits("12"), .wait(seconds: 31)], outcomes: [.timeout]),
        Row(
            name: "throttled", steps: wrongSix + [.gesture, .digits("1234"), .enter],
            outcomes: Array(repeating: .rejected, count: 6) + [.throttled]),
        Row(
            name: "throttled, then the wait is over",
            steps: wrongSix + [.wait(seconds: 31), .gesture, .digits("1234"), .enter],
            outcomes: Array(repeating: .rejected, count: 6) + [.accepted]),
        Row(name: "expired session", steps: [.gesture, .digits("1234"), .enter], outcomes: [.accepted], expired: true),
        Row(
            name: "the gesture after the session ended opens nothing",
            steps: [.gesture, .digits("1234"), .enter, .gesture, .digits("1234"), .enter], outcomes: [.accepted]),
        Row(
            name: "reload mid-prompt", steps: [.gesture, .digits("12"), .reload, .digits("34"), .enter],
            outcomes: [.accepted], daemonOnly: true),
        Row(
            name: "force end mid-prompt", steps: [.gesture, .digits("12"), .forceEnd, .digits("34"), .enter],
            outcomes: [.ended], daemonOnly: true),
        Row(
            name: "a passcode over the bus mid-prompt", steps: [.gesture, .digits("99"), .endSession("1234"), .gesture],
            outcomes: [.ended], daemonOnly: true),
        Row(
            name: "a wrong one over the bus leaves the prompt open",
            steps: [.gesture, .digits("12"), .endSession("9999"), .digits("34"), .enter],
            outcomes: [.accepted], daemonOnly: true),
    ]

    static let profile = PromptTests.museum

    // MARK: The daemon, in process

    func daemon(_ row: Row) async throws -> [PromptCloseReason] {
        let manager = try await InProcessManager(uid: 0, profiles: ["museum": Self.profile])
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        // The prompt's timer fires on real time and judges on the manager's clock, which only the
        // test moves: a short timeout keeps the waits short.
        try await manager.onLoop { $0.promptTimeout = .milliseconds(100) }
        try client.call("StartSession", [.string("museum")])
        if row.expired {
            // A deadline at or before now expires the session now.
            try client.call("SetSessionDeadline", [.uint64(UInt64(manager.clock.now().microseconds))])
            #expect(try client.property("SessionState")?.string == "expired")
        }
        var closed = 0
        func closes() -> [String] { manager.journal.all.filter { $0.hasPrefix("signal PromptClosed ") } }
        for step in row.steps {
            // Enter and Esc close an open prompt (a check takes yescrypt's time): the next step
            // comes once its PromptClosed arrived. With the prompt closed they do nothing, which
            // PromptState, read on the manager's loop after the key, shows.
            let wasOpen = try client.property("PromptState")?.string == "open"
            switch step {
            case .gesture: try await manager.onLoop { $0.requestExit() }
            case .digits(let text), .pad(let text):
                // The filter reads a pad touch as the key it lands on (KioskInput's scenarios
                // pin where): the manager gets the same prompt keys either way.
                for digit in text { try await manager.onLoop { $0.promptKey(.digit(UInt8(String(digit))!)) } }
            case .esc: try await manager.onLoop { $0.promptKey(.cancel) }
            case .enter, .padOK: try await manager.onLoop { $0.promptKey(.enter) }
            case .wait(let seconds):
                manager.clock.advance(by: .seconds(seconds))
            case .reload:
                try client.call("ReloadProfiles")
            case .forceEnd:
                try client.call("ForceEndSession")
            case .endSession(let passcode):
                // A wrong one is refused (WrongPasscode) and leaves the prompt as it was; a right
                // one ends the session, which closes an open prompt.
                let error = client.errorName("EndSession", [.string(passcode)])
                #expect(error == nil || error == KioskError.Code.wrongPasscode.dbusName, "\(step): \(error ?? "")")
                if wasOpen, error == nil { #expect(waitForNewClose(after: closed, closes), "\(step) closed nothing") }
            }
            switch step {
            case .enter where wasOpen, .esc where wasOpen, .padOK where wasOpen, .forceEnd where wasOpen:
                #expect(waitForNewClose(after: closed, closes), "\(step) closed nothing")
            case .wait where wasOpen:
                // The prompt's timer (100 ms of real time) finds the prompt's time up.
                #expect(waitForNewClose(after: closed, closes), "\(step) closed nothing")
            default:
                break
            }
            closed = closes().count
        }
        return closes().compactMap { PromptCloseReason(rawValue: String($0.dropFirst("signal PromptClosed ".count))) }
    }

    /// Waits until the manager has closed the prompt more than `count` times (at most 10 s).
    func waitForNewClose(after count: Int, _ closes: () -> [String]) -> Bool {
        eventually { closes().count > count }
    }

    // MARK: The replay, on a recording of the same keys

    static let keyboard = DeviceDescription(name: "kbd", codes: [1: Set(1..<0x100)])
    /// A touchscreen, 0…999 on both axes, protocol B.
    static let touchscreen: DeviceDescription = {
        let axis = DeviceDescription.AbsInfo(minimum: 0, maximum: 999)
        return DeviceDescription(
            name: "ts", properties: [1], codes: [1: [330], 3: [0, 1, 0x2f, 0x35, 0x36, 0x39]],
            absInfo: [
                0: axis, 1: axis, 0x2f: DeviceDescription.AbsInfo(minimum: 0, maximum: 9), 0x35: axis, 0x36: axis,
                0x39: DeviceDescription.AbsInfo(minimum: 0, maximum: 65535),
            ])
    }()
    static let (power, enter, esc) = (UInt16(116), UInt16(28), UInt16(1))

    func recording(_ row: Row) throws -> Trace {
        let pad = try ProfileParser.parse(source: Self.profile, file: "museum.toml").filterPolicy.pinPad
        var keys: [InputEvent] = []
        var touches: [InputEvent] = []
        var time: Int64 = 1_000_000
        var tracking: Int32 = 0
        func event(_ type: UInt16, _ code: UInt16, _ value: Int32) -> InputEvent {
            InputEvent(seconds: Int(time / 1_000_000), microseconds: Int(time % 1_000_000), type: type, code: code, value: value)
        }
        func key(_ code: UInt16) {
            for value: Int32 in [1, 0] {
                time += 20_000
                keys += [event(1, code, value), event(0, 0, 0)]
            }
        }
        /// A tap in the middle of the pad's key `label`.
        func tap(_ label: String) throws {
            let target = try #require(pad.first { $0.label == label }, "no pad key \(label)")
            let (x, y) = (Int32((target.x + target.width / 2) * 999), Int32((target.y + target.height / 2) * 999))
            tracking += 1
            time += 20_000
            touches += [
                event(3, 0x2f, 0), event(3, 0x39, tracking), event(3, 0x35, x), event(3, 0x36, y), event(1, 330, 1),
                event(3, 0, x), event(3, 1, y), event(0, 0, 0),
            ]
            time += 20_000
            touches += [event(3, 0x39, -1), event(1, 330, 0), event(0, 0, 0)]
        }
        for step in row.steps {
            switch step {
            case .gesture: for _ in 0..<3 { key(Self.power) }
            case .digits(let text): for digit in text { key(digit == "0" ? 11 : UInt16(String(digit))! + 1) }
            case .enter: key(Self.enter)
            case .esc: key(Self.esc)
            case .pad(let text): for digit in text { try tap(String(digit)) }
            case .padOK: try tap("OK")
            case .wait(let seconds): time += seconds * 1_000_000
            case .reload, .forceEnd, .endSession: break
            }
        }
        // A last key after the steps: a recording's clock moves only with its events.
        key(30)
        return Trace(devices: [
            Trace.Device(description: Self.keyboard, events: keys),
            Trace.Device(description: Self.touchscreen, events: touches),
        ])
    }

    func replay(_ row: Row) throws -> [PromptCloseReason] {
        let profile = try ProfileParser.parse(source: Self.profile, file: "museum.toml")
        let hash = try #require(profile.passcodeHash)
        var policy = profile.filterPolicy
        if row.expired { policy.holdAllInput = true }
        let notes = Replay.frames(
            trace: try recording(row), policy: policy,
            passcode: { (try? Passcode.verify($0, against: hash)) ?? false }, expired: row.expired
        ).compactMap(\.note)
        let reasons = Dictionary(uniqueKeysWithValues: PromptCloseReason.allCases.map { (Replay.note($0), $0) })
        return notes.compactMap { reasons[$0] }
    }

    @Test(arguments: rows)
    func theDaemonAndTheReplayCloseThePromptAlike(_ row: Row) async throws {
        let daemon = try await daemon(row)
        #expect(daemon == row.outcomes, "kioskd: \(row.steps)")
        guard !row.daemonOnly else { return }
        let replay = try replay(row)
        #expect(replay == row.outcomes, "replay: \(row.steps)")
        #expect(replay == daemon)
    }

    // MARK: The session's time, alike

    /// Two minutes, warnings at one minute and at 30 s left.
    static let timed = """
        description = "Two minutes a turn"
        [buttons]
        volume = "locked"
        [session]
        time-limit = "2m"
        warnings = ["1m", "30s"]
        """

    /// The moments (seconds from the start) the table checks: before any mark, past each
    /// warning, past the end.
    static let moments: [Int64] = [10, 61, 91, 121]

    /// The daemon in process: its manual clock moved to each moment and the session's timer run.
    func daemonTimeLimit() async throws -> [String] {
        let manager = try await InProcessManager(uid: 0, profiles: ["timed": Self.timed])
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("timed")])
        var elapsed: Int64 = 0
        var outcomes: [String] = []
        for moment in Self.moments {
            manager.clock.advance(by: .seconds(moment - elapsed))
            elapsed = moment
            let before = manager.journal.all.count
            try await manager.onLoop { $0.sessionTick() }
            // Past a mark the tick saves, then signals (a warning, or the expiry's
            // PropertiesChanged): wait for that signal, not for the save.
            if moment >= 61 {
                func signalled() -> Bool {
                    manager.journal.all[before...].contains {
                        $0.hasPrefix("signal TimeLimitWarning ") || $0 == "signal PropertiesChanged"
                    }
                }
                let deadline = ContinuousClock.now + .seconds(10)
                while !signalled(), ContinuousClock.now < deadline { usleep(1000) }
            }
            for entry in manager.journal.all[before...] {
                if entry.hasPrefix("signal TimeLimitWarning ") {
                    outcomes.append("TimeLimitWarning " + entry.dropFirst("signal TimeLimitWarning ".count))
                }
            }
            if try client.property("SessionState")?.string == "expired", !outcomes.contains("SessionExpired") {
                outcomes.append("SessionExpired")
            }
        }
        return outcomes
    }

    /// The replay: a key at each moment on the recording's clock, the session's time counted from
    /// its first event (a key at 0 s).
    func replayTimeLimit() throws -> (notes: [String], forwarded: [Int64]) {
        let profile = try ProfileParser.parse(source: Self.timed, file: "timed.toml")
        var events: [InputEvent] = []
        for second in [0] + Self.moments {
            for (offset, value) in [(Int64(0), Int32(1)), (20_000, 0)] {
                let time = 1_000_000 + second * 1_000_000 + offset
                let (s, u) = (Int(time / 1_000_000), Int(time % 1_000_000))
                events += [
                    InputEvent(seconds: s, microseconds: u, type: 1, code: 30, value: value),
                    InputEvent(seconds: s, microseconds: u, type: 0, code: 0, value: 0),
                ]
            }
        }
        let frames = Replay.frames(
            trace: Trace(devices: [Trace.Device(description: Self.keyboard, events: events)]),
            policy: profile.filterPolicy, session: profile.session)
        let forwarded = frames.filter { $0.note == nil }.compactMap { $0.events.first { $0.type == 1 && $0.value == 1 } }
            .map { Int64($0.seconds) - 1 }
        return (frames.compactMap(\.note), forwarded)
    }

    @Test func theDaemonAndTheReplayKeepTheTimeLimitAlike() async throws {
        let daemon = try await daemonTimeLimit()
        let replay = try replayTimeLimit()
        #expect(daemon == ["TimeLimitWarning 59", "TimeLimitWarning 29", "SessionExpired"], "\(daemon)")
        #expect(replay.notes == daemon)
        // The replay forwards keys until the time runs out, and none after.
        #expect(replay.forwarded == [0, 10, 61, 91])
    }
}
