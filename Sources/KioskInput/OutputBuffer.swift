/// Identifies one brokered device inside an `InputFilter` (handed out by `addDevice`).
public struct DeviceID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public var description: String { "device \(rawValue)" }
}

/// Caller-owned, reusable storage for filtered frames. The filter appends whole frames (each
/// ending in `SYN_REPORT`); the broker writes each frame with one `write(2)` to the device's
/// clone and calls `removeAll()`. The storage is grown by appends and never shrunk, and
/// `removeAll()` only sets the two counts back to zero, so steady state allocates nothing and
/// clearing costs two stores.
///
/// The events and frames live in raw memory the buffer owns (``Storage``), not in arrays: an
/// append is a comparison and a store, where an array's element store checked the array's
/// uniqueness each time (docs/benchmarks.md § Instructions per frame). A value like any other:
/// the filter's public entries (`InputFilter.process`, `setPolicy`, `resync`) make the storage
/// the buffer's own (``makeUnique()``) before they append, so a copy never sees another's
/// appends.
public struct OutputBuffer: @unchecked Sendable {
    public struct Frame: Sendable, Equatable {
        public var device: DeviceID
        public var range: Range<Int>
    }

    /// Owns the raw memory; the buffer keeps its own copies of the two base addresses and
    /// capacities beside it, so an append does not go through the reference.
    @usableFromInline final class Storage {
        @usableFromInline let events: UnsafeMutablePointer<InputEvent>
        @usableFromInline let eventCapacity: Int
        @usableFromInline let frames: UnsafeMutablePointer<Frame>
        @usableFromInline let frameCapacity: Int

        init(eventCapacity: Int, frameCapacity: Int) {
            self.eventCapacity = max(eventCapacity, 16)
            self.frameCapacity = max(frameCapacity, 4)
            events = .allocate(capacity: self.eventCapacity)
            frames = .allocate(capacity: self.frameCapacity)
        }

        /// A copy holding `eventCount` events and `frameCount` frames of `other`.
        convenience init(copying other: Storage, eventCount: Int, frameCount: Int) {
            self.init(eventCapacity: other.eventCapacity, frameCapacity: other.frameCapacity)
            events.initialize(from: other.events, count: eventCount)
            frames.initialize(from: other.frames, count: frameCount)
        }

        deinit {
            // `InputEvent` and `Frame` are trivial: nothing to deinitialize.
            events.deallocate()
            frames.deallocate()
        }
    }

    /// A read-only view of some of the buffer's events or frames; it keeps the storage alive.
    public struct View<Element>: RandomAccessCollection {
        @usableFromInline let owner: Storage
        @usableFromInline let base: UnsafePointer<Element>
        public let count: Int

        @inlinable init(owner: Storage, base: UnsafePointer<Element>, count: Int) {
            self.owner = owner
            self.base = base
            self.count = count
        }

        public var startIndex: Int { 0 }
        public var endIndex: Int { count }
        public subscript(position: Int) -> Element {
            precondition(position >= 0 && position < count, "OutputBuffer.View index out of range")
            return withExtendedLifetime(owner) { base[position] }
        }
    }

    @usableFromInline var storage: Storage
    /// The events appended since the last `removeAll()` are `eventBase[..<eventCount]`; what
    /// lies beyond up to `eventCapacity` is left from earlier frames or uninitialized, never
    /// read.
    @usableFromInline var eventBase: UnsafeMutablePointer<InputEvent>
    @usableFromInline var eventCapacity: Int
    @usableFromInline var eventCount = 0
    @usableFromInline var frameBase: UnsafeMutablePointer<Frame>
    @usableFromInline var frameCapacity: Int
    @usableFromInline var frameCount = 0

    public init(capacity: Int = 1024) {
        self.init(storage: Storage(eventCapacity: capacity, frameCapacity: capacity / 4))
    }

    private init(storage: Storage) {
        self.storage = storage
        eventBase = storage.events
        eventCapacity = storage.eventCapacity
        frameBase = storage.frames
        frameCapacity = storage.frameCapacity
    }

    public var isEmpty: Bool { frameCount == 0 }

    /// The events appended since the last `removeAll()`, every frame's in order.
    public var events: View<InputEvent> { View(owner: storage, base: eventBase, count: eventCount) }

    /// The frames appended since the last `removeAll()`, each a range of ``events``.
    public var frames: View<Frame> { View(owner: storage, base: frameBase, count: frameCount) }

    /// One frame's events, indexed from zero.
    public func events(of frame: Frame) -> View<InputEvent> {
        precondition(frame.range.lowerBound >= 0 && frame.range.upperBound <= eventCount, "not a frame of this buffer")
        return View(owner: storage, base: eventBase + frame.range.lowerBound, count: frame.range.count)
    }

    /// Lends each frame's events in turn, in order, without a copy, then empties the buffer (as
    /// ``removeAll()``): the broker's flush. Inlinable, so that it is specialized where it is
    /// called: a generic call across modules cost more than the copies it saves.
    @inlinable
    public mutating func drain(_ body: (Frame, UnsafeBufferPointer<InputEvent>) -> Void) {
        // `storage` holds the memory for the call: the buffer is the caller's, inout, throughout.
        let events = UnsafePointer(eventBase)
        for frame in UnsafeBufferPointer(start: frameBase, count: frameCount) {
            body(frame, UnsafeBufferPointer(start: events + frame.range.lowerBound, count: frame.range.count))
        }
        removeAll()
    }

    /// Empties the buffer and keeps its storage.
    public mutating func removeAll() {
        eventCount = 0
        frameCount = 0
    }

    /// Makes the storage this buffer's own (a copy of what is in use when another buffer
    /// shares it), so that appends touch no other value's events. The filter's public entries
    /// call it once before they append.
    @inline(__always)
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { copyStorage() }
    }

    @inline(never)
    private mutating func copyStorage() {
        self = OutputBuffer(
            storage: Storage(copying: storage, eventCount: eventCount, frameCount: frameCount),
            eventCount: eventCount, frameCount: frameCount)
    }

    private init(storage: Storage, eventCount: Int, frameCount: Int) {
        self.init(storage: storage)
        self.eventCount = eventCount
        self.frameCount = frameCount
    }

    /// How many events were appended since the last `removeAll()`.
    var count: Int {
        @inline(__always) get { eventCount }
    }

    @inline(__always)
    mutating func append(_ event: InputEvent) {
        if eventCount == eventCapacity { growEvents() }
        (eventBase + eventCount).initialize(to: event)
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
        if frameCount == frameCapacity { growFrames() }
        (frameBase + frameCount).initialize(to: Frame(device: device, range: start..<eventCount))
        frameCount += 1
    }

    @inline(never)
    private mutating func growEvents() { grow(events: eventCapacity * 2, frames: frameCapacity) }

    @inline(never)
    private mutating func growFrames() { grow(events: eventCapacity, frames: frameCapacity * 2) }

    /// Moves what is in use to storage of the given capacities (the old storage goes when no
    /// other buffer holds it).
    private mutating func grow(events: Int, frames: Int) {
        let bigger = Storage(eventCapacity: events, frameCapacity: frames)
        bigger.events.initialize(from: eventBase, count: eventCount)
        bigger.frames.initialize(from: frameBase, count: frameCount)
        self = OutputBuffer(storage: bigger, eventCount: eventCount, frameCount: frameCount)
    }
}

extension OutputBuffer.View: Equatable where Element: Equatable {
    public static func == (a: Self, b: Self) -> Bool { a.elementsEqual(b) }
}

extension OutputBuffer.View: CustomStringConvertible {
    public var description: String { Array(self).description }
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
    /// The display is dark (``FilterPolicy/displayOff``) and this event pressed a key, button or
    /// touch: it wakes the display, and reaches no app.
    public var woke = false
    /// The cleaning gesture (``FilterPolicy/cleaningGesture``, ``FilterPolicy/touchCleaningGesture``)
    /// completed with this event: start cleaning.
    public var cleaningRequested = false
    public init(
        exitRequested: Bool = false, resyncNeeded: Bool = false, promptKey: PromptKey? = nil, tookOffer: Bool = false,
        woke: Bool = false, cleaningRequested: Bool = false
    ) {
        self.exitRequested = exitRequested; self.resyncNeeded = resyncNeeded; self.promptKey = promptKey
        self.tookOffer = tookOffer; self.woke = woke; self.cleaningRequested = cleaningRequested
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
    /// A press woke the dark display in the run, as ``FilterResult/woke``.
    public var woke = false
    /// The cleaning gesture completed in the run, as ``FilterResult/cleaningRequested``.
    public var cleaningRequested = false
    public init(
        exitRequested: Bool = false, resyncNeeded: Bool = false, tookOffer: Bool = false, woke: Bool = false,
        cleaningRequested: Bool = false
    ) {
        self.exitRequested = exitRequested; self.resyncNeeded = resyncNeeded; self.tookOffer = tookOffer
        self.woke = woke; self.cleaningRequested = cleaningRequested
    }
}
