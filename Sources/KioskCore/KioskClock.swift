import KioskAPI

/// Where the pure model gets the time from: the kiosk clock (``KioskClockMarker``), on which
/// every wait and limit is measured. The daemon passes the real one (CLOCK_BOOTTIME plus the
/// marker's offset), tests a manual one. The model itself never reads a clock.
public protocol KioskClock: Sendable {
    func now() -> Timestamp
}
