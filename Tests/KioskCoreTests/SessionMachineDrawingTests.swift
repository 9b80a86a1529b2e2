import KioskAPI
import KioskCore
import KioskInput
import Testing

/// Staff drawing regions in ``SessionMachine`` (docs/dbus-api.md § Drawing the regions): one at a
/// time, never under the prompt or during a cleaning, its wait on the machine's clock, the
/// prompt taking over, idle time paused meanwhile, and nothing of it saved.
@Suite struct SessionMachineDrawingTests {
    static let start = Timestamp(microseconds: 1_700_000_000_000_000)

    func at(_ seconds: Int) -> Timestamp { Self.start + .seconds(seconds) }

    /// A session whose profile has an exit gesture, a cleaning gesture and `[idle]` `idle`.
    func machine(_ idle: String = "") throws -> SessionMachine {
        let profile = try ProfileParser.parse(
            source: """
                [session]
                exit-gesture = { key = "KEY_POWER", presses = 3, within = "1.5s" }
                cleaning-gesture = { key = "KEY_POWER", presses = 5, within = "3s" }
                [idle]
                \(idle)
                """, file: "p.toml")
        var machine = SessionMachine(state: KioskState(), profile: nil)
        _ = try machine.apply(.start("p", .init(profile: profile, source: ""), trial: nil, requestedBy: nil), at: Self.start)
        return machine
    }

    @Test func itRunsUntilEndedAndSavesNothing() throws {
        var machine = try machine()
        let saved = machine.state
        #expect(try machine.apply(.startDrawing("map"), at: at(0)) == [.drawingStarted])
        #expect(machine.drawing == DrawingPhase(profileName: "map", until: at(180).microseconds))
        #expect(machine.state == saved, "nothing of it is persisted")
        #expect(try machine.apply(.endDrawing(.done), at: at(10)) == [.drawingEnded(.done)])
        #expect(machine.drawing == nil)
        #expect(try machine.apply(.endDrawing(.cancelled), at: at(11)) == [], "none runs: nothing ends")
    }

    @Test func withoutASessionToo() throws {
        var machine = SessionMachine(state: KioskState(), profile: nil)
        #expect(try machine.apply(.startDrawing("map"), at: at(0)) == [.drawingStarted])
    }

    @Test func oneAtATimeNeverUnderThePromptNorDuringACleaning() throws {
        var machine = try machine()
        _ = try machine.apply(.startDrawing("map"), at: at(0))
        var before = machine
        #expect { try machine.apply(.startDrawing("other"), at: at(1)) } throws: {
            ($0 as? KioskError)?.message.contains("one drawing at a time") == true
        }
        #expect(machine == before)
        // No cleaning while drawing, by the bus or the gesture.
        #expect { try machine.apply(.startCleaning(.seconds(30)), at: at(1)) } throws: {
            ($0 as? KioskError)?.message.contains("Regions are being drawn") == true
        }
        #expect(machine.handle(.cleaningGesture, at: at(1)) == [])
        #expect(machine.cleaning == nil)

        var cleaning = try self.machine()
        _ = try cleaning.apply(.startCleaning(.seconds(30)), at: at(0))
        before = cleaning
        #expect { try cleaning.apply(.startDrawing("map"), at: at(1)) } throws: {
            ($0 as? KioskError)?.message.contains("being cleaned") == true
        }
        #expect(cleaning == before)

        var prompt = try self.machine()
        _ = prompt.handle(.exitGesture, at: at(0))
        #expect(prompt.prompt.state != .closed)
        #expect { try prompt.apply(.startDrawing("map"), at: at(1)) } throws: {
            ($0 as? KioskError)?.message.contains("passcode prompt is open") == true
        }
        #expect(prompt.drawing == nil)
    }

    /// The exit gesture opens the prompt: the drawing ends first.
    @Test func thePromptEndsIt() throws {
        var machine = try machine()
        _ = try machine.apply(.startDrawing("map"), at: at(0))
        let effects = machine.handle(.exitGesture, at: at(5))
        #expect(effects.prefix(2) == [.exitRequested, .drawingEnded(.prompt)])
        #expect(effects.contains(.promptOpened))
        #expect(machine.drawing == nil)
    }

    /// Three minutes without a touch or a key end it; each one restarts the wait.
    @Test func theWaitRestartsWithEachTouchAndEndsItOnce() throws {
        var machine = try machine()
        _ = try machine.apply(.startDrawing("map"), at: at(0))
        #expect(machine.handle(.clock, at: at(179)) == [])
        #expect(machine.handle(.drawingActivity, at: at(170)) == [])
        #expect(machine.handle(.clock, at: at(300)) == [])
        #expect(!machine.drawingIsIdle(at: at(349)))
        #expect(machine.drawingIsIdle(at: at(350)))
        #expect(machine.handle(.clock, at: at(350)) == [.drawingEnded(.timeout)])
        #expect(machine.handle(.clock, at: at(400)) == [])
    }

    /// Idle time is paused while staff draw: no reset under the drawing, a full period after it.
    @Test func idleTimeWaitsForTheDrawing() throws {
        var machine = try machine("reset-after = \"2m\"")
        _ = try machine.apply(.startDrawing("map"), at: at(0))
        #expect(machine.handle(.idle(.init(lastInput: nil)), at: at(500)) == [])
        _ = try machine.apply(.endDrawing(.done), at: at(600))
        #expect(machine.idleWakeup(.init(lastInput: nil), at: at(600)) == at(720))
    }

    /// A saved change adopted meanwhile keeps the drawing, as it keeps the prompt.
    @Test func anAdoptedChangeKeepsTheDrawing() throws {
        var machine = try machine()
        var planned = machine
        _ = try planned.apply(.deadline(at(3600)), at: at(0))
        _ = try machine.apply(.startDrawing("map"), at: at(1))
        machine.adopt(planned)
        #expect(machine.drawing?.profileName == "map")
        #expect(machine.state.session.deadline == at(3600), "and the change is in")
    }
}
