/// Counts presses (or taps) toward a gesture of `count` of them within `within` microseconds,
/// from the first to the last: a ring of the last `count` times, grown once when the gesture is
/// set, never on an event.
struct GestureCounter {
    private var times: [Int64] = []
    private var seen = 0
    private var within: Int64 = 0

    /// No gesture is counted (none set, or not yet).
    var isEmpty: Bool { times.isEmpty }

    /// Starts over for a gesture of `count` presses within `within` µs (0 presses: none).
    mutating func reset(count: Int, within: Int64) {
        times = Array(repeating: 0, count: max(0, count))
        seen = 0
        self.within = within
    }

    /// One press at `time`: whether it completes the gesture (the count then starts over).
    @inline(__always)
    mutating func note(at time: Int64) -> Bool {
        guard !times.isEmpty else { return false }
        let count = times.count
        times[seen % count] = time
        seen += 1
        guard seen >= count, time - times[seen % count] <= within else { return false }
        seen = 0
        return true
    }
}
