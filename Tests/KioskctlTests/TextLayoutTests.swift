import Testing

@testable import KioskctlCommands

/// Text measured and wrapped in display columns: wide CJK characters and emoji take two.
@Suite struct TextLayoutTests {
    static let title = "博物馆地图的管理员控制：设置齿轮、图层选择器以及所有只有工作人员才应该看到的按钮和菜单，参观者不应该看到它们"

    @Test(arguments: [
        ("a", 1), ("博", 2), ("博物馆", 6), ("e\u{301}", 1), ("👍", 2), ("❤️", 2), ("👨‍👩‍👧", 2),
        ("ｶ", 1), ("Ａ", 2), ("…", 1), ("東京 Tokyo", 10), ("café", 4),
        ("🇫🇷", 2), ("🇯🇵 Japan", 8),
    ])
    func displayWidth(_ text: String, _ columns: Int) {
        #expect(DisplayWidth.of(text) == columns)
    }

    // The C locale's fallback to C.UTF-8 is tested by `KioskctlBusTests.wideTitlesFitEightyColumns`,
    // which runs kioskctl with LC_ALL=C: this process's locale is the runner's.

    /// The rule used when no UTF-8 locale can be set at all.
    @Test func fallbackRuleKnowsWideCharacters() {
        for wide: UInt32 in [0x4E00, 0x9FA5, 0xAC00, 0x3042, 0xFF21, 0x1F600, 0x1F44D, 0x20000] {
            #expect(DisplayWidth.isWide(wide), "U+\(String(wide, radix: 16))")
        }
        for narrow: UInt32 in [0x41, 0xE9, 0x2026, 0xFF76, 0x0416] {
            #expect(!DisplayWidth.isWide(narrow), "U+\(String(narrow, radix: 16))")
        }
    }

    /// Chinese has no spaces: the title is one word, split where the next character would not fit.
    @Test func aChineseTitleWrapsAtItsDisplayWidth() {
        let lines = TextLayout.wrap(Self.title, width: 73)
        #expect(
            lines == [
                "博物馆地图的管理员控制：设置齿轮、图层选择器以及所有只有工作人员才应该看",
                "到的按钮和菜单，参观者不应该看到它们",
            ])
        #expect(lines.map { DisplayWidth.of($0) } == [72, 36])
    }

    @Test func mixedScriptsWrapAtWordsAndACutLineEndsInAnEllipsisThatFits() {
        #expect(TextLayout.wrap("東京 Tokyo 🗼 ❤️ café", width: 10) == ["東京 Tokyo", "🗼 ❤️ café"])
        let detail =
            "显示管理员控制。这段说明文字故意写得很长：kioskctl 按显示宽度而不是字符数来换行，所以每一行都能放进八十列的终端里，"
            + "超过三行的部分会被截断并以省略号结尾，除非要求显示全文。参观者只能看到地图本身和缩放按钮。"
        let cut = TextLayout.wrap(detail, width: 73, maxLines: 3)
        #expect(
            cut == [
                "显示管理员控制。这段说明文字故意写得很长：kioskctl",
                "按显示宽度而不是字符数来换行，所以每一行都能放进八十列的终端里，超过三行",
                "的部分会被截断并以省略号结尾，除非要求显示全文。参观者只能看到地图本身和…",
            ])
        #expect(cut.allSatisfy { DisplayWidth.of($0) <= 73 })
        #expect(TextLayout.wrap(detail, width: 73).count == 4)
    }

    @Test func paddingCountsColumns() {
        #expect(TextLayout.padded("地图", to: 8) == "地图    ")
        #expect(TextLayout.rightAligned("地图", in: 6) == "  地图")
        #expect(TextLayout.padded("地图地图", to: 4) == "地图地图")
    }

    /// ASCII text wraps as before: one column per character.
    @Test func asciiIsOneColumnPerCharacter() {
        #expect(
            TextLayout.wrap("aaaa bbbb cccccccccccccccccccccc", width: 10) == [
                "aaaa bbbb", "cccccccccc", "cccccccccc", "cc",
            ])
        #expect(TextLayout.wrap("one two three four five six", width: 10, maxLines: 2) == ["one two", "three fou…"])
    }
}
