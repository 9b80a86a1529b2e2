import Foundation
import Testing

/// `kioskctl web-app check` works without a daemon; its output is checked byte for byte.
@Suite struct WebAppCommandTests {
    static func directory() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        return directory
    }

    @Test func checkPassesTheExample() throws {
        let example = "\(root)/Examples/web-museum-guide/org.example.MuseumGuide.toml"
        let result = try kioskctl("web-app", "check", example)
        #expect(result.status == 0)
        #expect(
            result.stdout
                == "\(example): ok (org.example.MuseumGuide: 2 restrictions, read by https://guide.museum.example)\n")
        #expect(result.stderr == "")
    }

    /// The web kiosk guide's profile (docs/web-kiosk.md) checks, with no warning: its locks leave
    /// a screen reader's keys alone.
    @Test func theGuidesProfileChecksWithoutAWarning() throws {
        let example = "\(root)/Examples/web-museum-guide/museum-guide.toml"
        let result = try kioskctl("profile", "check", example)
        #expect(result.status == 0)
        #expect(result.stdout == "\(example): ok\n")
        #expect(result.stderr == "")
    }

    @Test func eachErrorAtItsLineAndExitOne() throws {
        let directory = try Self.directory()
        let wrongName = "\(directory)/museum.toml"
        try Data("id = \"org.example.MuseumGuide\"\norigins = [\"https://guide.museum.example/\"]\n".utf8)
            .write(to: URL(fileURLWithPath: wrongName))
        let good = "\(directory)/a.b.toml"
        try Data(
            "id = \"a.b\"\norigins = [\"http://127.0.0.1:8080\"]\n[[restriction]]\nid = \"a.b.c\"\ntitle = \"C\"\ndetail = \"D\"\n"
                .utf8
        )
        .write(to: URL(fileURLWithPath: good))
        let result = try kioskctl("web-app", "check", wrongName, good, "\(directory)/missing.toml")
        #expect(result.status == 1)
        #expect(result.stdout == "\(good): ok (a.b: 1 restriction, read by http://127.0.0.1:8080)\n")
        #expect(
            result.stderr
                == """
                \(wrongName):1:1: the manifest needs at least one [[restriction]] with id, title and detail
                \(wrongName):1:6: id is "org.example.MuseumGuide", but the file is "museum.toml": name it org.example.MuseumGuide.toml
                \(wrongName):2:12: origins: The origin "https://guide.museum.example/" has a path; an origin is scheme://host[:port], with no "/" at the end.
                \(directory)/missing.toml: no such file

                """)
    }

    /// `--json`: the array `profile check --json` prints, each error at its line, no warnings.
    @Test func checkPrintsOneJSONArray() throws {
        let example = "\(root)/Examples/web-museum-guide/org.example.MuseumGuide.toml"
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bad = "\(directory)/a.b.toml"
        try Data("id = \"a.b\"\norigins = 3\n".utf8).write(to: URL(fileURLWithPath: bad))
        let result = try kioskctl("web-app", "check", "--json", example, bad)
        #expect(result.status == 1)
        #expect(result.stderr == "")
        let decoded = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        let checks = try #require(decoded, "\(result.stdout)")
        #expect(checks.map { $0["file"] as? String } == [example, bad])
        #expect(checks.map { $0["ok"] as? Bool } == [true, false])
        #expect(checks.map { ($0["warnings"] as? [Any])?.count } == [0, 0])
        let errors = try #require(checks[1]["errors"] as? [[String: Any]])
        #expect(
            !errors.isEmpty && errors.allSatisfy { $0["line"] is Int && $0["column"] is Int && $0["message"] is String }
        )
        #expect((checks[0]["errors"] as? [Any])?.isEmpty == true)
    }

    @Test func aFIFOIsRefusedNotWaitedOn() throws {
        let fifo = "\(try Self.directory())/a.b.toml"
        #expect(mkfifo(fifo, 0o600) == 0)
        let result = try kioskctl("web-app", "check", fifo)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("\(fifo): "), "\(result.stderr)")
    }

    @Test func namesAtLeastOneFile() throws {
        let result = try kioskctl("web-app", "check")
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: Missing expected argument '<files> ...'\n"), "\(result.stderr)")
    }
}
