import BusTestSupport
import Foundation
import Glibc
import KioskClient
import KioskCore
import KioskTestSupport
import KioskdProcessTestSupport
import Testing

@testable import KioskctlCommands

/// Sessions through kioskctl: status while a restored session is locked, start and end
/// with the passcode on stdin or a terminal, force-end, and setting the passcode.
extension KioskctlBusTests {
    /// kioskd restarted with the session's profile gone: status says why everything is locked.
    @Test func statusShowsWhyARestoredSessionHoldsTheStrictestLocks() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        #expect(try f.ctl("start", "museum").status == 0)
        f.kioskd.stop()
        try FileManager.default.removeItem(at: f.kioskd.profileDirectory.appendingPathComponent("museum.toml"))
        try f.kioskd.start()
        let status = try f.ctl("status")
        #expect(status.status == 0)
        let lines = status.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.prefix(2) == ["session      active", "profile      museum"])
        let problem = lines.drop { !$0.hasPrefix("problem") }.prefix {
            $0.hasPrefix("problem") || $0.hasPrefix("     ")
        }
        #expect(
            problem.first?.hasPrefix("problem      The session's profile \"museum\" could not be loaded, so every")
                == true, "\(status.stdout)")
        #expect(problem.allSatisfy { $0.count <= 80 })
        let json = try f.ctl("status", "--json").stdout
        #expect(json.contains(#""session_problem" : "The session's profile \"museum\" could not be loaded"#), "\(json)")
    }

    /// On the kiosk, start warns (stderr) about each key assistive technology needs that the
    /// profile's group locks swallow, naming the key, the lock and the setting that passes it;
    /// a profile that says a screen reader runs passes its keys and is not warned about them.
    @Test func startWarnsAboutTheKeysAssistiveTechnologyNeeds() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let directory = f.kioskd.profileDirectory
        try "[buttons]\nkeyboard = \"locked\"\n".write(
            to: directory.appendingPathComponent("typing.toml"), atomically: true, encoding: .utf8)
        try "[buttons]\nkeyboard = \"locked\"\n[accessibility]\nscreen-reader = \"orca\"\n".write(
            to: directory.appendingPathComponent("reader.toml"), atomically: true, encoding: .utf8)
        let start = try f.ctl("start", "--profile-dir", directory.path, "--escape-paths-root", "/nonexistent", "typing")
        #expect(start.status == 0, "\(start)")
        let warnings = start.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        #expect(warnings.count == 4, "\(start.stderr)")
        #expect(
            warnings.contains(
                #"warning: KEY_INSERT (the Orca key on desktop layouts) is swallowed by keyboard = "locked"; if a screen reader runs at this kiosk, set [accessibility] screen-reader = "orca" (or add "KEY_INSERT" to allowed-keys)"#
            ), "\(start.stderr)")
        #expect(try f.ctl("force-end").status == 0)
        let reader = try f.ctl(
            "start", "--profile-dir", directory.path, "--escape-paths-root", "/nonexistent", "reader")
        #expect(reader.status == 0, "\(reader)")
        let left = reader.stderr.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        #expect(left.count == 1 && left[0].hasPrefix("warning: KEY_LEFTSHIFT "), "\(reader.stderr)")
    }

    @Test func startAndEndWithThePasscodeOnStdin() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        // The escape-path audit reads a fake root: sysrq off, nothing else configured.
        let root = f.bus.directory.appendingPathComponent("root").path
        try FileManager.default.createDirectory(atPath: root + "/proc/sys/kernel", withIntermediateDirectories: true)
        try "0\n".write(toFile: root + "/proc/sys/kernel/sysrq", atomically: true, encoding: .utf8)
        let start = try f.ctl("start", "--escape-paths-root", root, "museum")
        #expect(start.status == 0)
        #expect(
            start.stdout == """
                Started a guided-access session with the profile museum.
                6 of 9 escape paths are open (README: "Locking down the kiosk image"):
                  closed  sysrq                    kernel.sysrq is 0.
                  open    ctrl-alt-del             ctrl-alt-del.target is not masked:
                                                   Ctrl+Alt+Del reboots; systemctl mask
                                                   ctrl-alt-del.target.
                  open    ctrl-alt-del-burst       CtrlAltDelBurstAction=reboot-force: 7×
                                                   Ctrl+Alt+Del in 2 s still acts; set it to
                                                   none in /etc/systemd/system.conf.d/.
                  open    logind-keys              HandlePowerKey=poweroff,
                                                   HandleRebootKey=reboot,
                                                   HandleRebootKeyLongPress=poweroff,
                                                   HandleSuspendKey=suspend,
                                                   HandleSuspendKeyLongPress=hibernate,
                                                   HandleHibernateKey=hibernate; set them to
                                                   ignore in /etc/systemd/logind.conf.d/.
                  closed  logind-ignore-inhibited  logind honours key inhibitors (kioskd's
                                                   power-key lock).
                  open    autovt                   NAutoVTs=6: switching to a VT starts a login
                                                   prompt there; set NAutoVTs=0.
                  open    reserve-vt               ReserveVT=6: a login prompt always waits on
                                                   tty6; set ReserveVT=0.
                  closed  getty                    No login prompt is enabled on tty2 or above.
                  open    usbguard                 usbguard is not installed: any USB device is
                                                   accepted; apt-get install usbguard.

                """)
        #expect(start.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 })
        #expect(
            try f.ctl("status").stdout == """
                session      active
                profile      museum
                deadline     none
                passcode     none
                apps         3
                restrictions 18, 1 denied
                version      \(KioskWire.version)

                """)
        let again = try f.ctl("start", "museum")
        #expect(again.status == 1)
        #expect(
            again.stderr
                == "Failed to start the session: A guided-access session with the profile \"museum\" is already active.\n"
        )

        let wrong = try f.ctl("end", "--passcode-stdin", input: "0000\n")
        #expect(wrong.status == 1)
        #expect(wrong.stdout == "")
        #expect(wrong.stderr == "Failed to end the session: The passcode is wrong.\n")
        #expect(try await f.manager.status().sessionState == .active)

        let end = try f.ctl("end", "--passcode-stdin", input: "1234\n")
        #expect(end.status == 0, "\(end)")
        #expect(end.stdout == "Ended the guided-access session.\n")
        #expect(try await f.manager.status().sessionState == .inactive)

        // With --json, the status object, plus the escape paths as objects.
        let json = try f.ctl("start", "--json", "--escape-paths-root", root, "museum").stdout
        var object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let paths = try #require(object.removeValue(forKey: "escape_paths") as? [[String: String]])
        #expect(paths.count == 9)
        #expect(paths.first == ["check": "sysrq", "state": "closed", "detail": "kernel.sysrq is 0."])
        var expected = try #require(
            try JSONSerialization.jsonObject(
                with: Data(Self.statusJSON(state: "active", profile: "museum", denied: 1).utf8)) as? [String: Any])
        // Booleans apart: NSDictionary's isEqual tells a JSON false from another JSON false.
        #expect(object.removeValue(forKey: "passcode_set") as? Bool == false)
        #expect(expected.removeValue(forKey: "passcode_set") as? Bool == false)
        #expect(NSDictionary(dictionary: object).isEqual(to: expected))
        #expect(try f.ctl("end", "--json", "--passcode-stdin", input: "1234").stdout == Self.statusJSON(denied: 0))

        let noSession = try f.ctl("end", "--passcode-stdin", input: "1234\n")
        #expect(noSession.status == 1)
        #expect(noSession.stderr == "Failed to end the session: No guided-access session is active.\n")
        let unknown = try f.ctl("start", "nope")
        #expect(unknown.status == 1)
        #expect(
            unknown.stderr
                == "Failed to start the session: There is no profile \"nope\" (no readable file \(f.kioskd.profileDirectory.path)/nope.toml).\n"
        )
    }

    @Test func endNeedsATerminalOrStdin() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        _ = try f.ctl("start", "museum")
        let end = try f.ctl("end")
        #expect(end.status == 1)
        #expect(
            end.stderr
                == "Failed to end the session: there is no terminal to read the passcode from; pass it on stdin with --passcode-stdin.\n"
        )
        let empty = try f.ctl("end", "--passcode-stdin", input: "")
        #expect(empty.status == 1)
        #expect(empty.stderr == "Failed to end the session: stdin ended before the passcode (expected 1 line).\n")
        #expect(try await f.manager.status().sessionState == .active)
    }

    @Test func forceEnd() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        _ = try f.ctl("start", "museum")
        let end = try f.ctl("force-end")
        #expect(end.status == 0)
        #expect(end.stdout == "Ended the guided-access session without the passcode.\n")
        #expect(try await f.manager.status().sessionState == .inactive)
        let none = try f.ctl("force-end")
        #expect(none.status == 1)
        #expect(none.stderr == "Failed to force-end the session: No guided-access session is active.\n")
    }

    /// Staff throttled by wrong passcodes are let back in by an admin (docs/threat-model.md
    /// § What a visitor can do to staff): here root's own count, as the kiosk's is in
    /// StaffLockoutTests (this kioskd reads no keys).
    @Test func passcodeResetThrottleClearsACount() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        _ = try f.ctl("passcode", "set", "--passcode-stdin", input: "\n1234\n")
        #expect(try f.ctl("start", "museum").status == 0)
        for _ in 0..<6 { _ = try f.ctl("end", "--passcode-stdin", input: "0000\n") }
        let throttled = try f.ctl("end", "--passcode-stdin", input: "1234\n")
        #expect(throttled.status == 1)
        #expect(throttled.stderr.contains("Too many wrong passcodes"), "\(throttled)")
        let reset = try f.ctl("passcode", "reset-throttle", "--source", "0")
        #expect(reset.status == 0, "\(reset)")
        #expect(reset.stdout == "Cleared the wrong-passcode count of uid 0.\n")
        #expect(try f.ctl("passcode", "reset-throttle").stdout == "Cleared the wrong-passcode count of the kiosk.\n")
        #expect(try f.ctl("passcode", "reset-throttle", "--source", "all", "--json").stdout == "{\n\n}\n")
        let bad = try f.ctl("passcode", "reset-throttle", "--source", "everyone")
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--source is kiosk, a uid (a number) or all, not 'everyone'."), "\(bad)")
        #expect(try f.ctl("end", "--passcode-stdin", input: "1234\n").status == 0)
    }

    @Test func passcodeSetReadsTwoLines() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let set = try f.ctl("passcode", "set", "--passcode-stdin", input: "\n5678\n")
        #expect(set.status == 0, "\(set)")
        #expect(set.stdout == "Set the passcode.\n")
        let wrongCurrent = try f.ctl("passcode", "set", "--passcode-stdin", input: "0000\n9999\n")
        #expect(wrongCurrent.status == 1)
        #expect(wrongCurrent.stderr == "Failed to set the passcode: The passcode is wrong.\n")
        let short = try f.ctl("passcode", "set", "--passcode-stdin", input: "5678\n")
        #expect(short.status == 1)
        #expect(short.stderr == "Failed to set the passcode: stdin ended before the new passcode (expected 2 lines).\n")
        // A NUL or bytes that are not UTF-8 are refused, not sent cut short or repaired into U+FFFD
        // (the passcode stays 5678, which ends the session below).
        let refused = "is not UTF-8 text without NUL bytes; kioskctl would not send what was typed.\n"
        let nul = try f.ctl("passcode", "set", "--passcode-stdin", input: "5678\n12\u{0}349\n")
        #expect(nul.status == 1)
        #expect(nul.stderr == "Failed to set the passcode: the new passcode " + refused, "\(nul)")
        let latin1 = try runTool(
            "/bin/sh",
            [
                "-c", "printf '5678\\r\\np\\344sse\\n' | \"$0\" passcode set --passcode-stdin",
                BuildProducts.path(of: "kioskctl"),
            ], environment: f.bus.environment)
        #expect(latin1.status == 1)
        #expect(latin1.stderr == "Failed to set the passcode: the new passcode " + refused, "\(latin1)")
        // A profile without a hash ends with the passcode set here.
        try f.kioskd.writeProfile("plain", "app = \"\(Self.app)\"\n")
        _ = try f.ctl("start", "plain")
        #expect(try f.ctl("end", "--passcode-stdin", input: "5678\n").status == 0)
        #expect(try f.ctl("passcode", "set", "--json", "--passcode-stdin", input: "5678\n4321\n").stdout == "{\n\n}\n")
        // A passcode that is not all digits cannot be typed on the prompt at the kiosk.
        let letters = try f.ctl("passcode", "set", "--passcode-stdin", input: "4321\ncorrect horse\n")
        #expect(letters.status == 0, "\(letters)")
        #expect(letters.stderr.hasPrefix("warning: the new passcode is not all digits"), "\(letters)")
        let pin = try f.ctl("passcode", "set", "--passcode-stdin", input: "correct horse\n246810\n")
        #expect(pin.status == 0 && pin.stderr == "", "\(pin)")
    }
}
