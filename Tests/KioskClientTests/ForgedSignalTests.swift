import BusTestSupport
import Foundation
import Glibc
import KioskClient
import KioskCore
import KioskTestSupport
import KioskdProcessTestSupport
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
        case .exitRequested, .promptClosed, .timeLimitWarning, .timeExtended, .idleReset, .cleaningStarted,
            .cleaningEnded, .daemonStarted, .daemonStopped, .disconnected:
            true
        case .statusChanged(let status):
            status.activeProfile == SignalForger.forgedProfile || status.sessionState != .inactive
                || status.prompt.state != .closed || !status.drawing.isEmpty
                || !status.lockedRegions.isEmpty || !status.browserPolicies.isEmpty || status.stateStorage != nil
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
        await events.wait {
            $0.contains(.restrictionStateChanged(app: Self.app, restriction: Self.zoom, state: .allow))
        }
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

/// `Examples/python-museum-map/museum_map.py`, the python3-dbus example of docs/dbus-api.md,
/// against kioskd on a private bus, run as uid 65534 as an app would be: it reports the real
/// changes once each, across a kioskd restart, and none of the forged signals (the forger
/// claims kioskd's name too).
@Suite(.serialized) struct PythonExampleTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/python-museum-map/museum_map.py").path

    /// docs/dbus-api.md shows the heart of the example: each function it shows is the
    /// example's own, word for word, so the page cannot drift from the code that is tested.
    @Test func theDocsShowTheExamplesOwnCode() throws {
        let root = URL(fileURLWithPath: Self.script).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/dbus-api.md"), encoding: .utf8)
        let example = try String(contentsOfFile: Self.script, encoding: .utf8)
        let block = try #require(
            page.split(separator: "```python\n").dropFirst().first?.split(separator: "\n```").first)
        let functions = block.split(separator: "\n\n\n")
        #expect(functions.count >= 3)
        for function in functions {
            #expect(example.contains(function), "docs/dbus-api.md shows code the example does not have:\n\(function)")
        }
    }

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to run the example and the forger as nobody"))))
    func thePythonExampleBelievesOnlyKioskd_needsRoot() async throws {
        let app = ForgedSignalTests.app
        let (controls, zoom) = (ForgedSignalTests.controls, ForgedSignalTests.zoom)
        let bus = try PrivateBus()
        let kioskd = try KioskdProcess(bus: bus)
        // The example runs as nobody: the profile that names its app says so.
        try kioskd.writeTestProfile("museum", app: app, appOwner: "65534", denied: [controls])
        try kioskd.start()
        let admin = try KioskManager.connect(to: .address(bus.address))
        let output = bus.directory.appendingPathComponent("python-example.out").path
        let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let example = try ChildProcess.spawn(
            "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", Self.script],
            environment: bus.environment, stdout: fd, stderr: fd)
        close(fd)
        defer {
            example.signal(SIGKILL)
            _ = example.wait()
            admin.close()
            kioskd.stop()
            bus.stop()
        }
        func text() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        /// Waits until `line` was printed `times` times.
        func wait(for line: String, times: Int = 1) async {
            await eventually { text().split(separator: "\n").count(where: { $0 == line }) >= times }
        }
        await wait(for: "museum-map.py: the session is inactive")

        // Forged: controls denied, the session expired, and kioskd's name taken by the forger.
        let forged = try SignalForger.forge(on: bus, app: app, restriction: controls, state: "deny")
        try await admin.setRestrictionState(.deny, of: zoom, in: app)  // the sentinel
        await wait(for: "museum-map.py: told that \(zoom) is now deny")

        // A restart: the new kioskd's signals count, the forger's still do not.
        kioskd.stop()
        await wait(for: "museum-map.py: kioskd stopped")
        try kioskd.start()
        await wait(for: "museum-map.py: kioskd runs", times: 2)
        try await admin.startSession(profile: "museum")
        await wait(for: "museum-map.py: told that the session is now active")
        try SignalForger.forge(on: bus, app: app, restriction: zoom, state: "allow")
        try await admin.forceEndSession()  // the sentinel: its signals come after the forged ones
        await wait(for: "museum-map.py: told that the session is now inactive")

        example.signal(SIGTERM)
        #expect(example.wait() == 0)
        #expect(
            text() == """
                museum-map.py: kioskd runs
                museum-map.py: \(controls) is allow
                museum-map.py: \(zoom) is allow
                museum-map.py: the session is inactive
                museum-map.py: told that \(zoom) is now deny
                museum-map.py: kioskd stopped
                museum-map.py: kioskd runs
                museum-map.py: told that \(controls) is now deny
                museum-map.py: told that the session is now active
                museum-map.py: told that \(controls) is now allow
                museum-map.py: told that the session is now inactive
                museum-map.py: exiting

                """, "\(forged)")
    }
}

/// What docs/client.md says the bindings do for a client, checked on this machine's packages
/// (python3-dbus, GLib through python3-gi): a dbus-python receiver with `bus_name=`, a GDBus
/// subscription with a well-known sender and a `GDBusProxy` drop a forged signal and hear the
/// owner's; a dbus-python receiver without `bus_name` hears the forgery (the control).
@Suite(.serialized) struct BindingSenderCheckTests {
    static let listener = """
        import sys, dbus
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib, Gio
        KIOSKD, PATH, IFACE = "\(KioskWire.busName)", "\(KioskWire.objectPath)", "\(KioskWire.managerInterface)"
        DBusGMainLoop(set_as_default=True)
        def out(who, member, args):
            print(who, member, *[str(a) for a in args], flush=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        bus.add_signal_receiver(lambda *a, member=None: out("dbus-python-bus_name", member, a), None, IFACE, KIOSKD, PATH,
                                member_keyword="member")
        bus.add_signal_receiver(lambda *a, member=None: out("dbus-python-control", member, a), None, IFACE, None, PATH,
                                member_keyword="member")
        flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
        g = Gio.DBusConnection.new_for_address_sync(sys.argv[1], flags, None, None)
        g.signal_subscribe(KIOSKD, IFACE, None, PATH, None, Gio.DBusSignalFlags.NONE,
                           lambda c, s, p, i, member, params: out("gdbus-subscribe", member, params.unpack()))
        proxy = Gio.DBusProxy.new_sync(g, Gio.DBusProxyFlags.DO_NOT_LOAD_PROPERTIES, None, KIOSKD, PATH, IFACE, None)
        proxy.connect("g-signal", lambda p, s, member, params: out("gdbus-proxy", member, params.unpack()))
        # Round trips on both connections: the bus has installed every match before "ready".
        bus.list_names()
        g.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId", None, None,
                    Gio.DBusCallFlags.NONE, -1, None)
        print("ready", flush=True)
        GLib.MainLoop().run()
        """

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to forge signals as nobody through setpriv"))))
    func theBindingsCheckTheSenderAsTheDocsSay_needsRoot() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let standIn = try StandInKioskd(bus: bus)
        defer { standIn.stop() }
        let output = bus.directory.appendingPathComponent("listener.out").path
        let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let listener = try ChildProcess.spawn(
            "/usr/bin/python3", ["-c", Self.listener, bus.address], stdout: fd, stderr: fd)
        close(fd)
        defer {
            listener.signal(SIGKILL)
            _ = listener.wait()
        }
        func lines() -> [Substring] {
            ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n")
        }
        func wait(until condition: ([Substring]) -> Bool) async { await eventually { condition(lines()) } }
        await wait { $0.contains("ready") }
        let forged = try SignalForger.forge(
            on: bus, app: ForgedSignalTests.app, restriction: ForgedSignalTests.controls, state: "allow")
        try standIn.emit("PromptClosed", ["rejected"])  // the owner's, after every forged one
        let bindings = ["dbus-python-bus_name", "gdbus-subscribe", "gdbus-proxy", "dbus-python-control"]
        await wait { seen in bindings.allSatisfy { seen.contains("\($0) PromptClosed rejected") } }
        let seen = lines()
        for binding in bindings.dropLast() {
            #expect(
                seen.filter { $0.hasPrefix(binding + " ") } == ["\(binding) PromptClosed rejected"], "\(forged)")
        }
        #expect(
            seen.contains(
                "dbus-python-control RestrictionStateChanged \(ForgedSignalTests.app) \(ForgedSignalTests.controls) allow"
            ))
    }
}
