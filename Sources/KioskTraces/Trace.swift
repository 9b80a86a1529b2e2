import KioskInput

/// A recording: one or more devices, each with its description and its events, on one time
/// base. evemu files hold one device; `libinput record` files may hold several.
public struct Trace: Sendable, Equatable {
    public struct Device: Sendable, Equatable {
        public var description: DeviceDescription
        public var events: [InputEvent]
        public init(description: DeviceDescription, events: [InputEvent]) {
            self.description = description; self.events = events
        }
    }

    public var devices: [Device]

    public init(devices: [Device]) { self.devices = devices }

    /// Parses an evemu recording or a `libinput record` YAML file, whichever `text` is.
    public static func parse(_ text: String) throws(TraceParseError) -> Trace {
        if Self.looksLikeLibinputRecord(text) {
            return try LibinputRecordParser.parse(text)
        }
        return try EvemuParser.parse(text)
    }

    private static func looksLikeLibinputRecord(_ text: String) -> Bool {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true).prefix(50) {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("#") { continue }
            return trimmed.hasPrefix("version:") || trimmed.hasPrefix("ndevices:") || trimmed.hasPrefix("libinput:")
                || trimmed.hasPrefix("devices:") || trimmed.hasPrefix("system:")
        }
        return false
    }
}

/// The evemu trace the replay command reads (a `Trace` with one device).
public typealias EvemuTrace = Trace

/// A recording could not be read. `description` names the line and what was wrong with it.
public struct TraceParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        case unknownLine, badNumber, missingField, badValue, noDevice, yaml
    }

    public var code: Code
    /// 1-based line number in the input.
    public var line: Int
    public var message: String

    public init(_ code: Code, line: Int, _ message: String) {
        self.code = code; self.line = line; self.message = message
    }

    public var description: String { "line \(line): \(message)" }
}
