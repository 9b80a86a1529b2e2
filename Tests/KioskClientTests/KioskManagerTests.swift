import BusTestSupport
import Foundation
import KioskClient
import KioskCore
import KioskTestSupport
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// `KioskManager`, the typed proxy, against the real kioskd on a private bus: every method,
/// the properties, the errors with the daemon's messages, and every signal as an event.
@Suite(.serialized) struct KioskManagerTests {
    static let app = "org.example.MuseumMap"
    static let controls = "org.example.MuseumMap.controls"
    static let zoom = "org.example.MuseumMap.zoom"
    static let declarations = [
        try! RestrictionDeclaration(
            id: controls, title: "Map controls", detail: "The settings gear and the layer picker."),
        try! RestrictionDeclaration(id: zoom, title: "Zoom", detail: "Pinch to zoom the floor map."),
    ]

    /// A private bus with kioskd running and a connected proxy.
    struct Fixture {
        let bus: PrivateBus
        let kioskd: KioskdProcess
        let manager: KioskManager

        init(start: Bool = true) throws {
            bus = try PrivateBus()
            kioskd = try KioskdProcess(bus: bus)
            if start { try kioskd.start() }
            manager = try KioskManager.connect(to: .address(bus.address))
        }

        func stop() {
            manager.close()
            kioskd.stop()
            bus.stop()
        }
    }

    @Test func everyMethodRoundTrips() async throws {
        let f = try Fixture()
        defer { f.stop() }
        try f.kioskd.writeTestProfile("museum", app: Self.app, denied: [Self.controls])
        let m = f.manager

        try await m.registerApplication(Self.app, restrictions: Self.declarations)
        #expect(try await m.listApplications() == ["org.chromium.Chromium", "org.mozilla.firefox"] + [Self.app])
        #expect(
            try await m.listRestrictions(of: Self.app) == [
                RestrictionInfo(
                    id: Self.controls, title: "Map controls", detail: "The settings gear and the layer picker.",
                    state: .allow),
                RestrictionInfo(id: Self.zoom, title: "Zoom", detail: "Pinch to zoom the floor map.", state: .allow),
            ])
        try await m.setRestrictionState(.deny, of: Self.zoom, in: Self.app)
        #expect(try await m.restrictionState(of: Self.zoom, in: Self.app) == .deny)
        #expect(try await m.restrictionState(of: Self.controls, in: Self.app) == .allow)

        #expect(
            try await m.status()
                == KioskStatus(
                    sessionState: .inactive, activeProfile: "", sessionDeadline: nil,
                    version: KioskWire.version, passcodeSet: false))
        try await m.startSession(profile: "museum")
        let active = try await m.status()
        #expect(active.sessionState == .active)
        #expect(active.activeProfile == "museum")
        #expect(active.sessionDeadline == nil)
        #expect(try await m.restrictionState(of: Self.controls, in: Self.app) == .deny)

        await #expect(throws: KioskError(.wrongPasscode, "The passcode is wrong.")) {
            try await m.endSession(passcode: "0000")
        }
        try await m.endSession(passcode: KioskdProcess.passcode)
        #expect(try await m.status().sessionState == .inactive)
        #expect(try await m.restrictionState(of: Self.controls, in: Self.app) == .allow)

        try await m.startSession(profile: "museum")
        try await m.forceEndSession()
        #expect(try await m.status().sessionState == .inactive)

        // The profile's hash wins over the set passcode; a profile without one uses it.
        try await m.setPasscode(current: "", new: "5678")
        try f.kioskd.writeProfile("plain", "app = \"\(Self.app)\"\n")
        try await m.startSession(profile: "plain")
        await #expect(throws: KioskError(.wrongPasscode, "The passcode is wrong.")) {
            try await m.endSession(passcode: KioskdProcess.passcode)
        }
        try await m.endSession(passcode: "5678")
        #expect(try await m.status().sessionState == .inactive)
    }

    @Test func sessionDeadlineIsReadAsWallClockTime() async throws {
        let f = try Fixture()
        defer { f.stop() }
        try f.kioskd.writeTestProfile("timed", app: Self.app, timeLimit: "45m")
        let before = Int64(Date().timeIntervalSince1970 * 1_000_000)
        try await f.manager.startSession(profile: "timed")
        let deadline = try #require(try await f.manager.status().sessionDeadline)
        let after = Int64(Date().timeIntervalSince1970 * 1_000_000)
        #expect(deadline.microseconds >= before + 45 * 60_000_000 && deadline.microseconds <= after + 45 * 60_000_000)
    }

    /// An app written against `WallClockTime` (kioskd 0.1.0) still compiles: the deprecated
    /// alias names `Timestamp` itself. (Deprecated here too, so the test builds without warning.)
    @available(*, deprecated)
    @Test func theFormerNameOfTimestampStillCompiles() {
        let deadline: WallClockTime = Timestamp(microseconds: 1_700_000_000_000_000)
        #expect(WallClockTime.self == Timestamp.self)
        #expect(deadline + .seconds(1) == Timestamp(microseconds: 1_700_000_001_000_000))
    }

    @Test func refusalsAreKioskErrorsWithTheDaemonsMessage() async throws {
        let f = try Fixture()
        defer { f.stop() }
        let m = f.manager
        try await m.registerApplication(Self.app, restrictions: Self.declarations)

        await #expect(throws: KioskError(.unknownApplication, "No application org.example.Nope is registered.")) {
            try await m.listRestrictions(of: "org.example.Nope")
        }
        do {
            try await m.setRestrictionState(.deny, of: "org.example.MuseumMap.nope", in: Self.app)
            Issue.record("an unknown restriction was set")
        } catch let error as KioskError {
            #expect(error.code == .unknownRestriction)
            #expect(error.message.contains("org.example.MuseumMap.nope"), "\(error)")
        }
        do {
            _ = try await m.restrictionState(of: Self.controls, in: "museum")
            Issue.record("a one-label app id was accepted")
        } catch let error as KioskError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("\"museum\""), "\(error)")
        }
        await #expect(throws: KioskError.self) { try await m.startSession(profile: "missing") }
        await #expect(throws: KioskError(.noSession, "No guided-access session is active.")) {
            try await m.forceEndSession()
        }
    }

    @Test func noDaemonIsNotRunning() async throws {
        let f = try Fixture(start: false)
        defer { f.stop() }
        await #expect(throws: KioskClientError(.notRunning, "kioskd is not running.")) {
            try await f.manager.listApplications()
        }
        await #expect(throws: KioskClientError(.notRunning, "kioskd is not running.")) { try await f.manager.status() }
    }

    @Test func noBusIsBusUnavailable() throws {
        #expect {
            try KioskManager.connect(to: .address("unix:path=/nonexistent/kioskd-test-bus"))
        } throws: { error in
            guard let error = error as? KioskClientError else { return false }
            return error.code == .busUnavailable
                && error.message.hasPrefix("Could not connect to the bus at unix:path=/nonexistent/kioskd-test-bus: ")
        }
    }

    @Test func callsAfterCloseThrowInsteadOfWaiting() async throws {
        let f = try Fixture()
        defer { f.stop() }
        f.manager.close()
        await #expect(
            throws: KioskClientError(.busUnavailable, "The connection to the bus at \(f.bus.address) was closed.")
        ) {
            try await f.manager.listApplications()
        }
        var events = await f.manager.events().makeAsyncIterator()
        #expect(await events.next() == .disconnected)
        #expect(await events.next() == nil)
    }

    @Test func eventsCarryEverySignalOfKioskd() async throws {
        let f = try Fixture()
        defer { f.stop() }
        try f.kioskd.writeTestProfile(
            "timed", app: Self.app, denied: [Self.controls], timeLimit: "2s", warnings: ["1s"])
        let m = f.manager
        try await m.registerApplication(Self.app, restrictions: Self.declarations)
        let events = Recorder(await m.events())
        let inactive = KioskStatus(
            sessionState: .inactive, activeProfile: "", sessionDeadline: nil, version: KioskWire.version,
            passcodeSet: false)
        #expect(await events.wait(count: 1) == [.statusChanged(inactive)])

        try await m.setRestrictionState(.deny, of: Self.zoom, in: Self.app)
        try await m.startSession(profile: "timed")
        let seen = await events.wait(timeout: .seconds(10)) {
            $0.contains { if case .statusChanged(let s) = $0 { s.sessionState == .expired } else { false } }
        }
        let deadline = try #require(try await m.status().sessionDeadline)
        var active = KioskStatus(
            sessionState: .active, activeProfile: "timed", sessionDeadline: deadline, version: KioskWire.version,
            passcodeSet: false)
        active.activeApp = Self.app  // the profile's app (ActiveApp)
        var expired = active
        expired.sessionState = .expired
        #expect(
            seen == [
                .statusChanged(inactive),
                .restrictionStateChanged(app: Self.app, restriction: Self.zoom, state: .deny),
                .restrictionStateChanged(app: Self.app, restriction: Self.controls, state: .deny),
                .statusChanged(active),
                .timeLimitWarning(secondsLeft: 1),
                .statusChanged(expired),
            ])

        f.kioskd.stop()
        try f.kioskd.start()
        // The restarted daemon has the same (persisted) state: only its comings and goings show.
        let restarted = await events.wait { $0.count >= 8 }
        #expect(Array(restarted.dropFirst(6)) == [.daemonStopped, .daemonStarted])
        try await m.endSession(passcode: KioskdProcess.passcode)
        let ended = await events.wait(count: 10)
        #expect(
            Array(ended.dropFirst(8)) == [
                .restrictionStateChanged(app: Self.app, restriction: Self.controls, state: .allow),
                .statusChanged(inactive),
            ])
    }

    /// kioskd raises `ExitRequested` only from the input broker, which `--no-input` leaves out:
    /// here a stand-in owns the name on the same bus and sends the signal as kioskd would.
    @Test func eventsCarryExitRequested() async throws {
        let f = try Fixture(start: false)
        defer { f.stop() }
        let events = Recorder(await f.manager.events())
        #expect(await events.wait(count: 1) == [.daemonStopped])
        let standIn = try Bus.open(address: f.bus.address)
        try standIn.requestName(KioskWire.busName)
        try standIn.emitSignal(
            path: KioskWire.objectPath, interface: KioskWire.managerInterface,
            member: KioskWire.Member.exitRequested, arguments: [])
        try standIn.emitSignal(
            path: KioskWire.objectPath, interface: KioskWire.managerInterface,
            member: KioskWire.Member.timeLimitWarning, arguments: [.uint64(300)])
        try standIn.emitSignal(
            path: KioskWire.objectPath, interface: KioskWire.managerInterface,
            member: KioskWire.Member.timeExtended, arguments: [.uint64(600), .uint32(9)])
        try standIn.flush()
        let seen = await events.wait { $0.count >= 5 }
        #expect(
            seen == [
                .daemonStopped, .daemonStarted, .exitRequested, .timeLimitWarning(secondsLeft: 300),
                .timeExtended(secondsAdded: 600, extensionsLeft: 9),
            ])
        standIn.close()
    }

    /// The passcode prompt's properties and `PromptClosed`, as the kioskd-prompt display reads
    /// them. kioskd publishes them only from its input broker (left out by `--no-input`), so a
    /// stand-in (Tests/Support/stand-in-kioskd) serves the interface here; the daemon's own tests
    /// check what kioskd itself publishes.
    @Test func promptPropertiesAndPromptClosed() async throws {
        let f = try Fixture(start: false)
        defer { f.stop() }
        let standIn = try StandInKioskd(bus: f.bus)
        defer { standIn.stop() }
        let idle = try await f.manager.status()
        #expect(idle.prompt == .closed)
        #expect(idle.speakWarnings == false)
        #expect(idle.language == "")
        let pad = try await f.manager.promptPad()
        #expect(pad.count == 12)
        #expect(pad.first == KioskPrompt.Key(label: "1", x: 0.3, y: 0.4, width: 0.12, height: 0.12))
        #expect(Set(pad.map(\.label)) == Set((0...9).map(String.init) + ["OK", "Cancel"]))

        let events = Recorder(await f.manager.events())
        await events.wait(count: 1)
        try standIn.set([
            "SessionState": "active", "ActiveProfile": "museum", "SpeakWarnings": true,
            "Language": "de", "PromptState": "open", "PromptLength": 3, "PromptDeadline": 1_900_000_000_000_000,
            "PromptRetryAfter": 1_800_000_000_000_000,
        ])
        try standIn.emit("PromptClosed", ["rejected"])
        try standIn.set(["PromptState": "closed", "PromptLength": 0, "PromptDeadline": 0])
        let seen = await events.wait { $0.count >= 4 }
        var open = KioskStatus(
            sessionState: .active, activeProfile: "museum", sessionDeadline: nil, version: "0.1.0",
            prompt: KioskPrompt(
                state: .open, length: 3, deadline: Timestamp(microseconds: 1_900_000_000_000_000),
                retryAfter: Timestamp(microseconds: 1_800_000_000_000_000)),
            speakWarnings: true, passcodeSet: false)
        open.language = "de"
        var closed = open
        closed.prompt = KioskPrompt(
            state: .closed, retryAfter: Timestamp(microseconds: 1_800_000_000_000_000))
        #expect(
            seen == [
                .statusChanged(idle), .statusChanged(open), .promptClosed(.rejected), .statusChanged(closed),
            ])
    }

    /// The order docs/dbus-api.md promises (the order of signals): a session's presets, applied
    /// at its start and restored at its end, arrive before the `PropertiesChanged` of its state.
    @Test func presetsArriveBeforeTheSessionStateChange() async throws {
        let f = try Fixture()
        defer { f.stop() }
        try f.kioskd.writeTestProfile("museum", app: Self.app, denied: [Self.controls, Self.zoom])
        try await f.manager.registerApplication(Self.app, restrictions: Self.declarations)
        let events = Recorder(await f.manager.events())
        await events.wait(count: 1)
        try await f.manager.startSession(profile: "museum")
        try await f.manager.forceEndSession()
        let seen = Array(await events.wait { $0.count >= 7 }.dropFirst())
        func presets(_ state: RestrictionState) -> Set<ManagerEvent> {
            [
                .restrictionStateChanged(app: Self.app, restriction: Self.controls, state: state),
                .restrictionStateChanged(app: Self.app, restriction: Self.zoom, state: state),
            ]
        }
        func sessionState(_ event: ManagerEvent?) -> SessionState? {
            if case .statusChanged(let status) = event { status.sessionState } else { nil }
        }
        #expect(seen.count == 6)
        #expect(Set(seen.prefix(2)) == presets(.deny))
        #expect(sessionState(seen.dropFirst(2).first) == .active)
        #expect(Set(seen.dropFirst(3).prefix(2)) == presets(.allow))
        #expect(sessionState(seen.last) == .inactive)
    }

    /// A newer kioskd may publish a session or prompt state this client does not know: it reads
    /// as `.unknown` (in `status()`, in the event stream and in an app's `sessionStates()`),
    /// never as a broken reply, and a known value afterwards reads as itself again.
    @Test func statesANewerDaemonAddsReadAsUnknown() async throws {
        let f = try Fixture(start: false)
        defer { f.stop() }
        let standIn = try StandInKioskd(bus: f.bus)
        defer { standIn.stop() }
        let events = Recorder(await f.manager.events())
        await events.wait(count: 1)
        let client = try await GuidedAccessClient.connect(to: .address(f.bus.address))
        let sessions = Recorder(client.sessionStates())
        #expect(await sessions.wait(count: 1) == [.inactive])

        try standIn.set(["SessionState": "paused", "PromptState": "dimmed", "ActiveProfile": "museum"])
        let status = try await f.manager.status()
        #expect(status.sessionState == .unknown)
        #expect(status.prompt.state == .unknown)
        #expect(status.activeProfile == "museum")
        try standIn.set(["SessionState": "active", "PromptState": "closed"])
        let seen = await events.wait { $0.count >= 3 }
        let statuses = seen.dropFirst().compactMap { event -> KioskStatus? in
            if case .statusChanged(let status) = event { status } else { nil }
        }
        #expect(statuses.map(\.sessionState) == [.unknown, .active])
        #expect(statuses.map(\.prompt.state) == [.unknown, .closed])
        #expect(await sessions.wait(count: 3) == [.inactive, .unknown, .active])
        await client.close()
    }

    /// An exam app locks the kiosk to itself and lets it go; the client tells the
    /// app the session is its own (`ActiveApp`).
    @Test func anAppRequestsAndReleasesItsOwnSession() async throws {
        let f = try Fixture()
        defer { f.stop() }
        try f.kioskd.writeProfile("exam", "app = \"org.example.Exam\"\n[session]\napp-may-request = true\n")
        let client = try await GuidedAccessClient.connect(to: .address(f.bus.address))
        defer { Task { await client.close() } }
        try await client.register(appID: "org.example.Exam", restrictions: [])
        #expect(!client.sessionIsForThisApp)
        try await f.manager.requestSession(appID: "org.example.Exam", profile: "exam")
        #expect(try await f.manager.status().activeApp == "org.example.Exam")
        #expect(await eventually(timeout: .seconds(5)) { client.sessionIsForThisApp })
        try await f.manager.releaseSession(appID: "org.example.Exam")
        #expect(try await f.manager.status().sessionState == .inactive)
        await client.close()
    }
}

/// A stream of events ended while its mirror's call to kioskd was in flight: the reply comes to
/// a mirror that is gone. It held itself `unowned` there, and the
/// process crashed ("Attempted to read an unowned reference", CI on 2026-11-29); it holds itself
/// weakly now, and nothing happens.
@Suite(.serialized) struct EventsEndedMidCallTests {
    @Test func aStreamEndedWhileItsReadIsInFlightCrashesNothing() async throws {
        let bus = try PrivateBus()
        let standIn = try StandInKioskd(bus: bus)
        let manager = try KioskManager.connect(to: .address(bus.address))
        let stream = await manager.events()  // subscribed, the status read
        let consumer = Task {
            for await _ in stream {}
        }
        // The stand-in stops answering GetAll, then invalidates a property: the mirror reads
        // the status again, and that read stays in flight.
        try standIn.holdGetAll()
        try standIn.invalidate(["SessionState"])
        #expect(eventually { standIn.log.contains("GetAll held") }, "\(standIn.log)")
        consumer.cancel()  // the stream ends: its mirror goes, the call still in flight
        _ = await consumer.value
        // A round trip through the manager's loop, after the job that drops the mirror.
        _ = try? await manager.listApplications()
        // The status comes now, to a mirror that is gone. The sentinel: another GetAll, answered
        // after the held one (held too if it came first, then answered in order), whose reply
        // the manager's loop handles after the held one's.
        try standIn.answerGetAll()
        _ = try await manager.status()
        standIn.stop()
        bus.stop()
        // The sentinel: once the manager's thread has seen the end, a call fails at once.
        #expect(
            await eventually {
                do {
                    _ = try await manager.listApplications()
                    return false
                } catch {
                    return true
                }
            })
        manager.close()
    }
}
