import Glibc
import KioskCore

/// The real CLOCK_REALTIME, for the pure model's `WallClock`.
struct SystemWallClock: WallClock {
    func now() -> WallClockTime {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return WallClockTime(microseconds: Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1_000)
    }
}
