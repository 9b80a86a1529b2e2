/// A position in a source file, 1-based, columns counted in Unicode scalars.
public struct SourcePosition: Hashable, Comparable, Sendable, Codable {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public static func < (a: SourcePosition, b: SourcePosition) -> Bool {
        (a.line, a.column) < (b.line, b.column)
    }
}

/// One step of a path into a TOML document: a table key or an array index.
enum TOMLPathComponent: Hashable, Sendable, CustomStringConvertible {
    case key(String)
    case index(Int)

    var description: String {
        switch self {
        case .key(let key): key
        case .index(let index): "[\(index)]"
        }
    }
}

typealias TOMLPath = [TOMLPathComponent]

/// Where each key and value of a TOML document stands in its source.
///
/// TOMLKit parses the document but keeps no positions, so this scanner walks the same text
/// once more and records, for every path (`touch.locked-region[0].rect.x`), where its key
/// and its value begin. It runs only on text TOMLKit has already accepted, so it can take
/// the grammar's validity for granted; it never fails, at worst it knows fewer positions, and
/// it always moves on: text it does not understand is stepped over, so no text can hold it.
struct TOMLSourceMap {
    private(set) var keys: [TOMLPath: SourcePosition] = [:]
    private(set) var values: [TOMLPath: SourcePosition] = [:]

    /// Where the key of `path` is written, else where its value starts, else where the nearest
    /// enclosing path is, else the start of the file.
    func position(of path: TOMLPath) -> SourcePosition {
        var path = path
        while true {
            if let p = keys[path] ?? values[path] { return p }
            if path.isEmpty { return SourcePosition(line: 1, column: 1) }
            path.removeLast()
        }
    }

    /// Where the value of `path` starts (falling back as ``position(of:)`` does).
    func valuePosition(of path: TOMLPath) -> SourcePosition {
        values[path] ?? position(of: path)
    }

    init(source: String) {
        var scanner = Scanner(Array(source.unicodeScalars))
        if scanner.peek == "\u{FEFF}" { scanner.offset = 1 }  // a byte order mark, as toml++ skips it
        var table: TOMLPath = []
        var arrayTableCounts: [TOMLPath: Int] = [:]
        while !scanner.atEnd {
            scanner.skipBlank()
            guard let c = scanner.peek else { break }
            if c == "\n" || c == "#" {
                scanner.skipToNextLine()
                continue
            }
            if c == "[" {
                let isArrayTable = scanner.peek(1) == "["
                let start = scanner.position
                scanner.advance(isArrayTable ? 2 : 1)
                var path: TOMLPath = []
                for (key, _) in scanner.dottedKey() { path.append(.key(key)) }
                if isArrayTable {
                    let index = arrayTableCounts[path, default: 0]
                    arrayTableCounts[path] = index + 1
                    // Tables nested under an earlier array element start counting anew.
                    for known in arrayTableCounts.keys where known.count > path.count && known.starts(with: path) {
                        arrayTableCounts[known] = nil
                    }
                    keys[path] = keys[path] ?? start
                    path.append(.index(index))
                }
                keys[path] = start
                table = path
                scanner.skipToNextLine()
                continue
            }
            recordKeyValue(&scanner, in: table)
            scanner.skipToNextLine()
        }
    }

    private mutating func recordKeyValue(_ scanner: inout Scanner, in table: TOMLPath) {
        var path = table
        for (key, position) in scanner.dottedKey() {
            path.append(.key(key))
            if keys[path] == nil { keys[path] = position }
        }
        scanner.skipBlank()
        if scanner.peek == "=" { scanner.advance(1) }
        recordValue(&scanner, at: path)
    }

    private mutating func recordValue(_ scanner: inout Scanner, at path: TOMLPath) {
        scanner.skipBlank()
        values[path] = scanner.position
        switch scanner.peek {
        case "{":
            scanner.advance(1)
            while !scanner.atEnd {
                scanner.skipBlankAndComments()
                if scanner.peek == "}" { scanner.advance(1); return }
                if scanner.peek == "," { scanner.advance(1); continue }
                let before = scanner.offset
                recordKeyValue(&scanner, in: path)
                if scanner.offset == before { scanner.advance(1) }  // text it does not know: on
            }
        case "[":
            scanner.advance(1)
            var index = 0
            while !scanner.atEnd {
                scanner.skipBlankAndComments()
                if scanner.peek == "]" { scanner.advance(1); return }
                if scanner.peek == "," { scanner.advance(1); continue }
                let before = scanner.offset
                recordValue(&scanner, at: path + [.index(index)])
                if scanner.offset == before { scanner.advance(1) }  // text it does not know: on
                index += 1
            }
        case "\"", "'":
            scanner.skipString()
        default:
            while let c = scanner.peek, !",]}#\n \t\r".unicodeScalars.contains(c) { scanner.advance(1) }
        }
    }

    private struct Scanner {
        let text: [Unicode.Scalar]
        var offset = 0
        var position = SourcePosition(line: 1, column: 1)

        init(_ text: [Unicode.Scalar]) { self.text = text }

        var atEnd: Bool { offset >= text.count }
        var peek: Unicode.Scalar? { offset < text.count ? text[offset] : nil }
        func peek(_ ahead: Int) -> Unicode.Scalar? { offset + ahead < text.count ? text[offset + ahead] : nil }

        mutating func advance(_ n: Int) {
            for _ in 0..<n where offset < text.count {
                if text[offset] == "\n" {
                    position.line += 1
                    position.column = 1
                } else {
                    position.column += 1
                }
                offset += 1
            }
        }

        mutating func skipBlank() {
            while let c = peek, c == " " || c == "\t" || c == "\r" { advance(1) }
        }

        mutating func skipBlankAndComments() {
            while let c = peek {
                if c == " " || c == "\t" || c == "\r" || c == "\n" {
                    advance(1)
                } else if c == "#" {
                    while peek != nil && peek != "\n" { advance(1) }
                } else {
                    return
                }
            }
        }

        /// Skips the rest of the line (a trailing comment included) and its line break.
        mutating func skipToNextLine() {
            while let c = peek {
                advance(1)
                if c == "\n" { return }
                if c == "\"" || c == "'" {
                    offset -= 1; position.column -= 1
                    skipString()
                }
            }
        }

        /// Reads `a.b."c d"` up to `=` or `]`, returning each part with where it starts.
        mutating func dottedKey() -> [(String, SourcePosition)] {
            var parts: [(String, SourcePosition)] = []
            while true {
                skipBlank()
                guard let c = peek, c != "=", c != "]", c != "\n" else { break }
                if c == "." { advance(1); continue }
                let start = position
                if c == "\"" || c == "'" {
                    parts.append((readQuotedKey(), start))
                } else {
                    var key = String.UnicodeScalarView()
                    while let d = peek, !" \t.=]\n\r".unicodeScalars.contains(d) { key.append(d); advance(1) }
                    parts.append((String(key), start))
                }
            }
            return parts
        }

        private mutating func readQuotedKey() -> String {
            let quote = peek!
            advance(1)
            var key = String.UnicodeScalarView()
            while let c = peek, c != quote {
                if quote == "\"" && c == "\\" {
                    advance(1)
                    key.append(readEscape())
                    continue
                }
                key.append(c)
                advance(1)
            }
            advance(1)
            return String(key)
        }

        private mutating func readEscape() -> Unicode.Scalar {
            guard let c = peek else { return "\\" }
            advance(1)
            switch c {
            case "n": return "\n"
            case "t": return "\t"
            case "r": return "\r"
            case "b": return "\u{8}"
            case "f": return "\u{C}"
            case "u", "U":
                var hex = ""
                for _ in 0..<(c == "u" ? 4 : 8) { if let d = peek { hex.unicodeScalars.append(d); advance(1) } }
                return UInt32(hex, radix: 16).flatMap(Unicode.Scalar.init) ?? "\u{FFFD}"
            default: return c
            }
        }

        /// Skips a basic, literal or multi-line string starting at the current quote.
        mutating func skipString() {
            guard let quote = peek else { return }
            let multiline = peek(1) == quote && peek(2) == quote
            advance(multiline ? 3 : 1)
            while let c = peek {
                if quote == "\"" && c == "\\" { advance(2); continue }
                if c == quote {
                    if !multiline { advance(1); return }
                    if peek(1) == quote && peek(2) == quote {
                        advance(3)
                        // Up to two more quotes may belong to the content.
                        while peek == quote { advance(1) }
                        return
                    }
                }
                if c == "\n" && !multiline { return }
                advance(1)
            }
        }
    }
}
