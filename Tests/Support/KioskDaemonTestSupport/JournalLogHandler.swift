import Logging

/// A swift-log handler that notes each line's message in a ``CallJournal`` as `log <message>`,
/// so that a test can wait for a line, or count them, as it does for signals.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    let journal: CallJournal

    public init(journal: CallJournal) {
        self.journal = journal
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        journal.note("log \(event.message)")
    }
}
