/// Identifies one brokered device inside an `InputFilter` (handed out by `addDevice`).
public struct DeviceID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public var description: String { "device \(rawValue)" }
}

/// Caller-owned, reusable storage for filtered frames. The filter appends whole frames (each
/// ending in `SYN_REPORT`); the broker writes each frame with one `write(2)` to the device's
/// clone and calls `removeAll()`, which keeps the capacity, so steady state allocates nothing.
public struct OutputBuffer: Sendable {
    public struct Frame: Sendable, Equatable {
        public var device: DeviceID
        public var range: Range<Int>
    }

    public private(set) var events: [InputEvent] = []
    public private(set) var frames: [Frame] = []

    public init(capacity: Int = 1024) {
        events.reserveCapacity(capacity)
        frames.reserveCapacity(capacity / 4)
    }

    public var isEmpty: Bool { frames.isEmpty }

    public func events(of frame: Frame) -> ArraySlice<InputEvent> { events[frame.range] }

    /// The frames and the events they index, lent without a copy or a reference count per
    /// frame (the broker's flush: `UnsafeBufferPointer(rebasing: events[frame.range])`).
    /// Inlinable, so that it is specialized where it is called: a generic call across modules
    /// cost more than the slices it saves.
    @inlinable
    public func withFrames(_ body: (UnsafeBufferPointer<Frame>, UnsafeBufferPointer<InputEvent>) -> Void) {
        frames.withUnsafeBufferPointer { frames in events.withUnsafeBufferPointer { events in body(frames, events) } }
    }

    public mutating func removeAll() {
        events.removeAll(keepingCapacity: true)
        frames.removeAll(keepingCapacity: true)
    }

    @inline(__always)
    mutating func append(_ event: InputEvent) { events.append(event) }

    @inline(__always)
    mutating func removeLast() { events.removeLast() }

    /// Closes the frame that started at `start`: if anything was appended since, adds the
    /// `SYN_REPORT` (with `time`'s timestamp) and records the frame; otherwise emits nothing.
    @inline(__always)
    mutating func commitFrame(device: DeviceID, from start: Int, time: InputEvent) {
        guard events.count > start else { return }
        events.append(time.with(type: EV.syn, code: SYN.report, value: 0))
        frames.append(Frame(device: device, range: start..<events.count))
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
