import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskTestSupport
import KioskdProcessTestSupport
import Testing

/// kioskd on a private bus, `--no-input` (no devices needed): logind's power-key inhibitor,
/// taken from a fake `org.freedesktop.login1` (logind itself cannot run on a private bus), and
/// a restored session whose profile broke.
@Suite("kioskd: logind's power-key inhibitor and a broken restored profile (private bus)", .serialized)
struct KioskdSessionLockTests {
    static let powerLocked = """
        description = "power locked (the default)"
        [passcode]
        hash = "\(demoPasscodeHash)"
        """
    static let powerAllowed = """
        description = "power allowed, volume locked"
        [buttons]
        power = "allowed"
        [passcode]
        hash = "\(demoPasscodeHash)"
        """

    /// A fake logind: `Inhibit(ssss) → h` hands out the write end of a pipe and prints
    /// "Inhibit WHAT WHO MODE"; when the holder closes it, the read end hangs up and it prints
    /// "released N" (N counts the inhibitors from 0), as logind's FIFO does.
    static let fakeLogind = """
        import os, sys, dbus, dbus.service
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        count = [0]
        class Manager(dbus.service.Object):
            @dbus.service.method("org.freedesktop.login1.Manager", in_signature="ssss", out_signature="h")
            def Inhibit(self, what, who, why, mode):
                n = count[0]
                count[0] += 1
                r, w = os.pipe()
                def hangup(fd, condition, n=n):
                    if os.read(fd, 1) == b"":
                        print("released", n, flush=True)
                        os.close(fd)
                        return False
                    return True
                GLib.io_add_watch(r, GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR, hangup)
                print("Inhibit", what, who, mode, flush=True)
                fd = dbus.types.UnixFd(w)
                os.close(w)
                return fd
        manager = Manager(bus, "/org/freedesktop/login1")
        name = dbus.service.BusName("org.freedesktop.login1", bus)  # kept: a collected BusName releases the name
        print("ready", flush=True)
        GLib.MainLoop().run()
        """

    static let inhibitLine =
        "Inhibit handle-power-key:handle-suspend-key:handle-hibernate-key:handle-reboot-key kioskd block"

    @Test(
        "while a session locks the power key kioskd holds a block inhibitor on the four handle-* keys; ending the session (or kioskd dying) closes it; a restored session takes it again"
    )
    func powerKeyInhibitor() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let logind = try LineCollector(KioskdUnderTest.python, ["-c", Self.fakeLogind, bus.address])
        defer { logind.stop() }
        try logind.wait("the fake logind") { $0.contains("ready") }
        let kioskd = try KioskdUnderTest(bus: bus)
        try kioskd.writeProfile("power-locked", Self.powerLocked)
        try kioskd.writeProfile("power-allowed", Self.powerAllowed)
        try kioskd.start(input: false)
        defer { kioskd.stop() }

        try kioskd.call("StartSession", "s", ["power-locked"])
        try logind.wait("Inhibit") { $0.contains(Self.inhibitLine) }
        #expect(!logind.lines.contains { $0.hasPrefix("released") })
        try kioskd.endSession(passcode: "1234")
        try logind.wait("the inhibitor's fd closed") { $0.contains("released 0") }

        // A session that leaves the power key alone takes none. The next power-locked session's
        // Inhibit is the barrier (no sleep): kioskd sends its calls in order, so an Inhibit taken
        // for the power-allowed session would reach the fake logind before it.
        try kioskd.call("StartSession", "s", ["power-allowed"])
        try kioskd.endSession(passcode: "1234")

        // kill -9 closes the fd with the process; the restored session takes it again.
        try kioskd.call("StartSession", "s", ["power-locked"])
        let lines = try logind.wait("the second Inhibit") { $0.filter { $0 == Self.inhibitLine }.count == 2 }
        #expect(lines.filter { $0.hasPrefix("Inhibit") }.count == 2, "\(lines)")
        kioskd.stop(SIGKILL)
        try logind.wait("the fd closed by kioskd's death") { $0.contains("released 1") }
        try kioskd.start(input: false)
        try logind.wait("the restored session's Inhibit") { $0.filter { $0 == Self.inhibitLine }.count == 3 }
        try kioskd.call("ForceEndSession")
        try logind.wait("released after ForceEndSession") { $0.contains("released 2") }
        #expect(kioskd.log.contains("Holding logind's power-key inhibitor"))
        #expect(!kioskd.log.contains("logind is not on the bus"))
    }

    @Test("a profile with keep-awake holds logind's idle, sleep and lid-switch inhibitor for the session")
    func keepAwakeInhibitor() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let logind = try LineCollector(KioskdUnderTest.python, ["-c", Self.fakeLogind, bus.address])
        defer { logind.stop() }
        try logind.wait("the fake logind") { $0.contains("ready") }
        let kioskd = try KioskdUnderTest(bus: bus)
        try kioskd.writeProfile(
            "awake", "[buttons]\npower = \"allowed\"\n[session]\nkeep-awake = true\n[passcode]\nhash = \"\(demoPasscodeHash)\"\n")
        try kioskd.start(input: false)
        defer { kioskd.stop() }
        try kioskd.call("StartSession", "s", ["awake"])
        let lines = try logind.wait("Inhibit") { $0.contains("Inhibit idle:sleep:handle-lid-switch kioskd block") }
        #expect(!lines.contains(Self.inhibitLine), "the power key is allowed: \(lines)")
        try kioskd.endSession(passcode: "1234")
        try logind.wait("the keep-awake inhibitor's fd closed") { $0.contains("released 0") }
        #expect(kioskd.log.contains("Holding logind's keep-awake inhibitor"))
    }

    /// A fake logind that refuses the first `refusals` Inhibit calls (AccessDenied, as a
    /// polkit-less logind would) and prints "refused N T" / "granted N T" (T: its monotonic
    /// clock, s); the calls it grants hand out a pipe's write end, as `fakeLogind`.
    static let refusingLogind = """
        import os, sys, time, dbus, dbus.service
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        refusals = int(sys.argv[2])
        count = [0]
        keep = []
        class Manager(dbus.service.Object):
            @dbus.service.method("org.freedesktop.login1.Manager", in_signature="ssss", out_signature="h")
            def Inhibit(self, what, who, why, mode):
                n = count[0]
                count[0] += 1
                if n < refusals:
                    print("refused", n, time.monotonic(), flush=True)
                    raise dbus.exceptions.DBusException("Access denied (fake)", name="org.freedesktop.DBus.Error.AccessDenied")
                r, w = os.pipe()
                keep.append(r)
                print("granted", n, time.monotonic(), flush=True)
                fd = dbus.types.UnixFd(w)
                os.close(w)
                return fd
        manager = Manager(bus, "/org/freedesktop/login1")
        name = dbus.service.BusName("org.freedesktop.login1", bus)
        print("ready", flush=True)
        GLib.MainLoop().run()
        """

    @Test(
        "a refused inhibitor is asked for again after 1 s, then 2 s; until it is held SessionProblem says so, then it is empty again"
    )
    func refusedInhibitorIsRetried() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let logind = try LineCollector(KioskdUnderTest.python, ["-c", Self.refusingLogind, bus.address, "2"])
        defer { logind.stop() }
        try logind.wait("the fake logind") { $0.contains("ready") }
        let kioskd = try KioskdUnderTest(bus: bus)
        try kioskd.writeProfile("power-locked", Self.powerLocked)
        try kioskd.start(input: false)
        defer { kioskd.stop() }

        try kioskd.call("StartSession", "s", ["power-locked"])
        try logind.wait("the first refusal") { $0.contains { $0.hasPrefix("refused 0 ") } }
        // The refusal shows in SessionProblem (awaited: kioskd reads logind's answer on its loop).
        var problem = try eventually(timeout: .seconds(30)) { try kioskd.property("SessionProblem") } until: {
            $0.contains("power-key inhibitor")
        }
        try #require(problem.contains("power-key inhibitor"), "SessionProblem never named the inhibitor: \(problem)")
        #expect(
            problem.contains("logind refused it: org.freedesktop.DBus.Error.AccessDenied: Access denied (fake)"),
            "\(problem)")

        let lines = try logind.wait("the inhibitor granted on the third call") {
            $0.contains { $0.hasPrefix("granted 2 ") }
        }
        func time(_ prefix: String) -> Double? {
            lines.first { $0.hasPrefix(prefix) }.flatMap { Double($0.split(separator: " ")[2]) }
        }
        let first = try #require(time("refused 0 ")), second = try #require(time("refused 1 "))
        let third = try #require(time("granted 2 "))
        #expect(second - first >= 0.95 && second - first < 1.9, "first retry after 1 s: \(second - first)")
        #expect(third - second >= 1.95 && third - second < 3.9, "second retry after 2 s: \(third - second)")

        problem = try eventually(timeout: .seconds(30)) { try kioskd.property("SessionProblem") } until: {
            $0 == #"s """#
        }
        try #require(problem == #"s """#, "SessionProblem stayed: \(problem)")
        #expect(kioskd.log.contains("Holding logind's power-key inhibitor"))
        #expect(try kioskd.property("SessionState") == #"s "active""#)
    }

    @Test("without logind on the bus kioskd says so once, at info, and the session works")
    func noLogind() throws {
        try withKioskd(profiles: ["power-locked": Self.powerLocked]) { kioskd, bus in
            for round in 0..<2 {
                try kioskd.call("StartSession", "s", ["power-locked"])
                #expect(try kioskd.property("SessionState") == #"s "active""#)
                if round == 0 {
                    // The first attempt's answer is awaited, not slept for.
                    try #require(
                        eventually(timeout: .seconds(30)) { kioskd.log.contains("logind is not on the bus") },
                        "kioskd never said logind is absent: \(kioskd.log)")
                }
                try kioskd.endSession(passcode: "1234")
            }
            // The second attempt was answered before the EndSession above was read: kioskd asks
            // logind while applying the session, before its StartSession reply, and reads its bus in
            // order (the bus driver's error is queued to it before the test's next call).
            let lines = kioskd.log.split(separator: "\n").filter { $0.contains("logind is not on the bus") }
            #expect(lines.count == 1, "\(kioskd.log)")
            #expect(lines.first?.hasPrefix("info ") ?? false, "\(lines)")
        }
    }

    @Test(
        "a restored session whose profile is gone stays locked with the strictest locks; SessionProblem and the journal say why; kioskd keeps serving; ForceEndSession clears it"
    )
    func missingProfileAtRestore() throws {
        try withKioskd(profiles: ["power-allowed": Self.powerAllowed]) { kioskd, _ in
            #expect(try kioskd.property("SessionProblem") == #"s """#)
            try kioskd.call("StartSession", "s", ["power-allowed"])
            #expect(try kioskd.property("SessionProblem") == #"s """#)
            kioskd.stop(SIGKILL)
            try FileManager.default.removeItem(at: kioskd.profileDirectory.appendingPathComponent("power-allowed.toml"))

            try kioskd.start(input: false)
            #expect(try kioskd.property("SessionState") == #"s "active""#)
            #expect(try kioskd.property("ActiveProfile") == #"s "power-allowed""#)
            let problem = try kioskd.property("SessionProblem")
            #expect(
                problem.contains("power-allowed") && problem.contains("could not be loaded")
                    && problem.contains("no readable file"), "\(problem)")
            let journal = kioskd.log.split(separator: "\n").filter { $0.contains("enforcing the strictest locks") }
            #expect(
                journal.count == 1 && journal[0].hasPrefix("error ")
                    && journal[0].contains("SESSION_PROFILE=power-allowed"), "\(kioskd.log)")
            // The strictest locks hold all input.
            #expect(
                kioskd.log.split(separator: "\n").contains {
                    $0.contains("Input locks changed") && $0.contains("INPUT_HOLD_ALL=true")
                }, "\(kioskd.log)")

            try kioskd.call("ForceEndSession")
            #expect(try kioskd.property("SessionState") == #"s "inactive""#)
            #expect(try kioskd.property("SessionProblem") == #"s """#)
        }
    }
}
