import BridgeCore
import CMicroHTTPD
import Glibc
import Logging
import Synchronization

/// One page's event stream: the bytes waiting for it, and its connection's suspension. The
/// bridge appends events from any thread; libmicrohttpd's thread takes them in `read`, and
/// suspends the connection while nothing waits (so no thread polls for it).
final class EventStream: Sendable {
    let app: String
    let origin: String
    /// The bytes of the first events, which a client may always have waiting.
    let openingBytes: Int

    private struct Queue {
        var bytes: [UInt8]
        var start = 0
        var suspended = false
        var dropped = false
        var closed = false
        /// libmicrohttpd's connection (its address: a pointer is not Sendable) and its socket,
        /// set by `attach` before the response is queued (a change appended before then waits).
        var connectionAddress: UInt = 0
        var socket: Int32 = -1
        var connection: OpaquePointer? { OpaquePointer(bitPattern: connectionAddress) }
        var pending: Int { bytes.count - start }
    }
    private let queue: Mutex<Queue>

    init(app: String, origin: String, opening: String) {
        self.app = app
        self.origin = origin
        let bytes = Array(opening.utf8)
        openingBytes = bytes.count
        queue = Mutex(Queue(bytes: bytes))
    }

    /// Binds the stream to its connection (on libmicrohttpd's thread, before it reads), and
    /// bounds its socket's send buffer, so a client that stops reading is noticed after
    /// kilobytes rather than the megabytes the kernel would let wait.
    func attach(to connection: OpaquePointer, limits: BridgeLimits) {
        let socket = cmhd_connection_fd(connection)
        var size = Int32(limits.streamSendBuffer)
        _ = setsockopt(socket, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        queue.withLock { q in
            q.connectionAddress = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
            q.socket = socket
        }
    }

    /// What `append` did.
    enum Appended { case queued, dropped, gone }

    /// Queues `text`; drops the stream when its client lags more than `limits` allow, closing
    /// its socket so that libmicrohttpd lets it go without waiting for the client.
    func append(_ text: String, limits: BridgeLimits) -> Appended {
        queue.withLock { q -> Appended in
            guard !q.closed, !q.dropped else { return .gone }
            q.bytes.append(contentsOf: text.utf8)
            if limits.isTooFarBehind(pendingBytes: q.pending, snapshotBytes: openingBytes) {
                Self.drop(&q)
                return .dropped
            }
            if q.suspended {
                q.suspended = false
                MHD_resume_connection(q.connection)
            }
            return .queued
        }
    }

    /// Ends the stream from the bridge's side (its app's manifest changed): the page's
    /// EventSource reconnects and resumes from its `Last-Event-ID`.
    func end() {
        queue.withLock { q in
            if !q.closed, !q.dropped { Self.drop(&q) }
        }
    }

    /// Ends the stream with what waits thrown away. Must hold the lock.
    private static func drop(_ q: inout Queue) {
        q.dropped = true
        q.bytes = []
        q.start = 0
        if q.suspended {
            q.suspended = false
            MHD_resume_connection(q.connection)  // its read ends the stream
        } else if q.socket >= 0 {
            _ = shutdown(q.socket, Int32(SHUT_RDWR))  // blocked on a full socket: end it there
        }
    }

    /// libmicrohttpd asks for up to `max` bytes: what waits, or nothing and a suspension until
    /// `append` resumes it; the end with an error once dropped.
    func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        queue.withLock { q -> Int in
            if q.dropped { return cmhd_reader_end_with_error() }
            if q.pending == 0 {
                q.suspended = true
                MHD_suspend_connection(q.connection)
                return 0
            }
            let n = min(max, q.pending)
            q.bytes.withUnsafeBufferPointer { all in
                UnsafeMutableRawPointer(buffer).copyMemory(from: all.baseAddress! + q.start, byteCount: n)
            }
            q.start += n
            if q.start == q.bytes.count {
                q.bytes.removeAll(keepingCapacity: q.bytes.capacity <= 64 * 1024)
                q.start = 0
            } else if q.start > 64 * 1024 {
                q.bytes.removeFirst(q.start)
                q.start = 0
            }
            return n
        }
    }

    /// libmicrohttpd is done with the response (the connection closed): nothing is queued or
    /// resumed from now on.
    func close() {
        queue.withLock { q in
            q.closed = true
            q.bytes = []
            q.start = 0
        }
    }
}
