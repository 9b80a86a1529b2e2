/// A point in wall-clock time (CLOCK_REALTIME), in microseconds since the Unix epoch:
/// the unit the bus uses for `SessionDeadline`. Wall-clock, not monotonic, because
/// deadlines and passcode back-offs must survive a reboot.
public struct WallClockTime: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    public static func < (a: WallClockTime, b: WallClockTime) -> Bool { a.microseconds < b.microseconds }

    public static func + (t: WallClockTime, d: Duration) -> WallClockTime {
        WallClockTime(microseconds: t.microseconds + d.microseconds)
    }

    public static func - (a: WallClockTime, b: WallClockTime) -> Duration {
        .microseconds(a.microseconds - b.microseconds)
    }

    public var description: String { "\(microseconds)µs" }

    public init(from decoder: any Decoder) throws {
        microseconds = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(microseconds)
    }
}

/// Where the pure model gets the time from: the daemon passes the real clock, tests a
/// manual one. The model itself never reads a clock.
public protocol WallClock: Sendable {
    func now() -> WallClockTime
}
