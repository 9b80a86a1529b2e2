/// Fitting free text (titles, detail texts) into a terminal: words wrapped at a width, line
/// breaks in the text kept, and long texts cut to a few lines ending in "…".
///
/// Widths count characters (grapheme clusters), which is one column for the scripts kiosks
/// usually show; a wide CJK character or emoji takes two and may overflow by a little.
enum TextLayout {
    /// The lines of `text` wrapped at `width` columns; at most `maxLines` (the last one then
    /// ends in "…"), or all of them when `maxLines` is nil. A word longer than the width is
    /// split. Tabs count as one space.
    static func wrap(_ text: String, width: Int, maxLines: Int? = nil) -> [String] {
        let width = max(width, 10)
        var lines: [String] = []
        for paragraph in text.replacingTabs.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: true) {
                var word = Substring(word)
                if !line.isEmpty && line.count + 1 + word.count <= width {
                    line += " " + word
                    continue
                }
                if !line.isEmpty { lines.append(line) }
                while word.count > width {
                    lines.append(String(word.prefix(width)))
                    word = word.dropFirst(width)
                }
                line = String(word)
            }
            lines.append(line)
        }
        while lines.count > 1 && lines.last?.isEmpty == true { lines.removeLast() }
        guard let maxLines, lines.count > maxLines else { return lines }
        var kept = Array(lines.prefix(maxLines))
        var last = kept[maxLines - 1]
        if last.count >= width { last = String(last.prefix(width - 1)) }
        kept[maxLines - 1] = last + "…"
        return kept
    }

    /// `text` padded with spaces to `width` columns (never cut).
    static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    /// `text` right-aligned in `width` columns.
    static func rightAligned(_ text: String, in width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}

extension String {
    fileprivate var replacingTabs: String { split(separator: "\t", omittingEmptySubsequences: false).joined(separator: " ") }
}
