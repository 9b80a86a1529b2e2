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
    @Test func checkPassesTheExamples() throws {
        let result = try kioskctl(
            "profile", "check", "\(root)/policies/museum-map.toml", "\(root)/policies/self-check-in.toml")
        #expect(result.status == 0)
        #expect(result.stdout == "\(root)/policies/museum-map.toml: ok\n\(root)/policies/self-check-in.toml: ok\n")
        #expect(result.stderr == "")
    }

    @Test func checkReportsEveryErrorAsFileLineColumnAndExits1() throws {
        let bad = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-bad-\(UUID()).toml").path
        try Data("[buttons]\npowr = \"locked\"\nvolume = 3\n".utf8).write(to: URL(fileURLWithPath: bad))
        let result = try kioskctl("profile", "check", bad, "\(root)/policies/museum-map.toml", "/nonexistent/p.toml")
        #expect(result.status == 1)
        #expect(result.stdout == "\(root)/policies/museum-map.toml: ok\n")
        #expect(
            result.stderr == """
                \(bad):2:1: unknown key "powr" in buttons; did you mean "power"?
                \(bad):3:10: buttons.volume must be a string, not an integer
                /nonexistent/p.toml: no such file

                """)
    }

    @Test func showPrintsTheResolvedProfile() throws {
        let result = try kioskctl("profile", "show", "\(root)/policies/museum-map.toml")
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                profile      \(root)/policies/museum-map.toml
                app          org.example.MuseumMap
                description  Visitors may pan and zoom the floor map
                buttons      power locked, volume locked, home locked, keyboard allowed
                chords       escape chords blocked
                extra keys   KEY_F11 KEY_F12
                touch        works outside 2 locked region(s)
                  region     settings gear: rect x 0.9 y 0.0 width 0.1 height 0.12
                  region     legend: polygon (0.0, 0.8) (0.3, 0.8) (0.3, 1.0) (0.0, 1.0)
                  preset     org.example.MuseumMap.controls = deny
                  preset     org.example.MuseumMap.zoom = allow
                time limit   none
                exit gesture KEY_POWER ×3 within 1.5s
                passcode     hash in profile ($y$j…)

                """)
    }

    @Test func showJSONIsMachineReadable() throws {
        let result = try kioskctl("profile", "show", "--json", "\(root)/policies/library-catalogue.toml")
        #expect(result.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(json?["app"] as? String == "org.example.LibraryCatalogue")
        let session = json?["session"] as? [String: Any]
        #expect(session?["time-limit"] as? String == "30m")
        #expect(session?["warnings"] as? [String] == ["5m", "1m"])
        #expect((json?["buttons"] as? [String: Any])?["volume"] as? String == "allowed")
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

                Exits 1 if any file has an error.

                USAGE: kioskctl profile check <files> ...

                ARGUMENTS:
                  <files>                 The profile files to check.

                OPTIONS:
                  --version               Show the version.
                  -h, --help              Show help information.


                """)
    }
}
