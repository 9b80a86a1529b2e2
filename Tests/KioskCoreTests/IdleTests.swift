import Foundation
import KioskAPI
import KioskCore
import KioskInput
import Testing

/// Idle time (`[idle]`) on ``SessionMachine`` alone, on explicit times: the "Still there?"
/// screen before the reset, answered or not, `IdleReset` once per idle period, the display
/// wanted dark and woken, pauses, a `display-off` window by the local minute, and the end of the
/// session; and the profile's checks of `[idle]` at their line.
@Suite struct IdleTests {
    static let start = Timestamp(microseconds: 1_700_000_000_000_000)

    static func profile(_ idle: String) throws -> Profile {
        try ProfileParser.parse(source: "[idle]\n" + idle, file: "idle.toml")
    }

    /// A session of `idle` started at ``start`` (as `StartSession` starts it).
    func machine(_ idle: String, extra: String = "") throws -> SessionMachine {
        let profile = try ProfileParser.parse(source: extra + "\n[idle]\n" + idle, file: "idle.toml")
        var machine = SessionMachine(state: KioskState(), profile: nil)
        _ = try machine.apply(
            .start("idle", .init(profile: profile, source: ""), trial: nil, requestedBy: nil), at: Self.start)
        return machine
    }

    func at(_ seconds: Int) -> Timestamp { Self.start + .seconds(seconds) }
    func look(_ lastInput: Int? = nil, minute: Int? = nil) -> SessionMachine.Event {
        .idle(.init(lastInput: lastInput.map(at), localMinute: minute))
    }

    @Test func stillThereComesBeforeTheResetAndAnAnswerKeepsTheVisitorsWork() throws {
        var machine = try machine("reset-after = \"2m\"\nreset-warning = \"20s\"")
        #expect(machine.idleWakeup(.init(lastInput: nil), at: at(0)) == at(100), "the screen's time first")
        #expect(machine.handle(look(), at: at(99)) == [])
        #expect(machine.handle(look(), at: at(100)) == [.idleWarningChanged])
        #expect(machine.idle.warningUntil == at(120))
        #expect(machine.idleWakeup(.init(lastInput: nil), at: at(100)) == at(120))
        #expect(machine.handle(.stillHere, at: at(110)) == [.idleWarningChanged])
        #expect(machine.idle.warningUntil == nil)
        // A new idle period from the answer: nothing at 120, the screen again at 210.
        #expect(machine.handle(look(), at: at(120)) == [])
        #expect(machine.idleWakeup(.init(lastInput: nil), at: at(120)) == at(210))
    }

    @Test func unansweredTheScreenClosesWithTheResetOncePerIdlePeriod() throws {
        var machine = try machine("reset-after = \"2m\"\nreset-warning = \"20s\"")
        _ = machine.handle(look(), at: at(100))
        #expect(machine.handle(look(), at: at(120)) == [.idleWarningChanged, .idleReset(.signal)])
        #expect(machine.idle.warningUntil == nil)
        #expect(machine.handle(look(), at: at(500)) == [], "one reset per idle period")
        #expect(machine.idleWakeup(.init(lastInput: nil), at: at(500)) == nil)
        // Input at 600 begins a new period: the screen at 700, the reset at 720.
        #expect(machine.idleWakeup(.init(lastInput: at(600)), at: at(601)) == at(700))
        #expect(machine.handle(look(600), at: at(720)) == [.idleReset(.signal)], "late look: straight to the reset")
    }

    @Test func inputDuringTheScreenThatDoesNotAnswerItStillClosesIt() throws {
        var machine = try machine("reset-after = \"2m\"\nreset-warning = \"20s\"")
        _ = machine.handle(look(), at: at(100))
        // A mouse moved at 105 (no press): the next look closes the screen, no reset.
        #expect(machine.handle(look(105), at: at(120)) == [.idleWarningChanged])
        #expect(machine.idle.warningUntil == nil)
    }

    @Test func restartAppIsTheResetsMode() throws {
        var machine = try machine("reset-after = \"30s\"\nreset = \"restart-app\"")
        #expect(machine.handle(look(), at: at(30)) == [.idleReset(.restartApp)])
    }

    @Test func theDisplayGoesDarkAndAPressWakesItAsANewIdlePeriod() throws {
        var machine = try machine("blank-after = \"5m\"\nreset-after = \"2m\"")
        #expect(machine.handle(look(), at: at(120)) == [.idleReset(.signal)])
        #expect(machine.handle(look(), at: at(300)) == [.displayPowerChanged(on: false, .idle)])
        #expect(machine.idle.displayOff)
        #expect(machine.handle(look(), at: at(900)) == [], "dark once")
        #expect(machine.handle(.wake, at: at(1000)) == [.displayPowerChanged(on: true, .input)])
        #expect(machine.handle(.wake, at: at(1001)) == [], "on already")
        // The wake is activity: the reset again 2 minutes later, dark again after 5.
        #expect(machine.idleWakeup(.init(lastInput: at(999)), at: at(1000)) == at(1120))
        #expect(machine.handle(look(999), at: at(1120)) == [.idleReset(.signal)])
    }

    @Test func noStillThereOnADarkDisplay() throws {
        var machine = try machine("blank-after = \"1m\"\nreset-after = \"2m\"\nreset-warning = \"30s\"")
        #expect(machine.handle(look(), at: at(60)) == [.displayPowerChanged(on: false, .idle)])
        #expect(machine.handle(look(), at: at(90)) == [], "nobody would see it")
        #expect(machine.handle(look(), at: at(120)) == [.idleReset(.signal)])
    }

    @Test func thePromptAndTheOfferPauseIdleTime() throws {
        var machine = try machine(
            "reset-after = \"1m\"",
            extra: "[session]\nexit-gesture = { key = \"KEY_POWER\", presses = 3, within = \"2s\" }")
        _ = machine.handle(.exitGesture, at: at(10))
        #expect(machine.prompt.state == .open)
        #expect(machine.handle(look(), at: at(70)) == [], "paused while the prompt is open")
        #expect(machine.idleWakeup(.init(lastInput: nil), at: at(70)) == nil)
        _ = machine.handle(.promptKey(.cancel), at: at(80))
        #expect(machine.prompt.state == .closed)
        #expect(machine.idleWakeup(.init(lastInput: nil), at: at(80)) == at(140), "idle time from the prompt's close")
    }

    @Test func cleaningPausesIdleTimeAndItsEndBeginsItAnew() throws {
        var machine = try machine("reset-after = \"1m\"")
        _ = try machine.apply(.startCleaning(.seconds(60)), at: at(30))
        #expect(machine.cleaning != nil)
        #expect(machine.handle(look(), at: at(70)) == [], "paused while the glass is wiped")
        _ = try machine.apply(.stopCleaning, at: at(80))
        #expect(machine.cleaning == nil)
        #expect(machine.idleWakeup(.init(lastInput: nil), at: at(80)) == at(140), "idle time from the cleaning's end")
    }

    /// The prompt (or cleaning) opened over "Still there?": when it closes, the screen goes with
    /// it (someone was there), and its hold with it.
    @Test func stillThereGoesWhenAPauseOverItEnds() throws {
        var machine = try machine(
            "reset-after = \"2m\"\nreset-warning = \"30s\"",
            extra: "[session]\nexit-gesture = { key = \"KEY_POWER\", presses = 3, within = \"2s\" }")
        #expect(machine.handle(look(), at: at(90)) == [.idleWarningChanged])
        _ = machine.handle(.exitGesture, at: at(95))
        #expect(machine.handle(.promptKey(.cancel), at: at(100)).contains(.idleWarningChanged))
        #expect(machine.idle.warningUntil == nil)
        #expect(machine.idleWakeup(.init(lastInput: nil), at: at(100)) == at(190), "the screen again 90 s later")
        _ = machine.handle(look(), at: at(190))
        _ = try machine.apply(.startCleaning(.seconds(30)), at: at(195))
        #expect(try machine.apply(.stopCleaning, at: at(200)).contains(.idleWarningChanged))
        #expect(machine.idle.warningUntil == nil)
    }

    @Test func aDisplayOffWindowDarkensAtItsStartAndATouchShowsItForBlankAfter() throws {
        var machine = try machine("blank-after = \"5m\"\ndisplay-off = [\"22:00-07:00\"]")
        #expect(machine.idleWatchesLocalTime)
        #expect(machine.handle(look(nil, minute: 21 * 60 + 59), at: at(10)) == [])
        #expect(machine.handle(look(nil, minute: 22 * 60), at: at(70)) == [.displayPowerChanged(on: false, .schedule)])
        #expect(machine.handle(.wake, at: at(100)) == [.displayPowerChanged(on: true, .input)])
        #expect(machine.handle(look(100, minute: 22 * 60 + 1), at: at(130)) == [], "shown for blank-after")
        #expect(
            machine.handle(look(100, minute: 22 * 60 + 6), at: at(400)) == [.displayPowerChanged(on: false, .idle)])
        // Past midnight and out of the window at 07:00: nothing turns it on but a touch.
        _ = machine.handle(.wake, at: at(500))
        #expect(machine.handle(look(500, minute: 7 * 60), at: at(510)) == [])
    }

    @Test func theSessionsEndClosesTheScreenAndWantsTheDisplayOn() throws {
        var machine = try machine("blank-after = \"1m\"")
        _ = machine.handle(look(), at: at(60))
        #expect(machine.idle.displayOff)
        let effects = try machine.apply(.end(.forced), at: at(70))
        #expect(effects.last == .displayPowerChanged(on: true, .sessionChanged))
        #expect(!machine.idle.displayOff)
        #expect(machine.handle(look(), at: at(500)) == [], "no session, no idle time")
    }

    @Test func anAdminTellsTheDisplayIsDarkAndWakesIt() throws {
        var machine = try machine("blank-after = \"10m\"")
        #expect(machine.handle(.adminDisplay(on: false), at: at(5)) == [.displayPowerChanged(on: false, .admin)])
        #expect(machine.handle(.adminDisplay(on: true), at: at(6)) == [.displayPowerChanged(on: true, .admin)])
        var none = SessionMachine(state: KioskState(), profile: nil)
        #expect(none.handle(.adminDisplay(on: false), at: at(5)) == [], "no session: nothing held dark")
    }

    @Test(arguments: [
        ("reset-after = \"0s\"", 2, "not a duration"),
        ("reset-after = \"-5s\"", 2, "not a duration"),
        ("reset-after = \"5s\"", 2, "give 10s to 1d"),
        ("reset-after = \"2d\"", 2, "give 10s to 1d"),
        ("blank-after = \"30d\"", 2, "give 10s to 1d"),
        ("reset-after = \"1m\"\nreset-warning = \"1m\"", 3, "not less than idle.reset-after"),
        ("reset-warning = \"20s\"", 2, "only for idle.reset-after"),
        ("reset-after = \"1m\"\nreset = \"reboot\"", 3, "\"signal\" or \"restart-app\""),
        ("blank-after = \"1m\"\ndisplay-off = [\"22:00-7:00\"]", 3, "not a time window"),
        ("blank-after = \"1m\"\ndisplay-off = [\"25:00-07:00\"]", 3, "not a time window"),
        ("blank-after = \"1m\"\ndisplay-off = [\"07:00-07:00\"]", 3, "not a time window"),
        ("display-off = [\"22:00-07:00\"]", 2, "needs idle.blank-after"),
        ("blank-after = \"1m\"\nresest-after = \"1m\"", 3, "did you mean \"reset-after\""),
    ])
    func badValuesAreRefusedAtTheirLine(_ idle: String, _ line: Int, _ message: String) {
        do {
            _ = try Self.profile(idle)
            Issue.record("\(idle) was accepted")
        } catch {
            let text = "\(error)"
            #expect(text.contains("idle.toml:\(line):"), "\(text)")
            #expect(text.contains(message), "\(text)")
        }
    }

    @Test func aShortStillThereIsAWarningAndTheWindowsParse() throws {
        let profile = try Self.profile(
            "reset-after = \"1m\"\nreset-warning = \"10s\"\nblank-after = \"1m\"\ndisplay-off = [\"22:00-07:00\", \"12:00-13:30\"]"
        )
        #expect(profile.idle.warningWarning?.contains("WCAG 2.2.1") == true)
        #expect(profile.idle.displayOff.map(\.description) == ["22:00-07:00", "12:00-13:30"])
        let night = profile.idle.displayOff[0]
        #expect(night.contains(minute: 23 * 60) && night.contains(minute: 0) && night.contains(minute: 6 * 60 + 59))
        #expect(!night.contains(minute: 7 * 60) && !night.contains(minute: 21 * 60 + 59))
        #expect(try Self.profile("reset-after = \"1m\"\nreset-warning = \"20s\"").idle.warningWarning == nil)
    }
}
