import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls the state file needs that swift-system (`FileDescriptor`) does not wrap, each
/// throwing `Errno`: the one file of KioskStore that calls C. StateStore opens, reads, writes,
/// seeks and closes through `FileDescriptor`, and calls these for the rest.
enum SystemCalls {
    /// `fsync(2)`: the file's data and metadata on the disk. Tried once (EINTR is an error), as
    /// the durability of a save must not be assumed from an interrupted flush.
    static func fsync(_ fd: FileDescriptor) throws(Errno) {
        guard Glibc.fsync(fd.rawValue) == 0 else { throw Errno(rawValue: errno) }
    }

    /// The file's size in bytes, from `fstat(2)`.
    static func size(of fd: FileDescriptor) throws(Errno) -> Int {
        var stats = stat()
        guard fstat(fd.rawValue, &stats) == 0 else { throw Errno(rawValue: errno) }
        return Int(stats.st_size)
    }

    /// `rename(2)`: `source` atomically replaces `destination`.
    static func rename(_ source: String, to destination: String) throws(Errno) {
        guard Glibc.rename(source, destination) == 0 else { throw Errno(rawValue: errno) }
    }

    /// `unlink(2)`, for cleaning up after a failure: its own failure is ignored.
    static func unlinkIgnoringErrors(_ path: String) {
        _ = Glibc.unlink(path)
    }
}
