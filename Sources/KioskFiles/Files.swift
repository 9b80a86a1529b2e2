import Glibc
import SystemPackage

/// A file operation that failed: what was being done, to which path, and the kernel's answer.
/// Its description is the sentence the daemon logs and the store reports:
/// "Could not <operation> <path>: <strerror>.".
public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var errno: Errno
    /// The size cap a file was over (`EFBIG` from ``Files/readRegular(_:limit:)``).
    public var limit: Int?

    public init(_ operation: String, _ path: String, _ errno: Errno, limit: Int? = nil) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.limit = limit
    }

    public var description: String { "Could not \(operation) \(path): \(errno.description)." }

    /// Why the file could not be read, as the end of a sentence that starts with its path:
    /// "no such file", "is a directory", "is not a regular file", "is larger than 1024 KiB",
    /// else the kernel's words. kioskd and the command-line tools word a refused file alike.
    public var reason: String {
        switch errno {
        case .noSuchFileOrDirectory: "no such file"
        case .isDirectory: "is a directory"
        case .invalidArgument where operation == Files.regularFileOperation: "is not a regular file"
        case .fileTooLarge where limit != nil: "is larger than \(limit! >> 10) KiB"
        default: "cannot be read (\(errno.description))"
        }
    }

    /// Runs a swift-system call (which throws `Errno`), its failure thrown as a `FileError`.
    @inlinable
    public static func wrapping<T>(_ operation: String, _ path: String, _ body: () throws -> T) throws(FileError) -> T {
        do {
            return try body()
        } catch let error as Errno {
            throw FileError(operation, path, error)
        } catch let error as FileError {
            throw error
        } catch {
            throw FileError(operation, path, .ioError)
        }
    }

    /// The failure of a C call that set `errno`.
    public static func last(_ operation: String, _ path: String) -> FileError {
        FileError(operation, path, Errno(rawValue: Glibc.errno))
    }
}

/// The one file layer of kioskd's daemon and store: every file they read or write goes through
/// it, with one idiom for errors (``FileError``) and one way to replace a file. Built on
/// swift-system's `FileDescriptor`; the few calls it does not wrap (`fstat`, `fsync`, `rename`,
/// `mkdir`, `unlink`, `readdir`) are here and nowhere else.
public enum Files {
    /// A regular file's bytes, and what `fstat(2)` said of the very file they were read from.
    public struct Regular: Sendable, Equatable {
        public var bytes: [UInt8]
        /// `st_mode` (type and permission bits).
        public var mode: UInt32
        /// `st_uid`.
        public var owner: UInt32
    }

    /// The operation of the error for what is not a regular file.
    static let regularFileOperation = "read a regular file at"

    /// Reads the regular file at `path`, at most `limit` bytes.
    ///
    /// Opened without following a terminal (`O_NOCTTY`) and without blocking (`O_NONBLOCK`), so
    /// that a FIFO or a device put where a file belongs is refused at once instead of hanging
    /// the reader; a directory is `EISDIR`, anything else but a regular file `EINVAL`, a file
    /// larger than `limit` `EFBIG` (``FileError/reason`` words each). A missing file is `ENOENT`,
    /// as the kernel says.
    public static func readRegular(_ path: String, limit: Int) throws(FileError) -> Regular {
        let fd = try FileError.wrapping("open", path) {
            try FileDescriptor.open(
                path, .readOnly,
                options: [.closeOnExec, .nonBlocking, FileDescriptor.OpenOptions(rawValue: O_NOCTTY)])
        }
        defer { try? fd.close() }
        let stats = try status(of: fd, path)
        switch stats.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw FileError(regularFileOperation, path, .isDirectory)
        default: throw FileError(regularFileOperation, path, .invalidArgument)
        }
        guard stats.st_size <= limit else { throw FileError("read", path, .fileTooLarge, limit: limit) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(stats.st_size))
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let n = try FileError.wrapping("read", path) {
                try chunk.withUnsafeMutableBytes { try fd.read(into: $0, retryOnInterrupt: true) }
            }
            if n == 0 { break }
            guard bytes.count + n <= limit else { throw FileError("read", path, .fileTooLarge, limit: limit) }
            bytes += chunk.prefix(n)
        }
        return Regular(bytes: bytes, mode: stats.st_mode, owner: stats.st_uid)
    }

    /// `fstat(2)` of an open file.
    public static func status(of fd: FileDescriptor, _ path: String) throws(FileError) -> stat {
        var stats = stat()
        guard fstat(fd.rawValue, &stats) == 0 else { throw FileError.last("stat", path) }
        return stats
    }

    /// The size in bytes of an open file, from `fstat(2)`.
    public static func size(of fd: FileDescriptor, _ path: String) throws(FileError) -> Int {
        Int(try status(of: fd, path).st_size)
    }

    /// Where a file is written before it replaces `path`: a hidden name in the same directory
    /// (`dir/.name.tmp`), so that the rename is atomic and nothing reading the directory for
    /// names takes it for the file.
    public static func temporaryPath(for path: String) -> String {
        let split = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        return path[..<split] + "." + path[split...] + ".tmp"
    }

    /// Hands `write` a ``Writer`` on a new file that then replaces `path` atomically: a crash at
    /// any moment leaves the old file or the new one, never a mix, and a failure removes the
    /// new one. `durable`: the new file is fsynced before the rename and the directory after it,
    /// so that the replacement survives a power cut (the state file); without it, for what lives
    /// on a tmpfs. Errors of `write` other than ``FileError`` are rethrown as they are.
    public static func replace(
        _ path: String, permissions: FilePermissions = [.ownerReadWrite], durable: Bool,
        write: (inout Writer) throws -> Void
    ) throws {
        let temporary = temporaryPath(for: path)
        let fd = try FileError.wrapping("create", temporary) {
            try FileDescriptor.open(
                temporary, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: permissions)
        }
        var open = true
        defer { if open { try? fd.close() } }
        do {
            var writer = Writer(fd: fd, path: temporary)
            try write(&writer)
            if durable { try fsync(fd, temporary) }
            open = false
            try FileError.wrapping("close", temporary) { try fd.close() }
            guard rename(temporary, path) == 0 else { throw FileError.last("rename onto", path) }
        } catch {
            _ = unlink(temporary)
            throw error
        }
        if durable {
            let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
            let dir = directory.isEmpty ? "." : directory
            let directoryFD = try FileError.wrapping("open the directory", dir) {
                try FileDescriptor.open(dir, .readOnly, options: [.directory, .closeOnExec])
            }
            defer { try? directoryFD.close() }
            guard Glibc.fsync(directoryFD.rawValue) == 0 else { throw FileError.last("fsync the directory", dir) }
        }
    }

    /// ``replace(_:permissions:durable:write:)`` with `bytes` as the whole file.
    public static func replace(
        _ path: String, with bytes: [UInt8], permissions: FilePermissions = [.ownerReadWrite], durable: Bool
    ) throws(FileError) {
        do {
            try replace(path, permissions: permissions, durable: durable) { writer in try writer.write(bytes) }
        } catch let error as FileError {
            throw error
        } catch {
            throw FileError("write", path, .ioError)  // `write` above throws FileError only
        }
    }

    /// Writes to the new file of ``replace(_:permissions:durable:write:)``.
    public struct Writer {
        let fd: FileDescriptor
        let path: String

        /// Gives the new file exactly `permissions`, whatever the process's umask (a file
        /// another user's program must read, under a service's `UMask=0077`). The
        /// corresponding C call is `fchmod(2)`.
        public func setPermissions(_ permissions: FilePermissions) throws(FileError) {
            guard fchmod(fd.rawValue, permissions.rawValue) == 0 else { throw FileError.last("chmod", path) }
        }

        /// All of `bytes`, a short write continued and EINTR retried.
        public mutating func write(_ bytes: some Sequence<UInt8>) throws(FileError) {
            _ = try FileError.wrapping("write", path) { try fd.writeAll(bytes) }
        }
    }

    /// `fsync(2)`, tried once (EINTR is an error: the durability of a write must not be assumed
    /// from an interrupted flush).
    public static func fsync(_ fd: FileDescriptor, _ path: String) throws(FileError) {
        guard Glibc.fsync(fd.rawValue) == 0 else { throw FileError.last("fsync", path) }
    }

    /// Creates the directory `path` private to its owner (0700) when it is missing; one that
    /// exists is left as it is.
    public static func makePrivateDirectory(_ path: String) throws(FileError) {
        if mkdir(path, 0o700) != 0 && Glibc.errno != EEXIST { throw FileError.last("create the directory", path) }
    }

    /// Removes `path`; its failure (already gone) is not one.
    public static func remove(_ path: String) {
        _ = unlink(path)
    }

    /// The names in `directory` that end in `suffix` (without it), sorted; empty when the
    /// directory cannot be read. At most `limit` names.
    public static func names(in directory: String, ending suffix: String, limit: Int) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while names.count < limit, let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(suffix), name.count > suffix.count { names.append(String(name.dropLast(suffix.count))) }
        }
        return names.sorted()
    }
}
