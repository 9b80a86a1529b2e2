/// One evdev event, as `struct input_event` carries it: a timestamp, a type, a code and a value.
///
/// The timestamp is the kernel's (or the recording's); the filter never reads a clock and takes
/// every time it needs (the exit gesture's window) from here.
public struct InputEvent: Sendable, Hashable {
    public var seconds: Int
    public var microseconds: Int
    public var type: UInt16
    public var code: UInt16
    public var value: Int32

    public init(seconds: Int = 0, microseconds: Int = 0, type: UInt16, code: UInt16, value: Int32) {
        self.seconds = seconds
        self.microseconds = microseconds
        self.type = type
        self.code = code
        self.value = value
    }

    /// Whether `seconds.microseconds` is a timestamp a trace may hold: not negative, and small
    /// enough that ``time`` (in microseconds) cannot overflow.
    public static func isValidTimestamp(seconds: Int, microseconds: Int) -> Bool {
        (0...Int(Int64.max / 1_000_000 - 1)).contains(seconds) && (0..<1_000_000).contains(microseconds)
    }

    /// The timestamp in microseconds.
    public var time: Int64 { Int64(seconds) * 1_000_000 + Int64(microseconds) }

    /// The same instant with another type, code and value (for synthesised events).
    func with(type: UInt16, code: UInt16, value: Int32) -> InputEvent {
        InputEvent(seconds: seconds, microseconds: microseconds, type: type, code: code, value: value)
    }

    /// Whether this is the `SYN_REPORT` that ends a frame.
    public var isSynReport: Bool { type == EV.syn && code == SYN.report }

    /// Whether this is a `SYN_DROPPED`: the kernel discarded events here (its buffer overflowed).
    public var isSynDropped: Bool { type == EV.syn && code == SYN.dropped }
}

/// The events of one frame: everything up to and including its `SYN_REPORT`.
public struct InputFrame: Sendable, Hashable {
    public var events: [InputEvent]

    public init(events: [InputEvent]) { self.events = events }

    /// Splits a stream into frames; events after the last `SYN_REPORT` form no frame.
    public static func split(_ events: some Sequence<InputEvent>) -> [InputFrame] {
        var frames: [InputFrame] = []
        var current: [InputEvent] = []
        for event in events {
            current.append(event)
            if event.isSynReport {
                frames.append(InputFrame(events: current))
                current.removeAll(keepingCapacity: true)
            }
        }
        return frames
    }
}
