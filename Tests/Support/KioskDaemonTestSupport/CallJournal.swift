import Synchronization

/// What happened, in order, across the fakes and the test: `identify`, `authorize <action>`,
/// `save`, `saved`, and whatever the test itself notes (`reply`, `signal …`).
public final class CallJournal: Sendable {
    private let entries = Mutex<[String]>([])

    public init() {}

    public func note(_ entry: String) { entries.withLock { $0.append(entry) } }

    public var all: [String] { entries.withLock { $0 } }

    public func count(of entry: String) -> Int { all.count { $0 == entry } }

    public func removeAll() { entries.withLock { $0.removeAll() } }
}
