import KioskCore
import Synchronization

/// A clock that moves only when a test moves it.
public final class ManualClock: KioskClock {
    private let current: Mutex<Timestamp>

    public init(_ start: Timestamp = Timestamp(microseconds: 1_700_000_000_000_000)) {
        current = Mutex(start)
    }

    public func now() -> Timestamp { current.withLock { $0 } }

    public func advance(by duration: Duration) {
        current.withLock { $0 = $0 + duration }
    }

    public func set(_ time: Timestamp) {
        current.withLock { $0 = time }
    }
}
