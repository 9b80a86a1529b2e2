import KioskAPI

/// The back-off for wrong passcodes, persisted so a restart or a reboot does not reset it.
///
/// The schedule (README § Passcode throttle): the first 5 wrong passcodes cost nothing;
/// from the 6th on, each one makes the next attempt wait 30 s, doubling with each further
/// failure (30 s, 1 min, 2 min, 4 min, 8 min, 16 min, 32 min) up to a cap of 1 hour.
/// A right passcode resets the count.
public struct PasscodeThrottle: Hashable, Sendable, Codable {
    public static let freeAttempts = 5
    public static let firstDelay: Duration = .seconds(30)
    public static let maximumDelay: Duration = .seconds(3600)

    /// Wrong passcodes since the last right one.
    public private(set) var failures: Int = 0
    /// When the last wrong passcode was entered.
    public private(set) var lastFailure: WallClockTime?

    public init() {}

    /// How long the next attempt must wait after `failures` wrong passcodes in a row.
    public static func delay(afterFailures failures: Int) -> Duration {
        guard failures > freeAttempts else { return .zero }
        let doublings = failures - freeAttempts - 1
        if doublings >= 20 { return maximumDelay }
        return min(firstDelay * (1 << doublings), maximumDelay)
    }

    /// How long until an attempt is accepted at `now` (zero: now).
    ///
    /// If the clock went back past the last failure, the whole delay applies again rather
    /// than none: setting the clock back must not open the door early.
    public func waitRemaining(at now: WallClockTime) -> Duration {
        guard let lastFailure else { return .zero }
        let delay = Self.delay(afterFailures: failures)
        guard delay > .zero else { return .zero }
        let elapsed = now < lastFailure ? .zero : now - lastFailure
        return elapsed >= delay ? .zero : delay - elapsed
    }

    /// Throws `Throttled`, naming the wait, if an attempt at `now` must wait.
    public func check(at now: WallClockTime) throws(KioskError) {
        let wait = waitRemaining(at: now)
        guard wait > .zero else { return }
        let seconds = (wait.microseconds + 999_999) / 1_000_000
        throw KioskError(.throttled, "Too many wrong passcodes (\(failures) in a row); try again in \(seconds) s.")
    }

    public mutating func recordFailure(at now: WallClockTime) {
        failures += 1
        lastFailure = now
    }

    public mutating func recordSuccess() {
        failures = 0
        lastFailure = nil
    }
}
