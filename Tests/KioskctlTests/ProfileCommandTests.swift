import BusTestSupport
import Foundation
import KioskTestSupport
import Testing

let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

func kioskctl(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
    try BuildProducts.run("kioskctl", arguments)
}

/// `kioskctl profile …` works without a daemon; its output is checked byte for byte.
@Suite struct ProfileCommandTests {
    /// The examples, installed as an admin installs them: readable by their owner only.
    static func installed(_ names: String...) throws -> [String] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        return try names.map { name in
            let path = "\(directory)/\(name)"
            try FileManager.default.copyItem(atPath: "\(root)/policies/\(name)", toPath: path)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            return path
        }
    }

    @Test func checkPassesTheExamples() throws {
        let files = try Self.installed("museum-map.toml", "self-check-in.toml")
        let result = try kioskctl("profile", "check", files[0], files[1])
        #expect(result.status == 0)
        #expect(result.stdout == "\(files[0]): ok\n\(files[1]): ok\n")
        // self-check-in's 12-hour limit is staff's shift: the warning is meant (its comment says so).
        #expect(
            result.stderr
                == "\(files[1]): warning: session.time-limit 12h cannot be extended by the person at the kiosk; unless the limit is staff's rather than a visitor's, add session.visitor-extensions (10 or more: WCAG 2.2.1 asks that a visitor can extend a time limit)\n"
        )
    }

    /// A time limit the visitor can extend, or one over 20 hours (WCAG 2.2.1's exception), or none:
    /// no warning.
    @Test func checkWarnsOnlyAboutATimeLimitTheVisitorCannotExtend() throws {
        let library = try Self.installed("library-catalogue.toml")[0]
        #expect(try kioskctl("profile", "check", library).stderr == "")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        for (name, text, warns) in [
            ("long", "[session]\ntime-limit = \"21h\"\n", false), ("none", "[session]\n", false),
            ("short", "[session]\ntime-limit = \"20h\"\n", true),
        ] {
            let file = "\(directory)/\(name).toml"
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            let result = try kioskctl("profile", "check", file)
            #expect(result.status == 0)
            #expect(
                result.stderr.contains("cannot be extended by the person at the kiosk") == warns, "\(name): \(result)")
        }
    }

    /// One finger at once takes pinch zoom from visitors with low vision: check says so; two
    /// fingers, or no limit, no warning.
    @Test func checkWarnsThatOneFingerTakesPinchZoom() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (name, text, warns) in [
            ("one", "[touch]\nmax-contacts = 1\n", true), ("two", "[touch]\nmax-contacts = 2\n", false),
            ("none", "[touch]\n", false),
        ] {
            let file = "\(directory)/\(name).toml"
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            let result = try kioskctl("profile", "check", file)
            #expect(result.status == 0, "\(name): \(result)")
            #expect(
                result.stderr.contains("touch.max-contacts = 1 also takes pinch zoom") == warns, "\(name): \(result)")
        }
    }

    /// A hash anyone can read is guessed offline; kioskd refuses it, check warns.
    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("root owns the files kioskd trusts"))))
    func checkWarnsAboutAHashOthersCanRead_needsRoot() throws {
        let file = try Self.installed("museum-map.toml")[0]
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        let result = try kioskctl("profile", "check", file)
        #expect(result.status == 0)
        #expect(result.stdout == "\(file): ok\n")
        #expect(
            result.stderr
                == "\(file): warning: \(file) holds a passcode hash but is mode 0644, so group or others may read or change it: anyone on the machine could copy the hash and guess the passcode offline. Make it private to its owner: chmod 600 \(file) (kioskd refuses to use this hash)\n"
        )
        // A profile without a hash holds no secret: no warning at any mode.
        let plain = try Self.installed("library-catalogue.toml")[0]
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: plain)
        #expect(try kioskctl("profile", "check", plain).stderr == "")
    }

    @Test func checkReportsEveryErrorAsFileLineColumnAndExits1() throws {
        let bad = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-bad-\(UUID()).toml").path
        try Data("[buttons]\npowr = \"locked\"\nvolume = 3\n".utf8).write(to: URL(fileURLWithPath: bad))
        let museum = try Self.installed("museum-map.toml")[0]
        let result = try kioskctl("profile", "check", bad, museum, "/nonexistent/p.toml")
        #expect(result.status == 1)
        #expect(result.stdout == "\(museum): ok\n")
        #expect(
            result.stderr == """
                \(bad):2:1: unknown key "powr" in buttons; did you mean "power"?
                \(bad):3:10: buttons.volume must be a string, not an integer
                /nonexistent/p.toml: no such file

                """)
    }

    /// `--json` (before or after the verb): one array for the whole invocation, an object per file
    /// in the order named, with each error's line and column (null for a file that could not be
    /// read) and the warnings; nothing on standard error; exit 1 as without it.
    @Test func checkPrintsOneJSONArrayAndExits1() throws {
        let bad = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-bad-\(UUID()).toml").path
        try Data("[buttons]\npowr = \"locked\"\nvolume = 3\n".utf8).write(to: URL(fileURLWithPath: bad))
        defer { try? FileManager.default.removeItem(atPath: bad) }
        let files = try Self.installed("museum-map.toml", "self-check-in.toml")
        for arguments in [
            ["profile", "check", "--json", bad, files[0], files[1], "/nonexistent/p.toml"],
            ["--json", "profile", "check", bad, files[0], files[1], "/nonexistent/p.toml"],
        ] {
            let result = try BuildProducts.run("kioskctl", arguments)
            #expect(result.status == 1)
            #expect(result.stderr == "")
            #expect(
                result.stdout == """
                    [
                      {
                        "errors" : [
                          {
                            "column" : 1,
                            "line" : 2,
                            "message" : "unknown key \\"powr\\" in buttons; did you mean \\"power\\"?"
                          },
                          {
                            "column" : 10,
                            "line" : 3,
                            "message" : "buttons.volume must be a string, not an integer"
                          }
                        ],
                        "file" : "\(bad)",
                        "ok" : false,
                        "warnings" : [

                        ]
                      },
                      {
                        "errors" : [

                        ],
                        "file" : "\(files[0])",
                        "ok" : true,
                        "warnings" : [

                        ]
                      },
                      {
                        "errors" : [

                        ],
                        "file" : "\(files[1])",
                        "ok" : true,
                        "warnings" : [
                          "session.time-limit 12h cannot be extended by the person at the kiosk; unless the limit is staff's rather than a visitor's, add session.visitor-extensions (10 or more: WCAG 2.2.1 asks that a visitor can extend a time limit)"
                        ]
                      },
                      {
                        "errors" : [
                          {
                            "column" : null,
                            "line" : null,
                            "message" : "no such file"
                          }
                        ],
                        "file" : "/nonexistent/p.toml",
                        "ok" : false,
                        "warnings" : [

                        ]
                      }
                    ]

                    """, "\(arguments)")
        }
        // All valid: exit 0, still one array.
        let ok = try kioskctl("profile", "check", "--json", files[0])
        #expect(ok.status == 0)
        #expect(ok.stdout.hasPrefix("[\n  {\n") && ok.stdout.contains("\"ok\" : true"))
    }

    /// What kioskd refuses to read as a profile, `profile check` refuses too, at once: a FIFO
    /// (which would block a plain read for ever) and a file over kioskd's 1 MiB cap.
    @Test func checkRefusesWhatKioskdWouldNotRead() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-odd-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/fifo.toml"
        #expect(mkfifo(fifo, 0o600) == 0)
        let big = dir + "/big.toml"
        let comment = "# " + String(repeating: "x", count: 1_000) + "\n"
        try Data(String(repeating: comment, count: 1_100).utf8).write(to: URL(fileURLWithPath: big))
        let result = try kioskctl("profile", "check", fifo, big, dir)
        #expect(result.status == 1)
        #expect(
            result.stderr == """
                \(fifo): is not a regular file
                \(big): is larger than 1024 KiB
                \(dir): is a directory

                """)
    }

    @Test func showPrintsTheResolvedProfile() throws {
        let result = try kioskctl("profile", "show", "\(root)/policies/museum-map.toml")
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                profile      \(root)/policies/museum-map.toml
                app          org.example.MuseumMap
                app-owner    user kiosk
                description  Visitors may pan and zoom the floor map
                buttons      power locked, volume locked, home locked, keyboard allowed
                chords       escape chords blocked
                extra keys   KEY_F11 KEY_F12
                touch        works outside 2 locked region(s)
                  region     settings gear: rect x 0.9 y 0.0 width 0.1 height 0.12
                  region     legend: polygon (0.0, 0.8) (0.3, 0.8) (0.3, 1.0) (0.0, 1.0)
                pointer      follow-touch (pens judged like touch; mice and touchpads locked)
                accessible   always pass: Super+Alt+S
                  preset     org.example.MuseumMap.controls = deny
                  preset     org.example.MuseumMap.zoom = allow
                time limit   none
                exit gesture KEY_POWER ×3 within 1.5s
                passcode     hash in profile ($y$j…)

                """)
    }

    /// `[touch] max-contacts` and `edge-margin`, under the touch line and in the JSON.
    @Test func showListsFingersAtOnceAndTheEdgeMargin() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-fingers-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/fingers.toml"
        try "[touch]\nmax-contacts = 2\nedge-margin = 0.02\n".write(toFile: file, atomically: true, encoding: .utf8)
        let text = try kioskctl("profile", "show", file)
        #expect(text.status == 0)
        #expect(
            text.stdout.contains(
                """
                touch        works everywhere
                  fingers    at most 2 at once (one more is dropped until it lifts)
                  edges      contacts that start within 0.02 of an edge are dropped
                """), "\(text.stdout)")
        let json = try kioskctl("profile", "show", "--json", file)
        let touch =
            (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["touch"]
            as? [String: Any]
        #expect(touch?["max-contacts"] as? Int == 2 && touch?["edge-margin"] as? Double == 0.02, "\(json.stdout)")
    }

    /// `hide-pointer` entries: the text says the pointer is hidden; the JSON has the profile's
    /// own keys (no passes where none was given).
    @Test func showSaysWhichDevicesPointerIsHidden() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-hide-\(UUID()).toml").path
        try Data(
            """
            [[device]]
            role = "hdmi-cec"
            name = "vc4-hdmi"
            hide-pointer = true

            [[device]]
            role = "remote"
            vendor = 0x1234
            passes = "keys"
            hide-pointer = true
            """.utf8
        ).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let text = try kioskctl("profile", "show", file)
        #expect(text.status == 0)
        #expect(
            text.stdout.contains(
                """
                  device     hdmi-cec (name "vc4-hdmi"): pointer hidden
                  device     remote (vendor 0x1234): keys pass, pointer hidden
                """), "\(text.stdout)")
        let result = try kioskctl("profile", "show", "--json", file)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let devices = json?["device"] as? [[String: Any]]
        #expect(devices?.count == 2, "\(result.stdout)")
        #expect(devices?[0]["passes"] == nil && devices?[0]["hide-pointer"] as? Bool == true, "\(result.stdout)")
        #expect(devices?[1]["passes"] as? String == "keys" && devices?[1]["hide-pointer"] as? Bool == true)
    }

    @Test func showJSONIsMachineReadable() throws {
        let result = try kioskctl("profile", "show", "--json", "\(root)/policies/library-catalogue.toml")
        #expect(result.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(json?["app"] as? String == "org.example.LibraryCatalogue")
        let session = json?["session"] as? [String: Any]
        #expect(session?["time-limit"] as? String == "30m")
        #expect(session?["warnings"] as? [String] == ["5m", "1m"])
        #expect(session?["visitor-extensions"] as? Int == 10)
        #expect(session?["extend-by"] as? String == "15m" && session?["warn-before"] as? String == "1m")
        #expect((json?["buttons"] as? [String: Any])?["volume"] as? String == "allowed")
        #expect((json?["pointer"] as? [String: Any])?["mode"] as? String == "follow-touch")
        #expect((json?["accessibility"] as? [String: Any])?["allowed-combos"] as? [String] == ["Super+Alt+S"])
    }

    @Test func showNamesTheKeyboardAccessFeatures() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-access-\(UUID()).toml").path
        try Data("[accessibility]\nsticky-keys = true\nslow-keys = \"300ms\"\nbounce-keys = \"1.5s\"\n".utf8)
            .write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let text = try kioskctl("profile", "show", file)
        #expect(text.status == 0)
        #expect(
            text.stdout.contains("\nkey access   sticky keys, slow keys 300ms, bounce keys 1.5s\n"), "\(text.stdout)")
        let result = try kioskctl("profile", "show", "--json", file)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let access = json?["accessibility"] as? [String: Any]
        #expect(access?["sticky-keys"] as? Bool == true)
        #expect(access?["slow-keys"] as? String == "300ms" && access?["bounce-keys"] as? String == "1.5s")
        // Off, the features show nowhere in the text; the JSON says sticky-keys is false.
        let plain = try kioskctl("profile", "show", "--json", "\(root)/policies/library-catalogue.toml")
        let plainJSON = try JSONSerialization.jsonObject(with: Data(plain.stdout.utf8)) as? [String: Any]
        let plainAccess = plainJSON?["accessibility"] as? [String: Any]
        #expect(plainAccess?["sticky-keys"] as? Bool == false && plainAccess?["slow-keys"] == nil)
    }

    @Test func showNamesTheScreenReadersKeys() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-reader-\(UUID()).toml").path
        try Data(
            "[buttons]\nkeyboard = \"locked\"\nextra-locked-keys = [\"KEY_CAPSLOCK\"]\n[accessibility]\nscreen-reader = \"orca\"\n"
                .utf8
        ).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let text = try kioskctl("profile", "show", file)
        #expect(text.status == 0)
        #expect(
            text.stdout.contains("\naccessible   always pass: KEY_INSERT, Super+Alt+S (orca's keys with them)\n"),
            "\(text.stdout)")
        let result = try kioskctl("profile", "show", "--json", file)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect((json?["accessibility"] as? [String: Any])?["screen-reader"] as? String == "orca")
    }

    @Test func usageErrorsExit64() throws {
        let result = try kioskctl("profile", "check")
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: Missing expected argument '<files> ...'\n"))
        #expect(try kioskctl("profile", "frobnicate").status == 64)
    }

    /// `profile` and `replay` read files on this machine: `-H`, before or after the verb, is a usage
    /// error instead of an answer about the wrong machine.
    @Test(arguments: [
        ["-H", "admin@kiosk-7", "profile", "check", "\(root)/policies/museum-map.toml"],
        ["profile", "show", "--host", "admin@kiosk-7", "\(root)/policies/museum-map.toml"],
        ["-H", "admin@kiosk-7", "replay", "--profile", "\(root)/policies/museum-map.toml", "-"],
    ])
    func offlineVerbsRefuseARemoteHost(arguments: [String]) throws {
        let result = try BuildProducts.run("kioskctl", arguments)
        #expect(result.status == 64)
        #expect(result.stdout == "")
        #expect(result.stderr.hasPrefix("Error: "), "\(result)")
        #expect(result.stderr.contains(" reads files on this machine; -H admin@kiosk-7 does not apply."), "\(result)")
    }

    @Test func helpIsStable() throws {
        let result = try kioskctl("profile", "check", "--help")
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                OVERVIEW: Validate profiles; print file:line:col: message for each error.

                Exits 1 if any file has an error. Warns (exit status 0) about a file that holds
                a passcode hash and is not private to root (kioskd refuses to use such a hash),
                about a time limit of 20 hours or less that the person at the kiosk cannot
                extend (session.visitor-extensions), and about a screen reader's or sticky
                keys' key that a group lock swallows ([accessibility]). With --json, prints one
                JSON array for all the files instead: file, ok, errors (line, column, message)
                and warnings for each.

                USAGE: kioskctl profile check [--json] <files> ...

                ARGUMENTS:
                  <files>                 The profile files to check.

                OPTIONS:
                  --json                  Print JSON with stable keys instead of text.
                  --version               Show the version.
                  -h, --help              Show help information.


                """)
    }
}
