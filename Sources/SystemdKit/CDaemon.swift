import CSystemd
import Glibc
import SystemPackage

/// The sd-daemon and sd-journal C calls SystemdKit uses (service notification, watchdog,
/// journal), each turning `-errno` into a thrown `Errno`. Nothing here is public: the typed API
/// is `Notify` and `JournalLogHandler`.
enum CDaemon {
    /// `sd_notify`: whether the state was sent (false without `$NOTIFY_SOCKET`).
    static func notify(_ state: String) throws(Errno) -> Bool {
        try Errno.check(sd_notify(0, state)) > 0
    }

    /// `sd_watchdog_enabled`: the interval in µs, or nil when there is no watchdog for this pid.
    static func watchdogMicroseconds() throws(Errno) -> UInt64? {
        var usec: UInt64 = 0
        guard try Errno.check(sd_watchdog_enabled(0, &usec)) > 0 else { return nil }
        return usec
    }

    /// `sd_journal_sendv` of `FIELD=value` pairs.
    static func journalSend(_ fields: [(String, String)]) throws(Errno) {
        let strings = fields.map { "\($0.0)=\($0.1)" }
        let pointers = strings.map { strdup($0)! }
        defer { pointers.forEach { free($0) } }
        let iov = pointers.map { iovec(iov_base: UnsafeMutableRawPointer($0), iov_len: strlen($0)) }
        try Errno.check(sd_journal_sendv(iov, Int32(iov.count)))
    }
}
