import CEvdev

/// One kernel input event as evdev delivers it (`struct input_event`): a
/// timestamp, an event type (`EV_KEY`), a code (`KEY_POWER`) and a value.
///
/// A plain value so that the filter's own event type converts to and from it
/// field by field.
public struct EvdevEvent: Hashable, Sendable {
    /// Seconds and microseconds of the timestamp, on the clock the device fd
    /// uses (`CLOCK_REALTIME` unless set otherwise, see
    /// ``EvdevDevice/useMonotonicClock()``).
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

    /// `EV_SYN`/`SYN_REPORT`: the end of a frame.
    public static func synReport(seconds: Int = 0, microseconds: Int = 0) -> EvdevEvent {
        EvdevEvent(seconds: seconds, microseconds: microseconds,
                   type: UInt16(EV_SYN), code: UInt16(SYN_REPORT), value: 0)
    }

    /// Whether this is `EV_SYN`/`SYN_REPORT`, the end of a frame.
    public var isSynReport: Bool { type == UInt16(EV_SYN) && code == UInt16(SYN_REPORT) }

    /// Whether this is `EV_SYN`/`SYN_DROPPED`: the kernel discarded events here.
    public var isSynDropped: Bool { type == UInt16(EV_SYN) && code == UInt16(SYN_DROPPED) }
}

extension EvdevEvent {
    init(_ event: input_event) {
        self.init(seconds: Int(event.time.tv_sec), microseconds: Int(event.time.tv_usec),
                  type: event.type, code: event.code, value: event.value)
    }

    var cValue: input_event {
        input_event(time: timeval(tv_sec: seconds, tv_usec: microseconds), type: type, code: code, value: value)
    }
}
