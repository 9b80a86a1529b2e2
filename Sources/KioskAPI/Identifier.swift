/// What a reverse-DNS identifier names, for messages ("application id", "restriction id").
public protocol ReverseDNSKind: Sendable {
    static var what: String { get }
}

public enum ApplicationKind: ReverseDNSKind { public static let what = "application id" }
public enum RestrictionKind: ReverseDNSKind { public static let what = "restriction id" }

/// An application id in reverse-DNS form (`org.example.MuseumMap`).
public typealias AppID = ReverseDNSIdentifier<ApplicationKind>

/// A restriction id in reverse-DNS form; by convention it starts with its app's id
/// (`org.example.MuseumMap.controls`), as iOS's `guidedAccessRestrictionIdentifiers` do.
public typealias RestrictionID = ReverseDNSIdentifier<RestrictionKind>

/// A validated reverse-DNS identifier (docs/dbus-api.md: ≤ 255 bytes, at least two labels of
/// `[A-Za-z0-9_-]`, none empty, none starting with a digit). The kind keeps app ids and
/// restriction ids apart in the type system.
public struct ReverseDNSIdentifier<Kind: ReverseDNSKind>: Hashable, Comparable, Sendable, CustomStringConvertible,
    Codable
{
    public let rawValue: String

    public init(_ string: String) throws(KioskError) {
        try ReverseDNS.validate(string, what: Kind.what)
        rawValue = string
    }

    /// Validates raw bytes as they came off a wire or a file: they must be UTF-8 first.
    public init(utf8 bytes: some Collection<UInt8>) throws(KioskError) {
        try self.init(Text.decode(bytes, what: Kind.what))
    }

    /// An identifier read back from text that was validated when it was stored (the registry's
    /// packed tables): no second check. Package-only, so an app cannot skip the rule.
    package init(validated rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    public init(from decoder: any Decoder) throws {
        let string = try decoder.singleValueContainer().decode(String.self)
        do { try self.init(string) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// The reverse-DNS rule shared by app and restriction ids.
enum ReverseDNS {
    static func validate(_ string: String, what: String) throws(KioskError) {
        // One pass over the bytes without allocating: the state file holds tens of
        // thousands of ids and every one is checked again when it is loaded.
        var labels = 1
        var labelStart = true
        var count = 0
        for byte in string.utf8 {
            count += 1
            if byte == UInt8(ascii: ".") {
                if labelStart { throw emptyLabel(string, what: what, label: labels) }
                labels += 1
                labelStart = true
                continue
            }
            if labelStart && byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                throw .invalid(
                    "The \(what) \(Text.quoted(string)) has label \(labels) starting with a digit, which reverse-DNS forbids."
                )
            }
            if !isLabelByte(byte) { throw badCharacter(string, what: what) }
            labelStart = false
        }
        if count == 0 { throw .invalid("The \(what) is empty; it must be reverse-DNS like org.example.App.") }
        if count > KioskWire.Limits.idBytes {
            throw .invalid(
                "The \(what) \(Text.quoted(string)) is \(count) bytes long; at most \(KioskWire.Limits.idBytes) are allowed."
            )
        }
        if labelStart { throw emptyLabel(string, what: what, label: labels) }
        if labels < 2 {
            throw .invalid(
                "The \(what) \(Text.quoted(string)) has one label; reverse-DNS needs at least two, separated by dots.")
        }
    }

    private static func emptyLabel(_ string: String, what: String, label: Int) -> KioskError {
        .invalid("The \(what) \(Text.quoted(string)) has an empty label (label \(label)).")
    }

    private static func badCharacter(_ string: String, what: String) -> KioskError {
        let scalar = string.unicodeScalars.first { $0.value > 0x7F || ($0 != "." && !isLabelByte(UInt8($0.value))) }!
        return .invalid(
            "The \(what) \(Text.quoted(string)) contains \(Text.describe(scalar: scalar)); labels may use only A-Z, a-z, 0-9, '_' and '-'."
        )
    }

    private static func isLabelByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }
}

/// Checks for free text (titles, details) and how values are shown in messages.
public enum Text {
    /// Decodes bytes as UTF-8, refusing invalid sequences instead of repairing them.
    public static func decode(_ bytes: some Collection<UInt8>, what: String) throws(KioskError) -> String {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var scalars = String.UnicodeScalarView()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                scalars.append(scalar)
                offset += UTF8.width(scalar)
            case .emptyInput:
                return String(scalars)
            case .error:
                throw .invalid("The \(what) is not valid UTF-8 (bad byte sequence near byte \(offset)).")
            }
        }
    }

    /// Validates a title or detail text: at most `maxBytes` of UTF-8, no control characters
    /// (a detail may hold line breaks and tabs when `multiline`).
    public static func validate(_ string: String, what: String, maxBytes: Int, multiline: Bool) throws(KioskError) {
        let bytes = string.utf8.count
        guard bytes <= maxBytes else {
            throw .invalid("The \(what) \(quoted(string)) is \(bytes) bytes long; at most \(maxBytes) are allowed.")
        }
        // Most text has no byte that could start a control character: one pass over the bytes
        // says so (the state file's 50,000 titles and details are checked again on every load).
        func mayHoldControl(_ bytes: some Sequence<UInt8>) -> Bool {
            bytes.contains { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 }
        }
        guard string.utf8.withContiguousStorageIfAvailable(mayHoldControl) ?? mayHoldControl(string.utf8) else {
            return
        }
        for scalar in string.unicodeScalars where isControl(scalar) {
            if multiline && (scalar == "\n" || scalar == "\t") { continue }
            throw .invalid(
                "The \(what) \(quoted(string)) contains the control character U+\(hex(scalar.value)), which is not allowed."
            )
        }
    }

    /// Whether `scalar` is a control character: Unicode's general category Cc, which is
    /// U+0000–U+001F and U+007F–U+009F and, by Unicode's stability policy, will stay so.
    /// (Its UTF-8 starts with a byte below 0x20, 0x7F, or 0xC2.)
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// A value shown in a message: quoted, control characters escaped, long values cut.
    public static func quoted(_ string: String, limit: Int = 80) -> String {
        var out = "\""
        var count = 0
        for scalar in string.unicodeScalars {
            if count == limit { out += "…"; break }
            count += 1
            if isControl(scalar) || scalar == "\"" || scalar == "\\" {
                out += scalar.escaped(asASCII: true)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func describe(scalar: Unicode.Scalar) -> String {
        if isControl(scalar) || scalar == " " {
            return scalar == " " ? "' ' (a space)" : "the control character U+\(hex(scalar.value))"
        }
        return "'\(scalar)' (U+\(hex(scalar.value)))"
    }

    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
