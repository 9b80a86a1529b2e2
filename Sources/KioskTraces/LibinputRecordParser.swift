import KioskInput
import Yams

/// Reads `libinput record` YAML: every device's `evdev` description (name, id, codes,
/// absinfo, properties), its udev `LIBINPUT_CALIBRATION_MATRIX`, and its `events` (`evdev`
/// entries of `[sec, usec, type, code, value]`; `libinput` entries are skipped).
public enum LibinputRecordParser {
    public static func parse(_ text: String) throws(TraceParseError) -> Trace {
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw TraceParseError(.noDevice, line: 1, "empty libinput record file")
            }
            root = node
        } catch let error as TraceParseError {
            throw error
        } catch let error as YamlError {
            throw TraceParseError(.yaml, line: yamlLine(error), "not valid YAML: \(error)")
        } catch {
            throw TraceParseError(.yaml, line: 1, "not valid YAML: \(error)")
        }
        try refuseAliases(root)
        guard let devices = root["devices"]?.sequence, !devices.isEmpty else {
            throw TraceParseError(.noDevice, line: line(of: root), "a libinput record needs a non-empty `devices` list")
        }
        return Trace(devices: try devices.map { node throws(TraceParseError) in try device(node) })
    }

    private static func device(_ node: Node) throws(TraceParseError) -> Trace.Device {
        guard let evdev = node["evdev"] else {
            throw TraceParseError(.missingField, line: line(of: node), "a device needs an `evdev` description")
        }
        let name = evdev["name"]?.string ?? ""
        var id = DeviceDescription.ID()
        if let ids = evdev["id"] {
            let numbers = try integers(ids, "evdev id")
            guard numbers.count == 4 else {
                throw TraceParseError(
                    .badValue, line: line(of: ids),
                    "`id` needs [bus, vendor, product, version], found \(numbers.count) numbers")
            }
            id = DeviceDescription.ID(
                bus: try u16(numbers[0], ids), vendor: try u16(numbers[1], ids),
                product: try u16(numbers[2], ids), version: try u16(numbers[3], ids))
        }
        var codes: [UInt16: Set<UInt16>] = [:]
        if let mapping = evdev["codes"]?.mapping {
            for (key, value) in mapping {
                let type = try u16(try integer(key, "event type"), key)
                codes[type] = Set(
                    try integers(value, "event codes").map { number throws(TraceParseError) in try u16(number, value) })
            }
        }
        var absInfo: [UInt16: DeviceDescription.AbsInfo] = [:]
        if let mapping = evdev["absinfo"]?.mapping {
            for (key, value) in mapping {
                let code = try u16(try integer(key, "axis code"), key)
                let numbers = try integers(value, "absinfo")
                guard numbers.count == 5 || numbers.count == 4 else {
                    throw TraceParseError(
                        .badValue, line: line(of: value),
                        "absinfo needs [min, max, fuzz, flat, resolution], found \(numbers.count) numbers")
                }
                absInfo[code] = DeviceDescription.AbsInfo(
                    minimum: Int32(clamping: numbers[0]), maximum: Int32(clamping: numbers[1]),
                    fuzz: Int32(clamping: numbers[2]), flat: Int32(clamping: numbers[3]),
                    resolution: numbers.count > 4 ? Int32(clamping: numbers[4]) : 0)
            }
        }
        var properties: Set<UInt16> = []
        if let list = evdev["properties"] {
            properties = Set(
                try integers(list, "properties").map { number throws(TraceParseError) in try u16(number, list) })
        }
        var calibration: CalibrationMatrix?
        if let udev = node["udev"]?["properties"]?.sequence {
            for entry in udev {
                guard let text = entry.string, text.hasPrefix("LIBINPUT_CALIBRATION_MATRIX=") else { continue }
                let value = String(text.dropFirst("LIBINPUT_CALIBRATION_MATRIX=".count))
                guard let matrix = CalibrationMatrix(udevProperty: value) else {
                    throw TraceParseError(
                        .badValue, line: line(of: entry),
                        "LIBINPUT_CALIBRATION_MATRIX `\(value)` is not six numbers libinput reads (plain decimal, separated by spaces)"
                    )
                }
                calibration = matrix
            }
        }
        var events: [InputEvent] = []
        for entry in node["events"]?.sequence ?? [] {
            guard let list = entry["evdev"]?.sequence else { continue }
            for item in list {
                let numbers = try integers(item, "evdev event")
                guard numbers.count == 5 else {
                    throw TraceParseError(
                        .badValue, line: line(of: item),
                        "an evdev event needs [sec, usec, type, code, value], found \(numbers.count) numbers")
                }
                guard InputEvent.isValidTimestamp(seconds: numbers[0], microseconds: numbers[1]) else {
                    throw TraceParseError(.badValue, line: line(of: item), "bad timestamp \(numbers[0]).\(numbers[1])")
                }
                events.append(
                    InputEvent(
                        seconds: numbers[0], microseconds: numbers[1], type: try u16(numbers[2], item),
                        code: try u16(numbers[3], item), value: Int32(clamping: numbers[4])))
            }
        }
        let description = DeviceDescription(
            name: name, id: id, properties: properties, codes: codes, absInfo: absInfo, calibration: calibration)
        return Trace.Device(description: description, events: events)
    }

    /// Refuses a document whose lists or mappings appear more than once: YAML aliases (`*name`
    /// of an `&name`). `libinput record` never writes them, and nested they expand a few
    /// kilobytes into millions of events (a "billion laughs"). Each collection's place in the
    /// file is unique unless it is reached through an alias, so the walk stops at the first
    /// repeat, having visited each collection of the file at most once. (A scalar's alias copies
    /// one value, no more than its text; those are let be.)
    private static func refuseAliases(_ root: Node) throws(TraceParseError) {
        var seen: Set<Int> = []
        var pending = [root]
        while let node = pending.popLast() {
            let children: [Node]
            switch node {
            case .sequence(let sequence): children = Array(sequence)
            case .mapping(let mapping): children = mapping.flatMap { [$0.key, $0.value] }
            case .scalar, .alias: continue
            }
            guard let mark = node.mark else { continue }
            guard seen.insert(mark.line << 24 | mark.column).inserted else {
                throw TraceParseError(
                    .yaml, line: mark.line,
                    "the list or mapping at line \(mark.line), column \(mark.column) is used again through a YAML alias; libinput record files have none, and aliases are refused (they can expand a small file into millions of events)"
                )
            }
            pending.append(contentsOf: children)
        }
    }

    private static func integers(_ node: Node, _ what: String) throws(TraceParseError) -> [Int] {
        guard let sequence = node.sequence else {
            throw TraceParseError(.badValue, line: line(of: node), "\(what) must be a list of numbers")
        }
        return try sequence.map { item throws(TraceParseError) in try integer(item, what) }
    }

    private static func integer(_ node: Node, _ what: String) throws(TraceParseError) -> Int {
        guard let text = node.scalar?.string else {
            throw TraceParseError(.badValue, line: line(of: node), "\(what) must be a number")
        }
        if let value = Int(text) { return value }
        if text.hasPrefix("0x"), let value = Int(text.dropFirst(2), radix: 16) { return value }
        throw TraceParseError(.badNumber, line: line(of: node), "bad \(what) `\(text)`, expected an integer")
    }

    private static func u16(_ value: Int, _ node: Node) throws(TraceParseError) -> UInt16 {
        guard let result = UInt16(exactly: value) else {
            throw TraceParseError(.badNumber, line: line(of: node), "\(value) is out of range 0…65535")
        }
        return result
    }

    private static func line(of node: Node) -> Int { node.mark?.line ?? 1 }

    private static func yamlLine(_ error: YamlError) -> Int {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _): return mark.line
        default: return 1
        }
    }
}
