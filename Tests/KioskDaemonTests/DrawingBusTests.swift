import BusTestSupport
import Foundation
import KioskCore
import KioskDaemonTestSupport
import KioskInput
import KioskTestSupport
import Synchronization
import SystemdKit
import Testing

@testable import KioskDaemon

/// Staff drawing a profile's regions through kioskd's manager in process (docs/dbus-api.md
/// § Drawing the regions): `DrawRegions` answered on Done with the regions, or with why it ended
/// otherwise (Cancel, Esc, the wait, the prompt, the admin gone, a restart); the enforcer told;
/// `Drawing`, `DrawingState`; and the refusals that change nothing.
@Suite(.serialized) struct DrawingBusTests {
    static let profile = """
        [touch]
        mode = "regions"

        [[touch.locked-region]]
        name = "gear"
        rect = { x = 0.9, y = 0.0, width = 0.1, height = 0.12 }

        [session]
        exit-gesture = { key = "KEY_POWER", presses = 3, within = "1.5s" }
        """
    static let noTouch = "[touch]\nmode = \"none\"\n"

    typealias P = KioskInput.Point

    /// `DrawRegions` from a thread of its own; its outcome once it is answered.
    final class Pending: Sendable {
        private let outcome = Mutex<Result<[DBusValue], BusError>?>(nil)
        init(_ address: String, _ profile: String) {
            Thread.detachNewThread { [self] in
                let result: Result<[DBusValue], BusError>
                do {
                    let client = try ManagerClient(address: address)
                    let m = try client.bus.makeMethodCall(
                        destination: KioskWire.busName, path: KioskWire.objectPath,
                        interface: KioskWire.managerInterface, member: "DrawRegions")
                    try m.append([.string(profile)])
                    result = .success(try client.bus.callBlocking(m, timeout: .seconds(60)).readAll())
                } catch let error as BusError {
                    result = .failure(error)
                } catch {
                    result = .failure(BusError(name: "local", message: "\(error)"))
                }
                self.outcome.withLock { $0 = result }
            }
        }
        /// The outcome, once it came (waiting up to 20 s).
        func wait() -> Result<[DBusValue], BusError>? {
            _ = eventually(timeout: .seconds(20)) { outcome.withLock { $0 != nil } }
            return outcome.withLock { $0 }
        }
    }

    func manager(_ enforcer: RecordingEnforcer, uid: UInt32 = 0, authorize: ScriptedAuthorizer.Answer = .result(.allowed))
        async throws -> InProcessManager
    {
        try await InProcessManager(
            uid: uid, authorize: authorize, profiles: ["map": Self.profile, "keypad": Self.noTouch], enforcer: enforcer,
            logsToJournal: true)
    }

    /// Starts drawing `map` and waits until it runs.
    func startDrawing(_ manager: InProcessManager, _ enforcer: RecordingEnforcer) -> Pending {
        let started = enforcer.drawingChanges.count { $0 }
        let pending = Pending(manager.bus.address, "map")
        #expect(eventually { enforcer.drawingChanges.count { $0 } == started + 1 }, "\(manager.journal.all)")
        return pending
    }

    func touches(_ manager: InProcessManager, _ events: [DrawingTouches.Event]) async throws {
        try await manager.onLoop { $0.drawingInput(events) }
    }

    /// A drag from `a` to `b` by contact 7, in 10 steps.
    func drag(_ a: P, _ b: P) -> [DrawingTouches.Event] {
        [.down(contact: 7, at: a)]
            + (1...10).map { i in
                let t = Double(i) / 10
                return .move(contact: 7, to: P(x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t))
            } + [.up(contact: 7)]
    }

    func tap(_ p: P) -> [DrawingTouches.Event] { [.down(contact: 8, at: p), .up(contact: 8)] }

    @Test func doneAnswersWithTheProfilesRegionsAndTheDrawnOnes() async throws {
        let enforcer = RecordingEnforcer(canDraw: true)
        let manager = try await manager(enforcer)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        #expect(try client.property("Drawing")?.string == "")
        let pending = startDrawing(manager, enforcer)
        #expect(try client.property("Drawing")?.string == "map")
        #expect(enforcer.drawingChanges == [true])
        #expect(manager.authorizer.askedActions == [], "root is never asked about")

        try await touches(manager, drag(P(x: 0.2, y: 0.5), P(x: 0.6, y: 0.7)))
        try await touches(manager, tap(P(x: 0.3, y: 0.6)))  // selects the drawn rectangle
        // What a display reads: both shapes as outlines, the drawn one selected, no stroke.
        let state = try #require(client.property("DrawingState")?.fields)
        #expect(state.count == 4)
        #expect(state[0].array?.count == 2)
        #expect(
            state[0].array?.last
                == .structure([
                    .string("drawn 1"),
                    .array(elementSignature: "d", [0.2, 0.5, 0.6, 0.5, 0.6, 0.7, 0.2, 0.7].map(DBusValue.double)),
                ]))
        #expect(state[1].int64 == 1 && state[2].array == [] && state[3].string == "")
        try await touches(manager, tap(P(x: 0.63, y: 0.05)))  // Done
        let reply = try #require(pending.wait()).get()
        let regions = try #require(reply.first?.array)
        #expect(regions.count == 2)
        #expect(regions[0] == .structure([.int32(0), .string("gear"), .array(elementSignature: "d", [0.9, 0.0, 0.1, 0.12].map(DBusValue.double))]))
        #expect(regions[1] == .structure([.int32(-1), .string("drawn 1"), .array(elementSignature: "d", [0.2, 0.5, 0.4, 0.2].map(DBusValue.double))]))
        #expect(enforcer.drawingChanges == [true, false])
        #expect(try client.property("Drawing")?.string == "")
        #expect(try client.property("DrawingState")?.fields?[0].array == [], "nothing drawn once it ended")
        #expect(manager.store.saved.isEmpty, "drawing writes nothing")
    }

    /// A finger going round and back to its start: an outline, answered as its corners' pairs.
    @Test func anOutlineComesBackAsItsCorners() async throws {
        let enforcer = RecordingEnforcer(canDraw: true)
        let manager = try await manager(enforcer)
        defer { Task { await manager.stop() } }
        let pending = startDrawing(manager, enforcer)
        let loop: [DrawingTouches.Event] =
            [.down(contact: 3, at: P(x: 0.5, y: 0.3))]
            + (1...60).map { i in
                let a = Double(i) / 60 * 2 * Double.pi
                return .move(contact: 3, to: P(x: 0.4 + 0.1 * cos(a), y: 0.3 + 0.1 * sin(a)))
            } + [.up(contact: 3)]
        try await touches(manager, loop)
        try await touches(manager, [.key(28)])  // Enter: Done
        let reply = try #require(pending.wait()).get()
        let regions = try #require(reply.first?.array)
        #expect(regions.count == 2)
        let drawn = try #require(regions.last?.fields)
        #expect(drawn[0].int64 == -1 && drawn[1].string == "drawn 1")
        let numbers = (drawn[2].array ?? []).compactMap { $0.double }
        #expect(numbers.count >= 12 && numbers.count % 2 == 0 && numbers.count <= 64, "\(numbers)")
        for i in stride(from: 0, to: numbers.count, by: 2) {
            let r = ((numbers[i] - 0.4) * (numbers[i] - 0.4) + (numbers[i + 1] - 0.3) * (numbers[i + 1] - 0.3)).squareRoot()
            #expect(abs(r - 0.1) < 0.01, "a corner off the circle: \(numbers)")
        }
    }

    /// A drawing ended while a finger was down: the next drawing's stroke is shown from its 4th
    /// point, as any stroke is, not once it outgrows the last one.
    @Test func aStrokeAfterADrawingEndedMidStrokeIsShown() async throws {
        let enforcer = RecordingEnforcer(canDraw: true)
        let manager = try await manager(enforcer)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        let first = startDrawing(manager, enforcer)
        let long: [DrawingTouches.Event] =
            [.down(contact: 1, at: P(x: 0.1, y: 0.1))]
            + (1...40).map { .move(contact: 1, to: P(x: 0.1 + Double($0) * 0.01, y: 0.1)) }
        try await touches(manager, long + [.key(1)])  // Esc with the finger still down
        _ = first.wait()
        let second = startDrawing(manager, enforcer)
        manager.changedProperties.watch(["DrawingState"])
        manager.changedProperties.removeAll()
        let short: [DrawingTouches.Event] =
            [.down(contact: 2, at: P(x: 0.2, y: 0.5))]
            + (1...6).map { .move(contact: 2, to: P(x: 0.2 + Double($0) * 0.01, y: 0.5)) }
        try await touches(manager, short)
        try await manager.signalsSent()  // every PropertiesChanged sent so far is noted
        #expect(manager.changedProperties.all.count == 1, "the stroke's first points were sent: \(manager.changedProperties.all)")
        // And what a display reads with it: the 7 points.
        #expect(try client.property("DrawingState")?.fields?[2].array?.count == 14)
        try await touches(manager, [.up(contact: 2), .key(1)])
        _ = second.wait()
    }

    @Test func escCancelsAndThePromptEndsIt() async throws {
        let enforcer = RecordingEnforcer(canDraw: true)
        let manager = try await manager(enforcer)
        defer { Task { await manager.stop() } }
        let pending = startDrawing(manager, enforcer)
        try await touches(manager, [.key(1)])  // Esc
        let error = try #require(pending.wait().flatMap { if case .failure(let e) = $0 { e } else { nil } })
        #expect(error.message == "The drawing was cancelled at the kiosk; the profile was not changed.")
        #expect(enforcer.drawingChanges == [true, false])

        // In a session, the exit gesture opens the prompt: the drawing ends first.
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("map")])
        let second = startDrawing(manager, enforcer)
        try await manager.onLoop { $0.kiosk(.exitGesture) }
        let ended = try #require(second.wait().flatMap { if case .failure(let e) = $0 { e } else { nil } })
        #expect(ended.message.contains("passcode prompt opened"), "\(ended.message)")
        #expect(enforcer.drawingChanges == [true, false, true, false])
    }

    /// A shape under a fingertip, or one more than a profile holds, ends the drawing: the call
    /// fails with why, the shapes drawn before it are not answered, input flows again.
    @Test func aShapeTooSmallOrOneTooManyEndsIt() async throws {
        let enforcer = RecordingEnforcer(canDraw: true)
        let manager = try await manager(enforcer)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        let small = startDrawing(manager, enforcer)
        try await touches(manager, drag(P(x: 0.2, y: 0.5), P(x: 0.6, y: 0.7)))
        #expect(try client.property("DrawingState")?.fields?[0].array?.count == 2, "a shape that fits is added")
        try await touches(manager, drag(P(x: 0.2, y: 0.8), P(x: 0.6, y: 0.81)))  // 0.01 high
        let tooSmall = try #require(small.wait().flatMap { if case .failure(let e) = $0 { e } else { nil } })
        #expect(tooSmall.name == "org.freedesktop.DBus.Error.Failed")
        #expect(
            tooSmall.message
                == "A shape smaller than a fingertip was drawn (each side must be at least 0.03 of the screen); the drawing ended and the profile was not changed."
        )
        #expect(enforcer.drawingChanges == [true, false])
        #expect(try client.property("Drawing")?.string == "")

        let many = startDrawing(manager, enforcer)
        // The profile's gear and 63 drawn: 64, all a profile holds; the 65th ends it.
        for i in 0..<(RegionDrawing.maxShapes - 1) {
            let x = 0.1 + Double(i % 8) * 0.1, y = 0.15 + Double(i / 8) * 0.1
            try await touches(manager, drag(P(x: x, y: y), P(x: x + 0.05, y: y + 0.05)))
        }
        #expect(try client.property("DrawingState")?.fields?[0].array?.count == RegionDrawing.maxShapes)
        try await touches(manager, drag(P(x: 0.1, y: 0.15), P(x: 0.5, y: 0.5)))
        let tooMany = try #require(many.wait().flatMap { if case .failure(let e) = $0 { e } else { nil } })
        #expect(
            tooMany.message
                == "More regions were drawn than a profile holds (64); the drawing ended and the profile was not changed.")
        #expect(enforcer.drawingChanges == [true, false, true, false])
        #expect(manager.journal.all.contains("log Drawing touch regions ended: input flows as the locks say"))
    }

    @Test func nobodyDrawingForThreeMinutesEndsIt() async throws {
        let enforcer = RecordingEnforcer(canDraw: true)
        let manager = try await manager(enforcer)
        defer { Task { await manager.stop() } }
        let pending = startDrawing(manager, enforcer)
        // A touch two minutes in restarts the wait.
        manager.clock.advance(by: .seconds(120))
        try await touches(manager, tap(P(x: 0.5, y: 0.5)))
        manager.clock.advance(by: .seconds(120))
        try await manager.onLoop { $0.kiosk(.clock) }
        try await manager.signalsSent()
        #expect(enforcer.drawingChanges == [true], "4 minutes in, 2 since the touch: still drawing")
        manager.clock.advance(by: .seconds(61))
        try await manager.onLoop { $0.kiosk(.clock) }
        let error = try #require(pending.wait().flatMap { if case .failure(let e) = $0 { e } else { nil } })
        #expect(error.message == "Nobody drew for 3m; the drawing ended and the profile was not changed.")
        #expect(enforcer.drawingChanges == [true, false])
    }

    /// The admin's connection closes while staff draw: the drawing ends, the kiosk's input
    /// comes back.
    @Test func theAdminGoneEndsIt() async throws {
        let enforcer = RecordingEnforcer(canDraw: true)
        let manager = try await manager(enforcer)
        defer { Task { await manager.stop() } }
        let admin = try ManagerClient(address: manager.bus.address)
        let m = try admin.bus.makeMethodCall(
            destination: KioskWire.busName, path: KioskWire.objectPath, interface: KioskWire.managerInterface,
            member: "DrawRegions")
        try m.append([.string("map")])
        try admin.bus.send(m)
        try admin.bus.flush()
        #expect(eventually { enforcer.drawingChanges == [true] }, "\(manager.journal.all)")
        admin.bus.close()
        #expect(eventually { enforcer.drawingChanges == [true, false] }, "\(enforcer.drawingChanges)")
        #expect(manager.journal.all.contains("log Drawing touch regions ended: input flows as the locks say"))
    }

    /// kioskd restarts mid-draw: the call fails, the new kioskd draws nothing and holds nothing.
    @Test func aRestartEndsTheDrawing() async throws {
        let enforcer = RecordingEnforcer(canDraw: true)
        let manager = try await manager(enforcer)
        let pending = startDrawing(manager, enforcer)
        await manager.stop()
        #expect(pending.wait().map { if case .failure = $0 { true } else { false } } == true)
        let again = RecordingEnforcer(canDraw: true)
        let restarted = try await InProcessManager(uid: 0, state: manager.store.saved.last ?? KioskState(), enforcer: again)
        defer { Task { await restarted.stop() } }
        let client = try ManagerClient(address: restarted.bus.address)
        #expect(try client.property("Drawing")?.string == "")
        #expect(again.drawingChanges.isEmpty)
        #expect(!again.policy.holdAllInput)
    }

    @Test func whatCannotBeDrawnIsRefusedAndChangesNothing() async throws {
        let enforcer = RecordingEnforcer(canDraw: true)
        let manager = try await manager(enforcer)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        let none = try #require(client.error("DrawRegions", [.string("keypad")]))
        #expect(none.name == KioskError.Code.invalidArgument.dbusName)
        #expect(none.message.contains("locks all touch"), "\(none.message)")
        #expect(client.errorName("DrawRegions", [.string("nope")]) == KioskError.Code.unknownProfile.dbusName)
        #expect(client.errorName("DrawRegions", [.string("../etc/x")]) == KioskError.Code.invalidArgument.dbusName)
        #expect(client.errorName("DrawRegions", [.uint32(1)]) == KioskError.Code.invalidArgument.dbusName)
        #expect(enforcer.drawingChanges.isEmpty)

        // One drawing at a time; no cleaning meanwhile.
        let pending = startDrawing(manager, enforcer)
        let twice = try #require(client.error("DrawRegions", [.string("map")]))
        #expect(twice.message.contains("one drawing at a time"), "\(twice.message)")
        let cleaning = try #require(client.error("StartCleaning", [.uint64(30)]))
        #expect(cleaning.message.contains("Regions are being drawn"), "\(cleaning.message)")
        try await touches(manager, [.key(1)])
        _ = pending.wait()
        #expect(enforcer.drawingChanges == [true, false])
    }

    @Test func aKioskWithoutATouchscreenCannotDraw() async throws {
        let enforcer = RecordingEnforcer(canDraw: false)
        let manager = try await manager(enforcer)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        let error = try #require(client.error("DrawRegions", [.string("map")]))
        #expect(error.name == KioskError.Code.failed.dbusName)
        #expect(error.message.contains("reads no touchscreen"), "\(error.message)")
        #expect(enforcer.drawingChanges.isEmpty)
    }

    @Test func polkitDecidesUnderManageSession() async throws {
        let enforcer = RecordingEnforcer(canDraw: true)
        let manager = try await manager(enforcer, uid: 1000, authorize: .result(.denied))
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        #expect(client.errorName("DrawRegions", [.string("map")]) == KioskError.Code.accessDenied.dbusName)
        #expect(manager.authorizer.askedActions == [KioskWire.Action.manageSession])
        #expect(enforcer.drawingChanges.isEmpty)
    }
}
