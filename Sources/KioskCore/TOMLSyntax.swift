/// A check of TOML 1.0's syntax (toml.io/en/v1.0.0, its ABNF), run on every TOML file kioskd
/// reads (profiles, web apps' manifests) before toml++ parses it.
///
/// toml++, under TOMLKit, is built with its assertions on, in release too (SwiftPM defines no
/// `NDEBUG`), and a few malformed documents reach an assertion instead of its own error — an
/// abort of kioskd on a file's contents. Rather than refuse each such shape as it is found, this
/// refuses every document that is not TOML by the grammar, with the position and a sentence,
/// so toml++ only ever sees well-formed text. It checks syntax only: what the grammar cannot
/// say (a key defined twice, a table redefined, a date's day in its month, a Unicode escape
/// outside the scalar values is said here) is toml++'s to refuse. It never refuses a document
/// toml++ reads: the tests hold it to that on every profile, manifest and fuzzing seed in the
/// repository.
struct TOMLSyntax {
    /// Where the first syntax error stands and what it is, or nil when `source` is TOML.
    static func firstError(in source: String) -> (position: SourcePosition, message: String)? {
        var check = TOMLSyntax(bytes: Array(source.utf8))
        do {
            try check.document()
            return nil
        } catch {
            return (check.position(of: error.offset), error.message)
        }
    }

    struct Failure: Error {
        var offset: Int
        var message: String
    }

    private let bytes: [UInt8]
    private var i = 0
    /// How many arrays and inline tables hold the value being read.
    private var depth = 0
    /// The most arrays and inline tables one value may sit in: toml++'s own limit
    /// (`TOML_MAX_NESTED_VALUES`), and a bound on this check's recursion, which kioskd runs on
    /// threads with small stacks.
    static let maxDepth = 256

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The line and column (in Unicode scalars, from 1) of the byte at `offset`.
    private func position(of offset: Int) -> SourcePosition {
        var line = 1, column = 1
        for byte in bytes[..<min(offset, bytes.count)] {
            if byte == Self.lf {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return SourcePosition(line: line, column: column)
    }

    // MARK: Bytes

    private static let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r"), tab = UInt8(ascii: "\t")
    private static let space = UInt8(ascii: " "), hash = UInt8(ascii: "#"), quote = UInt8(ascii: "\"")
    private static let apostrophe = UInt8(ascii: "'"), backslash = UInt8(ascii: "\\")

    private var current: UInt8? { i < bytes.count ? bytes[i] : nil }
    private func at(_ k: Int) -> UInt8? { k < bytes.count ? bytes[k] : nil }
    private var atEnd: Bool { i >= bytes.count }

    private func fail(_ message: String, at offset: Int? = nil) -> Failure {
        Failure(offset: offset ?? i, message: message)
    }

    /// What the byte at `i` is, for a message: `'x'`, or its code point when it is not printable.
    private var shown: String {
        guard let byte = current else { return "the end of the file" }
        if byte == Self.lf || byte == Self.cr { return "the end of the line" }
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return byte < 0x80 ? "U+\(hex(byte))" : "a non-ASCII character"
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "00" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xF)])
    }

    private mutating func skipBlanks() {
        while let byte = current, byte == Self.space || byte == Self.tab { i += 1 }
    }

    /// A line break (LF or CRLF) at `i`, consumed; a CR without LF is an error.
    private mutating func newline() throws(Failure) -> Bool {
        if current == Self.lf {
            i += 1
            return true
        }
        if current == Self.cr {
            guard at(i + 1) == Self.lf else { throw fail("a carriage return must be followed by a line feed") }
            i += 2
            return true
        }
        return false
    }

    /// A comment from `#` to the end of the line (not the line break).
    private mutating func comment() throws(Failure) {
        guard current == Self.hash else { return }
        i += 1
        while let byte = current, byte != Self.lf {
            if byte == Self.cr && at(i + 1) == Self.lf { return }
            if byte < 0x20 && byte != Self.tab || byte == 0x7F {
                throw fail("a control character (U+\(hex(byte))) is not allowed in a comment")
            }
            i += 1
        }
    }

    // MARK: The document

    private mutating func document() throws(Failure) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }  // a byte order mark
        while !atEnd {
            skipBlanks()
            if let byte = current, byte != Self.hash, byte != Self.lf, byte != Self.cr {
                if byte == UInt8(ascii: "[") { try tableHeader() } else { try keyValue() }
                skipBlanks()
            }
            try comment()
            if atEnd { return }
            guard try newline() else {
                throw fail("the line should end here, or a comment begin with '#'; found \(shown)")
            }
        }
    }

    /// `[key]` or `[[key]]`.
    private mutating func tableHeader() throws(Failure) {
        let start = i
        i += 1
        let array = current == UInt8(ascii: "[")
        if array { i += 1 }
        skipBlanks()
        guard let byte = current, Self.startsKey(byte) else {
            throw fail("a table header must start with its name ([name] or [[name]])", at: start)
        }
        try key()
        skipBlanks()
        guard current == UInt8(ascii: "]"), !array || at(i + 1) == UInt8(ascii: "]") else {
            throw fail(
                array ? "']]' was expected to close the table header" : "']' was expected to close the table header")
        }
        i += array ? 2 : 1
    }

    /// `key = value`.
    private mutating func keyValue() throws(Failure) {
        try key()
        skipBlanks()
        guard current == UInt8(ascii: "=") else { throw fail("'=' was expected after the key; found \(shown)") }
        i += 1
        skipBlanks()
        try value()
    }

    private static func startsKey(_ byte: UInt8) -> Bool {
        isBareKeyByte(byte) || byte == quote || byte == apostrophe
    }

    private static func isBareKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    /// A simple or dotted key.
    private mutating func key() throws(Failure) {
        while true {
            switch current {
            case Self.quote?:
                if at(i + 1) == Self.quote && at(i + 2) == Self.quote {
                    throw fail("a key cannot be a multi-line string")
                }
                try string(Self.quote)
            case Self.apostrophe?:
                if at(i + 1) == Self.apostrophe && at(i + 2) == Self.apostrophe {
                    throw fail("a key cannot be a multi-line string")
                }
                try string(Self.apostrophe)
            case let byte? where Self.isBareKeyByte(byte):
                while let byte = current, Self.isBareKeyByte(byte) { i += 1 }
            default:
                throw fail("a key was expected here; found \(shown)")
            }
            let afterKey = i
            skipBlanks()
            guard current == UInt8(ascii: ".") else {
                i = afterKey
                return
            }
            i += 1
            skipBlanks()
        }
    }

    // MARK: Values

    private mutating func value() throws(Failure) {
        guard let byte = current else { throw fail("a value was expected here; found the end of the file") }
        switch byte {
        case Self.quote:
            if at(i + 1) == Self.quote && at(i + 2) == Self.quote {
                try multiLineString(Self.quote)
            } else {
                try string(Self.quote)
            }
        case Self.apostrophe:
            if at(i + 1) == Self.apostrophe && at(i + 2) == Self.apostrophe {
                try multiLineString(Self.apostrophe)
            } else {
                try string(Self.apostrophe)
            }
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            guard depth < Self.maxDepth else {
                throw fail("arrays and inline tables may hold one another at most \(Self.maxDepth) deep")
            }
            depth += 1
            defer { depth -= 1 }
            if byte == UInt8(ascii: "[") { try array() } else { try inlineTable() }
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            let word = byte == UInt8(ascii: "t") ? "true" : "false"
            guard bytes[i...].starts(with: word.utf8) else { throw fail("a value was expected here; found \(shown)") }
            i += word.utf8.count
            if let next = current, Self.isBareKeyByte(next) {
                throw fail("a value was expected here; found '\(word)' and more")
            }
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "i"),
            UInt8(ascii: "n"):
            try numberOrDate()
        case UInt8(ascii: "}"):
            throw fail("a value was expected here, not '}'")
        default:
            throw fail("a value was expected here; found \(shown)")
        }
    }

    /// `[ value, value, ]`, across lines, with comments.
    private mutating func array() throws(Failure) {
        let start = i
        i += 1
        while true {
            try blanksCommentsAndNewlines()
            if atEnd { throw fail("the array is not closed", at: start) }
            if current == UInt8(ascii: "]") {
                i += 1
                return
            }
            try value()
            try blanksCommentsAndNewlines()
            if atEnd { throw fail("the array is not closed", at: start) }
            switch current {
            case UInt8(ascii: ",")?:
                i += 1
            case UInt8(ascii: "]")?:
                i += 1
                return
            default:
                throw fail("',' or ']' was expected in the array; found \(shown)")
            }
        }
    }

    private mutating func blanksCommentsAndNewlines() throws(Failure) {
        while true {
            skipBlanks()
            try comment()
            guard try newline() else { return }
        }
    }

    /// `{ key = value, key = value }`, on one line, no comma after the last.
    private mutating func inlineTable() throws(Failure) {
        i += 1
        skipBlanks()
        if current == UInt8(ascii: "}") {
            i += 1
            return
        }
        while true {
            skipBlanks()
            if current == Self.lf || current == Self.cr || current == Self.hash {
                throw fail("an inline table must be written on one line, with no comment inside")
            }
            try keyValue()
            skipBlanks()
            switch current {
            case UInt8(ascii: ",")?:
                i += 1
                skipBlanks()
                if current == UInt8(ascii: "}") { throw fail("an inline table cannot end with ','") }
            case UInt8(ascii: "}")?:
                i += 1
                return
            case Self.lf?, Self.cr?, Self.hash?:
                throw fail("an inline table must be written on one line, with no comment inside")
            default:
                throw fail("',' or '}' was expected in the inline table; found \(shown)")
            }
        }
    }

    // MARK: Strings

    /// `"…"` with escapes, or `'…'` without (`quote`), on one line.
    private mutating func string(_ quote: UInt8) throws(Failure) {
        let start = i
        i += 1
        while true {
            guard let byte = current else { throw fail("the string is not closed", at: start) }
            switch byte {
            case quote:
                i += 1
                return
            case Self.backslash where quote == Self.quote:
                try escape()
            case Self.lf, Self.cr:
                let more = String(repeating: Character(Unicode.Scalar(quote)), count: 3)
                throw fail("a string must end on its line (use \(more) for more lines)", at: start)
            default:
                try stringCharacter(byte)
            }
        }
    }

    /// A multi-line string: three double quotes with escapes and line-ending backslashes, or three
    /// single quotes without (`quote`).
    private mutating func multiLineString(_ quote: UInt8) throws(Failure) {
        let start = i
        i += 3
        while true {
            guard let byte = current else { throw fail("the string is not closed", at: start) }
            switch byte {
            case quote where at(i + 1) == quote && at(i + 2) == quote:
                i += 3
                // Up to two quotes more belong to the string ("""a""""" is `a""`).
                for _ in 0..<2 where current == quote { i += 1 }
                return
            case Self.backslash where quote == Self.quote:
                var k = i + 1
                while let b = at(k), b == Self.space || b == Self.tab { k += 1 }
                if at(k) == Self.lf || at(k) == Self.cr && at(k + 1) == Self.lf {
                    i = k  // a line-ending backslash: the break and the blanks after it go
                } else {
                    try escape()
                }
            case Self.lf, Self.cr:
                _ = try newline()
            default:
                try stringCharacter(byte)
            }
        }
    }

    /// A character in a string: a control character other than tab is refused.
    private mutating func stringCharacter(_ byte: UInt8) throws(Failure) {
        if byte < 0x20 && byte != Self.tab || byte == 0x7F {
            throw fail("a control character (U+\(hex(byte))) must be escaped in a string")
        }
        i += 1
    }

    /// `\b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX`.
    private mutating func escape() throws(Failure) {
        let start = i
        i += 1
        guard let byte = current else { throw fail("the string is not closed", at: start) }
        switch byte {
        case UInt8(ascii: "b"), UInt8(ascii: "t"), UInt8(ascii: "n"), UInt8(ascii: "f"), UInt8(ascii: "r"),
            Self.quote, Self.backslash:
            i += 1
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = byte == UInt8(ascii: "u") ? 4 : 8
            var scalar: UInt32 = 0
            for k in 1...count {
                guard let digit = at(i + k).flatMap(Self.hexValue) else {
                    throw fail("\\\(Character(Unicode.Scalar(byte))) takes \(count) hexadecimal digits", at: start)
                }
                scalar = scalar &* 16 &+ UInt32(digit)
            }
            guard Unicode.Scalar(scalar) != nil else {
                throw fail(
                    "the escape names no Unicode scalar value (surrogates and above U+10FFFF are none)", at: start)
            }
            i += 1 + count
        default:
            throw fail(
                "'\\' begins no escape TOML knows here (\\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX)", at: start)
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: Numbers, dates and times

    /// An integer, a float, or a date and time: the run of characters they are written with,
    /// checked against their forms.
    private mutating func numberOrDate() throws(Failure) {
        let start = i
        func isTokenByte(_ b: UInt8) -> Bool {
            isBareKeyByte(b) || b == UInt8(ascii: "+") || b == UInt8(ascii: ".") || b == UInt8(ascii: ":")
        }
        func isBareKeyByte(_ b: UInt8) -> Bool { Self.isBareKeyByte(b) }
        while let byte = current, isTokenByte(byte) { i += 1 }
        // A date and a time may be separated by a space: `1979-05-27 07:32:00`.
        if i - start == 10, Self.isFullDate(bytes[start..<i]), current == Self.space,
            let a = at(i + 1), let b = at(i + 2), Self.isDigit(a), Self.isDigit(b), at(i + 3) == UInt8(ascii: ":")
        {
            i += 1
            while let byte = current, isTokenByte(byte) { i += 1 }
        }
        let token = bytes[start..<i]
        guard Self.isNumber(token) || Self.isDateTime(token) else {
            let text = String(decoding: token.prefix(40), as: UTF8.self)
            throw fail("'\(text)' is not a number, a date or a time as TOML writes them", at: start)
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// `digits` with single underscores between digits: `1_000`.
    private static func isDigits(_ s: ArraySlice<UInt8>, _ isDigit: (UInt8) -> Bool) -> Bool {
        guard let first = s.first, let last = s.last, isDigit(first), isDigit(last) else { return false }
        var previous: UInt8 = 0
        for byte in s {
            if byte == UInt8(ascii: "_") {
                if previous == UInt8(ascii: "_") { return false }
            } else if !isDigit(byte) {
                return false
            }
            previous = byte
        }
        return true
    }

    /// An integer or a float.
    private static func isNumber(_ token: ArraySlice<UInt8>) -> Bool {
        var s = token
        if s.starts(with: "0x".utf8) { return isDigits(s.dropFirst(2)) { hexValue($0) != nil } }
        if s.starts(with: "0o".utf8) {
            return isDigits(s.dropFirst(2)) { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "7") }
        }
        if s.starts(with: "0b".utf8) {
            return isDigits(s.dropFirst(2)) { $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: "1") }
        }
        if s.first == UInt8(ascii: "+") || s.first == UInt8(ascii: "-") { s = s.dropFirst() }
        if s.elementsEqual("inf".utf8) || s.elementsEqual("nan".utf8) { return true }
        // The integer part: 0, or digits not starting with 0.
        let integerEnd =
            s.firstIndex { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") } ?? s.endIndex
        let integer = s[..<integerEnd]
        guard isDigits(integer, isDigit), integer.count == 1 || integer.first != UInt8(ascii: "0") else { return false }
        var rest = s[integerEnd...]
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            let fractionEnd = rest.firstIndex { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") } ?? rest.endIndex
            guard isDigits(rest[..<fractionEnd], isDigit) else { return false }
            rest = rest[fractionEnd...]
        }
        if let e = rest.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            rest = rest.dropFirst()
            if rest.first == UInt8(ascii: "+") || rest.first == UInt8(ascii: "-") { rest = rest.dropFirst() }
            return isDigits(rest, isDigit)
        }
        return rest.isEmpty
    }

    /// `YYYY-MM-DD`.
    private static func isFullDate(_ s: ArraySlice<UInt8>) -> Bool {
        let a = Array(s)
        return a.count == 10 && a[4] == UInt8(ascii: "-") && a[7] == UInt8(ascii: "-")
            && [0, 1, 2, 3, 5, 6, 8, 9].allSatisfy { isDigit(a[$0]) }
    }

    /// `HH:MM:SS` with an optional fraction `.digits`; returns what follows, or nil.
    private static func partialTimeRest(_ s: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let a = Array(s.prefix(8))
        guard a.count == 8, a[2] == UInt8(ascii: ":"), a[5] == UInt8(ascii: ":"),
            [0, 1, 3, 4, 6, 7].allSatisfy({ isDigit(a[$0]) })
        else { return nil }
        var rest = s.dropFirst(8)
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            let digits = rest.prefix(while: isDigit)
            guard !digits.isEmpty else { return nil }
            rest = rest.dropFirst(digits.count)
        }
        return rest
    }

    /// A local date, a local time, a local date-time or an offset date-time.
    private static func isDateTime(_ token: ArraySlice<UInt8>) -> Bool {
        if let rest = partialTimeRest(token) { return rest.isEmpty }  // a local time
        guard isFullDate(token.prefix(10)) else { return false }
        var rest = token.dropFirst(10)
        if rest.isEmpty { return true }  // a local date
        guard let delimiter = rest.first,
            delimiter == UInt8(ascii: "T") || delimiter == UInt8(ascii: "t") || delimiter == space
        else { return false }
        guard let afterTime = partialTimeRest(rest.dropFirst()) else { return false }
        rest = afterTime
        if rest.isEmpty { return true }  // a local date-time
        if rest.elementsEqual("Z".utf8) || rest.elementsEqual("z".utf8) { return true }
        let offset = Array(rest)
        return offset.count == 6 && (offset[0] == UInt8(ascii: "+") || offset[0] == UInt8(ascii: "-"))
            && offset[3] == UInt8(ascii: ":") && [1, 2, 4, 5].allSatisfy { isDigit(offset[$0]) }
    }
}
