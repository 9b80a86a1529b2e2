import BusTestSupport
import KioskClient
import KioskCore
import KioskdTestSupport
import Testing

/// Clients believe only kioskd: another uid sends every signal kioskd emits straight to the
/// client's connection (unicast, which dbus-daemon delivers whatever the match rules say), and
/// claims kioskd's name with a forged `NameOwnerChanged`; nothing changes in the client. Each
/// test waits for a real change made through kioskd afterwards (`SignalForger` says why it
/// arrives after the forged signals) before asserting that nothing else arrived.
@Suite(.serialized) struct ForgedSignalTests {
    static let app = GuidedAccessClientTests.app
    static let controls = GuidedAccessClientTests.controls
    static let zoom = GuidedAccessClientTests.zoom

    /// An event a forged signal would cause (the real changes these tests make are restriction
    /// changes of `zoom`, and `controls` going to deny).
    static func isForged(_ event: ManagerEvent) -> Bool {
        switch event {
        case .exitRequested, .promptClosed, .timeLimitWarning, .daemonStarted, .daemonStopped, .disconnected:
            true
        case .statusChanged(let status):
            status.activeProfile == SignalForger.forgedProfile || status.sessionState != .inactive
                || status.prompt.state != .closed
        case .restrictionStateChanged(_, let id, let state):
            id == controls && state == .allow
        }
    }

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to forge signals as nobody through setpriv"))))
    func anAppBelievesNoForgedSignal_needsRoot() async throws {
        let f = try await GuidedAccessClientTests.Fixture()
        let events = Recorder(f.client.events())
        try await f.client.register(appID: Self.app, delegate: f.delegate)
        try await f.admin.setRestrictionState(.deny, of: Self.controls, in: Self.app)
        #expect(await f.delegate.wait(count: 1) == [RestrictionChange(id: Self.controls, state: .deny)])
        let status = f.client.status

        let summary = try SignalForger.forge(on: f.bus, app: Self.app, restriction: Self.controls, state: "allow")
        // The sentinel: a real change, sent by kioskd after every forged signal was queued.
        try await f.admin.setRestrictionState(.deny, of: Self.zoom, in: Self.app)
        #expect(
            await f.delegate.wait(count: 2) == [
                RestrictionChange(id: Self.controls, state: .deny),
                RestrictionChange(id: Self.zoom, state: .deny),
            ], "\(summary)")
        await events.wait { $0.contains(.restrictionStateChanged(app: Self.app, restriction: Self.zoom, state: .deny)) }
        #expect(f.client.state(for: Self.controls) == .deny)
        #expect(f.client.status == status)
        #expect(events.all.filter(Self.isForged) == [])
        await f.stop()
    }

    /// kioskd restarts (a new unique name): its real signals are believed again, and forged
    /// ones still are not — neither the old owner's nor the forger's.
    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to forge signals as nobody through setpriv"))))
    func afterARestartOnlyTheNewKioskdIsBelieved_needsRoot() async throws {
        let f = try await GuidedAccessClientTests.Fixture()
        let events = Recorder(f.client.events())
        try await f.client.register(appID: Self.app, delegate: f.delegate)
        try await f.admin.setRestrictionState(.deny, of: Self.controls, in: Self.app)
        #expect(await f.delegate.wait(count: 1) == [RestrictionChange(id: Self.controls, state: .deny)])

        f.kioskd.stop()
        await events.wait { $0.contains(.daemonStopped) }
        try f.kioskd.start()
        await events.wait { $0.contains(.daemonStarted) }
        try await f.admin.setRestrictionState(.deny, of: Self.zoom, in: Self.app)
        #expect(
            await f.delegate.wait(count: 2) == [
                RestrictionChange(id: Self.controls, state: .deny),
                RestrictionChange(id: Self.zoom, state: .deny),
            ])

        let summary = try SignalForger.forge(on: f.bus, app: Self.app, restriction: Self.controls, state: "allow")
        try await f.admin.setRestrictionState(.allow, of: Self.zoom, in: Self.app)
        #expect(
            await f.delegate.wait(count: 3) == [
                RestrictionChange(id: Self.controls, state: .deny),
                RestrictionChange(id: Self.zoom, state: .deny),
                RestrictionChange(id: Self.zoom, state: .allow),
            ], "\(summary)")
        await events.wait { $0.contains(.restrictionStateChanged(app: Self.app, restriction: Self.zoom, state: .allow)) }
        #expect(f.client.state(for: Self.controls) == .deny)
        #expect(f.client.status?.activeProfile == "")
        // The real stop and start, once each; nothing forged.
        #expect(events.all.filter { $0 == .daemonStopped || $0 == .daemonStarted } == [.daemonStopped, .daemonStarted])
        #expect(events.all.filter { Self.isForged($0) && $0 != .daemonStopped && $0 != .daemonStarted } == [])
        await f.stop()
    }

    /// `KioskManager.events()`, which `kioskctl monitor` and `kioskd-prompt` follow: every app's
    /// changes, the prompt, the session; a forged one of any of them is not reported.
    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to forge signals as nobody through setpriv"))))
    func theManagerEventStreamReportsNoForgedSignal_needsRoot() async throws {
        let f = try await GuidedAccessClientTests.Fixture()
        try await f.client.register(appID: Self.app, delegate: f.delegate)
        let events = Recorder(await f.admin.events())
        await events.wait(count: 1)  // subscribed: the current status

        let summary = try SignalForger.forge(on: f.bus, app: Self.app, restriction: Self.controls, state: "allow")
        try await f.admin.setRestrictionState(.deny, of: Self.zoom, in: Self.app)
        let seen = await events.wait {
            $0.contains(.restrictionStateChanged(app: Self.app, restriction: Self.zoom, state: .deny))
        }
        #expect(seen.count == 2, "\(summary)")
        #expect(seen.dropFirst().first == .restrictionStateChanged(app: Self.app, restriction: Self.zoom, state: .deny))
        #expect(seen.filter(Self.isForged) == [])
        await f.stop()
    }
}
