import CSystemd
import Glibc
import Synchronization

/// The daemon's single event loop, over `sd_event`.
///
/// One thread runs the loop and owns every fd: the bus, timers, signals, io sources. All their
/// callbacks run on that thread. The loop is also a Swift `SerialExecutor`, so an actor can make
/// it its executor and C callbacks can enter the actor with `assumeIsolated`; other threads hand
/// work to it with `execute(_:)` or `perform(_:)`.
///
/// Sources and buses attached to a loop must be created, used and released on the loop thread
/// (sd-event and sd-bus are not thread-safe), or before it runs on the thread that will run it.
public final class EventLoop: SerialExecutor, @unchecked Sendable {
    let handle: OpaquePointer
    private let wakeFD: Int32
    private var wakeSource: OpaquePointer?
    private let jobs = Mutex<[Job]>([])
    private let thread = Atomic<UInt>(0)  // pthread_t of the running loop, 0 when not running

    private enum Job {
        case task(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    /// A new loop. The corresponding C call is `sd_event_new`.
    public convenience init() throws(Errno) {
        var e: OpaquePointer?
        try Errno.check(sd_event_new(&e))
        try self.init(adopting: e!)
    }

    private init(adopting e: OpaquePointer) throws(Errno) {
        handle = e
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else {
            sd_event_unref(e)  // not fully initialised yet: no deinit runs
            throw Errno.current
        }
        wakeFD = fd
        let me = Unmanaged.passUnretained(self).toOpaque()
        var source: OpaquePointer?
        let r = sd_event_add_io(
            e, &source, fd, UInt32(EPOLLIN.rawValue),
            { _, fd, _, userdata in
                var count: UInt64 = 0
                _ = read(fd, &count, 8)
                Unmanaged<EventLoop>.fromOpaque(userdata!).takeUnretainedValue().drainJobs()
                return 0
            }, me)
        // Every property is set by now, so a throw runs deinit, which closes the fd and unrefs
        // the loop: doing it here too would close and unref twice.
        guard r >= 0 else { throw Errno(rawValue: -r) }
        wakeSource = source
    }

    deinit {
        sd_event_source_disable_unref(wakeSource)
        close(wakeFD)
        sd_event_unref(handle)
    }

    // MARK: running

    /// Runs the loop on the calling thread until `exit(code:)`; returns the exit code.
    /// The corresponding C call is `sd_event_loop`.
    @discardableResult
    public func run() throws(Errno) -> Int32 {
        thread.store(UInt(pthread_self()), ordering: .sequentiallyConsistent)
        defer { thread.store(0, ordering: .sequentiallyConsistent) }
        drainJobs()
        return try Errno.check(sd_event_loop(handle))
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
            sd_event_exit(handle, code)
        } else {
            let e = UnsafeSendable(handle)
            execute { sd_event_exit(e.value, code) }
        }
    }

    /// Whether the caller runs on the thread that runs this loop.
    public var isOnLoopThread: Bool {
        let t = thread.load(ordering: .sequentiallyConsistent)
        return t != 0 && pthread_equal(pthread_t(t), pthread_self()) != 0
    }

    /// Now, on `clock`, as sd-event sees it (cached per iteration). `sd_event_now`.
    public func now(_ clock: LoopClock = .monotonic) -> UInt64 {
        var usec: UInt64 = 0
        _ = sd_event_now(handle, clock.id, &usec)
        return usec
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
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
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
