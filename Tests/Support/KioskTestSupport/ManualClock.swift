import KioskCore
import Synchronization

/// A clock that moves only when a test moves it.
public final class ManualClock: WallClock {
    private let current: Mutex<WallClockTime>

    public init(_ start: WallClockTime = WallClockTime(microseconds: 1_700_000_000_000_000)) {
        current = Mutex(start)
    }

    public func now() -> WallClockTime { current.withLock { $0 } }

    public func advance(by duration: Duration) {
        current.withLock { $0 = $0 + duration }
    }

    public func set(_ time: WallClockTime) {
        current.withLock { $0 = time }
    }
}
