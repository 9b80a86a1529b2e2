import BusTestSupport
import Foundation
import KioskTestSupport
import Testing

/// kioskd-prompt(1) is written by hand: it must describe every flag `--help` lists, and no other.
@Suite struct PromptManPageTests {
    static func flags(_ text: String) -> Set<String> {
        Set(text.replacingOccurrences(of: "\\-", with: "-").matches(of: /--[a-z][a-z-]*/).map { String($0.output) })
    }

    @Test func thePageNamesExactlyTheFlagsOfHelp() throws {
        let help = try runTool(BuildProducts.path(of: "kioskd-prompt"), ["--help"])
        #expect(help.status == 0)
        let page = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("packaging/man/kioskd-prompt.1"),
            encoding: .utf8)
        #expect(
            Self.flags(help.stdout) == [
                "--speak-command", "--display-command", "--locale-dir", "--locked-regions", "--version", "--help",
            ])
        #expect(Self.flags(page) == Self.flags(help.stdout))
    }

    @Test func usageErrorsExit64() throws {
        #expect(try runTool(BuildProducts.path(of: "kioskd-prompt"), ["--nope"]).status == 64)
        #expect(try runTool(BuildProducts.path(of: "kioskd-prompt"), ["--speak-command"]).status == 64)
        #expect(try runTool(BuildProducts.path(of: "kioskd-prompt"), ["--locale-dir"]).status == 64)
    }
}
