/// Keeps one uid from flooding the journal: per uid and kind of line, the first `burst` lines of
/// each `window` are logged, the rest counted, and the count is logged once the window is over
/// (``summaries(at:)``) — "uid 65534: 980 more 'Application registered' in 60 s".
///
/// Pure: the time (monotonic) is passed in.
public struct RepeatLimiter: Sendable {
    public struct Key: Hashable, Sendable {
        public var uid: UInt32
        /// The log line's constant message.
        public var message: String

        public init(uid: UInt32, message: String) {
            self.uid = uid
            self.message = message
        }
    }

    public let burst: Int
    public let window: Duration
    /// Keys tracked at most; past that, a new key is logged without being tracked (the
    /// limiter's own memory is bounded too).
    public let maximumKeys: Int
    private var windows: [Key: (start: Duration, logged: Int, suppressed: Int)] = [:]

    public init(burst: Int = 20, window: Duration = .seconds(60), maximumKeys: Int = 4096) {
        self.burst = burst
        self.window = window
        self.maximumKeys = maximumKeys
    }

    /// Whether to log a line of `key` at `now`.
    public mutating func admit(_ key: Key, at now: Duration) -> Bool {
        guard var entry = windows[key], now - entry.start < window else {
            if windows[key] == nil, windows.count >= maximumKeys { return true }
            if let ended = windows[key], ended.suppressed > 0 {
                // Its summary is still due: keep the count, start counting anew.
                windows[key] = (now, 1, ended.suppressed)
                return true
            }
            windows[key] = (now, 1, 0)
            return true
        }
        defer { windows[key] = entry }
        guard entry.logged < burst else {
            entry.suppressed += 1
            return false
        }
        entry.logged += 1
        return true
    }

    /// Whether lines were not logged whose summary is not out yet.
    public var hasPending: Bool { windows.values.contains { $0.suppressed > 0 } }

    /// The counts of lines not logged, for every key whose window is over at `now`; they are
    /// forgotten once returned. Call it about once a `window`.
    public mutating func summaries(at now: Duration) -> [(key: Key, suppressed: Int)] {
        var due: [(key: Key, suppressed: Int)] = []
        for (key, entry) in windows where now - entry.start >= window {
            if entry.suppressed > 0 { due.append((key, entry.suppressed)) }
            windows[key] = nil
        }
        return due.sorted { ($0.key.uid, $0.key.message) < ($1.key.uid, $1.key.message) }
    }
}
