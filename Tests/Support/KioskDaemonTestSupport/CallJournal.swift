import KioskTestSupport
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

    /// Waits until the journal holds `entry` (at most `timeout`: a passcode check takes
    /// yescrypt's time); returns whether it does.
    public func waitFor(_ entry: String, timeout: Duration = .seconds(10)) -> Bool {
        eventually(timeout: timeout) { all.contains(entry) }
    }
}
