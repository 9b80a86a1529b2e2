import CTerminal
import Glibc

/// Fitting free text (titles, detail texts) into a terminal: words wrapped at a width, line
/// breaks in the text kept, and long texts cut to a few lines ending in "…".
///
/// Widths are display columns (``DisplayWidth``): a wide CJK character or emoji takes two, a
/// combining mark none, so a title in Chinese fits 80 columns as well as one in English.
enum TextLayout {
    /// The lines of `text` wrapped at `width` columns; at most `maxLines` (the last one then
    /// ends in "…"), or all of them when `maxLines` is nil. A word wider than the width is
    /// split (text without spaces, as Chinese and Japanese are written, is one long word).
    /// Tabs count as one space.
    static func wrap(_ text: String, width: Int, maxLines: Int? = nil) -> [String] {
        let width = max(width, 10)
        var lines: [String] = []
        for paragraph in text.replacingTabs.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            var lineWidth = 0
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: true) {
                var word = Substring(word)
                var wordWidth = DisplayWidth.of(word)
                if !line.isEmpty && lineWidth + 1 + wordWidth <= width {
                    line += " " + word
                    lineWidth += 1 + wordWidth
                    continue
                }
                if !line.isEmpty { lines.append(line) }
                while wordWidth > width {
                    let head = prefix(word, fitting: width)
                    lines.append(String(head))
                    word = word[head.endIndex...]
                    wordWidth -= DisplayWidth.of(head)
                }
                (line, lineWidth) = (String(word), wordWidth)
            }
            lines.append(line)
        }
        while lines.count > 1 && lines.last?.isEmpty == true { lines.removeLast() }
        guard let maxLines, lines.count > maxLines else { return lines }
        var kept = Array(lines.prefix(maxLines))
        let ellipsis = "…"
        let last = kept[maxLines - 1]
        let room = width - DisplayWidth.of(ellipsis)
        kept[maxLines - 1] = (DisplayWidth.of(last) > room ? String(prefix(last[...], fitting: room)) : last) + ellipsis
        return kept
    }

    /// `text` padded with spaces to `width` columns (never cut).
    static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - DisplayWidth.of(text)))
    }

    /// `text` right-aligned in `width` columns.
    static func rightAligned(_ text: String, in width: Int) -> String {
        String(repeating: " ", count: max(0, width - DisplayWidth.of(text))) + text
    }

    /// The longest start of `text` that fits `width` columns; at least one character, so that
    /// splitting always makes progress.
    private static func prefix(_ text: Substring, fitting width: Int) -> Substring {
        var used = 0
        var end = text.startIndex
        for character in text {
            let next = used + DisplayWidth.of(character)
            if next > width && end != text.startIndex { break }
            used = next
            end = text.index(after: end)
            if used >= width { break }
        }
        return text[..<end]
    }
}

/// How many terminal columns text takes: glibc's `wcwidth` in the environment's LC_CTYPE, or in
/// C.UTF-8 when that is not a UTF-8 locale (kioskctl writes UTF-8 whatever the locale, and in the
/// C locale `wcwidth` knows only ASCII). A character (grapheme cluster) is as wide as its first
/// scalar, its combining marks and joined parts adding nothing; an emoji presentation selector
/// (U+FE0F) makes it two columns wide. When no UTF-8 locale can be set, East Asian Wide and
/// Fullwidth characters and emoji count two columns (the main blocks of Unicode's
/// EastAsianWidth.txt), everything else one.
enum DisplayWidth {
    static func of(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    static func of(_ character: Character) -> Int {
        if character.isASCII { return 1 }
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        // A flag is a pair of regional indicators, each 1 column to wcwidth, 2 in a terminal.
        if (0x1F1E6...0x1F1FF).contains(first.value) { return 2 }
        var width = scalarWidth(first)
        if width == 1 && scalars.contains("\u{FE0F}") { width = 2 }
        return width
    }

    static func scalarWidth(_ scalar: Unicode.Scalar) -> Int {
        if hasUTF8Locale {
            let width = kioskctl_wcwidth(scalar.value)
            if width >= 0 { return Int(width) }
        }
        return isWide(scalar.value) ? 2 : 1
    }

    /// Whether LC_CTYPE is a UTF-8 locale, after trying the environment's, then C.UTF-8.
    static let hasUTF8Locale: Bool = {
        func isUTF8() -> Bool { String(cString: nl_langinfo(nl_item(CODESET))) == "UTF-8" }
        if setlocale(LC_CTYPE, "") != nil, isUTF8() { return true }
        return setlocale(LC_CTYPE, "C.UTF-8") != nil && isUTF8()
    }()

    /// The fallback rule: East Asian Wide (W) and Fullwidth (F) ranges.
    static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0, 0x23F3, 0x25FD...0x25FE,
            0x2614...0x2615, 0x2648...0x2653, 0x267F, 0x2693, 0x26A1, 0x26AA...0x26AB, 0x26BD...0x26BE,
            0x26C4...0x26C5, 0x26CE, 0x26D4, 0x26EA, 0x26F2...0x26F3, 0x26F5, 0x26FA, 0x26FD, 0x2705,
            0x270A...0x270B, 0x2728, 0x274C, 0x274E, 0x2753...0x2755, 0x2757, 0x2795...0x2797, 0x27B0, 0x27BF,
            0x2B1B...0x2B1C, 0x2B50, 0x2B55, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
            0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x18CFF, 0x1B000...0x1B2FF, 0x1F004, 0x1F0CF, 0x1F18E,
            0x1F191...0x1F19A, 0x1F200...0x1F251, 0x1F300...0x1F320, 0x1F32D...0x1F335, 0x1F337...0x1F37C,
            0x1F37E...0x1F393, 0x1F3A0...0x1F3CA, 0x1F3CF...0x1F3D3, 0x1F3E0...0x1F3F0, 0x1F3F4, 0x1F3F8...0x1F43E,
            0x1F440, 0x1F442...0x1F4FC, 0x1F4FF...0x1F53D, 0x1F54B...0x1F54E, 0x1F550...0x1F567, 0x1F57A,
            0x1F595...0x1F596, 0x1F5A4, 0x1F5FB...0x1F64F, 0x1F680...0x1F6C5, 0x1F6CC, 0x1F6D0...0x1F6D2,
            0x1F6D5...0x1F6D7, 0x1F6EB...0x1F6EC, 0x1F6F4...0x1F6FC, 0x1F7E0...0x1F7EB, 0x1F90C...0x1F93A,
            0x1F93C...0x1F945, 0x1F947...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            true
        default:
            false
        }
    }
}

extension String {
    fileprivate var replacingTabs: String {
        split(separator: "\t", omittingEmptySubsequences: false).joined(separator: " ")
    }
}
