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

extension InputEvent {
    /// Whether `struct input_event` is laid out as `InputEvent` is (the same size, alignment and
    /// field offsets, `timeval`'s fields as wide as `Int`): true on every 64-bit Linux, where
    /// `InputFilter` reads the kernel's events where they lie.
    ///
    /// Computed, not a stored `static let`: the optimizer folds it to a constant, where a
    /// global's lazy initialisation cost a `swift_once` call at both of its uses on every frame.
    static var hasKernelLayout: Bool {
        typealias C = input_event
        func same(_ a: Int?, _ b: Int?) -> Bool { a != nil && a == b }
        return MemoryLayout<C>.size == MemoryLayout<InputEvent>.size
            && MemoryLayout<C>.stride == MemoryLayout<InputEvent>.stride
            && MemoryLayout<C>.alignment == MemoryLayout<InputEvent>.alignment
            && MemoryLayout.size(ofValue: C().time.tv_sec) == MemoryLayout<Int>.size
            && MemoryLayout.size(ofValue: C().time.tv_usec) == MemoryLayout<Int>.size
            && same(MemoryLayout<C>.offset(of: \.time.tv_sec), MemoryLayout<InputEvent>.offset(of: \.seconds))
            && same(MemoryLayout<C>.offset(of: \.time.tv_usec), MemoryLayout<InputEvent>.offset(of: \.microseconds))
            && same(MemoryLayout<C>.offset(of: \.type), MemoryLayout<InputEvent>.offset(of: \.type))
            && same(MemoryLayout<C>.offset(of: \.code), MemoryLayout<InputEvent>.offset(of: \.code))
            && same(MemoryLayout<C>.offset(of: \.value), MemoryLayout<InputEvent>.offset(of: \.value))
    }
}

extension InputFilter {
    /// ``InputFilter/process(_:device:into:promptKeys:)`` on events as the kernel wrote them
    /// (``EvdevDevice/readBatch()``): read in place where `input_event` has `InputEvent`'s
    /// layout (``InputEvent/hasKernelLayout``), else converted and fed one by one.
    @discardableResult
    func process(
        _ events: UnsafeBufferPointer<input_event>, device: DeviceID, into output: inout OutputBuffer,
        promptKeys: inout [PromptKey]
    ) -> RunResult {
        if InputEvent.hasKernelLayout {
            return events.withMemoryRebound(to: InputEvent.self) {
                process($0, device: device, into: &output, promptKeys: &promptKeys)
            }
        }
        var run = RunResult()
        for event in events {
            let result = process(InputEvent(event), device: device, into: &output)
            run.exitRequested = run.exitRequested || result.exitRequested
            run.resyncNeeded = run.resyncNeeded || result.resyncNeeded
            run.tookOffer = run.tookOffer || result.tookOffer
            run.cleaningRequested = run.cleaningRequested || result.cleaningRequested
            if let key = result.promptKey { promptKeys.append(key) }
        }
        return run
    }
}
