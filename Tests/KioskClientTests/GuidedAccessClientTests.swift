import BusTestSupport
import Foundation
import KioskClient
import KioskCore
import KioskTestSupport
import KioskdProcessTestSupport
import Synchronization
import Testing

/// A museum-map app's delegate that records what it is told (and the state `state(for:)`
/// gives at that moment).
final class MapDelegate: GuidedAccessRestrictionDelegate {
    static let controls = "org.example.MuseumMap.controls"
    static let zoom = "org.example.MuseumMap.zoom"

    let calls = Mutex<[RestrictionChange]>([])
    let client = Mutex<GuidedAccessClient?>(nil)
    let statesSeenInCallback = Mutex<[RestrictionState?]>([])

    var guidedAccessRestrictionIdentifiers: [String]? { [Self.controls, Self.zoom] }

    func textForGuidedAccessRestriction(withIdentifier restrictionIdentifier: String) -> String? {
        restrictionIdentifier == Self.controls ? "Map controls" : "Zoom"
    }

    func detailTextForGuidedAccessRestriction(withIdentifier restrictionIdentifier: String) -> String? {
        restrictionIdentifier == Self.controls ? "The settings gear and the layer picker." : nil
    }

    func guidedAccessRestriction(
        withIdentifier restrictionIdentifier: String, didChange newRestrictionState: RestrictionState
    ) {
        calls.withLock { $0.append(RestrictionChange(id: restrictionIdentifier, state: newRestrictionState)) }
        let seen = client.withLock { $0 }?.state(for: restrictionIdentifier)
        statesSeenInCallback.withLock { $0.append(seen) }
    }

    var all: [RestrictionChange] { calls.withLock { $0 } }
    /// How many times `guidedAccessIdleReset()` was called.
    let idleResets = Mutex(0)

    func guidedAccessIdleReset() {
        idleResets.withLock { $0 += 1 }
    }

    /// Waits until `count` calls came (or 5 s passed) and returns them.
    func wait(count: Int, timeout: Duration = .seconds(20)) async -> [RestrictionChange] {
        await eventually(timeout: timeout) {
            all
        } until: {
            $0.count >= count
        }
    }
}

/// The app-facing API against the real kioskd: registration through the delegate, states at
/// any time, the streams, and reconnecting across kioskd restarts with each change delivered
/// exactly once.
@Suite(.serialized) struct GuidedAccessClientTests {
    static let app = "org.example.MuseumMap"
    static let controls = MapDelegate.controls
    static let zoom = MapDelegate.zoom

    struct Fixture {
        let bus: PrivateBus
        let kioskd: KioskdProcess
        let admin: KioskManager
        let delegate = MapDelegate()
        let client: GuidedAccessClient

        init(address: ((PrivateBus) -> String)? = nil) async throws {
            bus = try PrivateBus()
            kioskd = try KioskdProcess(bus: bus)
            try kioskd.writeTestProfile(
                "museum", app: GuidedAccessClientTests.app, denied: [GuidedAccessClientTests.controls])
            try kioskd.start()
            admin = try KioskManager.connect(to: .address(bus.address))
            client = try await GuidedAccessClient.connect(to: .address(address?(bus) ?? bus.address))
            delegate.client.withLock { $0 = client }
        }

        func stop() async {
            await client.close()
            admin.close()
            kioskd.stop()
            bus.stop()
        }
    }

    /// `[idle]`: after `reset-after` with nobody at the kiosk, the delegate's
    /// `guidedAccessIdleReset()` is called once and the events stream has `.idleReset`; the
    /// status carries `DisplayPower` as an admin's `Blank` and `Wake` set it.
    @Test func theIdleResetReachesTheDelegateAndTheDisplayPowerTheStatus() async throws {
        let f = try await Fixture()
        defer { Task { await f.stop() } }
        try f.kioskd.writeProfile(
            "idle",
            """
            app = "\(Self.app)"
            [idle]
            reset-after = "10s"
            [passcode]
            hash = "\(KioskdProcess.passcodeHash)"
            """)
        let events = Recorder(f.client.events())
        try await f.client.register(appID: Self.app, delegate: f.delegate)
        try await f.admin.startSession(profile: "idle")
        try await f.admin.blank()
        #expect(
            await eventually {
                f.client.status?.displayPower
            } until: {
                $0 == .off
            } == .off)
        try await f.admin.wake()
        #expect(
            await eventually {
                f.client.status?.displayPower
            } until: {
                $0 == .on
            } == .on)
        // Nobody touches the kiosk (no input devices here): the reset 10 s after the wake.
        let resets = await eventually(timeout: .seconds(40)) {
            f.delegate.idleResets.withLock { $0 }
        } until: {
            $0 >= 1
        }
        #expect(resets == 1)
        #expect(await events.wait { $0.contains(.idleReset) }.filter { $0 == .idleReset }.count == 1)
    }

    /// `[touch] show-locked`: the status carries the session's `LockedRegions` (name, shade,
    /// outline in fractions) while it runs, and none once it ends.
    @Test func theStatusCarriesTheLockedRegionsWhileTheSessionRuns() async throws {
        let f = try await Fixture()
        defer { Task { await f.stop() } }
        try f.kioskd.writeProfile(
            "map",
            """
            [touch]
            mode = "regions"
            shade-opacity = 0.5
            [[touch.locked-region]]
            name = "settings"
            rect = { x = 0.75, y = 0.0, width = 0.25, height = 0.125 }
            [passcode]
            hash = "\(KioskdProcess.passcodeHash)"
            """)
        try await f.client.register(appID: Self.app, delegate: f.delegate)
        #expect(f.client.status?.lockedRegions == [])
        try await f.admin.startSession(profile: "map")
        let settings = ShadedRegion(
            name: "settings", opacity: 0.5,
            outline: [.init(x: 0.75, y: 0), .init(x: 1, y: 0), .init(x: 1, y: 0.125), .init(x: 0.75, y: 0.125)])
        #expect(await eventually { f.client.status?.lockedRegions } until: { $0 == [settings] } == [settings])
        try await f.admin.endSession(passcode: KioskdProcess.passcode)
        #expect(await eventually { f.client.status?.lockedRegions } until: { $0 == [] } == [])
    }

    @Test func registerThroughTheDelegateAndHearEachChange() async throws {
        let f = try await Fixture()
        let changes = Recorder(f.client.restrictionChanges())
        let sessions = Recorder(f.client.sessionStates())
        try await f.client.register(appID: Self.app, delegate: f.delegate)

        #expect(f.client.state(for: Self.controls) == .allow)
        #expect(f.client.state(for: Self.zoom) == .allow)
        #expect(f.client.state(for: "org.example.MuseumMap.other") == nil)
        #expect(
            f.client.restrictions == [
                RestrictionInfo(
                    id: Self.controls, title: "Map controls", detail: "The settings gear and the layer picker.",
                    state: .allow),
                RestrictionInfo(id: Self.zoom, title: "Zoom", detail: "", state: .allow),
            ])
        #expect(try await f.admin.listRestrictions(of: Self.app).map(\.title) == ["Map controls", "Zoom"])
        #expect(await sessions.wait(count: 1) == [.inactive])

        try await f.admin.setRestrictionState(.deny, of: Self.zoom, in: Self.app)
        #expect(await f.delegate.wait(count: 1) == [RestrictionChange(id: Self.zoom, state: .deny)])
        // state(for:) is current by the time the delegate hears of the change.
        #expect(f.delegate.statesSeenInCallback.withLock { $0 } == [.deny])
        #expect(f.client.state(for: Self.zoom) == .deny)

        try await f.admin.startSession(profile: "museum")
        #expect(
            await f.delegate.wait(count: 2) == [
                RestrictionChange(id: Self.zoom, state: .deny),
                RestrictionChange(id: Self.controls, state: .deny),
            ])
        #expect(await sessions.wait(count: 2) == [.inactive, .active])
        #expect(f.client.status?.activeProfile == "museum")
        try await f.admin.endSession(passcode: KioskdProcess.passcode)
        #expect(await sessions.wait(count: 3) == [.inactive, .active, .inactive])
        #expect(
            await f.delegate.wait(count: 3) == [
                RestrictionChange(id: Self.zoom, state: .deny),
                RestrictionChange(id: Self.controls, state: .deny),
                RestrictionChange(id: Self.controls, state: .allow),
            ])
        #expect(await changes.wait(count: 3) == f.delegate.all)
        // A stream that subscribes later starts with the current session state.
        #expect(await Recorder(f.client.sessionStates()).wait(count: 1) == [.inactive])
        await f.stop()
    }

    /// kioskd refuses a first registration (a restriction id twice): the client is left with no
    /// app, so it may register another id, and nothing of the refused one is reported.
    @Test func aRefusedFirstRegistrationLeavesTheClientFree() async throws {
        let f = try await Fixture()
        let twice = try RestrictionDeclaration(id: "org.example.Refused.x", title: "X", detail: "")
        await #expect {
            try await f.client.register(appID: "org.example.Refused", restrictions: [twice, twice])
        } throws: { ($0 as? KioskError)?.code == .invalidArgument }
        // Only the browsers kioskd declares itself (docs/browsers.md).
        #expect(try await f.admin.listApplications() == ["org.chromium.Chromium", "org.mozilla.firefox"])
        #expect(f.client.state(for: "org.example.Refused.x") == nil)
        try await f.client.register(
            appID: Self.app,
            restrictions: [
                RestrictionDeclaration(id: Self.controls, title: "Map controls", detail: "")
            ])
        #expect(f.client.state(for: Self.controls) == .allow)
        try await f.admin.setRestrictionState(.deny, of: Self.controls, in: Self.app)
        #expect(await eventually(timeout: .seconds(2)) { f.client.state(for: Self.controls) == .deny })
        await f.stop()
    }

    @Test func reRegisteringAddsRestrictionsAndRefusalsThrow() async throws {
        let f = try await Fixture()
        try await f.client.register(
            appID: Self.app,
            restrictions: [
                RestrictionDeclaration(id: Self.controls, title: "Map controls", detail: "")
            ])
        #expect(f.client.state(for: Self.zoom) == nil)
        try await f.admin.setRestrictionState(.deny, of: Self.controls, in: Self.app)
        try await f.client.register(
            appID: Self.app,
            restrictions: [
                RestrictionDeclaration(id: Self.controls, title: "Map controls", detail: ""),
                RestrictionDeclaration(id: Self.zoom, title: "Zoom", detail: ""),
            ])
        #expect(f.client.state(for: Self.controls) == .deny)
        #expect(f.client.state(for: Self.zoom) == .allow)
        await #expect(throws: KioskError.self) {
            try await f.client.register(appID: "org.example.Other", restrictions: [])
        }
        await #expect(throws: KioskError.self) {
            try await f.client.register(appID: "museum", restrictions: [])
        }
        await f.client.close()
        await #expect(throws: KioskClientError(.busUnavailable, "The client was closed.")) {
            try await f.client.register(appID: Self.app, restrictions: [])
        }
        #expect(f.client.state(for: Self.controls) == .deny)  // still the last known
        await f.stop()
    }

    @Test func registeringBeforeKioskdStartsRegistersWhenItDoes() async throws {
        let bus = try PrivateBus()
        let kioskd = try KioskdProcess(bus: bus)
        let client = try await GuidedAccessClient.connect(to: .address(bus.address))
        let delegate = MapDelegate()
        await #expect(throws: KioskClientError(.notRunning, "kioskd is not running.")) {
            try await client.register(appID: Self.app, delegate: delegate)
        }
        #expect(client.state(for: Self.controls) == nil)
        let events = Recorder(client.events())
        try kioskd.start()
        await events.wait {
            $0.contains(.daemonStarted) && $0.contains { if case .statusChanged = $0 { true } else { false } }
        }
        let admin = try KioskManager.connect(to: .address(bus.address))
        #expect(try await admin.listRestrictions(of: Self.app).map(\.id) == [Self.controls, Self.zoom])
        #expect(client.state(for: Self.controls) == .allow)
        admin.close()
        await client.close()
        kioskd.stop()
        bus.stop()
    }

    /// The restart the issue asks for: kioskd stops while the app runs; a second kioskd on the
    /// same state directory (on another bus, so the app cannot hear it) changes a restriction;
    /// kioskd comes back. The app reconnects and hears of the change once.
    @Test func aChangeMadeWhileKioskdWasDownReachesTheAppExactlyOnce() async throws {
        let f = try await Fixture()
        let events = Recorder(f.client.events())
        try await f.client.register(appID: Self.app, delegate: f.delegate)

        f.kioskd.stop()
        await events.wait { $0.contains(.daemonStopped) }

        let otherBus = try PrivateBus()
        let second = try KioskdProcess(bus: otherBus, sharingStateWith: f.kioskd)
        try second.start()
        let otherAdmin = try KioskManager.connect(to: .address(otherBus.address))
        try await otherAdmin.setRestrictionState(.deny, of: Self.controls, in: Self.app)
        otherAdmin.close()
        second.stop()
        otherBus.stop()
        #expect(f.delegate.all.isEmpty)
        #expect(f.client.state(for: Self.controls) == .allow)

        try f.kioskd.start()
        #expect(await f.delegate.wait(count: 1) == [RestrictionChange(id: Self.controls, state: .deny)])
        #expect(f.client.state(for: Self.controls) == .deny)
        // A later change as a barrier: everything before it has been delivered.
        try await f.admin.setRestrictionState(.deny, of: Self.zoom, in: Self.app)
        #expect(
            await f.delegate.wait(count: 2) == [
                RestrictionChange(id: Self.controls, state: .deny),
                RestrictionChange(id: Self.zoom, state: .deny),
            ])
        // A second barrier instead of a sleep: a late duplicate of either change would be
        // delivered before this one, as third.
        try await f.admin.setRestrictionState(.allow, of: Self.zoom, in: Self.app)
        #expect(
            await f.delegate.wait(count: 3) == [
                RestrictionChange(id: Self.controls, state: .deny),
                RestrictionChange(id: Self.zoom, state: .deny),
                RestrictionChange(id: Self.zoom, state: .allow),
            ])
        await f.stop()
    }

    /// Changes made the moment a restarted kioskd owns its name race with the client's
    /// snapshot: whether the app sees the signal, the snapshot or both, it hears each once.
    @Test func aChangeRacingTheSnapshotIsDeliveredOnce() async throws {
        let f = try await Fixture()
        try await f.client.register(appID: Self.app, delegate: f.delegate)
        var expected: [RestrictionChange] = []
        var state = RestrictionState.allow
        for _ in 0..<10 {
            f.kioskd.stop()
            try f.kioskd.start()
            state = state == .allow ? .deny : .allow
            try await f.admin.setRestrictionState(state, of: Self.controls, in: Self.app)
            expected.append(RestrictionChange(id: Self.controls, state: state))
        }
        try await f.admin.setRestrictionState(.deny, of: Self.zoom, in: Self.app)
        expected.append(RestrictionChange(id: Self.zoom, state: .deny))
        #expect(await f.delegate.wait(count: expected.count, timeout: .seconds(10)) == expected)
        // A barrier instead of a sleep: a late duplicate of any change above would be delivered
        // before this one.
        try await f.admin.setRestrictionState(.allow, of: Self.zoom, in: Self.app)
        expected.append(RestrictionChange(id: Self.zoom, state: .allow))
        #expect(await f.delegate.wait(count: expected.count, timeout: .seconds(10)) == expected)
        await f.stop()
    }

    /// The bus itself goes away (dbus-daemon restarts): the client reconnects, registers again
    /// and reports what changed meanwhile.
    @Test func theClientReconnectsWhenTheBusRestarts() async throws {
        let f = try await Fixture(address: { $0.socketAddress })
        let events = Recorder(f.client.events())
        try await f.client.register(appID: Self.app, delegate: f.delegate)
        f.admin.close()

        f.kioskd.stop()
        try f.bus.restart()
        await events.wait { $0.contains(.disconnected) }
        // kioskd comes back on the new bus with a change the client has not seen.
        let second = try KioskdProcess(bus: f.bus, sharingStateWith: f.kioskd)
        try second.start()
        let admin = try KioskManager.connect(to: .address(f.bus.socketAddress))
        try await admin.setRestrictionState(.deny, of: Self.controls, in: Self.app)
        #expect(await f.delegate.wait(count: 1) == [RestrictionChange(id: Self.controls, state: .deny)])
        try await admin.setRestrictionState(.deny, of: Self.zoom, in: Self.app)
        #expect(
            await f.delegate.wait(count: 2) == [
                RestrictionChange(id: Self.controls, state: .deny),
                RestrictionChange(id: Self.zoom, state: .deny),
            ])
        #expect(try await admin.listApplications() == ["org.chromium.Chromium", "org.mozilla.firefox"] + [Self.app])
        admin.close()
        second.stop()
        await f.client.close()
        f.bus.stop()
    }
}
