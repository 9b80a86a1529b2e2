import KioskAPI
import KioskCore

/// How the state file writes the registry's apps: the JSON `JSONEncoder` with `.sortedKeys`
/// writes for `Registry.Application`'s `Encodable` conformance, byte for byte, straight from the
/// packed table (``Registry/Application/forEachPacked(_:)``). `StateFileJSONTests` hold both to
/// `JSONEncoder`.
enum StateFileJSON {
    /// Appends `app` as the state file holds it.
    static func append(_ app: Registry.Application, to out: inout [UInt8]) {
        out += #"{"id":"#.utf8
        JSONText.appendString(app.id.rawValue, to: &out)
        out += #","ownerUID":"#.utf8
        out += String(app.ownerUID).utf8
        out += #","restrictions":["#.utf8
        var first = true
        app.forEachPacked { id, title, detail, state, retired in
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(UInt8(ascii: "["))
            JSONText.appendString(id, to: &out)
            out.append(UInt8(ascii: ","))
            JSONText.appendString(title, to: &out)
            out.append(UInt8(ascii: ","))
            JSONText.appendString(detail, to: &out)
            out += state == .allow ? #","allow","#.utf8 : #","deny","#.utf8
            out += retired ? "true]".utf8 : "false]".utf8
        }
        out += "]}".utf8
    }
}

/// JSON strings as Foundation's `JSONEncoder` writes them (default options): `"` and `\`
/// escaped, `/` as `\/`, the control characters U+0000–U+001F as `\b \t \n \f \r` or `\u00XX`,
/// everything else (DEL, non-ASCII) as its UTF-8 bytes. A test holds this to `JSONEncoder`.
enum JSONText {
    static func appendString(_ string: String, to out: inout [UInt8]) {
        var string = string
        string.withUTF8 { appendString($0, to: &out) }
    }

    static func appendString(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var runStart = 0
        for (i, byte) in bytes.enumerated()
        where byte < 0x20 || byte == UInt8(ascii: "\"")
            || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/")
        {
            out += UnsafeBufferPointer(rebasing: bytes[runStart..<i])
            runStart = i + 1
            out.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
            case 0x08: out.append(UInt8(ascii: "b"))
            case 0x09: out.append(UInt8(ascii: "t"))
            case 0x0A: out.append(UInt8(ascii: "n"))
            case 0x0C: out.append(UInt8(ascii: "f"))
            case 0x0D: out.append(UInt8(ascii: "r"))
            default:
                let hex = Array("0123456789abcdef".utf8)
                out += "u00".utf8
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            }
        }
        out += UnsafeBufferPointer(rebasing: bytes[runStart...])
        out.append(UInt8(ascii: "\""))
    }
}
