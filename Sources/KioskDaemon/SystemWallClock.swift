import Glibc
import KioskCore

/// The real CLOCK_REALTIME, for what is shown as wall-clock time. Not a clock the model runs on
/// (that is `SystemKioskClock`, below): only the start and a set wall clock read it.
struct SystemWallClock {
    func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(microseconds: Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1_000)
    }

    /// CLOCK_BOOTTIME: since boot, suspend included; never set.
    static func boottime() -> Duration {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        return .seconds(Int64(ts.tv_sec)) + .nanoseconds(Int64(ts.tv_nsec))
    }
}

/// The kiosk clock (``KioskClockMarker``) on the real CLOCK_BOOTTIME: what every wait and limit
/// is measured on.
final class SystemKioskClock: KioskClock, @unchecked Sendable {
    // Written on the loop only (a clock change moves the display offset); read on the loop.
    var marker: KioskClockMarker

    init(marker: KioskClockMarker) { self.marker = marker }

    func now() -> Timestamp { marker.kioskTime(boottime: SystemWallClock.boottime()) }
}
