import Foundation
import KioskCore
import KioskTestSupport
import Testing

/// kioskctl(1), kioskd(8) and kioskd.profile(5) are written by hand; these tests keep them in
/// step with the code. kioskctl(1) and kioskd(8) follow `--help`: every verb has its section,
/// every flag is there (a verb's own flags in its section), and the pages name no flag that does
/// not exist. kioskd.profile(5) follows ProfileParser: every key it takes is described in the
/// section of its table, no key it refuses is, and the page's example parses.
@Suite struct ManPageTests {
    /// A man page's text with roff's escapes undone (`\-` → `-`, font changes dropped), split into
    /// its `.SS` sections; the part before the first one is under the key "".
    struct ManPage {
        var text: String
        var sections: [(heading: String, body: String)]

        init(_ file: String) throws {
            let source = try String(contentsOfFile: "\(root)/packaging/man/\(file)", encoding: .utf8)
            var plain = source.replacingOccurrences(of: "\\-", with: "-")
            for font in ["\\fB", "\\fI", "\\fR", "\\fP"] { plain = plain.replacingOccurrences(of: font, with: "") }
            text = plain
            sections = [("", "")]
            for line in plain.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(".SS ") {
                    sections.append((line.dropFirst(4).replacingOccurrences(of: "\"", with: ""), ""))
                } else if line.hasPrefix(".SH ") {
                    sections.append(("", ""))  // back to the page's top level
                } else {
                    sections[sections.count - 1].body += line + "\n"
                }
            }
        }

        /// Whether `word` occurs in `text` with no letter, digit or '-' on either side.
        static func contains(_ text: String, word: String) -> Bool {
            var rest = text[...]
            while let range = rest.range(of: word) {
                let before = range.lowerBound == text.startIndex ? nil : text[text.index(before: range.lowerBound)]
                let after = range.upperBound == text.endIndex ? nil : text[range.upperBound]
                if !isWordPart(before) && !isWordPart(after) { return true }
                rest = text[range.upperBound...]
            }
            return false
        }

        private static func isWordPart(_ character: Character?) -> Bool {
            guard let character else { return false }
            return character.isLetter || character.isNumber || character == "-"
        }

        /// The body of the `.SS` section whose heading names `verb` ("passcode set", "deny").
        func section(for verb: String) -> String? {
            sections.first { !$0.heading.isEmpty && Self.contains($0.heading, word: verb) }?.body
        }

        /// Every `--long` flag the page mentions.
        var longFlags: Set<String> {
            Set(text.matches(of: /--[a-z][a-z-]*/).map { String($0.output) })
        }

        /// The tags of the `.TP` entries in `body`: the first word of the line after each `.TP`,
        /// a font macro (`.B`, `.BR`, …) skipped.
        static func tags(in body: String) -> [String] {
            let lines = body.split(separator: "\n", omittingEmptySubsequences: false)
            return lines.indices.dropLast().compactMap { index in
                guard lines[index] == ".TP" else { return nil }
                var words = lines[index + 1].split(separator: " ")
                if words.first?.hasPrefix(".") == true { words.removeFirst() }
                return words.first.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            }
        }
    }

    /// A `--help` page: its flags (first column of OPTIONS) and its subcommands.
    struct Help {
        var flags: [String] = []
        var subcommands: [String] = []

        init(_ text: String) {
            var section = ""
            // A section ends at a blank line (the "See 'kioskctl help …'" line after SUBCOMMANDS is no verb).
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if !line.hasPrefix(" ") { section = String(line); continue }
                guard line.hasPrefix("  "), !line.dropFirst(2).hasPrefix(" ") else { continue }
                let entry = line.dropFirst(2).split(separator: "  ", maxSplits: 1).first ?? ""
                if section == "OPTIONS:" {
                    flags += entry.split(separator: ", ").map { String($0.split(separator: " ")[0]) }
                } else if section == "SUBCOMMANDS:" {
                    subcommands.append(String(entry.split(separator: " ")[0]))
                }
            }
        }
    }

    static func help(_ executable: String, _ arguments: [String]) throws -> Help {
        let result = try BuildProducts.run(executable, arguments + ["--help"])
        #expect(result.status == 0, "\(executable) \(arguments) --help: \(result.stderr)")
        return Help(result.stdout)
    }

    /// Every verb path with its help: ["status"], ["passcode", "set"], ["profile", "check"], …
    static func kioskctlVerbs() throws -> [(verb: [String], help: Help)] {
        var verbs: [(verb: [String], help: Help)] = []
        var pending = try help("kioskctl", []).subcommands.map { [$0] }
        while !pending.isEmpty {
            let verb = pending.removeFirst()
            let page = try help("kioskctl", verb)
            if page.subcommands.isEmpty {
                verbs.append((verb, page))
            } else {
                pending += page.subcommands.map { verb + [$0] }
            }
        }
        return verbs
    }

    @Test func kioskctlPageHasEveryVerbAndFlag() throws {
        let page = try ManPage("kioskctl.1")
        let root = try Self.help("kioskctl", [])
        let verbs = try Self.kioskctlVerbs()
        #expect(verbs.count >= 13, "\(verbs.map(\.verb))")  // the help was read: status … replay, 13 verbs
        #expect(root.flags == ["--json", "-H", "--host", "--version", "-h", "--help"])
        let options = try #require(
            page.text.components(separatedBy: ".SH OPTIONS").dropFirst().first?
                .components(separatedBy: ".SH ").first)
        for flag in root.flags {
            #expect(ManPage.contains(options, word: flag), "kioskctl(1) OPTIONS lacks \(flag)")
        }
        var known = Set(root.flags)
        for (verb, help) in verbs {
            let name = verb.joined(separator: " ")
            guard let section = page.section(for: name) else {
                Issue.record("kioskctl(1) has no section for the verb \(name)")
                continue
            }
            for flag in help.flags where !root.flags.contains(flag) {
                known.insert(flag)
                #expect(ManPage.contains(section, word: flag), "kioskctl(1) does not describe \(flag) under \(name)")
            }
        }
        #expect(page.longFlags.subtracting(known).isEmpty, "kioskctl(1) names flags kioskctl does not have")
    }

    @Test func kioskdPageHasEveryFlag() throws {
        let page = try ManPage("kioskd.8")
        let help = try Self.help("kioskd", [])
        #expect(
            help.flags == [
                "--state-dir", "--profile-dir", "--no-input", "--runtime-dir", "--chromium-policy-dir",
                "--firefox-policy-dir", "--apps-dir", "-h", "--help",
            ])
        let options = try #require(
            page.text.components(separatedBy: ".SH OPTIONS").dropFirst().first?
                .components(separatedBy: ".SH ").first)
        for flag in help.flags {
            #expect(ManPage.contains(options, word: flag), "kioskd(8) OPTIONS lacks \(flag)")
            #expect(
                ManPage.contains(page.text.components(separatedBy: ".SH DESCRIPTION")[0], word: flag)
                    || flag.hasPrefix("-h") || flag == "--help",
                "kioskd(8) SYNOPSIS lacks \(flag)")
        }
        #expect(page.longFlags.subtracting(help.flags).isEmpty, "kioskd(8) names flags kioskd does not have")
    }

    // MARK: kioskd.profile(5)

    /// Where a table of a profile is, from the top level: keys, and `.element` for an element of
    /// an array of tables.
    enum ProfilePath: Hashable {
        case key(String)
        case element
    }

    /// A key no profile table takes, and far from every key it does: the parser refuses it with
    /// "unknown key …; expected one of: …", the list of the keys that table takes.
    static let probeKey = "zzzzzzzzzzzzzzzz"

    /// A profile whose only value is a table holding `probeKey`, at `path` (inline tables and
    /// arrays: `touch = { locked-region = [ { zzz… = 1 } ] }`).
    static func probeProfile(at path: [ProfilePath]) -> String {
        var value = "{ \(probeKey) = 1 }"
        for component in path.reversed() {
            switch component {
            case .key(let key): value = "{ \(key) = \(value) }"
            case .element: value = "[ \(value) ]"
            }
        }
        return String(value.dropFirst(2).dropLast(2))  // the top level is a table already
    }

    /// The keys ProfileParser takes in the table at `path`, as it lists them when it refuses
    /// `probeKey` there; `nil` when it reads no table of fixed keys there (a value, or the
    /// `[restrictions]` tables, whose keys are ids).
    static func profileKeys(at path: [ProfilePath]) -> [String]? {
        do throws(ProfileError) {
            _ = try ProfileParser.parse(source: probeProfile(at: path), file: "probe.toml")
        } catch {
            for diagnostic in error.diagnostics where diagnostic.message.hasPrefix("unknown key \"\(probeKey)\"") {
                if let list = diagnostic.message.components(separatedBy: "; expected one of: ").dropFirst().first {
                    return list.components(separatedBy: ", ")
                }
            }
        }
        return nil
    }

    /// Every table of fixed keys a profile has, with its keys, asked of the parser from the top
    /// level down: each key is tried as a table, then as an array of tables.
    static func profileTables() -> [(path: [ProfilePath], keys: [String])] {
        var tables: [(path: [ProfilePath], keys: [String])] = []
        var pending: [[ProfilePath]] = [[]]
        while !pending.isEmpty {
            let path = pending.removeFirst()
            guard path.count < 8, let keys = profileKeys(at: path) else { continue }
            tables.append((path, keys))
            for key in keys {
                let keyPath = path + [.key(key)]
                if profileKeys(at: keyPath) != nil {
                    pending.append(keyPath)
                } else if profileKeys(at: keyPath + [.element]) != nil {
                    pending.append(keyPath + [.element])
                }
            }
        }
        return tables
    }

    /// The heading of a table's section in kioskd.profile(5): the table as a TOML header names
    /// it (`[buttons]`, `[[touch.locked-region]]`, `[touch.locked-region.rect]`).
    static func profileHeading(of path: [ProfilePath]) -> String {
        guard !path.isEmpty else { return "Top-level keys" }
        let name = path.compactMap { component -> String? in
            if case .key(let key) = component { return key }
            return nil
        }.joined(separator: ".")
        return path.last == .element ? "[[\(name)]]" : "[\(name)]"
    }

    @Test func profilePageHasEveryProfileKey() throws {
        let page = try ManPage("kioskd.profile.5")
        let tables = Self.profileTables()
        let headings = tables.map { Self.profileHeading(of: $0.path) }
        // The parser was asked: the tables every example in policies/ uses were found.
        for heading in ["Top-level keys", "[buttons]", "[[touch.locked-region]]", "[session.exit-gesture]"] {
            #expect(headings.contains(heading), "the parser's tables: \(headings)")
        }
        for (path, keys) in tables {
            let heading = Self.profileHeading(of: path)
            guard let section = page.sections.first(where: { $0.heading == heading }) else {
                Issue.record("kioskd.profile(5) has no section \(heading) for the keys \(keys)")
                continue
            }
            let tags = ManPage.tags(in: section.body)
            for key in keys where !tags.contains(key) {
                Issue.record("kioskd.profile(5) does not describe \(key) under \(heading)")
            }
            for tag in tags where !keys.contains(tag) {
                Issue.record(
                    "kioskd.profile(5) describes \(tag) under \(heading), which the parser does not take there")
            }
        }
    }

    @Test func profilePageExampleParses() throws {
        let page = try ManPage("kioskd.profile.5")
        let example = try #require(
            page.text.components(separatedBy: ".SH EXAMPLE").dropFirst().first?
                .components(separatedBy: ".nf\n").dropFirst().first?.components(separatedBy: "\n.fi").first)
        #expect(example.contains("[buttons]"))
        do throws(ProfileError) {
            _ = try ProfileParser.parse(source: example, file: "kioskd.profile.5 EXAMPLE")
        } catch {
            Issue.record("kioskd.profile(5)'s example does not parse:\n\(error)")
        }
    }

    /// The profile checks can fail: a key the parser takes is found, and so is a page without it.
    @Test func aMissingProfileKeyIsFound() {
        #expect(Self.probeProfile(at: []) == "\(Self.probeKey) = 1")
        #expect(
            Self.probeProfile(at: [.key("touch"), .key("locked-region"), .element])
                == "touch = { locked-region = [ { \(Self.probeKey) = 1 } ] }")
        #expect(Self.profileKeys(at: [.key("passcode")]) == ["hash"])
        #expect(Self.profileKeys(at: [.key("app")]) == nil)
        #expect(Self.profileKeys(at: [.key("restrictions")]) == nil)
        #expect(Self.profileHeading(of: [.key("touch"), .key("locked-region"), .element]) == "[[touch.locked-region]]")
        let tags = ManPage.tags(in: ".TP\n.B power\nLocks it.\n.TP\n.BR escape-chords \" = x\"\nText.\n.TP\nhash\n")
        #expect(tags == ["power", "escape-chords", "hash"])
    }

    /// The checks above can fail: a page without a flag or a verb is caught.
    @Test func aMissingFlagOrVerbIsFound() {
        #expect(ManPage.contains("use --passcode-stdin here", word: "--passcode-stdin"))
        #expect(!ManPage.contains("use --passcode-stdin-file here", word: "--passcode-stdin"))
        #expect(!ManPage.contains("force-end", word: "end"))
        let help = Help(
            """
            USAGE: x

            OPTIONS:
              --json                  Print JSON.
              -H, --host <user@host>  Remote
                                      continued --not-a-flag.
            SUBCOMMANDS:
              set                     Set it.

              See 'x help <subcommand>' for detailed help.
            """)
        #expect(help.flags == ["--json", "-H", "--host"])
        #expect(help.subcommands == ["set"])
    }
}
