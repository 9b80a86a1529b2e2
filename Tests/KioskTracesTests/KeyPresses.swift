import KioskInput

/// A key pressed and let go 20 ms later at each of `seconds` from a recording's first event (at
/// 1 s), as a replay test's recording: the key's events, each with its `SYN_REPORT`.
func keyPresses(_ code: UInt16, at seconds: [Int]) -> [InputEvent] {
    var events: [InputEvent] = []
    for second in seconds {
        for (offset, value) in [(Int64(0), Int32(1)), (20_000, 0)] {
            let time = 1_000_000 + Int64(second) * 1_000_000 + offset
            let (s, u) = (Int(time / 1_000_000), Int(time % 1_000_000))
            events += [
                InputEvent(seconds: s, microseconds: u, type: 1, code: code, value: value),
                InputEvent(seconds: s, microseconds: u, type: 0, code: 0, value: 0),
            ]
        }
    }
    return events
}
