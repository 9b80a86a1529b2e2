/// A point in wall-clock time (CLOCK_REALTIME), in microseconds since the Unix epoch:
/// the unit the bus uses for `SessionDeadline`. Wall-clock, not monotonic, because
/// deadlines and passcode back-offs must survive a reboot.
public struct WallClockTime: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    public static func < (a: WallClockTime, b: WallClockTime) -> Bool { a.microseconds < b.microseconds }

    /// Saturates at the ends of `Int64` rather than trapping: a time a caller sent (anything a
    /// `t` or `x` argument holds) can never crash the daemon, whatever the clocks' offset.
    public static func + (t: WallClockTime, d: Duration) -> WallClockTime {
        WallClockTime(microseconds: saturating(t.microseconds, plus: d.microseconds))
    }

    /// Saturates, as `+` does.
    public static func - (a: WallClockTime, b: WallClockTime) -> Duration {
        let (difference, overflow) = a.microseconds.subtractingReportingOverflow(b.microseconds)
        return .microseconds(overflow ? (a.microseconds < b.microseconds ? Int64.min : Int64.max) : difference)
    }

    /// `a + b`, clamped to `Int64`'s range.
    public static func saturating(_ a: Int64, plus b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b < 0 ? Int64.min : Int64.max) : sum
    }

    /// Whether `microseconds` is a time a caller may name: ``representable``.
    public static func isRepresentable(_ microseconds: Int64) -> Bool { representable.contains(microseconds) }

    public var description: String { "\(microseconds)µs" }

    /// The times a state file may hold: the Unix epoch to the end of year 9999. Arithmetic on
    /// them with the durations kioskd uses cannot overflow.
    public static let representable: ClosedRange<Int64> = 0...253_402_300_799_999_999

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        microseconds = try container.decode(Int64.self)
        guard Self.representable.contains(microseconds) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\(microseconds) µs is not a time between 1970 and 9999")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(microseconds)
    }
}
