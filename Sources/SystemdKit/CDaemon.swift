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

extension CDaemon {
    /// `sd_listen_fds(1)`: how many sockets systemd passed from fd 3 on (the environment
    /// variables are unset, so a child does not take them for its own).
    static func listenFDs() throws(Errno) -> Int32 {
        try Errno.check(sd_listen_fds(1))
    }

    /// `sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1)`: whether `fd` is a listening stream socket.
    static func isListeningStreamSocket(_ fd: Int32) throws(Errno) -> Bool {
        try Errno.check(sd_is_socket(fd, AF_UNSPEC, Int32(SOCK_STREAM.rawValue), 1)) > 0
    }
}
