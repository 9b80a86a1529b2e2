import KioskAPI

/// Where the pure model gets the time from: the daemon passes the real clock, tests a
/// manual one. The model itself never reads a clock.
public protocol WallClock: Sendable {
    func now() -> WallClockTime
}
