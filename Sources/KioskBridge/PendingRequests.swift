import CMicroHTTPD
import Glibc
import Synchronization

/// The connections whose request (line and headers) has not arrived yet, with when each was
/// accepted: one that trickles its headers, a byte now and then, keeps libmicrohttpd's idle
/// timer from firing, so the bridge shuts it after `BridgeLimits.requestSeconds` itself.
///
/// libmicrohttpd tells it of each connection (`MHD_OPTION_NOTIFY_CONNECTION`: started, closed)
/// on its thread; the access handler says when a request arrived; `dropOverdue` runs on a timer.
/// A socket is shut only while its entry is here, under the lock, and libmicrohttpd reports a
/// connection closed before it closes the socket, so the fd shut is always the connection's.
final class PendingRequests: Sendable {
    private struct Entry {
        var socket: Int32
        var since: ContinuousClock.Instant
    }
    private let entries = Mutex<[UInt: Entry]>([:])

    /// A connection was accepted.
    func started(_ connection: UInt, socket: Int32) {
        entries.withLock { $0[connection] = Entry(socket: socket, since: .now) }
    }

    /// Its request arrived (or it closed): no deadline any more.
    func done(_ connection: UInt) {
        _ = entries.withLock { $0.removeValue(forKey: connection) }
    }

    /// Shuts the sockets of the connections waiting longer than `limit` for their request, so
    /// libmicrohttpd closes them; returns how many.
    func dropOverdue(limit: Duration) -> Int {
        let now = ContinuousClock.now
        return entries.withLock { entries in
            var dropped = 0
            for (key, entry) in entries where now - entry.since > limit {
                _ = shutdown(entry.socket, Int32(SHUT_RDWR))
                entries[key] = nil
                dropped += 1
            }
            return dropped
        }
    }
}
