import KioskInput

/// Reads evemu recordings (evemu 1.x): description lines `N:` name, `I:` ids, `P:` property
/// bytes, `B:` capability bytes, `A:` absinfo, `L:`/`S:` LED and switch state, and `E:`
/// events; `#` starts a comment anywhere.
public enum EvemuParser {
    public static func parse(_ text: String) throws(TraceParseError) -> Trace {
        var name: String?
        var id = DeviceDescription.ID()
        var properties: Set<UInt16> = []
        var propertyByte = 0
        var codes: [UInt16: Set<UInt16>] = [:]
        var byteOffsets: [UInt16: Int] = [:]
        var absInfo: [UInt16: DeviceDescription.AbsInfo] = [:]
        var events: [InputEvent] = []
        var sawDescription = false

        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = Substring(rawLine)
            if line.last == "\r" { line = line.dropLast() }
            if line.first == "#" { continue }
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            guard line.count >= 2, line.dropFirst().first == ":" else {
                throw TraceParseError(
                    .unknownLine, line: lineNumber,
                    "expected an evemu line (N:, I:, P:, B:, A:, L:, S:, E:), found `\(line.prefix(40))`")
            }
            let kind = line.first!
            let body = line.dropFirst(2)
            if kind == "N" {
                name = String(stripComment(body).trimmingSpaces())
                sawDescription = true
                continue
            }
            let fields = stripComment(body).split(whereSeparator: { $0 == " " || $0 == "\t" })
            switch kind {
            case "I":
                try expect(fields, count: 4, line: lineNumber, what: "an I: line (bus vendor product version)")
                id = DeviceDescription.ID(
                    bus: try hex16(fields[0], lineNumber, "bus"), vendor: try hex16(fields[1], lineNumber, "vendor"),
                    product: try hex16(fields[2], lineNumber, "product"),
                    version: try hex16(fields[3], lineNumber, "version"))
                sawDescription = true
            case "P":
                for field in fields {
                    try checkCodeRange(byteOffset: propertyByte, lineNumber)
                    let byte = try hex8(field, lineNumber, "property byte")
                    for bit in 0..<8 where byte & (1 << bit) != 0 { properties.insert(UInt16(propertyByte * 8 + bit)) }
                    propertyByte += 1
                }
                sawDescription = true
            case "B":
                guard fields.count >= 2 else {
                    throw TraceParseError(
                        .missingField, line: lineNumber, "a B: line needs an event type and at least one byte")
                }
                let type = UInt16(try hex8(fields[0], lineNumber, "event type"))
                var offset = byteOffsets[type, default: 0]
                for field in fields.dropFirst() {
                    try checkCodeRange(byteOffset: offset, lineNumber)
                    let byte = try hex8(field, lineNumber, "capability byte")
                    for bit in 0..<8 where byte & (1 << bit) != 0 {
                        codes[type, default: []].insert(UInt16(offset * 8 + bit))
                    }
                    offset += 1
                }
                byteOffsets[type] = offset
                sawDescription = true
            case "A":
                guard fields.count == 5 || fields.count == 6 else {
                    throw TraceParseError(
                        .missingField, line: lineNumber,
                        "an A: line needs code min max fuzz flat [resolution], found \(fields.count) fields")
                }
                let code = try hex16(fields[0], lineNumber, "axis code")
                let numbers = try fields.dropFirst().map { field throws(TraceParseError) in
                    try decimal(field, lineNumber, "absinfo value")
                }
                absInfo[code] = DeviceDescription.AbsInfo(
                    minimum: numbers[0], maximum: numbers[1], fuzz: numbers[2], flat: numbers[3],
                    resolution: numbers.count > 4 ? numbers[4] : 0)
                sawDescription = true
            case "L", "S":
                try expect(fields, count: 2, line: lineNumber, what: "an \(kind): line (code value)")
                _ = try hex16(fields[0], lineNumber, "code")
                _ = try decimal(fields[1], lineNumber, "state")
            case "E":
                events.append(try event(fields, line: lineNumber))
            default:
                throw TraceParseError(.unknownLine, line: lineNumber, "unknown evemu line kind `\(kind):`")
            }
        }
        // `B: 00` is the mask of event types; every other `B:` the codes of its type.
        var typed: [UInt16: Set<UInt16>] = [:]
        for type in codes[EV.syn] ?? [] where type != EV.syn { typed[type] = codes[type] ?? [] }
        for (type, set) in codes where type != EV.syn && !set.isEmpty { typed[type] = set }
        if codes[EV.syn] != nil { typed[EV.syn] = [SYN.report, SYN.config, SYN.mtReport, SYN.dropped] }
        guard sawDescription || !events.isEmpty else {
            throw TraceParseError(.noDevice, line: lineNumber, "no evemu description or events found")
        }
        let description = DeviceDescription(
            name: name ?? "", id: id, properties: properties, codes: typed, absInfo: absInfo)
        return Trace(devices: [Trace.Device(description: description, events: events)])
    }

    /// A `B:`/`P:` byte at `byteOffset` holds codes `8 × byteOffset …`: past 0xffff there are none.
    private static func checkCodeRange(byteOffset: Int, _ line: Int) throws(TraceParseError) {
        guard byteOffset < 8192 else {
            throw TraceParseError(.badValue, line: line, "more bitmask bytes than there are event codes (0 to 0xffff)")
        }
    }

    /// One `E: sec.usec type code value` line's fields (type and code hex, value decimal).
    static func event(_ fields: [Substring], line: Int) throws(TraceParseError) -> InputEvent {
        try expect(fields, count: 4, line: line, what: "an E: line (sec.usec type code value)")
        let time = fields[0].split(separator: ".", omittingEmptySubsequences: false)
        guard time.count == 2, let seconds = Int(time[0]), time[1].count <= 6,
            let microseconds = Int(time[1]), time[1].allSatisfy(\.isASCII),
            InputEvent.isValidTimestamp(seconds: seconds, microseconds: microseconds)
        else {
            throw TraceParseError(.badNumber, line: line, "bad timestamp `\(fields[0])`, expected sec.usec")
        }
        return InputEvent(
            seconds: seconds, microseconds: microseconds,
            type: try hex16(fields[1], line, "event type"), code: try hex16(fields[2], line, "event code"),
            value: try decimal(fields[3], line, "event value"))
    }

    private static func stripComment(_ text: Substring) -> Substring {
        if let hash = text.firstIndex(of: "#") { return text[..<hash] }
        return text
    }

    private static func expect(_ fields: [Substring], count: Int, line: Int, what: String) throws(TraceParseError) {
        guard fields.count == count else {
            throw TraceParseError(
                .missingField, line: line, "expected \(count) fields in \(what), found \(fields.count)")
        }
    }

    private static func hex16(_ text: Substring, _ line: Int, _ what: String) throws(TraceParseError) -> UInt16 {
        guard let value = UInt16(text, radix: 16) else {
            throw TraceParseError(.badNumber, line: line, "bad \(what) `\(text)`, expected hexadecimal 0…ffff")
        }
        return value
    }

    private static func hex8(_ text: Substring, _ line: Int, _ what: String) throws(TraceParseError) -> UInt8 {
        guard let value = UInt8(text, radix: 16) else {
            throw TraceParseError(.badNumber, line: line, "bad \(what) `\(text)`, expected hexadecimal 00…ff")
        }
        return value
    }

    private static func decimal(_ text: Substring, _ line: Int, _ what: String) throws(TraceParseError) -> Int32 {
        guard let value = Int32(text) else {
            throw TraceParseError(.badNumber, line: line, "bad \(what) `\(text)`, expected a 32-bit decimal number")
        }
        return value
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
