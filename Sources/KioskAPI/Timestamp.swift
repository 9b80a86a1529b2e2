/// A point in time, in microseconds since the Unix epoch: the unit of the bus's times
/// (`SessionDeadline`, `PromptDeadline`, …) and of the state file's.
///
/// Which clock a value is on is the context's: inside kioskd, every time (a deadline, a
/// throttle's last failure, the state file's) is on the kiosk clock (KioskCore's `KioskClock`:
/// it counts suspend, a set wall clock does not move it, it survives a reboot:
/// docs/dbus-api.md § Time); what the bus shows an app or the prompt is that time moved onto
/// the wall clock (CLOCK_REALTIME), as a person reads it.
public struct Timestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.microseconds < b.microseconds }

    /// Saturates at the ends of `Int64` rather than trapping: a time a caller sent (anything a
    /// `t` or `x` argument holds) can never crash the daemon, whatever the clocks' offset.
    public static func + (t: Timestamp, d: Duration) -> Timestamp {
        Timestamp(microseconds: saturating(t.microseconds, plus: d.microseconds))
    }

    /// Saturates, as `+` does.
    public static func - (a: Timestamp, b: Timestamp) -> Duration {
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
