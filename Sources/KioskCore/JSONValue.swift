import KioskAPI

/// A JSON value with its objects' keys in order: what kioskd writes as a browser's policy, and
/// what it reads of the admin's Firefox `policies.json` to keep every key it does not own.
/// Numbers keep their text, so a value kioskd does not touch is written back as it was read.
public indirect enum JSONValue: Hashable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    /// A number, as its JSON text (`3`, `-1.5e3`).
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in order; no key twice.
    case object([Member])

    /// One member of an object.
    public struct Member: Hashable, Sendable {
        public var key: String
        public var value: JSONValue
        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// An integer.
    public static func int(_ value: Int) -> JSONValue { .number(String(value)) }

    /// An array of strings.
    public static func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }

    /// The value of `key`, when this is an object that has it.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The value as compact JSON text.
    public var description: String {
        var out = ""
        write(to: &out, indent: nil, level: 0)
        return out
    }

    /// The value as JSON text indented by two spaces, with a newline at the end: the files
    /// kioskd writes, for an admin to read.
    public var pretty: String {
        var out = ""
        write(to: &out, indent: "  ", level: 0)
        return out + "\n"
    }

    private func write(to out: inout String, indent: String?, level: Int) {
        let newline = indent.map { "\n" + String(repeating: $0, count: level + 1) } ?? ""
        let close = indent.map { "\n" + String(repeating: $0, count: level) } ?? ""
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): Self.quote(text, to: &out)
        case .array(let items):
            guard !items.isEmpty else { return out += "[]" }
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                out += newline
                item.write(to: &out, indent: indent, level: level + 1)
            }
            out += close + "]"
        case .object(let members):
            guard !members.isEmpty else { return out += "{}" }
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," }
                out += newline
                Self.quote(member.key, to: &out)
                out += indent == nil ? ":" : ": "
                member.value.write(to: &out, indent: indent, level: level + 1)
            }
            out += close + "}"
        }
    }

    private static func quote(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            // Valid JSON unescaped, but not in a JavaScript string literal before ES2019: a page
            // may embed the text (the bridge's events).
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    // MARK: Reading

    /// What is wrong with a JSON text, and at which byte offset.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var offset: Int
        public var message: String
        public var description: String { "at byte \(offset): \(message)" }
    }

    /// Reads one JSON value (RFC 8259), nested at most 128 deep; a key twice in one object is
    /// refused (a browser would keep one of them, and which is not for kioskd to guess).
    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> JSONValue {
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.offset == bytes.count else { throw reader.error("text after the value") }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        func error(_ message: String) -> ParseError { ParseError(offset: offset, message: message) }

        mutating func skipSpace() {
            while offset < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[offset]) { offset += 1 }
        }

        mutating func literal(_ word: String, _ value: JSONValue) throws(ParseError) -> JSONValue {
            let utf8 = Array(word.utf8)
            guard offset + utf8.count <= bytes.count, Array(bytes[offset..<offset + utf8.count]) == utf8 else {
                throw error("not a JSON value")
            }
            offset += utf8.count
            return value
        }

        mutating func value(depth: Int) throws(ParseError) -> JSONValue {
            guard depth < 128 else { throw error("nested more than 128 deep") }
            guard offset < bytes.count else { throw error("the text ends where a value should be") }
            switch bytes[offset] {
            case UInt8(ascii: "n"): return try literal("null", .null)
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "["):
                offset += 1
                var items: [JSONValue] = []
                skipSpace()
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
                    offset += 1
                    return .array(items)
                }
                while true {
                    skipSpace()
                    items.append(try value(depth: depth + 1))
                    skipSpace()
                    guard offset < bytes.count else { throw error("an array is not closed") }
                    if bytes[offset] == UInt8(ascii: "]") { break }
                    guard bytes[offset] == UInt8(ascii: ",") else { throw error("expected , or ] in an array") }
                    offset += 1
                }
                offset += 1
                return .array(items)
            case UInt8(ascii: "{"):
                offset += 1
                var members: [Member] = []
                skipSpace()
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
                    offset += 1
                    return .object(members)
                }
                while true {
                    skipSpace()
                    guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else {
                        throw error("expected a key in quotes")
                    }
                    let keyOffset = offset
                    let key = try string()
                    if members.contains(where: { $0.key == key }) {
                        throw ParseError(offset: keyOffset, message: "the key \(Text.quoted(key)) appears twice")
                    }
                    skipSpace()
                    guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else {
                        throw error("expected : after a key")
                    }
                    offset += 1
                    skipSpace()
                    members.append(Member(key, try value(depth: depth + 1)))
                    skipSpace()
                    guard offset < bytes.count else { throw error("an object is not closed") }
                    if bytes[offset] == UInt8(ascii: "}") { break }
                    guard bytes[offset] == UInt8(ascii: ",") else { throw error("expected , or } in an object") }
                    offset += 1
                }
                offset += 1
                return .object(members)
            default:
                return .number(try number())
            }
        }

        mutating func number() throws(ParseError) -> String {
            let start = offset
            func digits(_ reader: inout Reader) -> Int {
                let from = reader.offset
                while reader.offset < reader.bytes.count, (0x30...0x39).contains(reader.bytes[reader.offset]) {
                    reader.offset += 1
                }
                return reader.offset - from
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            let whole = digits(&self)
            guard whole > 0 else { throw ParseError(offset: start, message: "not a JSON value") }
            if whole > 1, bytes[offset - whole] == UInt8(ascii: "0") {
                throw ParseError(offset: start, message: "a number starts with 0")
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
                offset += 1
                guard digits(&self) > 0 else { throw error("a number has no digit after its .") }
            }
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
                offset += 1
                if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                    offset += 1
                }
                guard digits(&self) > 0 else { throw error("a number has no digit in its exponent") }
            }
            return String(decoding: bytes[start..<offset], as: UTF8.self)
        }

        mutating func hex4() throws(ParseError) -> UInt32 {
            guard offset + 4 <= bytes.count else { throw error("a \\u escape is cut short") }
            var value: UInt32 = 0
            for byte in bytes[offset..<offset + 4] {
                guard let digit = Character(UnicodeScalar(byte)).hexDigitValue else {
                    throw error("a \\u escape has a character that is not a hex digit")
                }
                value = value * 16 + UInt32(digit)
            }
            offset += 4
            return value
        }

        mutating func string() throws(ParseError) -> String {
            offset += 1  // the opening quote
            var scalars = String.UnicodeScalarView()
            var run = offset
            func flush(_ reader: Reader, to scalars: inout String.UnicodeScalarView) throws(ParseError) {
                guard run < reader.offset else { return }
                let slice = Array(reader.bytes[run..<reader.offset])
                guard let text = String(validating: slice, as: UTF8.self) else {
                    throw ParseError(offset: run, message: "a string is not valid UTF-8")
                }
                scalars.append(contentsOf: text.unicodeScalars)
            }
            while true {
                guard offset < bytes.count else { throw error("a string is not closed") }
                let byte = bytes[offset]
                if byte == UInt8(ascii: "\"") {
                    try flush(self, to: &scalars)
                    offset += 1
                    return String(scalars)
                }
                guard byte >= 0x20 else { throw error("a string holds a control character") }
                if byte != UInt8(ascii: "\\") {
                    offset += 1
                    continue
                }
                try flush(self, to: &scalars)
                offset += 1
                guard offset < bytes.count else { throw error("a string is not closed") }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{c}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard offset + 6 <= bytes.count, bytes[offset] == UInt8(ascii: "\\"),
                            bytes[offset + 1] == UInt8(ascii: "u")
                        else { throw error("a \\u escape holds half a surrogate pair") }
                        offset += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else {
                            throw error("a \\u escape holds half a surrogate pair")
                        }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else {
                        throw error("a \\u escape holds half a surrogate pair")
                    }
                    scalars.append(scalar)
                default: throw error("a string has an unknown escape")
                }
                run = offset
            }
        }
    }
}
