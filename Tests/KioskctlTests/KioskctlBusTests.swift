import BusTestSupport
import Foundation
import Glibc
import KioskClient
import KioskCore
import KioskTestSupport
import KioskdProcessTestSupport
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
          "apps" : 3,
          "denied" : \(denied),
          "display_power" : "on",
          "passcode_set" : false,
          "restrictions" : 18,
          "session_deadline_usec" : 0,
          "session_state" : "\(state)",
          "version" : "\(KioskWire.version)"
        }

        """
    }

    /// `wake` and `blank` (an admin's, a session's), and what `status` shows of the dark display
    /// and of a cleaning, in text and JSON.
    @Test func blankWakeAndCleaningInTheStatus() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let noSession = try f.ctl("blank")
        #expect(noSession.status == 1)
        #expect(noSession.stderr.contains("No guided-access session is active"), "\(noSession)")
        #expect(try f.ctl("start", "museum").status == 0)
        let blank = try f.ctl("blank")
        #expect(blank.stdout == "The display is wanted off: the next key or touch only wakes it.\n", "\(blank)")
        #expect(try f.ctl("status").stdout.contains("display      off: the next key or touch only wakes it\n"))
        #expect(try f.ctl("--json", "status").stdout.contains(#""display_power" : "off""#))
        #expect(try f.ctl("wake").stdout == "The display is wanted on.\n")
        #expect(!(try f.ctl("status").stdout.contains("display ")))
        try await f.manager.startCleaning(seconds: 60)
        let text = try f.ctl("status").stdout
        #expect(text.contains("cleaning     input held until "), "\(text)")
        #expect(try f.ctl("--json", "status").stdout.contains(#""cleaning_until_usec" : "#))
        try await f.manager.stopCleaning()
        #expect(!(try f.ctl("status").stdout.contains("cleaning")))
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
                passcode     none
                apps         3
                restrictions 18, 0 denied
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
        #expect(rows.count == 203, "the built-in browsers too")
        #expect(
            rows.filter { $0.hasPrefix("org.example.Many.A") && $0.hasSuffix(" 1       0") }.count == 200, "\(apps)")
        let status = try f.ctl("status")
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("apps         203\nrestrictions 218, 0 denied\n"), "\(status)")
    }

    @Test func appsAndRestrictions() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        try await f.manager.setRestrictionState(.deny, of: Self.zoom, in: Self.app)
        #expect(
            try f.ctl("apps").stdout == """
                APP                    RESTRICTIONS  DENIED
                org.chromium.Chromium             8       0
                org.mozilla.firefox               8       0
                org.example.MuseumMap             2       1

                """)
        #expect(
            try f.ctl("apps", "--json").stdout == """
                {
                  "apps" : [
                    {
                      "denied" : 0,
                      "id" : "org.chromium.Chromium",
                      "restrictions" : 8
                    },
                    {
                      "denied" : 0,
                      "id" : "org.mozilla.firefox",
                      "restrictions" : 8
                    },
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

    /// With no app registered, the built-in browsers kioskd declares itself (docs/browsers.md).
    @Test func onlyTheBuiltInBrowsers() async throws {
        let f = try await Fixture(register: false)
        defer { f.stop() }
        #expect(try f.ctl("apps").stdout == "APP                    RESTRICTIONS  DENIED\norg.chromium.Chromium             8       0\norg.mozilla.firefox               8       0\n")
        #expect(try f.ctl("apps", "--json").stdout == "{\n  \"apps\" : [\n    {\n      \"denied\" : 0,\n      \"id\" : \"org.chromium.Chromium\",\n      \"restrictions\" : 8\n    },\n    {\n      \"denied\" : 0,\n      \"id\" : \"org.mozilla.firefox\",\n      \"restrictions\" : 8\n    }\n  ]\n}\n")
    }

    /// `status` shows each browser policy kioskd wrote and the restriction that put it there
    /// (docs/browsers.md § What kioskctl status shows), in text and JSON; none once allowed.
    @Test func statusShowsTheBrowserPoliciesAndWhy() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let chromium = "org.chromium.Chromium"
        #expect(try f.ctl("deny", chromium, "\(chromium).devtools").status == 0)
        // No Firefox here (its policy directory is missing): nothing written, nothing shown.
        #expect(try f.ctl("deny", "org.mozilla.firefox", "org.mozilla.firefox.camera").status == 0)
        let text = try f.ctl("status").stdout
        #expect(
            text.contains(
                """
                browser      chromium DeveloperToolsAvailability = 2
                               because org.chromium.Chromium.devtools
                passcode     none
                apps         3
                restrictions 18, 2 denied

                """), "\(text)")
        let json = try f.ctl("status", "--json").stdout
        #expect(
            json.contains(
                """
                  "browser_policies" : [
                    {
                      "browser" : "chromium",
                      "cause" : "org.chromium.Chromium.devtools",
                      "policy" : "DeveloperToolsAvailability",
                      "value" : "2"
                    }
                  ],
                """), "\(json)")
        #expect(try f.ctl("allow", chromium, "\(chromium).devtools").status == 0)
        #expect(!(try f.ctl("status").stdout.contains("browser ")))
        #expect(try f.ctl("status", "--json").stdout == Self.statusJSON(denied: 1))
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

    @Test func forget() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let forget = try f.ctl("forget", Self.app)
        #expect(forget.status == 0)
        #expect(forget.stdout == "Forgot org.example.MuseumMap.\n")
        #expect(try await f.manager.listApplications() == ["org.chromium.Chromium", "org.mozilla.firefox"])
        let again = try f.ctl("forget", "--json", Self.app)
        #expect(again.status == 1)
        #expect(
            again.stderr
                == "Failed to forget org.example.MuseumMap: No application org.example.MuseumMap is registered.\n")
        try await f.manager.registerApplication(Self.app, restrictions: [])
        #expect(
            try f.ctl("forget", "--json", Self.app).stdout == """
                {
                  "app" : "org.example.MuseumMap",
                  "forgotten" : true
                }

                """)
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
            func wait(lines: Int) async { await eventually { text().split(separator: "\n").count >= lines } }
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

    /// Another uid sends every signal kioskd emits straight to the monitor's connection, and
    /// claims kioskd's name: the monitor prints none of it, only the real change made afterwards
    /// (the sentinel: kioskd sends it after every forged signal was queued).
    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to forge signals as nobody through setpriv"))))
    func monitorPrintsNoForgedSignal_needsRoot() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let output = f.bus.directory.appendingPathComponent("monitor-forged.out").path
        let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let monitor = try ChildProcess.spawn(
            BuildProducts.path(of: "kioskctl"), ["monitor"], environment: f.bus.environment, stdout: fd, stderr: fd)
        close(fd)
        func text() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        func wait(until condition: (String) -> Bool) async { await eventually { condition(text()) } }
        await wait { $0.hasSuffix("\n") }  // subscribed: the current session is printed after the matches are in
        let summary = try SignalForger.forge(on: f.bus, app: Self.app, restriction: Self.controls, state: "deny")
        try await f.manager.setRestrictionState(.deny, of: Self.zoom, in: Self.app)
        await wait { $0.contains("zoom") }
        monitor.signal(SIGINT)
        #expect(monitor.wait() == 128 + SIGINT)
        #expect(
            text() == """
                session inactive
                restriction org.example.MuseumMap.zoom (org.example.MuseumMap): deny

                """, "\(summary)")
    }
}
