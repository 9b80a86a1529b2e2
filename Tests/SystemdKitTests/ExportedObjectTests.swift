import BusTestSupport
import Foundation
import Glibc
import SystemPackage
import SystemdKit
import Testing

/// The test service on a private bus, driven by busctl, gdbus, python3-dbus and SystemdKit.
@Suite struct ExportedObjectTests {
    @Test func busctlCallsGetsPropertiesAndIntrospectsWithArgumentNames() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let service = try await TestService.start(address: bus.address)
        let a = "--address=\(bus.address)"

        let hello = try runTool(
            Tools.busctl, [a, "call", TestService.name, TestService.path, TestService.interface, "Hello", "s", "world"])
        #expect(hello.status == 0, "\(hello)")
        #expect(hello.stdout == "s \"hello, world\"\n")

        let version = try runTool(
            Tools.busctl, [a, "get-property", TestService.name, TestService.path, TestService.interface, "Version"])
        #expect(version.stdout == "s \"1.0\"\n", "\(version)")

        let xml = try runTool(Tools.busctl, [a, "--xml-interface", "introspect", TestService.name, TestService.path])
        #expect(xml.status == 0, "\(xml)")
        #expect(xml.stdout.contains(#"<method name="Hello">"#))
        #expect(xml.stdout.contains(#"<arg type="s" name="name" direction="in"/>"#), "\(xml.stdout)")
        #expect(xml.stdout.contains(#"<arg type="s" name="greeting" direction="out"/>"#))
        #expect(xml.stdout.contains(#"<arg type="s" name="who"/>"#), "signal argument names")
        #expect(xml.stdout.contains(#"<property name="Counter" type="u" access="read">"#))

        let table = try runTool(
            Tools.busctl, [a, "introspect", TestService.name, TestService.path, TestService.interface])
        #expect(table.stdout.contains(".Counter") && table.stdout.contains("emits-change"), "\(table)")
        try await service.stop()
    }

    @Test func wrongSignatureGetsAnErrorAndTheServiceKeepsServing() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let service = try await TestService.start(address: bus.address)
        let a = "--address=\(bus.address)"

        let wrong = try runTool(
            Tools.busctl, [a, "call", TestService.name, TestService.path, TestService.interface, "Hello", "u", "5"])
        #expect(wrong.status != 0)
        #expect(
            wrong.stderr.contains("Invalid arguments 'u' to call org.kioskd.Test1.Hello(), expecting 's'"), "\(wrong)")

        let none = try runTool(
            Tools.busctl, [a, "call", TestService.name, TestService.path, TestService.interface, "Hello"])
        #expect(none.status != 0, "\(none)")

        let fail = try runTool(
            Tools.busctl, [a, "call", TestService.name, TestService.path, TestService.interface, "Fail"])
        #expect(fail.status != 0)
        #expect(fail.stderr.contains("Nope, as asked."), "\(fail)")

        let client = try await TestClient.connect(address: bus.address)
        await #expect(throws: BusError(name: "org.kioskd.Test1.Error.Nope", message: "Nope, as asked.")) {
            try await client.call("Fail")
        }
        await #expect(throws: BusError.self) { try await client.call("Hello", [.int32(1), .int32(2)]) }
        #expect(try await client.call("Hello", [.string("still here")]) == [.string("hello, still here")])
        try await client.close()
        try await service.stop()
    }

    @Test func gdbusCallsAndReadsProperties() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let service = try await TestService.start(address: bus.address)
        let a = ["--address", bus.address, "--dest", TestService.name, "--object-path", TestService.path]

        let hello = try runTool(Tools.gdbus, ["call"] + a + ["--method", "\(TestService.interface).Hello", "gdbus"])
        #expect(hello.stdout == "('hello, gdbus',)\n", "\(hello)")

        let all = try runTool(
            Tools.gdbus, ["call"] + a + ["--method", "org.freedesktop.DBus.Properties.GetAll", TestService.interface])
        #expect(all.stdout == "({'Counter': <uint32 0>, 'Version': <'1.0'>},)\n", "\(all)")

        let introspect = try runTool(Tools.gdbus, ["introspect"] + a)
        #expect(introspect.stdout.contains("Hello(in  s name,"), "\(introspect)")
        #expect(introspect.stdout.contains("out s greeting);"))
        try await service.stop()
    }

    @Test func python3DBusCallsGetsErrorsAndReceivesSignals() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let service = try await TestService.start(address: bus.address)
        let script = """
            import sys, dbus
            from dbus.mainloop.glib import DBusGMainLoop
            from gi.repository import GLib
            DBusGMainLoop(set_as_default=True)
            bus = dbus.bus.BusConnection(sys.argv[1])
            obj = bus.get_object("org.kioskd.Test1", "/org/kioskd/Test1")
            iface = dbus.Interface(obj, "org.kioskd.Test1")
            print(iface.Hello("python"))
            try:
                iface.Fail()
            except dbus.DBusException as e:
                print(e.get_dbus_name())
            try:
                iface.Hello(dbus.UInt32(3), signature="u")
            except dbus.DBusException as e:
                print(e.get_dbus_name())
            got = []
            loop = GLib.MainLoop()
            def on_signal(value, who):
                got.append((int(value), str(who) == bus.get_unique_name()))
                loop.quit()
            bus.add_signal_receiver(on_signal, "CounterChanged", "org.kioskd.Test1")
            iface.SetCounter(dbus.UInt32(7))
            GLib.timeout_add(5000, loop.quit)
            loop.run()
            print(got)
            print(obj.Get("org.kioskd.Test1", "Counter", dbus_interface="org.freedesktop.DBus.Properties"))
            """
        let out = try runTool(Tools.python, ["-c", script, bus.address])
        #expect(out.status == 0, "\(out)")
        #expect(
            out.stdout == """
                hello, python
                org.kioskd.Test1.Error.Nope
                org.freedesktop.DBus.Error.InvalidArgs
                [(7, True)]
                7

                """, "\(out)")
        try await service.stop()
    }

    @Test func valuesRoundTripThroughEcho() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let service = try await TestService.start(address: bus.address)
        let client = try await TestClient.connect(address: bus.address)
        let values: [DBusValue] = [
            .byte(255), .int16(-2), .uint16(65535), .int32(-3), .uint32(4_000_000_000), .int64(.min), .uint64(.max),
            .double(0.25), .string("grüße \u{1F600}"), .objectPath("/a/b"), .signature("a{sv}"), .bool(true),
            .strings(["x", "", "z"]),
            .vardict([("n", .uint32(1)), ("s", .string("t")), ("nested", .vardict([("b", .bool(false))]))]),
            .structure([.string("s"), .int32(1), .bool(false)]),
            .variant(.array(elementSignature: "(ss)", [.structure([.string("a"), .string("b")])])),
        ]
        #expect(values.map(\.signature).joined() == TestService.echoSignature)
        let echoed = try await client.call("Echo", values)
        #expect(echoed == values)
        #expect(echoed[13].dictionary?["s"]?.string == "t")
        #expect(echoed[12].strings == ["x", "", "z"])

        // A value whose items do not match the array's element type fails on the sending side.
        await #expect(throws: Errno.self) {
            try await client.call("Hello", [.array(elementSignature: "s", [.uint32(1)])])
        }
        // A string with a NUL inside cannot be a D-Bus string: refused, never sent cut short.
        await #expect(throws: Errno(rawValue: EINVAL)) {
            try await client.call("Hello", [.string("12\u{0}349")])
        }
        #expect(try await client.call("Hello", [.string("12")]) == [.string("hello, 12")])
        try await client.close()
        try await service.stop()
    }

    @Test func deferredRepliesDoNotBlockOtherCallers() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let service = try await TestService.start(address: bus.address)
        let client = try await TestClient.connect(address: bus.address)
        let start = ContinuousClock.now
        async let slow = client.call("Defer", [.uint32(400)])
        try await Task.sleep(for: .milliseconds(50))
        let fast = try await client.call("Hello", [.string("meanwhile")])
        let fastDone = ContinuousClock.now - start
        #expect(fast == [.string("hello, meanwhile")])
        #expect(fastDone < .milliseconds(400), "Hello waited for the deferred call: \(fastDone)")
        #expect(try await slow == [.string("deferred 400 ms")])
        #expect(ContinuousClock.now - start >= .milliseconds(400))
        #expect(try await service.loop.perform { service.deferredAnswered } == 1)

        let busctl = try runTool(
            Tools.busctl,
            [
                "--address=\(bus.address)", "call", TestService.name, TestService.path,
                TestService.interface, "Defer", "u", "100",
            ])
        #expect(busctl.stdout == "s \"deferred 100 ms\"\n", "\(busctl)")
        #expect(try await service.loop.perform { service.deferredAnswered } == 2)  // once each
        try await client.close()
        try await service.stop()
    }

    @Test func signalMatchAndPropertiesChangedReachASwiftClient() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let service = try await TestService.start(address: bus.address)
        let client = try await TestClient.connect(address: bus.address)
        let (stream, continuation) = AsyncStream<[DBusValue]>.makeStream()
        let (installedStream, installed) = AsyncStream<Bool>.makeStream()
        let slots = try await client.loop.perform { [bus = client.bus] in
            let counter = try bus.matchSignal(
                sender: TestService.name, path: TestService.path,
                interface: TestService.interface, member: "CounterChanged",
                installed: { installed.yield((try? $0.get()) != nil) }
            ) { message in
                continuation.yield([.string("CounterChanged")] + ((try? message.readAll()) ?? []))
            }
            let changed = try bus.addMatch(
                rule:
                    "type='signal',sender='\(TestService.name)',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"
            ) { message in
                continuation.yield([.string("PropertiesChanged")] + ((try? message.read(signature: "sa{sv}as")) ?? []))
            }
            return UncheckedBox([counter, changed])
        }
        var ready = installedStream.makeAsyncIterator()
        #expect(await ready.next() == true)
        // The addMatch one has no install callback: a round trip after it orders it before the signal.
        _ = try await client.call("Hello", [.string("sync")])

        _ = try await client.call("SetCounter", [.uint32(42)])
        let me = try await client.loop.perform { [bus = client.bus] in try bus.uniqueName() }
        let got = try await withTimeout(.seconds(5), "two signals") {
            var it = stream.makeAsyncIterator()
            var got: [[DBusValue]] = []
            while got.count < 2, let next = await it.next() { got.append(next) }
            return got
        }
        #expect(got.contains([.string("CounterChanged"), .uint32(42), .string(me)]))
        #expect(
            got.contains([
                .string("PropertiesChanged"), .string(TestService.interface),
                .vardict([("Counter", .uint32(42))]), .strings([]),
            ]), "\(got)")
        try await client.loop.perform { slots.value.forEach { $0.cancel() } }
        try await client.close()
        try await service.stop()
    }

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to call as nobody through setpriv"))))
    func senderUIDIsTheCallersSyncAndAsync_needsRoot() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let service = try await TestService.start(address: bus.address)
        let client = try await TestClient.connect(address: bus.address)
        #expect(try await client.call("WhoAmI") == [.uint32(0), .uint32(0)])
        let nobody = try runTool(
            Tools.setpriv,
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", Tools.busctl,
                "--address=\(bus.address)", "call", TestService.name, TestService.path,
                TestService.interface, "WhoAmI",
            ])
        #expect(nobody.stdout == "uu 65534 65534\n", "\(nobody)")
        try await client.close()
        try await service.stop()
    }
}

/// Hands loop-owned objects back out of `perform` to be used again on the loop only.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
