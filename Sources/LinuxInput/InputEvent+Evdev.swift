import CEvdev
import KioskInput

// The filter's `InputEvent` is the one event type of kioskd; this file converts it to and from
// the kernel's `struct input_event`, field by field.

extension InputEvent {
    init(_ event: input_event) {
        self.init(
            seconds: Int(event.time.tv_sec), microseconds: Int(event.time.tv_usec),
            type: event.type, code: event.code, value: event.value)
    }

    var cValue: input_event {
        input_event(time: timeval(tv_sec: seconds, tv_usec: microseconds), type: type, code: code, value: value)
    }
}
