import CSystemd
import Glibc
import SystemPackage

/// The sd-event C calls SystemdKit uses, each turning `-errno` into a thrown `Errno` (CBus's
/// counterpart for the loop). Nothing here is public: the typed API is `EventLoop` and
/// `EventSource`. A source's handler lives in a box the `EventSource` keeps; the source's
/// userdata points at it unretained.
enum CEvent {
    // MARK: loops

    static func new() throws(Errno) -> OpaquePointer {
        var e: OpaquePointer?
        try Errno.check(sd_event_new(&e))
        return e!
    }

    static func unref(_ e: OpaquePointer) { sd_event_unref(e) }

    // One iteration in its three steps (what `sd_event_run` does), so that the loop can wait on
    // its own epoll in between (EventLoop.run).
    static func prepare(_ e: OpaquePointer) throws(Errno) -> Int32 { try Errno.check(sd_event_prepare(e)) }
    static func wait(_ e: OpaquePointer, usec: UInt64) throws(Errno) -> Int32 {
        try Errno.check(sd_event_wait(e, usec))
    }
    static func dispatch(_ e: OpaquePointer) throws(Errno) -> Int32 { try Errno.check(sd_event_dispatch(e)) }
    static func isFinished(_ e: OpaquePointer) -> Bool { sd_event_get_state(e) == Int32(SD_EVENT_FINISHED) }
    static func exitCode(_ e: OpaquePointer) -> Int32 {
        var code: Int32 = 0
        _ = sd_event_get_exit_code(e, &code)
        return code
    }
    /// The epoll fd behind every source of `e`: readable when one of them is.
    static func fd(_ e: OpaquePointer) throws(Errno) -> Int32 { try Errno.check(sd_event_get_fd(e)) }

    static func exit(_ e: OpaquePointer, code: Int32) { _ = sd_event_exit(e, code) }

    /// `sd_event_now`: the loop's cached time on `clock`, in µs (0 if the clock is not supported).
    static func now(_ e: OpaquePointer, clock: clockid_t) -> UInt64 {
        var usec: UInt64 = 0
        _ = sd_event_now(e, clock, &usec)
        return usec
    }

    /// A non-blocking `eventfd(2)` for waking the loop from other threads.
    static func newWakeFD() throws(Errno) -> FileDescriptor {
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else { throw Errno.last }
        return FileDescriptor(rawValue: fd)
    }

    // MARK: sources

    static func disableUnref(_ source: OpaquePointer?) { sd_event_source_disable_unref(source) }

    static func setEnabled(_ source: OpaquePointer, _ mode: Int32) throws(Errno) {
        try Errno.check(sd_event_source_set_enabled(source, mode))
    }

    /// `sd_event_source_set_priority(SD_EVENT_PRIORITY_IMPORTANT)`: dispatched before normal sources.
    static func setPriorityImportant(_ source: OpaquePointer) throws(Errno) {
        try Errno.check(sd_event_source_set_priority(source, Int64(SD_EVENT_PRIORITY_IMPORTANT)))
    }

    static func setTimeRelative(_ source: OpaquePointer, _ usec: UInt64) throws(Errno) {
        try Errno.check(sd_event_source_set_time_relative(source, usec))
    }

    final class IOBox {
        let handler: (UInt32) -> Void
        init(_ handler: @escaping (UInt32) -> Void) { self.handler = handler }
    }

    final class TimerBox {
        let handler: () -> Void
        /// For a repeating timer: re-armed this many µs later, before `handler` runs.
        let repeatingMicroseconds: UInt64?
        init(_ handler: @escaping () -> Void, repeatingMicroseconds: UInt64?) {
            self.handler = handler
            self.repeatingMicroseconds = repeatingMicroseconds
        }
    }

    final class SignalBox {
        let handler: (Int32) -> Void
        init(_ handler: @escaping (Int32) -> Void) { self.handler = handler }
    }

    final class PlainBox {
        let handler: () -> Void
        init(_ handler: @escaping () -> Void) { self.handler = handler }
    }

    /// `sd_event_add_io` calling `box` with the revents.
    static func addIO(_ e: OpaquePointer, fd: Int32, events: UInt32, box: IOBox) throws(Errno) -> OpaquePointer {
        var s: OpaquePointer?
        try Errno.check(
            sd_event_add_io(
                e, &s, fd, events,
                { _, _, revents, userdata in
                    Unmanaged<IOBox>.fromOpaque(userdata!).takeUnretainedValue().handler(revents)
                    return 0
                }, Unmanaged.passUnretained(box).toOpaque()))
        return s!
    }

    /// `sd_event_add_time_relative`; a repeating box re-arms the source (oneshot) before its handler.
    static func addTimeRelative(
        _ e: OpaquePointer, clock: clockid_t, usec: UInt64, accuracy: UInt64, box: TimerBox
    ) throws(Errno) -> OpaquePointer {
        var s: OpaquePointer?
        try Errno.check(
            sd_event_add_time_relative(
                e, &s, clock, usec, accuracy,
                { source, _, userdata in
                    let box = Unmanaged<TimerBox>.fromOpaque(userdata!).takeUnretainedValue()
                    if let interval = box.repeatingMicroseconds {
                        sd_event_source_set_time_relative(source, interval)
                        sd_event_source_set_enabled(source, -1)  // SD_EVENT_ONESHOT again
                    }
                    box.handler()
                    return 0
                }, Unmanaged.passUnretained(box).toOpaque()))
        return s!
    }

    /// `sd_event_add_time` at an absolute `usec` on `clock`.
    static func addTime(
        _ e: OpaquePointer, clock: clockid_t, usec: UInt64, accuracy: UInt64, box: TimerBox
    ) throws(Errno) -> OpaquePointer {
        var s: OpaquePointer?
        try Errno.check(
            sd_event_add_time(
                e, &s, clock, usec, accuracy,
                { _, _, userdata in
                    Unmanaged<TimerBox>.fromOpaque(userdata!).takeUnretainedValue().handler()
                    return 0
                }, Unmanaged.passUnretained(box).toOpaque()))
        return s!
    }

    /// `sd_event_add_signal` with `SD_EVENT_SIGNAL_PROCMASK`.
    static func addSignal(_ e: OpaquePointer, _ signal: Int32, box: SignalBox) throws(Errno) -> OpaquePointer {
        var s: OpaquePointer?
        try Errno.check(
            sd_event_add_signal(
                e, &s, signal | SD_EVENT_SIGNAL_PROCMASK,
                { _, info, userdata in
                    Unmanaged<SignalBox>.fromOpaque(userdata!).takeUnretainedValue().handler(
                        Int32(info!.pointee.ssi_signo))
                    return 0
                }, Unmanaged.passUnretained(box).toOpaque()))
        return s!
    }

    static func addDefer(_ e: OpaquePointer, box: PlainBox) throws(Errno) -> OpaquePointer {
        try addPlain(e, box: box) { sd_event_add_defer($0, $1, $2, $3) }
    }

    static func addPost(_ e: OpaquePointer, box: PlainBox) throws(Errno) -> OpaquePointer {
        try addPlain(e, box: box) { sd_event_add_post($0, $1, $2, $3) }
    }

    /// `sd_event_add_defer` and `sd_event_add_post` take the same arguments: one C callback that
    /// calls the box's handler, for either.
    private static func addPlain(
        _ e: OpaquePointer, box: PlainBox,
        _ add: (
            OpaquePointer, UnsafeMutablePointer<OpaquePointer?>, sd_event_handler_t, UnsafeMutableRawPointer
        ) -> Int32
    ) throws(Errno) -> OpaquePointer {
        var s: OpaquePointer?
        try Errno.check(
            add(
                e, &s,
                { _, userdata in
                    Unmanaged<PlainBox>.fromOpaque(userdata!).takeUnretainedValue().handler()
                    return 0
                }, Unmanaged.passUnretained(box).toOpaque()))
        return s!
    }
}
