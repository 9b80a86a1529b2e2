import Glibc
import Logging
import SystemPackage

/// A swift-log handler that writes structured journal entries: `MESSAGE`, `PRIORITY`,
/// `SYSLOG_IDENTIFIER`, `LOGGER`, and each metadata key as an upper-snake field
/// (`restriction.id` → `RESTRICTION_ID`). Without a journal (no `/run/systemd/journal/socket`)
/// it writes one line per entry to stderr instead.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let identifier: String
    private let destination: Destination

    /// Where entries go.
    public enum Destination: Sendable, Equatable {
        /// The journal when its socket exists, else stderr.
        case automatic
        /// Always the journal (entries are dropped if it is absent).
        case journal
        /// Lines to a file descriptor (stderr is 2).
        case fileDescriptor(Int32)
    }

    /// `identifier` becomes `SYSLOG_IDENTIFIER` (the program name by default).
    public init(label: String, identifier: String? = nil, destination: Destination = .automatic) {
        self.label = label
        self.identifier =
            identifier ?? CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? label
        switch destination {
        case .automatic:
            self.destination = Self.automaticDestination()
        default:
            self.destination = destination
        }
    }

    /// What `.automatic` means on this machine: the journal when `socket` can be written to, else stderr.
    public static func automaticDestination(journalSocket socket: String = "/run/systemd/journal/socket") -> Destination
    {
        access(socket, W_OK) == 0 ? .journal : .fileDescriptor(2)
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { $1 } }
        if let extra = event.metadata { all.merge(extra) { $1 } }
        let fields = Self.fields(
            level: event.level, message: "\(event.message)", metadata: all,
            label: label, identifier: identifier)
        switch destination {
        case .journal, .automatic:
            if (try? Self.sendToJournal(fields)) == nil { Self.writeLine(fields, to: 2) }
        case .fileDescriptor(let fd):
            Self.writeLine(fields, to: fd)
        }
    }

    /// The journal fields of one entry, in order: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, LOGGER,
    /// then metadata sorted by key.
    public static func fields(
        level: Logger.Level, message: String, metadata: Logger.Metadata,
        label: String, identifier: String
    ) -> [(String, String)] {
        var out = [
            ("MESSAGE", message), ("PRIORITY", String(priority(level))),
            ("SYSLOG_IDENTIFIER", identifier), ("LOGGER", label),
        ]
        for key in metadata.keys.sorted() {
            out.append((fieldName(key), "\(metadata[key]!)"))
        }
        return out
    }

    /// syslog priority: trace/debug 7, info 6, notice 5, warning 4, error 3, critical 2.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// A journal field name: upper case, `[A-Z0-9_]`, not starting with a digit or `_`.
    public static func fieldName(_ key: String) -> String {
        var name = String(
            key.uppercased().map { c -> Character in
                (c.isASCII && (c.isLetter || c.isNumber)) ? c : "_"
            })
        while name.first == "_" { name.removeFirst() }
        if name.first?.isNumber ?? true { name = "M_" + name }
        return String(name.prefix(64))
    }

    /// The corresponding C call is `sd_journal_sendv`.
    static func sendToJournal(_ fields: [(String, String)]) throws(Errno) {
        try CDaemon.journalSend(fields)
    }

    /// `LEVEL label: message key=value …` on one line; newlines in values are escaped.
    static func line(_ fields: [(String, String)]) -> String {
        let dict = Dictionary(fields, uniquingKeysWith: { a, _ in a })
        let level =
            ["7": "debug", "6": "info", "5": "notice", "4": "warning", "3": "error", "2": "critical"][
                dict["PRIORITY"] ?? ""] ?? "info"
        var text = "\(level) \(dict["LOGGER"] ?? ""): \(dict["MESSAGE"] ?? "")"
        for (k, v) in fields.dropFirst(4) { text += " \(k)=\(v)" }
        return text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\\n") + "\n"
    }

    static func writeLine(_ fields: [(String, String)], to fd: Int32) {
        let text = line(fields)
        text.withCString { _ = write(fd, $0, strlen($0)) }
    }
}
