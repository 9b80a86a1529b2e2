import KioskCore
import KioskFiles
import SystemPackage

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why the state file could not be read or written. The message names the file.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable {
        private enum Storage: Hashable, Sendable { case corrupt, unsupportedVersion, io }
        private let storage: Storage
        private init(_ storage: Storage) { self.storage = storage }
        /// The file is not a state file kioskd can read; it is left untouched.
        public static let corrupt = Code(.corrupt)
        /// The file was written by a kioskd with a format this one does not know.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// A system call failed.
        public static let io = Code(.io)
    }

    public let code: Code
    public let path: String
    public let message: String
    /// The errno of a failed system call.
    public let errno: Errno?

    public var description: String { message }
}

/// The versioned JSON file that holds a ``KioskState`` (docs/state-store.md: state survives app
/// restarts, daemon restarts and reboots).
///
/// Writes are atomic and durable: the new state goes to a temporary file in the same
/// directory, is fsynced, renamed over the old file, and the directory is fsynced, so a
/// crash at any moment leaves either the old state or the new one, never a mix. A missing
/// file is an empty state; a file that does not parse is an error and is never replaced
/// by an empty state behind the admin's back.
public struct StateStore: Sendable {
    /// The format written by this version. Bump it, and add a migration, when the shape changes.
    public static let formatVersion = 1
    public static let fileName = "state.json"
    /// The runtime directory's copy of a state whose save failed (docs/state-store.md § When the
    /// disk fails).
    public static let pendingFileName = "pending-state.json"

    public let directory: String
    /// The file's name in `directory`: ``fileName``, or ``pendingFileName`` for the runtime copy.
    public let name: String
    public var path: String { directory + "/" + name }
    var temporaryPath: String { Files.temporaryPath(for: path) }

    public init(directory: String, name: String = Self.fileName) {
        self.directory = directory
        self.name = name
    }

    /// Removes the file (the runtime copy, once its state is on disk); a missing file is fine.
    public func remove() {
        Files.remove(path)
    }

    /// Whether a file can be written in `directory` now: a small file written durably (`fsync`
    /// of it and of the directory), then removed. Throws what the write met — no space, a
    /// read-only file system, an I/O error.
    public func probeWritable() throws(StoreError) {
        let probe = directory + "/.probe"
        do {
            try Files.replace(probe, with: Array("kioskd\n".utf8), durable: true)
        } catch {
            throw Self.storeError(error)
        }
        Files.remove(probe)
    }

    /// Reads the state; an absent file is the empty state.
    ///
    /// The file is read in chunks and decoded one app at a time (``ApplicationSplitter``), so
    /// that memory holds the registry being built but not the whole file and its parse. A file
    /// the splitter does not recognise, or that does not decode so, is decoded again whole:
    /// `JSONDecoder` over the whole file is what decides, and what explains a corrupt file.
    public func load() throws(StoreError) -> KioskState {
        try loadIfPresent() ?? KioskState()
    }

    /// Reads the state; nil when there is no file (``load()``).
    public func loadIfPresent() throws(StoreError) -> KioskState? {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(FilePath(path), .readOnly, options: .closeOnExec)
        } catch Errno.noSuchFileOrDirectory {
            return nil
        } catch {
            throw failure("open", path, error)
        }
        defer { try? fd.close() }
        if let state = try decodeInPieces(fd) { return state }
        try call("seek in", path) { _ = try fd.seek(offset: 0, from: .start) }
        return try decode(readAll(fd))
    }

    /// Writes `state` atomically and durably.
    public func save(_ state: KioskState) throws(StoreError) {
        try writeAtomically { drain throws(StoreError) in try encode(state, drain: drain) }
    }

    /// Encodes `state` as the file holds it — what `JSONEncoder` with `.sortedKeys` writes, byte
    /// for byte — handing the bytes to `drain` a chunk at a time (`drain` empties the buffer).
    ///
    /// The registry's apps are written by ``StateFileJSON/append(_:to:)`` straight
    /// from their packed tables, the rest of the state by `JSONEncoder` with the applications
    /// array empty, the apps going in between its brackets.
    package func encode(_ state: KioskState, drain: (inout [UInt8]) throws(StoreError) -> Void) throws(StoreError) {
        var outline = state
        outline.registry = Registry()
        let json = try encodeWithFoundation(outline)
        // `"registry":{"applications":[]}` once: in JSON text its quotes cannot be inside a
        // string (they would be escaped), so it is the registry key's. Else encode it all.
        guard let marker = json.firstRange(of: Self.emptyRegistry),
            json[marker.upperBound...].firstRange(of: Self.emptyRegistry) == nil
        else {
            var whole = try encodeWithFoundation(state)
            return try drain(&whole)
        }
        let closingBracket = marker.upperBound - 2
        var buffer = [UInt8]()
        buffer.reserveCapacity(Self.chunkSize + Self.chunkSize / 2)
        buffer += json[..<closingBracket]
        for (index, app) in state.registry.applications.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            StateFileJSON.append(app, to: &buffer)
            if buffer.count >= Self.chunkSize { try drain(&buffer) }
        }
        buffer += json[closingBracket...]
        try drain(&buffer)
    }

    private static let emptyRegistry = Array(#""registry":{"applications":[]}"#.utf8)

    private func encodeWithFoundation(_ state: KioskState) throws(StoreError) -> [UInt8] {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return Array(try encoder.encode(Envelope(version: Self.formatVersion, state: state)))
        } catch {
            throw StoreError(
                code: .io, path: path, message: "Could not encode the state for \(path): \(error).", errno: nil)
        }
    }

    // MARK: Format

    private struct Envelope: Codable {
        var version: Int
        var state: KioskState

        init(version: Int, state: KioskState) {
            self.version = version
            self.state = state
        }

        /// Reads the version first, so a newer format is reported as such, not as corrupt,
        /// and the file is parsed only once.
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            version = try c.decode(Int.self, forKey: .version)
            guard version == StateStore.formatVersion else { throw UnsupportedVersion(version: version) }
            state = try c.decode(KioskState.self, forKey: .state)
        }
    }

    private struct UnsupportedVersion: Error {
        var version: Int
    }

    /// The state read through ``ApplicationSplitter``, or `nil` if the file must be decoded whole.
    func decodeInPieces(_ fd: FileDescriptor) throws(StoreError) -> KioskState? {
        var splitter = ApplicationSplitter()
        var applications: [Registry.Application] = []
        let decoder = JSONDecoder()
        var chunk = [UInt8](repeating: 0, count: Self.readChunkSize)
        // Apps are decoded about `readChunkSize` bytes at a time, as one array (`[app,app,…]`):
        // one `JSONDecoder` call per app costs more than the parse of a small app.
        var batch: [UInt8] = [UInt8(ascii: "[")]
        batch.reserveCapacity(Self.readChunkSize + Self.readChunkSize / 2)
        func decodeBatch() throws {
            guard batch.count > 1 else { return }
            batch.append(UInt8(ascii: "]"))
            applications += try decoder.decode([Registry.Application].self, from: Data(batch))
            batch.removeSubrange(1...)
        }
        do {
            while true {
                let n = try call("read", path) { try chunk.withUnsafeMutableBytes { try fd.read(into: $0) } }
                if n == 0 { break }
                try chunk.withUnsafeBufferPointer { buffer in
                    try splitter.feed(UnsafeBufferPointer(rebasing: buffer[..<n])) { element in
                        if batch.count > 1 { batch.append(UInt8(ascii: ",")) }
                        batch += element
                        if batch.count >= Self.readChunkSize { try decodeBatch() }
                    }
                }
            }
            try splitter.finish()
            try decodeBatch()
            var state = try decoder.decode(Envelope.self, from: Data(splitter.outline)).state
            state.registry = try Registry(checking: applications)
            return state
        } catch let error as StoreError {
            throw error
        } catch {
            return nil
        }
    }

    /// How much of the file is written at a time.
    static let chunkSize = 64 * 1024
    /// How much of the file is read, and how many bytes of apps are decoded, at a time. Small,
    /// because the load's buffers and `JSONDecoder`'s parse of a batch are freed into the heap
    /// and stay resident (kioskd with 1,000 × 50: RssAnon 8.86 MiB at 16 KiB, about 9.0 at
    /// 64 KiB, 8.76 when the file was decoded whole); not smaller, because each batch is a
    /// `JSONDecoder` call (at 16 KiB the load's CPU time matches the whole-file decode's).
    static let readChunkSize = 16 * 1024

    /// Decodes a whole file at once: the fallback of ``load()``, and what it did before it split.
    package func decode(_ data: Data) throws(StoreError) -> KioskState {
        do {
            return try JSONDecoder().decode(Envelope.self, from: data).state
        } catch let error as UnsupportedVersion {
            throw StoreError(
                code: .unsupportedVersion, path: path,
                message:
                    "The state file \(path) has format version \(error.version); this kioskd reads version \(Self.formatVersion). It was left untouched.",
                errno: nil)
        } catch {
            throw StoreError(
                code: .corrupt, path: path,
                message:
                    "The state file \(path) is corrupt (\(Self.explain(error))); it was left untouched. Restore it from a backup or move it away to start empty.",
                errno: nil)
        }
    }

    private static func explain(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context), DecodingError.typeMismatch(_, let context),
            DecodingError.valueNotFound(_, let context), DecodingError.keyNotFound(_, let context):
            let at = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return at.isEmpty ? context.debugDescription : "at \(at): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }

    // MARK: System calls

    /// The error of a failed system call: "Could not <what> <file>: <strerror>.".
    private func failure(_ what: String, _ file: String, _ error: any Error) -> StoreError {
        let errno = error as? Errno
        return StoreError(
            code: .io, path: file, message: "Could not \(what) \(file): \(errno?.description ?? "\(error)").",
            errno: errno)
    }

    /// Runs a system call (swift-system's, which throws `Errno`), its
    /// failure thrown as the ``StoreError`` of ``failure(_:_:_:)``.
    private func call<T>(_ what: String, _ file: String, _ body: () throws -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch {
            throw failure(what, file, error)
        }
    }

    /// The rest of the file's bytes. Read straight into the `Data` the decoder takes, so a large
    /// file is in memory once while it is decoded, not twice.
    private func readAll(_ fd: FileDescriptor) throws(StoreError) -> Data {
        let size: Int
        do {
            size = try Files.size(of: fd, path)
        } catch {
            throw Self.storeError(error)
        }
        // One byte more than the size, so the end is seen without growing; a file that grew
        // since the fstat doubles the buffer.
        var data = Data(count: max(size, 0) + 1)
        var count = 0
        while true {
            if count == data.count { data.count *= 2 }
            let n = try call("read", path) {
                try data.withUnsafeMutableBytes {
                    try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[count...]))
                }
            }
            if n == 0 { break }
            count += n
        }
        data.count = count
        return data
    }

    /// Writes what `body` hands to its drain into a new file that then replaces the state file,
    /// atomically and durably (KioskFiles' ``Files/replace(_:permissions:durable:write:)``).
    private func writeAtomically(
        _ body: ((inout [UInt8]) throws(StoreError) -> Void) throws(StoreError) -> Void
    ) throws(StoreError) {
        do {
            try Files.replace(path, permissions: FilePermissions(rawValue: 0o600), durable: true) { writer in
                try body { bytes throws(StoreError) in
                    do throws(FileError) {
                        try writer.write(bytes)
                    } catch {
                        throw Self.storeError(error)
                    }
                    bytes.removeAll(keepingCapacity: true)
                }
            }
        } catch let error as StoreError {
            throw error
        } catch let error as FileError {
            throw Self.storeError(error)
        } catch {
            throw failure("write", temporaryPath, error)
        }
    }

    /// A failed file operation as the store reports it.
    private static func storeError(_ error: FileError) -> StoreError {
        StoreError(code: .io, path: error.path, message: error.description, errno: error.errno)
    }
}
