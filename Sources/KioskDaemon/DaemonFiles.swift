import Glibc
import SystemPackage
import SystemdKit

/// The daemon's own small files, besides the state file (KioskStore's): profiles, the kiosk
/// clock's marker, the directories they live in. The one file of KioskDaemon that calls the C
/// library for files; the rest of the module is typed Swift.
enum DaemonFiles {
    /// A regular file's bytes and what `fstat(2)` says of it (mode, owner), both of the same
    /// open file, or nil when it cannot be opened, is not a regular file, or cannot be read.
    static func read(_ path: String) -> (bytes: [UInt8], mode: UInt32, owner: UInt32)? {
        guard
            let fd = try? FileDescriptor.open(
                path, .readOnly, options: [.closeOnExec, FileDescriptor.OpenOptions(rawValue: O_NOCTTY)])
        else { return nil }
        defer { try? fd.close() }
        var stats = stat()
        guard fstat(fd.rawValue, &stats) == 0, stats.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            guard let n = try? chunk.withUnsafeMutableBytes({ try fd.read(into: $0, retryOnInterrupt: true) }) else {
                return nil
            }
            if n == 0 { return (bytes, stats.st_mode, stats.st_uid) }
            bytes += chunk.prefix(n)
        }
    }

    /// The names in `directory` that end in `suffix` (without it), sorted; empty when the
    /// directory cannot be read. At most `limit` names.
    static func names(in directory: String, ending suffix: String, limit: Int) -> [String] {
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

    /// Writes `text` to `path` atomically (a temporary file renamed over it), creating
    /// `directory` (0700) first if it is missing. No fsync: for what lives on a tmpfs.
    static func replace(_ path: String, in directory: String, with text: String) throws(Errno) {
        try makeDirectory(directory)
        let temporary = path + ".new"
        try Errno.typed {
            let fd = try FileDescriptor.open(
                temporary, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: [.ownerReadWrite])
            try fd.closeAfter { _ = try fd.writeAll(Array(text.utf8)) }
        }
        guard rename(temporary, path) == 0 else { throw Errno.last }
    }

    /// Creates `path` (0700) when it is missing.
    static func makeDirectory(_ path: String) throws(Errno) {
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw Errno.last }
    }
}
