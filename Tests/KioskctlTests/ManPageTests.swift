import Foundation
import KioskTestSupport
import Testing

/// kioskctl(1) and kioskd(8) are written by hand; these tests keep them in step with `--help`:
/// every verb has its section, every flag is there (a verb's own flags in its section), and the
/// pages name no flag that does not exist.
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
        let options = try #require(page.text.components(separatedBy: ".SH OPTIONS").dropFirst().first?
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
        #expect(help.flags == ["--state-dir", "--profile-dir", "--no-input", "-h", "--help"])
        let options = try #require(page.text.components(separatedBy: ".SH OPTIONS").dropFirst().first?
            .components(separatedBy: ".SH ").first)
        for flag in help.flags {
            #expect(ManPage.contains(options, word: flag), "kioskd(8) OPTIONS lacks \(flag)")
            #expect(ManPage.contains(page.text.components(separatedBy: ".SH DESCRIPTION")[0], word: flag) || flag.hasPrefix("-h") || flag == "--help",
                    "kioskd(8) SYNOPSIS lacks \(flag)")
        }
        #expect(page.longFlags.subtracting(help.flags).isEmpty, "kioskd(8) names flags kioskd does not have")
    }

    /// The checks above can fail: a page without a flag or a verb is caught.
    @Test func aMissingFlagOrVerbIsFound() {
        #expect(ManPage.contains("use --passcode-stdin here", word: "--passcode-stdin"))
        #expect(!ManPage.contains("use --passcode-stdin-file here", word: "--passcode-stdin"))
        #expect(!ManPage.contains("force-end", word: "end"))
        let help = Help("""
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
