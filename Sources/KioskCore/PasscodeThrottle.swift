import KioskAPI

/// The back-off for wrong passcodes, persisted so a restart or a reboot does not reset it.
///
/// The schedule (README § Passcode throttle): the first 5 wrong passcodes cost nothing;
/// from the 6th on, each one makes the next attempt wait 30 s, doubling with each further
/// failure (30 s, 1 min, 2 min, 4 min, 8 min, 16 min, 32 min) up to a cap: 1 hour for a uid on
/// the bus, 5 minutes at the kiosk (``PasscodeSource/maximumDelay``), where a visitor's wrong
/// guesses make staff wait too (docs/threat-model.md § What a visitor can do to staff).
/// A right passcode resets the count.
public struct PasscodeThrottle: Hashable, Sendable, Codable {
    public static let freeAttempts = 5
    public static let firstDelay: Duration = .seconds(30)
    public static let maximumDelay: Duration = .seconds(3600)

    /// Wrong passcodes since the last right one.
    public private(set) var failures: Int = 0
    /// When the last wrong passcode was entered.
    public private(set) var lastFailure: Timestamp?

    public init() {}

    /// How long the next attempt must wait after `failures` wrong passcodes in a row.
    /// With `cap`, the longest wait (``maximumDelay`` unless a source says otherwise).
    public static func delay(afterFailures failures: Int, cap: Duration = maximumDelay) -> Duration {
        guard failures > freeAttempts else { return .zero }
        let doublings = failures - freeAttempts - 1
        if doublings >= 20 { return cap }
        return min(firstDelay * (1 << doublings), cap)
    }

    /// How long until an attempt is accepted at `now` (zero: now), with waits of at most `cap`.
    ///
    /// If the clock went back past the last failure, the whole delay applies again rather
    /// than none: setting the clock back must not open the door early.
    public func waitRemaining(at now: Timestamp, cap: Duration = maximumDelay) -> Duration {
        guard let lastFailure else { return .zero }
        let delay = Self.delay(afterFailures: failures, cap: cap)
        guard delay > .zero else { return .zero }
        let elapsed = now < lastFailure ? .zero : now - lastFailure
        return elapsed >= delay ? .zero : delay - elapsed
    }

    /// Throws `Throttled`, naming the wait, if an attempt at `now` must wait.
    public func check(at now: Timestamp, cap: Duration = maximumDelay) throws(KioskError) {
        let wait = waitRemaining(at: now, cap: cap)
        guard wait > .zero else { return }
        let seconds = (wait.microseconds + 999_999) / 1_000_000
        throw KioskError(.throttled, "Too many wrong passcodes (\(failures) in a row); try again in \(seconds) s.")
    }

    public mutating func recordFailure(at now: Timestamp) {
        failures += 1
        lastFailure = now
    }

    public mutating func recordSuccess() {
        failures = 0
        lastFailure = nil
    }

    /// The free attempts are used up, as of `now`: the next wrong passcode makes the next
    /// attempt wait. For a count that may be too low (``StateStorage`` after a reboot with the
    /// disk unwritable); a higher count is kept.
    mutating func spendFreeAttempts(at now: Timestamp) {
        guard failures < Self.freeAttempts else { return }
        failures = Self.freeAttempts
        lastFailure = now
    }

    /// After a reboot: the wait starts again in full at `now` (pulling the plug never shortens it).
    mutating func restartWait(at now: Timestamp) {
        if lastFailure != nil { lastFailure = now }
    }
}

/// Where a passcode attempt comes from: each source has a throttle count of its own, so that no
/// one can throttle someone else (a local uid sending wrong `EndSession`s must not make the staff
/// member at the kiosk wait an hour).
public enum PasscodeSource: Hashable, Sendable, CustomStringConvertible {
    /// Typed at the kiosk itself (the exit gesture's prompt).
    case kiosk
    /// Sent on the bus by a process of this uid.
    case uid(UInt32)

    /// The longest one wrong passcode makes this source wait. At the kiosk a visitor's guesses
    /// count against staff too, so the wait stops growing at 5 minutes: 10,000 guesses of a
    /// 4-digit PIN still take over 34 days there (an hour each for a uid on the bus).
    public var maximumDelay: Duration {
        switch self {
        case .kiosk: .seconds(300)
        case .uid: PasscodeThrottle.maximumDelay
        }
    }

    /// The key in the state file: `kiosk`, `uid 1000`.
    public var description: String {
        switch self {
        case .kiosk: "kiosk"
        case .uid(let uid): "uid \(uid)"
        }
    }

    /// Parses ``description`` (`kiosk`, `uid 1000`): what `ResetPasscodeThrottle` takes.
    public init?(key: String) {
        if key == "kiosk" {
            self = .kiosk
        } else if key.hasPrefix("uid "), let uid = UInt32(key.dropFirst(4)) {
            self = .uid(uid)
        } else {
            return nil
        }
    }
}

/// One ``PasscodeThrottle`` per ``PasscodeSource``, each on the same schedule, persisted.
///
/// A state file from before there was one count per source holds a single count for everybody:
/// it is kept as the count every source starts from (fail closed: no source gets fresh attempts
/// from the upgrade), until a right passcode.
public struct PasscodeThrottles: Hashable, Sendable {
    /// The count a source without one of its own starts from.
    public internal(set) var inherited = PasscodeThrottle()
    private var bySource: [PasscodeSource: PasscodeThrottle] = [:]

    /// Sources counted at most; past that, the one with the fewest failures is forgotten (ties:
    /// the longest ago), so a flood of uids cannot grow the state without bound.
    public static let maximumSources = 1024

    public init() {}

    public subscript(source: PasscodeSource) -> PasscodeThrottle { bySource[source] ?? inherited }

    /// Throws `Throttled`, naming the wait, if an attempt from `source` at `now` must wait.
    public func check(_ source: PasscodeSource, at now: Timestamp) throws(KioskError) {
        try self[source].check(at: now, cap: source.maximumDelay)
    }

    /// How long an attempt from `source` must wait at `now` (zero: none).
    public func waitRemaining(_ source: PasscodeSource, at now: Timestamp) -> Duration {
        self[source].waitRemaining(at: now, cap: source.maximumDelay)
    }

    /// An admin cleared `source`'s count (nil: every count, the inherited one too). A source
    /// reset while an inherited count exists starts from nothing, not from that count.
    /// - Returns: whether anything changed.
    @discardableResult
    public mutating func reset(_ source: PasscodeSource?) -> Bool {
        let before = self
        if let source {
            bySource[source] = inherited.failures == 0 ? nil : PasscodeThrottle()
        } else {
            bySource = [:]
            inherited = PasscodeThrottle()
        }
        return self != before
    }

    public mutating func recordFailure(from source: PasscodeSource, at now: Timestamp) {
        var throttle = self[source]
        throttle.recordFailure(at: now)
        if bySource[source] == nil, bySource.count >= Self.maximumSources,
            let weakest = bySource.min(by: { Self.weaker($0.value, than: $1.value) })?.key
        {
            bySource[weakest] = nil
        }
        bySource[source] = throttle
    }

    /// A right passcode from `source`: its count goes, and so does an inherited one. Other
    /// sources keep theirs.
    public mutating func recordSuccess(from source: PasscodeSource) {
        bySource[source] = nil
        inherited = PasscodeThrottle()
    }

    /// After a reboot: every wait starts again in full at `now`.
    public mutating func restartWaits(at now: Timestamp) {
        inherited.restartWait(at: now)
        for source in bySource.keys { bySource[source]!.restartWait(at: now) }
    }

    /// Every source's free attempts are used up, as of `now` (``PasscodeThrottle``'s
    /// `spendFreeAttempts`): the counts kept are known to be too low, by an unknown amount.
    public mutating func spendFreeAttempts(at now: Timestamp) {
        inherited.spendFreeAttempts(at: now)
        for source in bySource.keys { bySource[source]!.spendFreeAttempts(at: now) }
    }

    /// The sources with a count of their own, with it.
    public var counts: [(source: PasscodeSource, throttle: PasscodeThrottle)] {
        bySource.map { ($0.key, $0.value) }.sorted { $0.source.description < $1.source.description }
    }

    private static func weaker(_ a: PasscodeThrottle, than b: PasscodeThrottle) -> Bool {
        if a.failures != b.failures { return a.failures < b.failures }
        return (a.lastFailure?.microseconds ?? .min) < (b.lastFailure?.microseconds ?? .min)
    }

    /// `{"uid 1000": {...}, "kiosk": {...}}` in the state file.
    func encoded() -> [String: PasscodeThrottle] {
        Dictionary(uniqueKeysWithValues: bySource.map { ($0.key.description, $0.value) })
    }

    init(inherited: PasscodeThrottle, encoded: [String: PasscodeThrottle]) throws(KioskError) {
        self.inherited = inherited
        for (key, value) in encoded {
            guard let source = PasscodeSource(key: key) else {
                throw .invalid("\"\(key)\" is not a passcode source (kiosk, or uid N)")
            }
            bySource[source] = value
        }
    }
}
