/// Rewrites the locked touch regions of a profile's TOML text and leaves every other byte as
/// the admin wrote it: comments, key order, spacing, the other tables (docs/profiles.md
/// § Editing regions at the kiosk).
///
/// The edit is by lines, not by re-serialising a parsed document (which would drop comments
/// and reorder keys): each `[[touch.locked-region]]` table (with the comment lines directly
/// above its header, and its sub-tables) is a block; the blocks are taken out and the new list
/// is put where the first one stood — a kept region as its own original text, a new one as
/// three generated lines — and `[touch] mode` is set to what the regions need. The result is
/// parsed again and must hold exactly the regions asked for, or nothing is returned.
public enum ProfileRegionEdit {
    /// One region of the edited profile.
    public enum Region: Hashable, Sendable {
        /// The profile's own region at this index (0-based, in file order), kept as written.
        case kept(Int)
        /// A region that is not in the file yet (drawn at the kiosk). Its numbers are written with
        /// 4 decimals (a ten-thousandth of the screen: under a pixel of a 4K panel).
        case new(Profile.Region)
    }

    /// Why the edit was not made; the text is unchanged.
    public struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
        init(_ message: String) { self.message = message }
    }

    /// `source` with its locked regions replaced by `regions`, in that order. With no regions
    /// left a `mode = "regions"` becomes `mode = "all"` (touch works everywhere); with some, the
    /// mode becomes `"regions"`. Refused: a source that does not parse, a `touch.mode = "none"`
    /// (all touch is locked: drawing would unlock it), regions written in a form other than
    /// `[[touch.locked-region]]` tables, a kept index that is not in the file, and a result
    /// that does not parse or does not hold `regions`.
    public static func apply(_ regions: [Region], to source: String, file: String) throws(Refusal) -> String {
        let before: Profile
        do {
            before = try ProfileParser.parse(source: source, file: file)
        } catch {
            throw Refusal("\(file) has errors; the regions were not changed:\n\(error.description)")
        }
        if before.touch.mode == .none {
            throw Refusal(
                "\(file) locks all touch (touch.mode = \"none\"); drawing regions would unlock the rest of the screen. Set the mode by hand first."
            )
        }
        var wanted: [Profile.Region] = []
        for region in regions {
            switch region {
            case .kept(let index):
                guard before.touch.lockedRegions.indices.contains(index) else {
                    throw Refusal("\(file) has no region \(index + 1) to keep (it has \(before.touch.lockedRegions.count))")
                }
                wanted.append(before.touch.lockedRegions[index])
            case .new(let drawn):
                wanted.append(Profile.Region(name: drawn.name, shape: rounded(drawn.shape)))
            }
        }

        let document = Document(source)
        let blocks = document.regionBlocks
        if regions.isEmpty, blocks.isEmpty, before.touch.lockedRegions.isEmpty { return source }
        guard blocks.count == before.touch.lockedRegions.count else {
            throw Refusal(
                "\(file) writes touch.locked-region in a form this edit does not rewrite; write each region as a [[touch.locked-region]] table"
            )
        }
        var lines = document.lines
        // The regions' text, in the new order.
        // A blank line goes between two regions that were not next to each other as written.
        var inserted: [String] = []
        var previous: Int?
        var endsWithNew = false
        for (n, region) in regions.enumerated() {
            switch region {
            case .kept(let index):
                let adjacent = previous == index - 1 && index > 0 && blocks[index - 1].upperBound == blocks[index].lowerBound
                if !adjacent, let last = inserted.last, !Document.isBlank(last) { inserted.append("\n") }
                inserted += lines[blocks[index]]
                previous = index
                endsWithNew = false
            case .new:
                if let last = inserted.last, !Document.isBlank(last) { inserted.append("\n") }
                inserted += regionLines(wanted[n])
                inserted.append("\n")
                previous = nil
                endsWithNew = true
            }
        }
        // Where the first region stood, or after the [touch] table's last key; else a new table.
        var anchor: Int
        if let first = blocks.first {
            anchor = first.lowerBound
            for block in blocks.reversed() { lines.removeSubrange(block) }
        } else if let touch = document.touchTable {
            anchor = touch.upperBound
            while anchor > touch.lowerBound + 1, Document.isBlank(lines[anchor - 1]) { anchor -= 1 }
            if !inserted.isEmpty {
                if anchor == lines.count, let last = lines.last, !last.hasSuffix("\n") { lines[anchor - 1] += "\n" }
                inserted.insert("\n", at: 0)
            }
        } else if document.mentionsTouchOutsideTables {
            throw Refusal(
                "\(file) sets touch keys outside a [touch] table; write them under [touch] to draw regions"
            )
        } else {
            if let last = lines.last, !last.hasSuffix("\n") { lines[lines.count - 1] += "\n" }
            if let last = lines.last, !Document.isBlank(last) { lines.append("\n") }
            lines.append("[touch]\n")
            lines.append("mode = \"regions\"\n")
            anchor = lines.count
            if !inserted.isEmpty { inserted.insert("\n", at: 0) }
        }
        // A new region's blank line is left out where a blank line or the end of the file follows.
        if endsWithNew, anchor == lines.count || Document.isBlank(lines[anchor]) {
            inserted.removeLast()
        }
        lines.insert(contentsOf: inserted, at: anchor)

        var text = lines.joined()
        let mode: Profile.TouchMode = wanted.isEmpty ? (before.touch.mode == .regions ? .all : before.touch.mode) : .regions
        if mode != before.touch.mode {
            text = try Document(text).settingTouchMode(mode, file: file)
        }

        let after: Profile
        do {
            after = try ProfileParser.parse(source: text, file: file)
        } catch {
            throw Refusal("The edited \(file) would not be a valid profile; nothing was written:\n\(error.description)")
        }
        guard after.touch.lockedRegions == wanted, after.touch.mode == mode else {
            throw Refusal("The edited \(file) would not hold the regions asked for; nothing was written")
        }
        guard withoutRegions(after) == withoutRegions(before) else {
            throw Refusal("The edit would change more of \(file) than its regions; nothing was written")
        }
        return text
    }

    /// `profile` without what a region edit changes: the touch table, and the source lines
    /// that the regions' lines move.
    private static func withoutRegions(_ profile: Profile) -> Profile {
        var profile = profile
        profile.touch.mode = .all
        profile.touch.lockedRegions = []
        for i in profile.devices.indices { profile.devices[i].line = 0 }
        return profile
    }

    // MARK: writing a region

    /// A shape as it will read back: every number rounded to 4 decimals; a rect by its edges,
    /// so that rounding never pushes it past the right or bottom edge.
    static func rounded(_ shape: Profile.Shape) -> Profile.Shape {
        switch shape {
        case .rect(let x, let y, let width, let height):
            let x0 = round4(x), y0 = round4(y)
            let x1 = min(1, round4(x + width)), y1 = min(1, round4(y + height))
            return .rect(x: x0, y: y0, width: round4(x1 - x0), height: round4(y1 - y0))
        case .polygon(let points):
            return .polygon(points.map { Profile.Point(x: round4($0.x), y: round4($0.y)) })
        }
    }

    static func round4(_ value: Double) -> Double {
        Double(fixed(value)) ?? 0
    }

    /// `value` (0 to 1) with at most 4 decimals and at least one: `0.9`, `0.125`, `1.0`.
    static func fixed(_ value: Double) -> String {
        let units = Int((max(0, min(1, value)) * 10_000).rounded())
        var fraction = String(units % 10_000)
        fraction = String(repeating: "0", count: 4 - fraction.count) + fraction
        while fraction.count > 1, fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(units / 10_000).\(fraction)"
    }

    static func regionLines(_ region: Profile.Region) -> [String] {
        var lines = ["[[touch.locked-region]]\n", "name = \(basicString(region.name))\n"]
        switch region.shape {
        case .rect(let x, let y, let width, let height):
            lines.append(
                "rect = { x = \(fixed(x)), y = \(fixed(y)), width = \(fixed(width)), height = \(fixed(height)) }\n")
        case .polygon(let points):
            let list = points.map { "[\(fixed($0.x)), \(fixed($0.y))]" }.joined(separator: ", ")
            lines.append("polygon = [\(list)]\n")
        }
        return lines
    }

    /// A TOML basic string: `"` and `\` escaped, control characters as `\uXXXX`.
    static func basicString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

// MARK: - The text, as lines and tables

extension ProfileRegionEdit {
    /// A profile's text split into lines (each with its own line ending), and what each line is:
    /// which table it belongs to, and whether it is a header. Strings and multi-line arrays are
    /// followed, so a `[` inside them is never taken for a header.
    struct Document {
        let lines: [String]
        /// Per line: the header's table name (`touch.locked-region` for `[[touch.locked-region]]`)
        /// if the line is a table header.
        private(set) var headers: [String?] = []
        /// Per line: whether it starts at the top level of its table (not inside a string or a
        /// bracket that an earlier line opened).
        private(set) var topLevel: [Bool] = []

        init(_ source: String) {
            var lines: [String] = []
            var current = ""
            for character in source {
                current.append(character)
                if character == "\n" || character == "\r\n" {
                    lines.append(current)
                    current = ""
                }
            }
            if !current.isEmpty { lines.append(current) }
            self.lines = lines
            var scanner = Scanner()
            for line in lines {
                let atTop = scanner.atTopLevel
                topLevel.append(atTop)
                headers.append(atTop ? Self.headerName(line) : nil)
                scanner.scan(line)
            }
        }

        static func isBlank(_ line: String) -> Bool {
            line.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        }

        static func isComment(_ line: String) -> Bool {
            line.drop { $0 == " " || $0 == "\t" }.first == "#"
        }

        /// `touch.locked-region` for `[[ touch."locked-region" ]]  # …`; nil if `line` is no header.
        static func headerName(_ line: String) -> String? {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            guard trimmed.first == "[" else { return nil }
            var name = ""
            var quote: Character?
            for character in trimmed.drop(while: { $0 == "[" }) {
                if let q = quote {
                    if character == q { quote = nil } else { name.append(character) }
                } else if character == "\"" || character == "'" {
                    quote = character
                } else if character == "]" {
                    return name
                } else if character != " " && character != "\t" {
                    name.append(character)
                }
            }
            return nil
        }

        /// The lines of each `[[touch.locked-region]]` table, in file order: from the comment
        /// lines directly above its header (no blank line between) to the next header that is
        /// not one of its sub-tables, blank lines after it included.
        var regionBlocks: [Range<Int>] {
            var blocks: [Range<Int>] = []
            var open: Int?
            for (i, name) in headers.enumerated() {
                guard let name else { continue }
                if name.hasPrefix("touch.locked-region.") { continue }  // [touch.locked-region.rect]
                if let start = open {
                    blocks.append(start..<attachedStart(i))
                    open = nil
                }
                if name == "touch.locked-region" { open = attachedStart(i) }
            }
            if let start = open { blocks.append(start..<lines.count) }
            return blocks
        }

        /// Where the table whose header is on `line` starts, with the comment lines directly
        /// above it (those describe it).
        private func attachedStart(_ line: Int) -> Int {
            var start = line
            while start > 0, topLevel[start - 1], headers[start - 1] == nil, Self.isComment(lines[start - 1]) {
                start -= 1
            }
            return start
        }

        /// The `[touch]` table: its header line to the next header (the comments above that
        /// header left out).
        var touchTable: Range<Int>? {
            guard let header = headers.firstIndex(where: { $0 == "touch" }) else { return nil }
            var end = lines.count
            if let next = headers[(header + 1)...].firstIndex(where: { $0 != nil }) { end = attachedStart(next) }
            return header..<end
        }

        /// A `touch` key written at the top level (`touch.mode = …`, `touch = { … }`).
        var mentionsTouchOutsideTables: Bool {
            for (i, line) in lines.enumerated() {
                if headers[i] != nil { return false }  // the first table starts: the root is over
                guard topLevel[i] else { continue }
                let key = line.drop { $0 == " " || $0 == "\t" }
                if key.hasPrefix("touch") || key.hasPrefix("\"touch\"") { return true }
            }
            return false
        }

        /// The line of `[touch] mode`, and where its value is in that line.
        private var touchMode: (line: Int, value: Range<String.Index>)? {
            guard let table = touchTable else { return nil }
            for i in (table.lowerBound + 1)..<table.upperBound where topLevel[i] {
                let line = lines[i]
                var index = line.firstIndex { $0 != " " && $0 != "\t" } ?? line.endIndex
                let key = ["mode", "\"mode\"", "'mode'"].first { line[index...].hasPrefix($0) }
                guard let key else { continue }
                index = line.index(index, offsetBy: key.count)
                index = line[index...].firstIndex { $0 != " " && $0 != "\t" } ?? line.endIndex
                guard index < line.endIndex, line[index] == "=" else { continue }
                index = line.index(after: index)
                let start = line[index...].firstIndex { $0 != " " && $0 != "\t" } ?? line.endIndex
                guard start < line.endIndex, let quote = Optional(line[start]), quote == "\"" || quote == "'",
                    let close = line[line.index(after: start)...].firstIndex(of: quote)
                else { return nil }
                return (i, start..<line.index(after: close))
            }
            return nil
        }

        /// The text with `[touch] mode` set to `mode`: its value replaced in place (the rest of
        /// the line, a comment too, kept), or a `mode` line put right under `[touch]`.
        func settingTouchMode(_ mode: Profile.TouchMode, file: String) throws(Refusal) -> String {
            var lines = lines
            if let (i, value) = touchMode {
                // A comment after the value keeps its column where the spaces allow.
                let line = lines[i]
                let new = "\"\(mode.rawValue)\""
                let old = line[value].count
                let spaces = line[value.upperBound...].prefix { $0 == " " }.count
                var end = value.upperBound
                var pad = ""
                if line[value.upperBound...].dropFirst(spaces).first == "#" {
                    if new.count > old {
                        end = line.index(end, offsetBy: min(new.count - old, spaces - 1))
                    } else {
                        pad = String(repeating: " ", count: old - new.count)
                    }
                }
                lines[i].replaceSubrange(value.lowerBound..<end, with: new + pad)
            } else if let table = touchTable {
                if !lines[table.lowerBound].hasSuffix("\n") { lines[table.lowerBound] += "\n" }
                lines.insert("mode = \"\(mode.rawValue)\"\n", at: table.lowerBound + 1)
            } else {
                throw Refusal("\(file) has no [touch] table to set the mode in")
            }
            return lines.joined()
        }
    }

    /// Follows strings, comments and brackets across lines, to tell where a line starts.
    struct Scanner {
        private enum Mode { case code, basic, literal, multiBasic, multiLiteral }
        private var mode = Mode.code
        private var depth = 0

        var atTopLevel: Bool { mode == .code && depth == 0 }

        mutating func scan(_ line: String) {
            let s = Array(line.unicodeScalars)
            var i = 0
            func at(_ text: String) -> Bool {
                let t = Array(text.unicodeScalars)
                return i + t.count <= s.count && Array(s[i..<(i + t.count)]) == t
            }
            while i < s.count {
                switch mode {
                case .code:
                    if s[i] == "#" { return }
                    if at("\"\"\"") {
                        mode = .multiBasic
                        i += 3
                        continue
                    }
                    if at("'''") {
                        mode = .multiLiteral
                        i += 3
                        continue
                    }
                    if s[i] == "\"" { mode = .basic }
                    if s[i] == "'" { mode = .literal }
                    // A header's brackets close on its own line; a value's may run on.
                    if s[i] == "[" || s[i] == "{" { depth += 1 }
                    if s[i] == "]" || s[i] == "}" { depth = max(0, depth - 1) }
                case .basic:
                    if s[i] == "\\" {
                        i += 2
                        continue
                    }
                    if s[i] == "\"" { mode = .code }
                    if s[i] == "\n" { mode = .code }  // not valid TOML; the parser said so already
                case .literal:
                    if s[i] == "'" || s[i] == "\n" { mode = .code }
                case .multiBasic:
                    if s[i] == "\\" {
                        i += 2
                        continue
                    }
                    if at("\"\"\"") {
                        mode = .code
                        i += 3
                        // Up to two more quotes belong to the string's content.
                        while i < s.count, s[i] == "\"" { i += 1 }
                        continue
                    }
                case .multiLiteral:
                    if at("'''") {
                        mode = .code
                        i += 3
                        while i < s.count, s[i] == "'" { i += 1 }
                        continue
                    }
                }
                i += 1
            }
        }
    }
}
