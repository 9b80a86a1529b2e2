import BusTestSupport
import Foundation
import Glibc
import KioskClient
import KioskCore
import KioskTestSupport
import KioskdTestSupport
import Testing

@testable import KioskctlCommands

/// kioskctl's D-Bus verbs against the real kioskd on a private bus (found through
/// `DBUS_SYSTEM_BUS_ADDRESS`, as on a kiosk), output checked byte for byte.
@Suite(.serialized) struct KioskctlBusTests {
    static let app = "org.example.MuseumMap"
    static let controls = "org.example.MuseumMap.controls"
    static let zoom = "org.example.MuseumMap.zoom"
    static let longDetail =
        "Show the admin controls (the settings gear and the layer picker) to visitors. "
        + "This detail text is long on purpose: kioskctl wraps it to fit an 80-column terminal and cuts it after "
        + "three lines, unless it is asked for the full text."

    /// A private bus, kioskd with the sample app registered, and a way to run kioskctl there.
    struct Fixture {
        let bus: PrivateBus
        let kioskd: KioskdProcess
        let manager: KioskManager

        init(register: Bool = true, start: Bool = true, systemLimits: Bool = false) async throws {
            bus = try PrivateBus(systemLimits: systemLimits)
            kioskd = try KioskdProcess(bus: bus)
            try kioskd.writeTestProfile("museum", app: KioskctlBusTests.app, denied: [KioskctlBusTests.controls])
            if start { try kioskd.start() }
            manager = try KioskManager.connect(to: .address(bus.address))
            if register {
                try await manager.registerApplication(
                    KioskctlBusTests.app,
                    restrictions: [
                        RestrictionDeclaration(
                            id: KioskctlBusTests.controls, title: "Map controls", detail: KioskctlBusTests.longDetail),
                        RestrictionDeclaration(id: KioskctlBusTests.zoom, title: "Zoom", detail: "Pinch to zoom."),
                    ])
            }
        }

        /// Runs kioskctl with `arguments` (as `nobody` with `asNobody`), `input` on stdin.
        func ctl(_ arguments: String..., input: String? = nil, asNobody: Bool = false) throws -> ToolOutput {
            let binary = BuildProducts.path(of: "kioskctl")
            if asNobody {
                return try runTool(
                    "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments,
                    environment: bus.environment, input: input)
            }
            // setsid: no controlling terminal, so a prompt can never wait for a person.
            return try runTool(
                "/usr/bin/setsid", ["-w", binary] + arguments, environment: bus.environment, input: input)
        }

        func stop() {
            manager.close()
            kioskd.stop()
            bus.stop()
        }
    }

    static func statusJSON(state: String = "inactive", profile: String = "", denied: Int) -> String {
        """
        {
          "active_profile" : "\(profile)",
          "apps" : 1,
          "denied" : \(denied),
          "restrictions" : 2,
          "session_deadline_usec" : 0,
          "session_state" : "\(state)",
          "version" : "\(KioskWire.version)"
        }

        """
    }

    @Test func status() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let text = try f.ctl("status")
        #expect(text.status == 0)
        #expect(
            text.stdout == """
                session      inactive
                profile      none
                deadline     none
                apps         1
                restrictions 2, 0 denied
                version      \(KioskWire.version)

                """, "\(text)")
        #expect(text.stderr == "")
        let json = try f.ctl("status", "--json")
        #expect(json.stdout == Self.statusJSON(denied: 0), "\(json)")
        #expect(try f.ctl("--json", "status").stdout == Self.statusJSON(denied: 0))
    }

    /// A real system bus lets a connection wait for at most 128 replies: with more apps than that,
    /// `apps` and `status` still read every app's list (kioskctl keeps 32 calls in flight).
    @Test func appsAndStatusWithMoreAppsThanASystemBusLetsACallerWaitFor() async throws {
        let f = try await Fixture(systemLimits: true)
        defer { f.stop() }
        for n in 0..<200 {
            try await f.manager.registerApplication(
                "org.example.Many.A\(n)",
                restrictions: [
                    RestrictionDeclaration(id: "org.example.Many.A\(n).x", title: "X", detail: "An X.")
                ])
        }
        let apps = try f.ctl("apps")
        #expect(apps.status == 0, "\(apps)")
        let rows = apps.stdout.split(separator: "\n").dropFirst()
        #expect(rows.count == 201)
        #expect(
            rows.filter { $0.hasPrefix("org.example.Many.A") && $0.hasSuffix(" 1       0") }.count == 200, "\(apps)")
        let status = try f.ctl("status")
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("apps         201\nrestrictions 202, 0 denied\n"), "\(status)")
    }

    @Test func appsAndRestrictions() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        try await f.manager.setRestrictionState(.deny, of: Self.zoom, in: Self.app)
        #expect(
            try f.ctl("apps").stdout == """
                APP                    RESTRICTIONS  DENIED
                org.example.MuseumMap             2       1

                """)
        #expect(
            try f.ctl("apps", "--json").stdout == """
                {
                  "apps" : [
                    {
                      "denied" : 1,
                      "id" : "org.example.MuseumMap",
                      "restrictions" : 2
                    }
                  ]
                }

                """)
        let list = try f.ctl("restrictions", Self.app)
        #expect(list.status == 0)
        #expect(
            list.stdout == """
                allow  org.example.MuseumMap.controls
                       Map controls
                       Show the admin controls (the settings gear and the layer picker) to
                       visitors. This detail text is long on purpose: kioskctl wraps it to fit
                       an 80-column terminal and cuts it after three lines, unless it is asked…
                deny   org.example.MuseumMap.zoom
                       Zoom
                       Pinch to zoom.

                """, "\(list)")
        #expect(list.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 })
        #expect(
            try f.ctl("restrictions", "--full", Self.app).stdout.contains(
                """
                       an 80-column terminal and cuts it after three lines, unless it is asked
                       for the full text.
                deny   org.example.MuseumMap.zoom
                """))
        #expect(
            try f.ctl("restrictions", "--json", Self.app).stdout == """
                {
                  "app" : "org.example.MuseumMap",
                  "restrictions" : [
                    {
                      "detail" : "\(Self.longDetail)",
                      "id" : "org.example.MuseumMap.controls",
                      "state" : "allow",
                      "title" : "Map controls"
                    },
                    {
                      "detail" : "Pinch to zoom.",
                      "id" : "org.example.MuseumMap.zoom",
                      "state" : "deny",
                      "title" : "Zoom"
                    }
                  ]
                }

                """)
        let unknown = try f.ctl("restrictions", "org.example.Nope")
        #expect(unknown.status == 1)
        #expect(unknown.stdout == "")
        #expect(
            unknown.stderr
                == "Failed to list the restrictions of org.example.Nope: No application org.example.Nope is registered.\n"
        )
    }

    /// Chinese titles and details fill 80 columns by display width (two per character), in the C
    /// locale (kioskctl then measures in C.UTF-8) as in a UTF-8 one.
    @Test func wideTitlesFitEightyColumns() async throws {
        let f = try await Fixture(register: false)
        defer { f.stop() }
        let app = "org.example.Ditu"
        try await f.manager.registerApplication(
            app,
            restrictions: [
                RestrictionDeclaration(
                    id: "\(app).controls", title: TextLayoutTests.title,
                    detail: "显示管理员控制。这段说明文字故意写得很长：kioskctl 按显示宽度而不是字符数来换行，所以每一行都能放进八十列的终端里，"
                        + "超过三行的部分会被截断并以省略号结尾，除非要求显示全文。参观者只能看到地图本身和缩放按钮。"),
                RestrictionDeclaration(id: "\(app).zoom", title: "缩放 🔍", detail: "双指缩放。"),
            ])
        let expected = """
            allow  org.example.Ditu.controls
                   博物馆地图的管理员控制：设置齿轮、图层选择器以及所有只有工作人员才应该看
                   到的按钮和菜单，参观者不应该看到它们
                   显示管理员控制。这段说明文字故意写得很长：kioskctl
                   按显示宽度而不是字符数来换行，所以每一行都能放进八十列的终端里，超过三行
                   的部分会被截断并以省略号结尾，除非要求显示全文。参观者只能看到地图本身和…
            allow  org.example.Ditu.zoom
                   缩放 🔍
                   双指缩放。

            """
        for locale in [[:], ["LC_ALL": "C"], ["LANG": "C.UTF-8"]] {
            let list = try runTool(
                BuildProducts.path(of: "kioskctl"), ["restrictions", app],
                environment: f.bus.environment.merging(locale) { $1 })
            #expect(list.status == 0)
            #expect(list.stdout == expected, "\(locale): \(list)")
            #expect(list.stdout.split(separator: "\n").map { DisplayWidth.of($0) }.max() == 80)
        }
    }

    @Test func noAppsRegistered() async throws {
        let f = try await Fixture(register: false)
        defer { f.stop() }
        #expect(try f.ctl("apps").stdout == "No apps are registered.\n")
        #expect(try f.ctl("apps", "--json").stdout == "{\n  \"apps\" : [\n\n  ]\n}\n")
    }

    @Test func allowAndDeny() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let deny = try f.ctl("deny", Self.app, Self.controls)
        #expect(deny.status == 0)
        #expect(deny.stdout == "Denied org.example.MuseumMap.controls.\n")
        #expect(try await f.manager.restrictionState(of: Self.controls, in: Self.app) == .deny)
        let allow = try f.ctl("allow", "--json", Self.app, Self.controls)
        #expect(
            allow.stdout == """
                {
                  "app" : "org.example.MuseumMap",
                  "id" : "org.example.MuseumMap.controls",
                  "state" : "allow"
                }

                """)
        #expect(try await f.manager.restrictionState(of: Self.controls, in: Self.app) == .allow)

        let unknown = try f.ctl("deny", Self.app, "org.example.MuseumMap.nope")
        #expect(unknown.status == 1)
        #expect(
            unknown.stderr
                == "Failed to deny org.example.MuseumMap.nope: The application org.example.MuseumMap has no restriction org.example.MuseumMap.nope.\n"
        )
        // A malformed id is a usage error, found before the bus is touched (more in malformedValues…).
        let before = f.kioskd.stateBytes
        let badID = try f.ctl("deny", "museum", Self.controls)
        #expect(badID.status == 64)
        #expect(badID.stdout == "")
        #expect(
            badID.stderr == """
                Error: The application id "museum" has one label; reverse-DNS needs at least two, separated by dots.
                Usage: kioskctl deny [--json] [--host <user@host>] <app> <id>
                  See 'kioskctl deny --help' for more information.

                """)
        #expect(f.kioskd.stateBytes == before)
    }

    /// `allow` and `deny` are one command type; their help stays what it was when they were two.
    @Test(arguments: [("allow", "Allow"), ("deny", "Deny")])
    func allowAndDenyHelp(_ verb: String, _ abstract: String) throws {
        let result = try runTool(BuildProducts.path(of: "kioskctl"), [verb, "--help"])
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                OVERVIEW: \(abstract) a restriction of an app (admin).

                USAGE: kioskctl \(verb) [--json] [--host <user@host>] <app> <id>

                ARGUMENTS:
                  <app>                   The app id.
                  <id>                    The restriction id.

                OPTIONS:
                  --json                  Print JSON with stable keys instead of text.
                  -H, --host <user@host>  Operate on the system bus of a remote host over SSH,
                                          as systemctl -H does.
                  --version               Show the version.
                  -h, --help              Show help information.


                """, "\(result)")
    }

    /// Malformed ids and profile names, with kioskd's own message for each: the arguments, the
    /// usage line of the verb, the message. Non-UTF-8 arguments are passed as raw argv bytes
    /// through the shell's printf (`\377`).
    static let malformedValues: [(arguments: [String], usage: String, message: String)] = [
        (
            ["allow", "Bad Id", controls], "allow [--json] [--host <user@host>] <app> <id>",
            "The application id \"Bad Id\" contains ' ' (a space); labels may use only A-Z, a-z, 0-9, '_' and '-'."
        ),
        (
            ["deny", app, ""], "deny [--json] [--host <user@host>] <app> <id>",
            "The restriction id is empty; it must be reverse-DNS like org.example.App."
        ),
        (
            ["deny", app, app + "." + String(repeating: "x", count: 234)],
            "deny [--json] [--host <user@host>] <app> <id>",
            "The restriction id \"org.example.MuseumMap.\(String(repeating: "x", count: 58))…\" is 256 bytes long; at most 255 are allowed."
        ),
        (
            ["deny", app, "org.example.1st"], "deny [--json] [--host <user@host>] <app> <id>",
            "The restriction id \"org.example.1st\" has label 3 starting with a digit, which reverse-DNS forbids."
        ),
        (
            ["restrictions", "org..example"], "restrictions [--json] [--host <user@host>] [--full] <app>",
            "The application id \"org..example\" has an empty label (label 2)."
        ),
        (
            ["start", "../museum"], "start [--json] [--host <user@host>] <profile>",
            "The profile name \"../museum\" is not a plain file name; it must be 1 to 250 characters of A-Z, a-z, 0-9, '_', '.' and '-'."
        ),
        (
            ["start", ""], "start [--json] [--host <user@host>] <profile>",
            "The profile name \"\" is not a plain file name; it must be 1 to 250 characters of A-Z, a-z, 0-9, '_', '.' and '-'."
        ),
        (
            ["start", String(repeating: "p", count: 251)], "start [--json] [--host <user@host>] <profile>",
            "The profile name \"\(String(repeating: "p", count: 80))…\" is not a plain file name; it must be 1 to 250 characters of A-Z, a-z, 0-9, '_', '.' and '-'."
        ),
        (
            ["allow", "org.example.\\377Map", controls], "allow [--json] [--host <user@host>] <app> <id>",
            "The application id is not valid UTF-8 (bad byte sequence near byte 12)."
        ),
        (
            ["deny", app, "org.example.MuseumMap.zo\\303om"], "deny [--json] [--host <user@host>] <app> <id>",
            "The restriction id is not valid UTF-8 (bad byte sequence near byte 24)."
        ),
        (
            ["start", "mus\\377eum"], "start [--json] [--host <user@host>] <profile>",
            "The profile name is not valid UTF-8 (bad byte sequence near byte 3)."
        ),
    ]

    /// `sh -c rawArgv sh BINARY ARG…` runs BINARY with each ARG passed through printf, so that
    /// `\377` in an ARG reaches it as the byte 0xFF.
    static let rawArgv = """
        bin=$1; shift; n=$#
        for a in "$@"; do v=$(printf "${a}x"); set -- "$@" "${v%x}"; done
        shift "$n"
        exec "$bin" "$@"
        """

    /// The messages kioskctl prints are kioskd's: the same values sent over the bus (the valid
    /// UTF-8 ones; D-Bus carries nothing else) come back with the same text.
    @Test func kioskdRefusesMalformedValuesWithTheSameMessages() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        for (arguments, _, message) in Self.malformedValues where !arguments.joined().contains("\\") {
            do {
                switch arguments[0] {
                case "allow", "deny": try await f.manager.setRestrictionState(.deny, of: arguments[2], in: arguments[1])
                case "restrictions": _ = try await f.manager.listRestrictions(of: arguments[1])
                default: try await f.manager.startSession(profile: arguments[1])
                }
                Issue.record("kioskd accepted \(arguments)")
            } catch let error as KioskError {
                #expect(error.code == .invalidArgument)
                #expect(error.message == message)
            }
        }
    }

    /// kioskctl checks ids and profile names itself: a malformed one exits 64 with kioskd's
    /// message and never reaches the bus (here there is none: the address leads nowhere, so a
    /// connection attempt would fail with exit 1).
    @Test(arguments: malformedValues)
    func malformedValuesAreUsageErrors(_ arguments: [String], _ usage: String, _ message: String) throws {
        let result = try runTool(
            "/bin/sh", ["-c", Self.rawArgv, "sh", BuildProducts.path(of: "kioskctl")] + arguments,
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/kioskctl-test-bus"])
        #expect(result.status == 64, "\(result)")
        #expect(result.stdout == "")
        #expect(
            result.stderr
                == "Error: \(message)\nUsage: kioskctl \(usage)\n  See 'kioskctl \(arguments[0]) --help' for more information.\n",
            "\(result)")
    }

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to run kioskctl as nobody through setpriv"))))
    func nobodyMayNotDenyAndNothingChanges_needsRoot() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let before = f.kioskd.stateBytes
        let deny = try f.ctl("deny", Self.app, Self.controls, asNobody: true)
        #expect(deny.status == 1)
        #expect(
            deny.stderr
                == "Failed to deny org.example.MuseumMap.controls: uid 65534 may not set restriction states: polkit is not running, so only root may.\n"
        )
        let start = try f.ctl("start", "museum", asNobody: true)
        #expect(start.status == 1)
        #expect(
            start.stderr
                == "Failed to start the session: uid 65534 may not start a guided-access session: polkit is not running, so only root may.\n"
        )
        #expect(f.kioskd.stateBytes == before)
        // Reading is open to everyone.
        #expect(try f.ctl("restrictions", Self.app, asNobody: true).status == 0)
    }

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
                apps         1
                restrictions 2, 1 denied
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
        let expected = try JSONSerialization.jsonObject(
            with: Data(Self.statusJSON(state: "active", profile: "museum", denied: 1).utf8))
        #expect(NSDictionary(dictionary: object).isEqual(to: expected as! [String: Any]))
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
    }

    @Test func kioskdNotRunning() async throws {
        let f = try await Fixture(register: false, start: false)
        defer { f.stop() }
        for (verb, what) in [
            (["status"], "read the status"), (["apps"], "list the apps"),
            (["deny", Self.app, Self.controls], "deny \(Self.controls)"), (["start", "museum"], "start the session"),
        ] {
            let result = try runTool(
                "/usr/bin/setsid", ["-w", BuildProducts.path(of: "kioskctl")] + verb, environment: f.bus.environment)
            #expect(result.status == 1)
            #expect(result.stdout == "")
            #expect(result.stderr == "Failed to \(what): kioskd is not running.\n")
        }
    }

    @Test func remoteHostThatCannotBeReachedFails() throws {
        let result = try runTool(BuildProducts.path(of: "kioskctl"), ["-H", "root@nonexistent.invalid", "status"])
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(
            result.stderr.hasSuffix(
                "Failed to read the status: The connection to the system bus of root@nonexistent.invalid closed.\n"),
            "\(result)")
    }

    @Test(arguments: [
        ["allow", "org.example.MuseumMap"], ["deny"], ["start"], ["end", "extra"], ["frobnicate"],
        ["status", "--passcode-stdin"], ["restrictions"], ["passcode", "set", "now"], ["-H"],
    ])
    func usageErrorsExit64(_ arguments: [String]) throws {
        let result = try runTool(BuildProducts.path(of: "kioskctl"), arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.stdout == "")
        #expect(result.stderr.hasPrefix("Error: "), "\(result)")
    }

    @Test func endHelpStatesThePasscodeRules() throws {
        let result = try runTool(BuildProducts.path(of: "kioskctl"), ["end", "--help"])
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                OVERVIEW: End the session with its passcode.

                The passcode is read from the terminal without echo, or with --passcode-stdin
                from the first line of stdin; never from the command line. Wrong passcodes are
                throttled by kioskd. An admin who does not know the passcode uses force-end.

                USAGE: kioskctl end [--json] [--host <user@host>] [--passcode-stdin]

                OPTIONS:
                  --json                  Print JSON with stable keys instead of text.
                  -H, --host <user@host>  Operate on the system bus of a remote host over SSH,
                                          as systemctl -H does.
                  --passcode-stdin        Read the passcode from the first line of stdin
                                          instead of the terminal.
                  --version               Show the version.
                  -h, --help              Show help information.


                """)
    }

    @Test func monitorPrintsChangesMadeByAnotherClient() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        for json in [false, true] {
            let output = f.bus.directory.appendingPathComponent("monitor-\(json).out").path
            let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            let monitor = try ChildProcess.spawn(
                BuildProducts.path(of: "kioskctl"), ["monitor"] + (json ? ["--json"] : []),
                environment: f.bus.environment, stdout: fd, stderr: fd)
            close(fd)
            func text() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
            func wait(lines: Int) async {
                let deadline = ContinuousClock.now + .seconds(10)
                while text().split(separator: "\n").count < lines, ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
            await wait(lines: 1)  // subscribed: the current session is printed after the matches are in
            try await f.manager.setRestrictionState(json ? .allow : .deny, of: Self.zoom, in: Self.app)
            try await f.manager.startSession(profile: "museum")
            await wait(lines: 4)
            monitor.signal(SIGINT)
            #expect(monitor.wait() == 128 + SIGINT)
            if json {
                #expect(
                    text() == """
                        {"active_profile":"","event":"session","session_deadline_usec":0,"session_state":"inactive"}
                        {"app":"org.example.MuseumMap","event":"restriction","id":"org.example.MuseumMap.zoom","state":"allow"}
                        {"app":"org.example.MuseumMap","event":"restriction","id":"org.example.MuseumMap.controls","state":"deny"}
                        {"active_profile":"museum","event":"session","session_deadline_usec":0,"session_state":"active"}

                        """)
            } else {
                #expect(
                    text() == """
                        session inactive
                        restriction org.example.MuseumMap.zoom (org.example.MuseumMap): deny
                        restriction org.example.MuseumMap.controls (org.example.MuseumMap): deny
                        session active, profile museum

                        """)
            }
            try await f.manager.forceEndSession()
        }
    }
}
