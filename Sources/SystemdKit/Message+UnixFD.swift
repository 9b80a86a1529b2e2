import Glibc
import SystemPackage

extension Message {
    /// Reads the next value of the body, which must be a unix fd (`h`), and returns a duplicate
    /// the caller owns and must close (the message's own copy closes with the message). A
    /// logind inhibitor, for instance, lasts as long as the returned fd is open.
    ///
    /// The corresponding C calls are `sd_bus_message_read_basic` with `'h'` and
    /// `fcntl(F_DUPFD_CLOEXEC)`.
    public func readUnixFD() throws(Errno) -> FileDescriptor {
        let fd = try CBus.readUnixFD(handle)
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw Errno.last }
        return FileDescriptor(rawValue: copy)
    }
}
