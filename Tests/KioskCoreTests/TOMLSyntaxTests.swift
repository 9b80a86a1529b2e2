import Foundation
import TOMLKit
import Testing

@testable import KioskCore

/// `TOMLSyntax`, the check that keeps malformed TOML from toml++ (whose assertions abort the
/// process): it accepts every TOML 1.0 document toml++ reads, and refuses what the grammar
/// refuses with a position and a sentence.
@Suite struct TOMLSyntaxTests {
    /// TOML 1.0's forms, one document each (toml.io/en/v1.0.0): toml++ reads each, and so must
    /// the check.
    static let valid: [String] = [
        "",
        "\n\n# only a comment\n",
        "\u{FEFF}a = 1\n",
        "a = 1\r\nb = 2\r\n",
        "a = 1 # a comment with 'quotes' and \"more\" and é\n",
        "bare_key-1 = 1\n\"quoted key\" = 2\n'literal key' = 3\n\"\" = 4\n",
        "a.b.c = 1\na . d = 2\n\"x\".'y'.z = 3\n3.14159 = \"pi\"\n",
        "s1 = \"tab\\tquote\\\" backslash\\\\ u\\u00E9 U\\U0001F600 \\b\\f\\n\\r\"\n",
        "s2 = 'C:\\Users\\nodejs\\templates'\ns3 = '<\\i\\c*\\s*>'\n",
        "s4 = \"\"\"\nRoses are red\nViolets are blue\"\"\"\n",
        "s5 = \"\"\"\nThe quick brown \\\n\n\n  fox jumps over \\\n    the lazy dog.\"\"\"\n",
        "s6 = \"\"\"Here are two quotation marks: \"\". Simple enough.\"\"\"\n",
        "s7 = \"\"\"Here are fifteen quotation marks: \"\"\\\"\"\"\\\"\"\"\\\"\"\"\\\"\"\"\\\".\"\"\"\n",
        "s8 = \"\"\"\"This,\" she said, \"is just a pointless statement.\"\"\"\"\n",
        "s9 = '''\nThe first newline is\ntrimmed in raw strings.\n   All other whitespace\n   is preserved.\n'''\n",
        "s10 = '''Here are fifteen quotation marks: \"\"\"\"\"\"\"\"\"\"\"\"\"\"\"'''\ns11 = ''''That,' she said, 'is still pointless.''''\n",
        "i = [+99, 42, 0, -17, 1_000, 5_349_221, 53_49_221, 1_2_3_4_5]\n",
        "h = [0xDEADBEEF, 0xdeadbeef, 0xdead_beef, 0o01234567, 0o755, 0b11010110]\n",
        "f = [+1.0, 3.1415, -0.01, 5e+22, 1e06, -2E-2, 6.626e-34, 224_617.445_991_228, 0.0, +0.0, -0.0]\n",
        "sf = [inf, +inf, -inf, nan, +nan, -nan]\n",
        "b = [true, false]\n",
        "odt = [1979-05-27T07:32:00Z, 1979-05-27T00:32:00-07:00, 1979-05-27T00:32:00.999999-07:00, 1979-05-27 07:32:00Z]\n",
        "ldt = [1979-05-27T07:32:00, 1979-05-27T00:32:00.999999, 1979-05-27t07:32:00z]\nld = 1979-05-27\nlt = [07:32:00, 00:32:00.999999]\n",
        "sp = 1979-05-27 07:32:00\n",
        "a = [ [ 1, 2 ], [3, 4, 5] ]\nb = [ \"all\", 'strings', \"\"\"are the same\"\"\", '''type''' ]\nc = [ 0.1, 0.2, 0.5, 1, 2, 5 ]\n",
        "d = [\n  1, # one\n  2,\n  # a line of its own\n  3,\n]\ne = [ ]\nf = [\n]\n",
        "name = { first = \"Tom\", last = \"Preston-Werner\" }\npoint = { x = 1, y = 2 }\nanimal = { type.name = \"pug\" }\nempty = {}\n",
        "t = { a = [\n 1,\n 2 ], s = \"\"\"\nmore\"\"\" }\n",
        "[table]\n[ table-2 ]\n[dog.\"tater.man\"]\n[a.b.c]\n[ d.e.f ]\n[ g .  h  . i ]\n[ j . \"ʞ\" . 'l' ]\n",
        "[[products]]\nname = \"Hammer\"\n[[products]]\n\n[[ fruits ]]\n[[fruits.varieties]]\n",
        "key = \"value\"\t# tab before the comment\n\t[indented]\n  k = 1\n",
    ]

    @Test(arguments: valid)
    func acceptsWhatTOMLAccepts(_ text: String) throws {
        _ = try TOMLTable(string: text)  // valid TOML, as toml++ reads it
        #expect(TOMLSyntax.firstError(in: text) == nil, "\(text.debugDescription)")
    }

    /// Every TOML text in the repository that toml++ reads — the bundled profiles, the fuzzing
    /// seeds, the examples in docs and README — the check reads too.
    @Test func acceptsEveryTOMLTextInTheRepository() throws {
        var texts: [(String, String)] = []
        let fm = FileManager.default
        for directory in ["policies", "Fuzz/corpus/profile", "Examples", "packaging"] {
            let root = repositoryRoot.appendingPathComponent(directory)
            guard let walk = fm.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walk where url.pathExtension == "toml" {
                texts.append((url.path, try String(contentsOf: url, encoding: .utf8)))
            }
        }
        let docs =
            try fm.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 } + ["README.md"]
        for doc in docs {
            let text = try String(contentsOf: repositoryRoot.appendingPathComponent(doc), encoding: .utf8)
            for (n, block) in text.components(separatedBy: "```toml\n").dropFirst().enumerated() {
                texts.append(("\(doc) block \(n + 1)", block.components(separatedBy: "```").first ?? ""))
            }
        }
        #expect(texts.count > 15, "the repository's TOML was not found")
        var read = 0
        for (name, text) in texts where (try? TOMLTable(string: text)) != nil {
            read += 1
            let error = TOMLSyntax.firstError(in: text)
            #expect(error == nil, "\(name): \(String(describing: error))")
        }
        #expect(read > 10)
    }

    /// What the grammar refuses: where, and why.
    @Test(arguments: [
        ("a = ", "1:5", "a value was expected here; found the end of the file"),
        ("a = 1 2", "1:7", "the line should end here, or a comment begin with '#'; found '2'"),
        ("a", "1:2", "'=' was expected after the key; found the end of the file"),
        ("= 1", "1:1", "a key was expected here; found '='"),
        ("a. = 1", "1:4", "a key was expected here; found '='"),
        ("é = 1", "1:1", "a key was expected here; found a non-ASCII character"),
        ("[a\nb = 1", "1:3", "']' was expected to close the table header"),
        ("[[a]\n", "1:4", "']]' was expected to close the table header"),
        ("[]", "1:1", "a table header must start with its name ([name] or [[name]])"),
        ("s = \"abc\nt = 1", "1:5", "a string must end on its line (use \"\"\" for more lines)"),
        ("s = 'abc", "1:5", "the string is not closed"),
        ("s = \"\"\"abc\"\"", "1:5", "the string is not closed"),
        (
            "s = \"a\\qb\"", "1:7",
            "'\\' begins no escape TOML knows here (\\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX)"
        ),
        ("s = \"\\u12\"", "1:6", "\\u takes 4 hexadecimal digits"),
        ("s = \"\\uD800\"", "1:6", "the escape names no Unicode scalar value (surrogates and above U+10FFFF are none)"),
        ("s = \"a\u{1}b\"", "1:7", "a control character (U+0001) must be escaped in a string"),
        ("a = 1 # \u{7}", "1:9", "a control character (U+0007) is not allowed in a comment"),
        ("a = 1 # DEL \u{7F}", "1:13", "a control character (U+007F) is not allowed in a comment"),
        ("a = 1\rb = 2", "1:6", "a carriage return must be followed by a line feed"),
        ("a = [1,\n2", "1:5", "the array is not closed"),
        ("a = [1 2]", "1:8", "',' or ']' was expected in the array; found '2'"),
        ("a = [1,,2]", "1:8", "a value was expected here; found ','"),
        ("a = [ } ]", "1:7", "a value was expected here, not '}'"),
        ("a = { b = 1, }", "1:14", "an inline table cannot end with ','"),
        ("a = { b = 1\n}", "1:12", "an inline table must be written on one line, with no comment inside"),
        ("a = { b = 1 c = 2 }", "1:13", "',' or '}' was expected in the inline table; found 'c'"),
        ("a = 01", "1:5", "'01' is not a number, a date or a time as TOML writes them"),
        ("a = 1__0", "1:5", "'1__0' is not a number, a date or a time as TOML writes them"),
        ("a = 1_", "1:5", "'1_' is not a number, a date or a time as TOML writes them"),
        ("a = .5", "1:5", "a value was expected here; found '.'"),
        ("a = 1.", "1:5", "'1.' is not a number, a date or a time as TOML writes them"),
        ("a = 0xG", "1:5", "'0xG' is not a number, a date or a time as TOML writes them"),
        ("a = +0x1", "1:5", "'+0x1' is not a number, a date or a time as TOML writes them"),
        ("a = 1979-5-27", "1:5", "'1979-5-27' is not a number, a date or a time as TOML writes them"),
        ("a = 07:32", "1:5", "'07:32' is not a number, a date or a time as TOML writes them"),
        ("a = tru", "1:5", "a value was expected here; found 't'"),
        ("a = trueish", "1:9", "a value was expected here; found 'true' and more"),
        ("a = \"\"\"x\"\"\"\"\"\"", "1:14", "the line should end here, or a comment begin with '#'; found '\"'"),
        ("k = \"\"\"\"\"\"\n\"\"\"k\"\"\" = 1", "2:1", "a key cannot be a multi-line string"),
    ])
    func refusesWithAPositionAndASentence(_ text: String, _ position: String, _ message: String) {
        let error = TOMLSyntax.firstError(in: text)
        #expect(error.map { "\($0.position.line):\($0.position.column)" } == position, "\(text.debugDescription)")
        #expect(error?.message == message, "\(text.debugDescription)")
    }

    /// Nesting is bounded as toml++ bounds it, so that the check's recursion is too: a
    /// megabyte of `[` is refused at the 257th, not a stack overflow on kioskd's reader thread.
    @Test func nestingIsBoundedAsTomlPlusPlusBoundsIt() throws {
        let deepest = "a = " + String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        #expect(TOMLSyntax.firstError(in: deepest) == nil)
        _ = try TOMLTable(string: deepest)
        let deeper = "a = " + String(repeating: "[", count: 257) + String(repeating: "]", count: 257)
        #expect(
            TOMLSyntax.firstError(in: deeper)?.message
                == "arrays and inline tables may hold one another at most 256 deep")
        let tables = "a = " + String(repeating: "{ b = ", count: 300)
        #expect(TOMLSyntax.firstError(in: tables)?.position == SourcePosition(line: 1, column: 5 + 6 * 256))
        let huge = "a = " + String(repeating: "[", count: 1 << 20)
        #expect(TOMLSyntax.firstError(in: huge)?.position == SourcePosition(line: 1, column: 5 + 256))
    }

    /// A profile with a syntax error names the file, the position and the sentence.
    @Test func aProfileSaysItsSyntaxErrorWhereItIs() {
        do {
            _ = try ProfileParser.parse(source: "description = \"x\"\n[buttons]\npower = locked\n", file: "m.toml")
            Issue.record("parsed")
        } catch {
            #expect(error.description == "m.toml:3:9: TOML syntax: a value was expected here; found 'l'", "\(error)")
        }
    }
}
