import CSystemd  // the EPOLL* constants
import Glibc
import SystemPackage

/// An sd-event source (io, timer, signal, defer, post), or one of the loop's direct io sources
/// (``EventLoop/addDirectIO(fd:_:)``). Keep it as long as the source should fire: `cancel()` or
/// releasing it (on the loop thread) removes it from the loop.
public final class EventSource {
    private var handle: OpaquePointer?
    private let box: AnyObject?
    /// The loop, told of every change (``EventLoop/requestCycle()``): a direct handler may make
    /// it while sd-event waits armed. Weak: sd-event's own sources may outlive the loop object.
    private weak var loop: EventLoop?
    /// A direct source's slot and fd; nil for sd-event's, and once cancelled.
    private var direct: (slot: Int, fd: Int32)?

    init(loop: EventLoop, handle: OpaquePointer, box: AnyObject) {
        self.loop = loop
        self.handle = handle
        self.box = box
    }

    init(loop: EventLoop, directSlot: Int, fd: Int32) {
        self.loop = loop
        box = nil
        direct = (directSlot, fd)
    }

    deinit { cancel() }

    /// Disables and releases the source. The corresponding C call is `sd_event_source_disable_unref`
    /// (for a direct source, `epoll_ctl(EPOLL_CTL_DEL)` on the loop's epoll).
    public func cancel() {
        if let source = direct {
            direct = nil
            loop?.removeDirect(slot: source.slot, fd: source.fd)
            return
        }
        guard let h = handle else { return }
        handle = nil
        CEvent.disableUnref(h)
        loop?.requestCycle()
    }

    /// Turns the source on (`on`), off, or on for one more dispatch (`oneshot`).
    /// The corresponding C call is `sd_event_source_set_enabled`. Not for a direct source
    /// (`EINVAL`; cancel it instead).
    public func setEnabled(_ mode: Enabled) throws(Errno) {
        if direct != nil { throw .invalidArgument }
        guard let h = handle else { throw .canceled }
        try CEvent.setEnabled(h, mode.rawValue)
        loop?.requestCycle()
    }

    /// Re-arms a timer `interval` from now. `sd_event_source_set_time_relative`. Not for a
    /// direct source (`EINVAL`).
    public func setTime(after interval: Duration) throws(Errno) {
        if direct != nil { throw .invalidArgument }
        guard let h = handle else { throw .canceled }
        try CEvent.setTimeRelative(h, interval.microseconds)
        loop?.requestCycle()
    }

    /// Fires a timer once more, `interval` from now (after it fired, or to move it).
    public func rearm(after interval: Duration) throws(Errno) {
        try setTime(after: interval)
        try setEnabled(.oneshot)
    }

    public enum Enabled: Int32, Sendable {
        case off = 0  // SD_EVENT_OFF
        case on = 1  // SD_EVENT_ON
        case oneshot = -1  // SD_EVENT_ONESHOT
    }
}

/// Poll events of an io source.
public struct IOEvents: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let readable = IOEvents(rawValue: UInt32(EPOLLIN.rawValue))
    public static let writable = IOEvents(rawValue: UInt32(EPOLLOUT.rawValue))
    public static let error = IOEvents(rawValue: UInt32(EPOLLERR.rawValue))
    public static let hangup = IOEvents(rawValue: UInt32(EPOLLHUP.rawValue))
}

extension Duration {
    var microseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000_000)
    }
}

extension EventLoop {
    /// A source just added: while a direct handler runs, sd-event must see it before the loop
    /// waits again.
    private func newSource(handle: OpaquePointer, box: AnyObject) -> EventSource {
        requestCycle()
        return EventSource(loop: self, handle: handle, box: box)
    }

    /// Calls `handler` whenever `fd` has one of `events`. The fd stays the caller's.
    /// The corresponding C call is `sd_event_add_io`.
    public func addIO(fd: Int32, events: IOEvents, _ handler: @escaping (IOEvents) -> Void) throws(Errno) -> EventSource
    {
        let box = CEvent.IOBox { revents in handler(IOEvents(rawValue: revents)) }
        return newSource(handle: try CEvent.addIO(handle, fd: fd, events: events.rawValue, box: box), box: box)
    }

    /// Calls `handler` `delay` from now on `clock`, then every `repeating` if given.
    /// The corresponding C call is `sd_event_add_time_relative`.
    public func addTimer(
        clock: LoopClock = .monotonic, after delay: Duration, accuracy: Duration = .milliseconds(1),
        repeating: Duration? = nil, _ handler: @escaping () -> Void
    ) throws(Errno) -> EventSource {
        let box = CEvent.TimerBox(handler, repeatingMicroseconds: repeating?.microseconds)
        let source = try CEvent.addTimeRelative(
            handle, clock: clock.id, usec: delay.microseconds, accuracy: accuracy.microseconds, box: box)
        return newSource(handle: source, box: box)
    }

    /// Calls `handler` at `usec` (absolute, µs, on `clock`). The corresponding C call is `sd_event_add_time`.
    public func addTimer(
        clock: LoopClock, at usec: UInt64, accuracy: Duration = .milliseconds(1),
        _ handler: @escaping () -> Void
    ) throws(Errno) -> EventSource {
        let box = CEvent.TimerBox(handler, repeatingMicroseconds: nil)
        let source = try CEvent.addTime(handle, clock: clock.id, usec: usec, accuracy: accuracy.microseconds, box: box)
        return newSource(handle: source, box: box)
    }

    /// Calls `handler` when `signal` arrives. The signal is blocked on the calling thread (which
    /// must be the loop thread), as sd-event requires; block it in every thread first with
    /// `EventLoop.blockSignals(_:)` at the top of `main`, or another thread takes it.
    /// The corresponding C call is `sd_event_add_signal` with `SD_EVENT_SIGNAL_PROCMASK`.
    public func addSignal(_ signal: Int32, _ handler: @escaping (Int32) -> Void) throws(Errno) -> EventSource {
        let box = CEvent.SignalBox(handler)
        return newSource(handle: try CEvent.addSignal(handle, signal, box: box), box: box)
    }

    /// Blocks `signals` on the calling thread; threads started afterwards inherit the mask.
    /// Call it first thing in `main` before adding signal sources. `pthread_sigmask(SIG_BLOCK)`.
    public static func blockSignals(_ signals: [Int32]) throws(Errno) {
        var set = sigset_t()
        sigemptyset(&set)
        for s in signals { sigaddset(&set, s) }
        let rc = pthread_sigmask(SIG_BLOCK, &set, nil)
        if rc != 0 { throw Errno(rawValue: rc) }
    }

    /// Calls `handler` once, on the next iteration. The corresponding C call is `sd_event_add_defer`.
    public func addDefer(_ handler: @escaping () -> Void) throws(Errno) -> EventSource {
        let box = CEvent.PlainBox(handler)
        return newSource(handle: try CEvent.addDefer(handle, box: box), box: box)
    }

    /// Calls `handler` after any iteration in which another non-post source fired.
    /// The corresponding C call is `sd_event_add_post`.
    public func addPost(_ handler: @escaping () -> Void) throws(Errno) -> EventSource {
        let box = CEvent.PlainBox(handler)
        return newSource(handle: try CEvent.addPost(handle, box: box), box: box)
    }
}
