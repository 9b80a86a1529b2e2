/// Identifies one brokered device inside an `InputFilter` (handed out by `addDevice`).
public struct DeviceID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public var description: String { "device \(rawValue)" }
}

/// Caller-owned, reusable storage for filtered frames. The filter appends whole frames (each
/// ending in `SYN_REPORT`); the broker writes each frame with one `write(2)` to the device's
/// clone and calls `removeAll()`. The storage is grown by appends and never shrunk, and
/// `removeAll()` only sets the two counts back to zero (an array's
/// `removeAll(keepingCapacity:)` went through `replaceSubrange`, about 200 instructions a
/// frame for the two: docs/benchmarks.md § Instructions per frame), so steady state allocates
/// nothing and clearing costs two stores.
public struct OutputBuffer: Sendable {
    public struct Frame: Sendable, Equatable {
        public var device: DeviceID
        public var range: Range<Int>
    }

    /// The events appended since the last `removeAll()` live in `eventStorage[..<eventCount]`;
    /// what lies beyond is left from earlier frames and never read.
    @usableFromInline var eventStorage: [InputEvent] = []
    @usableFromInline var eventCount = 0
    @usableFromInline var frameStorage: [Frame] = []
    @usableFromInline var frameCount = 0

    public init(capacity: Int = 1024) {
        eventStorage.reserveCapacity(capacity)
        frameStorage.reserveCapacity(capacity / 4)
    }

    public var isEmpty: Bool { frameCount == 0 }

    /// The events appended since the last `removeAll()`, every frame's in order.
    public var events: ArraySlice<InputEvent> { eventStorage[..<eventCount] }

    /// The frames appended since the last `removeAll()`, each a range of ``events``.
    public var frames: ArraySlice<Frame> { frameStorage[..<frameCount] }

    public func events(of frame: Frame) -> ArraySlice<InputEvent> { eventStorage[frame.range] }

    /// Lends each frame's events in turn, in order, without a copy, then empties the buffer (as
    /// ``removeAll()``): the broker's flush. Mutating, so that the storage is the caller's own
    /// for the call: lent by a non-mutating method from a class's stored buffer, both arrays
    /// were retained and released around `body`. Inlinable, so that it is specialized where it
    /// is called: a generic call across modules cost more than the copies it saves.
    @inlinable
    public mutating func drain(_ body: (Frame, UnsafeBufferPointer<InputEvent>) -> Void) {
        let frameCount = frameCount
        frameStorage.withUnsafeBufferPointer { frames in
            eventStorage.withUnsafeBufferPointer { events in
                for frame in frames[..<frameCount] { body(frame, UnsafeBufferPointer(rebasing: events[frame.range])) }
            }
        }
        removeAll()
    }

    /// Empties the buffer and keeps its storage.
    public mutating func removeAll() {
        eventCount = 0
        frameCount = 0
    }

    /// How many events were appended since the last `removeAll()`.
    var count: Int {
        @inline(__always) get { eventCount }
    }

    @inline(__always)
    mutating func append(_ event: InputEvent) {
        if eventCount < eventStorage.count {
            eventStorage[eventCount] = event
        } else {
            eventStorage.append(event)
        }
        eventCount += 1
    }

    @inline(__always)
    mutating func removeLast() {
        precondition(eventCount > 0, "removeLast on an empty OutputBuffer")
        eventCount -= 1
    }

    /// Closes the frame that started at `start`: if anything was appended since, adds the
    /// `SYN_REPORT` (with `time`'s timestamp) and records the frame; otherwise emits nothing.
    @inline(__always)
    mutating func commitFrame(device: DeviceID, from start: Int, time: InputEvent) {
        guard eventCount > start else { return }
        append(time.with(type: EV.syn, code: SYN.report, value: 0))
        let frame = Frame(device: device, range: start..<eventCount)
        if frameCount < frameStorage.count {
            frameStorage[frameCount] = frame
        } else {
            frameStorage.append(frame)
        }
        frameCount += 1
    }
}

/// What the caller must act on after an event.
public struct FilterResult: Sendable, Equatable {
    /// The exit gesture completed with this event: raise `ExitRequested`.
    public var exitRequested = false
    /// The event was `SYN_DROPPED`: read the device's state (libevdev-style) and call
    /// `InputFilter.resync(device:to:into:)`.
    public var resyncNeeded = false
    /// The prompt is open (``FilterPolicy/readsPasscode``) and this event pressed one of its keys.
    public var promptKey: PromptKey?
    /// The offer of more time is up (``FilterPolicy/offersTime``) and this event let go of a key,
    /// button or touch pressed since: the visitor took it.
    public var tookOffer = false
    public init(
        exitRequested: Bool = false, resyncNeeded: Bool = false, promptKey: PromptKey? = nil, tookOffer: Bool = false
    ) {
        self.exitRequested = exitRequested; self.resyncNeeded = resyncNeeded; self.promptKey = promptKey
        self.tookOffer = tookOffer
    }
}

/// What the caller must act on after a run of events (``InputFilter/process(_:device:into:promptKeys:)``).
public struct RunResult: Sendable, Equatable {
    /// The exit gesture completed in the run: raise `ExitRequested`.
    public var exitRequested = false
    /// The run held a `SYN_DROPPED`: read the device's state and call
    /// `InputFilter.resync(device:to:into:)`, as after ``FilterResult/resyncNeeded``.
    public var resyncNeeded = false
    /// The visitor took the offer of more time in the run, as ``FilterResult/tookOffer``.
    public var tookOffer = false
    public init(exitRequested: Bool = false, resyncNeeded: Bool = false, tookOffer: Bool = false) {
        self.exitRequested = exitRequested; self.resyncNeeded = resyncNeeded; self.tookOffer = tookOffer
    }
}
