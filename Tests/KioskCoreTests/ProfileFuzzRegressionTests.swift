import Testing

@testable import KioskCore

/// Profile texts `make fuzz` found that broke the parser (docs/testing.md § Fuzzing).
@Suite struct ProfileFuzzRegressionTests {
    /// A table header with no name — a lone `[`, `[# …`, `[=` — made toml++ (under TOMLKit)
    /// fail an assertion, which aborted the process: kioskd, reading its profiles, and
    /// `kioskctl profile check`. Each is now a syntax error at the header, and nothing is parsed.
    @Test(arguments: [
        ("[", "1:1"), ("[# the kiosk's buttons", "1:1"), ("[[ # devices", "1:1"), ("[=", "1:1"), ("[.a]", "1:1"),
        ("[\r", "1:1"), ("[ \t", "1:1"), ("[é]", "1:1"), ("app = \"org.example.A\"\n  [\n", "2:3"),
    ])
    func aTableHeaderWithoutANameIsASyntaxError(text: String, position: String) {
        do {
            _ = try ProfileParser.parse(source: text, file: "f.toml")
            Issue.record("\(text.debugDescription) parsed")
        } catch {
            #expect(error.diagnostics.count == 1)
            #expect(error.diagnostics.map { "\($0.position.line):\($0.position.column)" } == [position])
            #expect(
                error.description.hasSuffix("TOML syntax: a table header must start with its name ([name] or [[name]])")
            )
        }
    }

    /// A line that begins with such a `[` inside a value (a multi-line array, a multi-line
    /// string) is no header: the profile parses, or fails for what it is.
    @Test func aBracketLineInsideAValueIsNoHeader() throws {
        let array = "app = \"org.example.A\"\n[buttons]\nextra-locked-keys = [\n[ # nested\n]]\n"
        do {
            _ = try ProfileParser.parse(source: array, file: "f.toml")
        } catch {
            // The nested array is no key name: the profile's own rules refuse it, not the header check.
            #expect(!error.description.contains("table header"), "\(error)")
        }
        let string = "app = \"org.example.A\"\ndescription = \"\"\"\n[\n\"\"\"\n"
        let profile = try ProfileParser.parse(source: string, file: "f.toml")
        #expect(profile.description == "[\n")
    }

    /// A `}` where an array's value belongs (`a = [ } ]`, `a = [1, }]`, on the next line or after
    /// a comment) made toml++ fail another assertion (`!is_value_terminator(*cp)`), found by
    /// `make fuzz` in CI: a syntax error at the brace now. The same brace inside a string or a
    /// comment, or closing an inline table after its last value, is left to the parse.
    @Test(arguments: [
        ("a = [ } ]", "1:7"), ("a = [1, } ]", "1:9"), ("a = [\n  \"x\",  # note\n  }\n]", "3:3"),
        ("x = 1\nkeys = [\"KEY_F1\",  } help\n]", "2:20"),
    ])
    func aBraceWhereAValueBelongsIsASyntaxError(text: String, position: String) {
        do {
            _ = try ProfileParser.parse(source: text, file: "f.toml")
            Issue.record("\(text.debugDescription) parsed")
        } catch {
            #expect(error.diagnostics.map { "\($0.position.line):\($0.position.column)" } == [position])
            #expect(error.description.hasSuffix("TOML syntax: a value was expected here, not '}'"))
        }
    }

    @Test func aBraceInAStringACommentOrClosingAnInlineTableIsNoSuchBrace() {
        #expect(TOMLSyntax.firstError(in: "a = [\"}\", '}', \"\"\"\n,}\"\"\"] # [ }") == nil)
        #expect(TOMLSyntax.firstError(in: "e = { key = \"KEY_A\", presses = 5 }") == nil)
        let afterAString = TOMLSyntax.firstError(in: "s = \"a\\\"[\"\nt = }")
        #expect(afterAString?.message == "a value was expected here, not '}'")
        #expect(afterAString?.position == SourcePosition(line: 2, column: 5))
    }

    /// A file that is a byte order mark and one comment line holding `{`, `""` and `]` (found by
    /// `make fuzz` once the grammar check let toml++ read such files): toml++ reads it as
    /// empty (a profile of defaults, as an empty file), but the positions' scanner did not skip the mark, took the comment for a key and
    /// its value, and looped for ever at the `]` inside what it took for an inline table — a
    /// profile that hung kioskd's profile reader. The mark is skipped now, and the scanner
    /// always moves on.
    @Test func aByteOrderMarkAndACommentDoNotHoldThePositionsScanner() throws {
        let text = "\u{FEFF}#~ lib'R#rye= { cosner =\"\"nter]   # museum's top-left\", tapslocke = 2, "
        #expect(TOMLSyntax.firstError(in: text) == nil)
        _ = TOMLSourceMap(source: text)
        #expect(
            try ProfileParser.parse(source: text, file: "f.toml") == ProfileParser.parse(source: "", file: "f.toml"))
        // Text the scanner does not understand (it only runs on what toml++ read) still ends.
        _ = TOMLSourceMap(source: "x = { a = \"\"b] }\ny = [ ) ]\n")
        let marked = TOMLSourceMap(source: "\u{FEFF}app = \"org.example.A\"\n")
        #expect(marked.position(of: [.key("app")]) == SourcePosition(line: 1, column: 1))
    }
}
