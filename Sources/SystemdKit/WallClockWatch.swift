import CSystemd
import Glibc
import SystemPackage

/// Tells when the wall clock (CLOCK_REALTIME) is set, by hand or by NTP stepping it: a timerfd
/// armed far in the future with `TFD_TIMER_CANCEL_ON_SET`, whose read fails with `ECANCELED`
/// when the clock is set (as systemd's manager watches for time changes). Lives on the loop.
public final class WallClockWatch {
    private let fd: FileDescriptor
    private var source: EventSource?

    /// Calls `handler` on `loop` each time the wall clock is set. The corresponding C calls are
    /// `timerfd_create(CLOCK_REALTIME)` and `timerfd_settime(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET)`.
    public init(loop: EventLoop, _ handler: @escaping () -> Void) throws(Errno) {
        let raw = timerfd_create(CLOCK_REALTIME, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard raw >= 0 else { throw Errno.last }
        fd = FileDescriptor(rawValue: raw)
        try arm()
        source = try loop.addIO(fd: raw, events: .readable) { [unowned self] _ in
            var expirations: UInt64 = 0
            let n = read(fd.rawValue, &expirations, MemoryLayout<UInt64>.size)
            guard n < 0, errno == ECANCELED else { return }
            try? arm()  // a set clock cancels the timer: arm it again for the next one
            handler()
        }
    }

    deinit {
        source?.cancel()
        try? fd.close()
    }

    private func arm() throws(Errno) {
        var spec = itimerspec()
        spec.it_value.tv_sec = Int.max / 2  // never expires: only a set clock wakes it
        guard timerfd_settime(fd.rawValue, Int32(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET), &spec, nil) == 0 else {
            throw Errno.last
        }
    }
}
