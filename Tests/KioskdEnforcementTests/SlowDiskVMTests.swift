import BusTestSupport
import Foundation
import Glibc
import InputTestSupport
import KioskCore
import KioskdProcessTestSupport
import Testing

/// kioskd with its state directory on a slow real disk: an ext4 file system on a loop device
/// under device-mapper's `delay` target, every write held `SlowDisk.writeDelay`. A save (write,
/// fsync, rename, fsync of the directory) then takes a second or more, and the loop must go on
/// serving reads and forwarding input meanwhile. VM only: root, /dev/uinput, loop and dm-delay.
@Suite(
    "Real kernel: kioskd saving its state to a slow disk (VM, root, dm-delay)", .serialized,
    .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct SlowDiskVMTests {
    static let app = "org.example.MuseumMap"
    static let controls = "org.example.MuseumMap.controls"
    static let share = "org.example.MuseumMap.share"

    /// A delayed disk mounted at `directory` (an ext4 on a loop device on a file in the guest's
    /// tmpfs, through dm-delay: reads immediate, writes and flushes `writeDelay` late).
    final class SlowDisk {
        static let writeDelay = 400  // ms
        let directory: String
        private let name = "kioskd-slow-\(getpid())"
        private let image: String

        init(mountedAt directory: String) throws {
            self.directory = directory
            image = "/tmp/\(name).img"
            try Self.shell(
                """
                set -e
                modprobe loop; modprobe dm_delay; modprobe ext4
                truncate -s 64M \(image)
                # Made on the file, every table written now: the block device is never asked to
                # write zeroes (loop on tmpfs cannot), and no lazy init writes later.
                mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 \(image)
                dev=$(losetup --find --show \(image))
                size=$(blockdev --getsz "$dev")
                d=\(Self.writeDelay)
                dmsetup --noudevsync create \(name) --table "0 $size delay $dev 0 0 $dev 0 $d $dev 0 $d"
                dmsetup --noudevsync mknodes \(name)
                mount -t ext4 /dev/mapper/\(name) \(directory)
                """)
        }

        func remove() { VMDisk.remove(directory: directory, mapperName: name, image: image) }

        deinit { remove() }

        @discardableResult
        static func shell(_ script: String) throws -> String { try VMDisk.shell(script, "the slow disk's setup") }
    }

    /// kioskd brokering input, its state on a slow disk, with the sample app registered.
    final class Machine {
        let bus: PrivateBus
        let kioskd: KioskdUnderTest
        let disk: SlowDisk

        init() throws {
            bus = try PrivateBus()
            kioskd = try KioskdUnderTest(bus: bus)
            disk = try SlowDisk(mountedAt: kioskd.stateDirectory.path)
            try kioskd.writeTestProfile("museum", app: SlowDiskVMTests.app, denied: [SlowDiskVMTests.share])
            try kioskd.start(input: true)
            try kioskd.call(
                "RegisterApplication", "sa(sss)",
                [
                    SlowDiskVMTests.app, "2",
                    SlowDiskVMTests.controls, "Map controls", "Pan and zoom", SlowDiskVMTests.share, "Sharing",
                    "Send to phone",
                ])
        }

        func stop() {
            kioskd.stop()
            disk.remove()
            bus.stop()
        }
    }

    /// What every script starts with: `bus`, `m`, `props` on the private bus in `argv[1]`, a GLib
    /// main loop, and `ms(t)`: milliseconds since `t` (time.monotonic).
    static let preamble = """
        import sys, time, select, dbus, evdev
        from evdev import ecodes
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        obj = bus.get_object("\(KioskWire.busName)", "\(KioskWire.objectPath)")
        m = dbus.Interface(obj, "\(KioskWire.managerInterface)")
        props = dbus.Interface(obj, "org.freedesktop.DBus.Properties")
        def ms(t):
            return (time.monotonic() - t) * 1e3

        """

    static func figures(_ stdout: String) -> [String: String] {
        Dictionary(
            stdout.split(separator: "\n").compactMap { line -> (String, String)? in
                let parts = line.split(separator: " ", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }
        ) { a, _ in a }
    }

    @Test(
        "while a SetRestrictionState is being saved, GetRestrictionState answers at once with the old state and a key press goes through; the reply and the signal come once the save is done"
    )
    func theLoopServesReadsAndInputWhileASaveIsInFlight() throws {
        let machine = try Machine()
        defer { machine.stop() }
        // One process times everything on CLOCK_MONOTONIC: it makes a keyboard kioskd brokers,
        // sends the Set without waiting, then (30 ms later, the save in flight) presses a key,
        // reading it back from kioskd's clone, and calls Get five times.
        let script =
            Self.preamble + """
                app, rid = sys.argv[2], sys.argv[3]
                phys = "kioskd-vm-test/slow-disk"
                ui = evdev.UInput({ecodes.EV_KEY: list(range(ecodes.KEY_ESC, ecodes.KEY_SLASH + 1))},
                                  name="slow disk keyboard", phys=phys)
                clone, deadline = None, time.monotonic() + 60
                while clone is None and time.monotonic() < deadline:
                    for path in evdev.list_devices():
                        try:
                            d = evdev.InputDevice(path)
                        except OSError:
                            continue
                        if d.phys == "kioskd-clone/" + phys:
                            clone = d
                    time.sleep(0.05)
                assert clone is not None, "no clone of the keyboard"
                got = {}
                loop = GLib.MainLoop()
                def note(what):
                    def handler(*a):
                        got[what] = time.monotonic()
                        got[what + "_result"] = a[0].get_dbus_name() if a and hasattr(a[0], "get_dbus_name") else "ok"
                        if "reply" in got and "signal" in got:
                            loop.quit()
                    return handler
                bus.add_signal_receiver(note("signal"), "RestrictionStateChanged", "org.kioskd.GuidedAccess1.Manager")
                bus.get_name_owner("org.freedesktop.DBus")  # the match is in place
                def measure():
                    while clone.read_one() is not None:
                        pass
                    press = time.monotonic()
                    ui.write(ecodes.EV_KEY, ecodes.KEY_A, 1)
                    ui.syn()
                    seen = None
                    while seen is None and ms(press) < 5000:
                        select.select([clone.fd], [], [], 0.1)
                        for e in iter(clone.read_one, None):
                            if e.type == ecodes.EV_KEY and e.code == ecodes.KEY_A and e.value == 1:
                                seen = time.monotonic()
                    ui.write(ecodes.EV_KEY, ecodes.KEY_A, 0)
                    ui.syn()
                    gets = []
                    for _ in range(5):
                        t = time.monotonic()
                        value = str(m.GetRestrictionState(app, rid))
                        gets.append((ms(t), value))
                    got["gets"] = gets
                    got["press"], got["seen"], got["measured"] = press, seen, time.monotonic()
                    return False
                sent = time.monotonic()
                m.SetRestrictionState(app, rid, "deny", reply_handler=note("reply"), error_handler=note("reply"))
                GLib.timeout_add(30, measure)
                GLib.timeout_add(30000, loop.quit)
                loop.run()
                gets = got["gets"]
                print("get_values", sorted(set(v for _, v in gets)))
                print("get_max_ms %.1f" % max(t for t, _ in gets))
                print("forward_ms %.1f" % ((got["seen"] - got["press"]) * 1e3 if got["seen"] else -1))
                print("press_after_sent_ms %.1f" % ((got["press"] - sent) * 1e3))
                print("measured_after_sent_ms %.1f" % ((got["measured"] - sent) * 1e3))
                print("reply %s" % got.get("reply_result"))
                print("reply_ms %.1f" % ((got.get("reply", 1e9) - sent) * 1e3))
                print("signal_ms %.1f" % ((got.get("signal", 1e9) - sent) * 1e3))
                print("after", m.GetRestrictionState(app, rid))
                """
        let out = try runTool(
            KioskdUnderTest.python, ["-c", script, machine.bus.address, Self.app, Self.controls],
            timeout: .seconds(120))
        let f = Self.figures(out.stdout)
        let number = { (key: String) in Double(f[key] ?? "") ?? .nan }
        #expect(out.status == 0, "\(out)\n\(machine.kioskd.log)")
        #expect(f["get_values"] == "['allow']", "reads during the save must see the old state: \(out)")
        #expect(f["reply"] == "ok", "\(out)")
        #expect(f["after"] == "deny", "\(out)")
        // Served while the save was in flight: quick, and well before the reply. A read or a key
        // that waited for even one held write would take 400 ms or more, so 300 ms tells the two
        // apart with room for the TCG guest's own pauses (a key once took 138 ms there).
        #expect(number("get_max_ms") < 300, "\(out)")
        #expect(number("forward_ms") >= 0 && number("forward_ms") < 300, "\(out)")
        // The reads saw the old state, so the key (pressed before them) and they came while the
        // Set, received before them on the same connection, was still being saved.
        #expect(number("measured_after_sent_ms") < 1000, "\(out)")
        // The reply and the signal wait for the disk (writes are held 400 ms each).
        #expect(number("reply_ms") >= 300, "\(out)")
        #expect(number("signal_ms") >= 300 && number("signal_ms") <= number("reply_ms") + 50, "\(out)")
        print("slow disk (writes +\(SlowDisk.writeDelay) ms): \(out.stdout.replacingOccurrences(of: "\n", with: "; "))")
    }

    @Test(
        "SIGTERM during a save: the save finishes and its caller gets the reply before kioskd exits 0; a change still waiting is answered Failed and not made"
    )
    func sigtermLetsTheSaveInFlightFinish() throws {
        let machine = try Machine()
        defer { machine.stop() }
        let script =
            Self.preamble + """
                app, first, second = sys.argv[2:5]
                loop = GLib.MainLoop()
                results = {}
                def note(what):
                    def handler(*a):
                        results[what] = ("%s %s" % (a[0].get_dbus_name(), "stopping" in a[0].get_dbus_message())) if a else "ok"
                        if len(results) == 2:
                            loop.quit()
                    return handler
                m.SetRestrictionState(app, first, "deny", reply_handler=note("first"), error_handler=note("first"))
                m.SetRestrictionState(app, second, "deny", reply_handler=note("second"), error_handler=note("second"))
                bus.flush()
                print("sent", flush=True)
                GLib.timeout_add(30000, loop.quit)
                loop.run()
                print("first", results.get("first"), flush=True)
                print("second", results.get("second"), flush=True)
                """
        let client = try LineCollector(
            KioskdUnderTest.python, ["-c", script, machine.bus.address, Self.app, Self.controls, Self.share])
        defer { client.stop() }
        try client.wait("the two calls sent") { $0.contains("sent") }
        usleep(150_000)  // the first save is in flight (it takes over a second), the second waits
        let start = ContinuousClock.now
        #expect(machine.kioskd.stop(SIGTERM) == 0, "\(machine.kioskd.log)")
        let stopping = ContinuousClock.now - start
        let lines = try client.wait("both answers") { $0.contains { $0.hasPrefix("second") } }
        #expect(lines.contains("first ok"), "\(lines)\n\(machine.kioskd.log)")
        #expect(lines.contains("second org.freedesktop.DBus.Error.Failed True"), "\(lines)")
        #expect(stopping < .seconds(10), "\(stopping)")

        try machine.kioskd.start(input: true)
        #expect(try machine.kioskd.call("GetRestrictionState", "ss", [Self.app, Self.controls]) == "s \"deny\"\n")
        #expect(try machine.kioskd.call("GetRestrictionState", "ss", [Self.app, Self.share]) == "s \"allow\"\n")
        print("SIGTERM with a save in flight: kioskd stopped after \(stopping)")
    }

    @Test(
        "parallel wrong passcodes meet the throttle one at a time even when each failure takes a slow save: six counted, two Throttled"
    )
    func parallelWrongPasscodesWaitForEachFailureToBeOnDisk() throws {
        let machine = try Machine()
        defer { machine.stop() }
        try machine.kioskd.call("StartSession", "s", ["museum"])
        let script =
            Self.preamble + """
                loop = GLib.MainLoop()
                results = []
                def done(*a):
                    results.append(a[0].get_dbus_name() if a else "ok")
                    if len(results) == 8:
                        loop.quit()
                for _ in range(8):
                    m.EndSession("0000", reply_handler=done, error_handler=done, timeout=120)
                GLib.timeout_add(120000, loop.quit)
                loop.run()
                print(sorted(results))
                """
        let out = try runTool(KioskdUnderTest.python, ["-c", script, machine.bus.address], timeout: .seconds(180))
        let wrong = KioskError.Code.wrongPasscode.dbusName, throttled = KioskError.Code.throttled.dbusName
        let expected = ([throttled, throttled] + Array(repeating: wrong, count: 6)).map { "'\($0)'" }
        #expect(out.stdout == "[\(expected.joined(separator: ", "))]\n", "\(out)\n\(machine.kioskd.log)")
        let json = try JSONSerialization.jsonObject(with: machine.kioskd.stateBytes ?? Data()) as? [String: Any]
        let bySource = (json?["state"] as? [String: Any])?["throttles"] as? [String: Any]
        let throttle = bySource?["uid \(geteuid())"] as? [String: Any]
        #expect(throttle?["failures"] as? Int == 6, "\(String(describing: json))")
        #expect(try machine.kioskd.property("SessionState") == #"s "active""#)
    }
}
