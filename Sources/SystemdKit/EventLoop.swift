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
public final class EventLoop: SerialExecutor, @unchecked Sendable {
    let handle: OpaquePointer
    private let wakeFD: FileDescriptor
    private var wakeSource: OpaquePointer?
    private var wakeBox: CEvent.IOBox?
    private let jobs = Mutex<[Job]>([])
    private let thread = Atomic<UInt>(0)  // pthread_t of the running loop, 0 when not running

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
        CEvent.unref(handle)
    }

    // MARK: running

    /// Runs the loop on the calling thread until `exit(code:)`; returns the exit code.
    /// The corresponding C call is `sd_event_loop`.
    @discardableResult
    public func run() throws(Errno) -> Int32 {
        thread.store(UInt(pthread_self()), ordering: .sequentiallyConsistent)
        defer { thread.store(0, ordering: .sequentiallyConsistent) }
        drainJobs()
        return try CEvent.loop(handle)
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
        } else {
            let e = UnsafeSendable(handle)
            execute { CEvent.exit(e.value, code: code) }
        }
    }

    /// Whether the caller runs on the thread that runs this loop.
    public var isOnLoopThread: Bool {
        let t = thread.load(ordering: .sequentiallyConsistent)
        return t != 0 && pthread_equal(pthread_t(t), pthread_self()) != 0
    }

    /// Now, on `clock`, as sd-event sees it (cached per iteration). `sd_event_now`.
    public func now(_ clock: LoopClock = .monotonic) -> UInt64 {
        CEvent.now(handle, clock: clock.id)
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
