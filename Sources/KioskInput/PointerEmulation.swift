/// The legacy pointer axes of a touch device as the clone holds them: `BTN_TOUCH`,
/// `BTN_TOOL_*` by contact count, `ABS_X`, `ABS_Y`, `ABS_PRESSURE`.
///
/// A multitouch device's own are never forwarded: they are recomputed from the forwarded
/// contacts by the kernel's rule (`input_mt_report_pointer_emulation`: the oldest contact
/// drives the pointer axes), and only what differs from what the clone holds is sent.
struct PointerEmulation {
    // What the device advertises.
    private let hasTouchKey, hasAbsX, hasAbsY, hasAbsPressure, hasMTPressure: Bool
    private let fingerTools: [Bool]
    // What the clone was last sent.
    private var outTouch: Int32 = 0
    private var outTools: [Int32] = [0, 0, 0, 0, 0]
    /// The contact count `outTouch` and `outTools` were last brought to (none sent yet: 0, which
    /// they hold), or nil once a forwarded event set one of them itself (``noteForwarded(_:)``).
    /// The same count again leaves them as they are, so a frame that moves contacts skips
    /// comparing them (docs/benchmarks.md § Instructions per frame).
    private var countSent: Int? = 0
    /// The clone starts with no contact, so with no pressure: a contact never forwarded sends none.
    private var outX: Int32?, outY: Int32?, outPressure: Int32? = 0

    init(description: DeviceDescription) {
        hasTouchKey = description.supports(type: EV.key, code: BTN.touch)
        hasAbsX = description.supports(type: EV.abs, code: ABS.x)
        hasAbsY = description.supports(type: EV.abs, code: ABS.y)
        hasAbsPressure = description.supports(type: EV.abs, code: ABS.pressure)
        hasMTPressure = description.supports(type: EV.abs, code: ABS.mtPressure)
        fingerTools = BTN.fingerCountTools.map { description.supports(type: EV.key, code: $0) }
    }

    /// Whether a multitouch device's event is one of its pointer-emulation events, which are
    /// recomputed instead of forwarded.
    @inline(__always)
    func isRecomputed(_ event: InputEvent) -> Bool {
        if event.type == EV.key { return event.code == BTN.touch || BTN.isFingerCountTool(event.code) }
        if event.type == EV.abs {
            return event.code == ABS.x || event.code == ABS.y || (event.code == ABS.pressure && hasMTPressure)
        }
        return false
    }

    /// Emits the pointer-emulation events that differ from what the clone holds, in the
    /// kernel's order: `BTN_TOUCH`, `BTN_TOOL_*` by count, `ABS_X`, `ABS_Y`, `ABS_PRESSURE`.
    mutating func emit(
        count: Int, x: Int32?, y: Int32?, pressure: Int32?, time: InputEvent, into output: inout OutputBuffer
    ) {
        if count != countSent { emitCount(count, time: time, into: &output) }
        if let x, hasAbsX, outX != x {
            output.append(time.with(type: EV.abs, code: ABS.x, value: x))
            outX = x
        }
        if let y, hasAbsY, outY != y {
            output.append(time.with(type: EV.abs, code: ABS.y, value: y))
            outY = y
        }
        if hasAbsPressure && hasMTPressure {
            let value = pressure ?? 0
            if outPressure != value {
                output.append(time.with(type: EV.abs, code: ABS.pressure, value: value))
                outPressure = value
            }
        }
    }

    /// `BTN_TOUCH` and `BTN_TOOL_*` for `count` contacts, those that differ from what the clone
    /// holds.
    private mutating func emitCount(_ count: Int, time: InputEvent, into output: inout OutputBuffer) {
        if hasTouchKey {
            let value: Int32 = count > 0 ? 1 : 0
            if outTouch != value {
                output.append(time.with(type: EV.key, code: BTN.touch, value: value))
                outTouch = value
            }
        }
        for tool in 0..<5 where fingerTools[tool] {
            let value: Int32 = count == tool + 1 ? 1 : 0
            if outTools[tool] != value {
                output.append(time.with(type: EV.key, code: BTN.fingerCountTools[tool], value: value))
                outTools[tool] = value
            }
        }
        countSent = count
    }

    /// Emits the release of every contact (nothing when the clone holds none).
    mutating func emitNoContact(time: InputEvent, into output: inout OutputBuffer) {
        emit(count: 0, x: nil, y: nil, pressure: nil, time: time, into: &output)
    }

    /// Sends the position where the clone holds another one (a single-touch contact forwarded
    /// after a suppressed one whose moves the clone missed).
    mutating func restorePosition(x: Int32?, y: Int32?, time: InputEvent, into output: inout OutputBuffer) {
        if let x, hasAbsX, outX != x { output.append(time.with(type: EV.abs, code: ABS.x, value: x)); outX = x }
        if let y, hasAbsY, outY != y { output.append(time.with(type: EV.abs, code: ABS.y, value: y)); outY = y }
    }

    /// Notes a source event forwarded as it is (a single-touch device's own pointer events).
    mutating func noteForwarded(_ event: InputEvent) {
        if event.type != EV.abs { countSent = nil }
        if event.type == EV.abs {
            if event.code == ABS.x {
                outX = event.value
            } else if event.code == ABS.y {
                outY = event.value
            } else if event.code == ABS.pressure {
                outPressure = event.value
            }
        } else if event.code == BTN.touch {
            outTouch = event.value
        } else if let tool = BTN.fingerCountTools.firstIndex(of: event.code) {
            outTools[tool] = event.value
        }
    }
}
