import CSystemd  // epoll, through the shim
import Glibc
import Synchronization
import SystemPackage

/// The daemon's single event loop, over `sd_event`.
///
/// One thread runs the loop and owns every fd: the bus, timers, signals, io sources. All their
/// callbacks run on that thread. The loop is also a Swift `SerialExecutor`, so an actor can make
/// it its executor and C callbacks can enter the actor with `assumeIsolated`; other threads hand
/// work to it with `execute(_:)` or `perform(_:)`.
///
/// Sources and buses attached to a loop must be created, used and released on the loop thread
/// (sd-event and sd-bus are not thread-safe), or before it runs on the thread that will run it.
///
/// Besides sd-event's sources, the loop has *direct* ones (``addDirectIO(fd:_:)``): fds it
/// polls on an epoll of its own, next to sd-event's, whose handlers run without sd-event's
/// work per wake-up (docs/benchmarks.md § Instructions per frame). The input broker's nodes
/// are read that way.
public final class EventLoop: SerialExecutor, @unchecked Sendable {
    let handle: OpaquePointer
    private let wakeFD: FileDescriptor
    private var wakeSource: OpaquePointer?
    private var wakeBox: CEvent.IOBox?
    private let jobs = Mutex<[Job]>([])
    private let thread = Atomic<UInt>(0)  // pthread_t of the running loop, 0 when not running

    // Direct sources (the extension at the end of this file). All of it is the loop thread's alone, read on
    // every wake-up, so Swift's run-time exclusivity check (a class's stored properties) is left
    // out for it: nothing here is lent `inout` across a handler.
    /// The loop's own epoll: sd-event's fd and every direct source's. -1 until the first one.
    @exclusivity(unchecked) private var epollFD: Int32 = -1
    @exclusivity(unchecked) private var direct: [DirectSlot] = []
    @exclusivity(unchecked) private var freeDirect: [Int] = []
    @exclusivity(unchecked) private var directCount = 0
    /// Set by whatever may have changed sd-event's or sd-bus's state while sd-event waits armed
    /// (a direct handler added a timer, sent a message): sd-event then takes a turn before the
    /// loop waits again, as if its own fd had woken it.
    @exclusivity(unchecked) private var cycleRequested = false
    /// While a direct handler runs: sd-event's cached time is stale then (``now(_:)``).
    @exclusivity(unchecked) private var inDirectHandler = false
    private let epollEvents = UnsafeMutablePointer<epoll_event>.allocate(capacity: EventLoop.epollCapacity)
    private static let epollCapacity = 16
    /// The epoll tag of sd-event's own fd (a direct source's is its generation and slot).
    private static let sdEventTag = UInt64.max

    private struct DirectSlot {
        var handler: (() -> Void)?
        var generation: UInt32
    }

    private enum Job {
        case task(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    /// A new loop. The corresponding C call is `sd_event_new`.
    public convenience init() throws(Errno) {
        try self.init(adopting: try CEvent.new())
    }

    private init(adopting e: OpaquePointer) throws(Errno) {
        handle = e
        let fd: FileDescriptor
        do {
            fd = try CEvent.newWakeFD()
        } catch {
            CEvent.unref(e)  // not fully initialised yet: no deinit runs
            throw error
        }
        wakeFD = fd
        let box = CEvent.IOBox { [unowned(unsafe) self] _ in
            var count: UInt64 = 0
            _ = try? withUnsafeMutableBytes(of: &count) { try fd.read(into: $0, retryOnInterrupt: false) }
            drainJobs()
        }
        wakeBox = box
        // Every property is set by now, so a throw runs deinit, which closes the fd and unrefs
        // the loop: doing it here too would close and unref twice.
        wakeSource = try CEvent.addIO(e, fd: fd.rawValue, events: IOEvents.readable.rawValue, box: box)
    }

    deinit {
        CEvent.disableUnref(wakeSource)
        try? wakeFD.close()
        if epollFD >= 0 { Glibc.close(epollFD) }
        epollEvents.deallocate()
        CEvent.unref(handle)
    }

    // MARK: running

    /// Runs the loop on the calling thread until `exit(code:)`; returns the exit code.
    ///
    /// What `sd_event_loop` does, one `sd_event_run` at a time, with one difference once there
    /// are direct sources: while sd-event has nothing pending, the loop waits on its own epoll
    /// (sd-event's fd and the direct sources' fds), runs the direct handlers whose fds are ready
    /// and leaves sd-event armed, so that an input frame costs an `epoll_wait` and its handler,
    /// not sd-event's preparing and polling; sd-event takes its turn when its fd is ready or
    /// a direct handler asked for it (``requestCycle()``). While sd-event has sources pending
    /// (a busy bus), the direct fds are polled without waiting before each dispatch, so that
    /// neither side starves the other.
    @discardableResult
    public func run() throws(Errno) -> Int32 {
        thread.store(UInt(pthread_self()), ordering: .sequentiallyConsistent)
        defer { thread.store(0, ordering: .sequentiallyConsistent) }
        drainJobs()
        while !CEvent.isFinished(handle) {
            cycleRequested = false
            var pending = try CEvent.prepare(handle)
            if pending == 0 {
                pending = directCount == 0 ? try CEvent.wait(handle, usec: .max) : try waitArmed()
            } else if directCount > 0 {
                _ = try pollDirect(timeout: 0)
            }
            if pending > 0 { _ = try CEvent.dispatch(handle) }
        }
        return CEvent.exitCode(handle)
    }

    /// With sd-event armed: runs direct handlers until sd-event's fd is ready or one of them
    /// asks for sd-event's turn, then lets sd-event see what is ready (`sd_event_wait`, no wait).
    private func waitArmed() throws(Errno) -> Int32 {
        while true {
            let sdEventReady = try pollDirect(timeout: -1)
            if sdEventReady || cycleRequested { return try CEvent.wait(handle, usec: 0) }
        }
    }

    /// One `epoll_wait` on the loop's own epoll; runs the handler of each direct source found
    /// ready (unless an earlier one in the same batch removed it); returns whether sd-event's fd
    /// was ready.
    private func pollDirect(timeout: Int32) throws(Errno) -> Bool {
        let count = csd_epoll_wait(epollFD, epollEvents, Int32(Self.epollCapacity), timeout)
        if count < 0 {
            if count == -EINTR { return false }
            throw Errno(rawValue: -count)
        }
        var sdEventReady = false
        for i in 0..<Int(count) {
            let tag = epollEvents[i].data.u64
            if tag == Self.sdEventTag {
                sdEventReady = true
                continue
            }
            let slot = Int(truncatingIfNeeded: tag & 0xffff_ffff)
            guard slot < direct.count, direct[slot].generation == UInt32(truncatingIfNeeded: tag >> 32),
                let handler = direct[slot].handler
            else { continue }
            inDirectHandler = true
            handler()
            inDirectHandler = false
        }
        return sdEventReady
    }

    /// Runs the loop on a new thread (for clients and tests; the daemon runs it on its main
    /// thread). Returns once the thread runs the loop.
    public func startThread() throws(Errno) {
        let start = ThreadStart(loop: self)
        let box = Unmanaged.passRetained(start).toOpaque()
        var tid = pthread_t()
        let rc = pthread_create(
            &tid, nil,
            { arg in
                let start = Unmanaged<ThreadStart>.fromOpaque(arg!).takeRetainedValue()
                let loop = start.loop
                loop.thread.store(UInt(pthread_self()), ordering: .sequentiallyConsistent)
                start.started.store(true, ordering: .sequentiallyConsistent)
                _ = try? loop.run()
                return nil
            }, box)
        guard rc == 0 else {
            Unmanaged<ThreadStart>.fromOpaque(box).release()
            throw Errno(rawValue: rc)
        }
        pthread_detach(tid)
        while !start.started.load(ordering: .sequentiallyConsistent) { sched_yield() }
    }

    private final class ThreadStart: @unchecked Sendable {
        let loop: EventLoop
        let started = Atomic<Bool>(false)
        init(loop: EventLoop) { self.loop = loop }
    }

    /// Makes `run()` return `code` after the current iteration. Callable from any thread.
    /// The corresponding C call is `sd_event_exit`.
    public func exit(code: Int32 = 0) {
        if isOnLoopThread {
            CEvent.exit(handle, code: code)
            requestCycle()
        } else {
            let e = UnsafeSendable(handle)
            execute { CEvent.exit(e.value, code: code) }
        }
    }

    /// Whether a thread runs the loop now: `run()` has not returned since `startThread()` or
    /// its call.
    public var isRunning: Bool { thread.load(ordering: .sequentiallyConsistent) != 0 }

    /// Whether the caller runs on the thread that runs this loop.
    public var isOnLoopThread: Bool {
        let t = thread.load(ordering: .sequentiallyConsistent)
        return t != 0 && pthread_equal(pthread_t(t), pthread_self()) != 0
    }

    /// Now, on `clock`, as sd-event sees it (cached per iteration). `sd_event_now`. In a direct
    /// handler, which runs while sd-event waits, the clock's own time (`clock_gettime`).
    public func now(_ clock: LoopClock = .monotonic) -> UInt64 {
        guard inDirectHandler else { return CEvent.now(handle, clock: clock.id) }
        var ts = timespec()
        clock_gettime(clock.id, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
    }

    // MARK: handing work to the loop

    /// Runs `work` on the loop thread, soon. Callable from any thread.
    public func execute(_ work: @escaping @Sendable () -> Void) { wake(.closure(work)) }

    /// Runs `body` on the loop thread and returns its result to the awaiting task.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            execute { continuation.resume(with: Result { try body() }) }
        }
    }

    private func wake(_ job: Job) {
        jobs.withLock { $0.append(job) }
        let one: UInt64 = 1
        _ = try? withUnsafeBytes(of: one) { try wakeFD.write($0, retryOnInterrupt: false) }
    }

    private func drainJobs() {
        let batch = jobs.withLock { queue -> [Job] in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        let executor = asUnownedSerialExecutor()
        for job in batch {
            switch job {
            case .task(let j): j.runSynchronously(on: executor)
            case .closure(let work): work()
            }
        }
    }

    // MARK: SerialExecutor

    public func enqueue(_ job: consuming ExecutorJob) { wake(.task(UnownedJob(job))) }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    /// Lets `assumeIsolated` succeed inside sd-event and sd-bus callbacks, which are not tasks.
    public func checkIsolated() {
        precondition(isOnLoopThread, "not on the sd_event loop thread")
    }
}

/// The clock of a timer source.
public enum LoopClock: Sendable {
    case monotonic
    case realtime
    case boottime

    var id: clockid_t {
        switch self {
        case .monotonic: CLOCK_MONOTONIC
        case .realtime: CLOCK_REALTIME
        case .boottime: CLOCK_BOOTTIME
        }
    }
}

/// Wraps a C pointer that is handed, unused, to the loop thread that owns it.
struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

// MARK: direct sources

extension EventLoop {
    /// Calls `handler` whenever `fd` is readable, from the loop's own epoll rather than
    /// sd-event's (see ``run()``): for an fd read so often that sd-event's work per wake-up
    /// would be most of the cost, like an input node's. The fd stays the caller's and must stay
    /// open until the source is cancelled. Level-triggered, like sd-event's io sources.
    ///
    /// The handler runs while sd-event is armed and waiting. Whatever it does to sd-event —
    /// adding, changing or cancelling a source, `exit` — asks sd-event for its turn on its own;
    /// anything else that sd-event or sd-bus must act on before the loop waits again (a message
    /// sent, a callback into code that may do either) needs a ``requestCycle()``.
    public func addDirectIO(fd: Int32, _ handler: @escaping () -> Void) throws(Errno) -> EventSource {
        if epollFD < 0 { try makeEpoll() }
        let slot: Int
        if let free = freeDirect.popLast() {
            slot = free
        } else {
            slot = direct.count
            direct.append(DirectSlot(handler: nil, generation: 0))
        }
        direct[slot].generation &+= 1
        direct[slot].handler = handler
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = UInt64(direct[slot].generation) << 32 | UInt64(slot)
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 else {
            let error = Errno.last
            releaseDirect(slot)
            throw error
        }
        directCount += 1
        return EventSource(loop: self, directSlot: slot, fd: fd)
    }

    /// Gives sd-event its turn before the loop waits again (from a direct handler that did
    /// something sd-event or sd-bus must see: sent on a bus, called out to other code).
    public func requestCycle() { cycleRequested = true }

    func removeDirect(slot: Int, fd: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event)
        releaseDirect(slot)
        directCount -= 1
    }

    /// Frees a slot; the generation moves on, so that an event for it still in this wake-up's
    /// batch finds no handler.
    private func releaseDirect(_ slot: Int) {
        direct[slot].handler = nil
        direct[slot].generation &+= 1
        freeDirect.append(slot)
    }

    private func makeEpoll() throws(Errno) {
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw Errno.last }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.sdEventTag
        do throws(Errno) {
            guard epoll_ctl(fd, EPOLL_CTL_ADD, try CEvent.fd(handle), &event) == 0 else { throw Errno.last }
        } catch {
            Glibc.close(fd)
            throw error
        }
        epollFD = fd
    }
}
