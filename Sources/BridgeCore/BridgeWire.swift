import KioskCore

/// What the bridge and the pages agree on (docs/browsers.md § The bridge): the port, the paths,
/// the event names and the bounds. Defined once, used by the bridge, its units' tests and docs.
public enum BridgeWire {
    /// The fixed loopback port the bridge listens on (`127.0.0.1:7770` and `[::1]:7770`):
    /// unassigned by IANA, and the one `packaging/systemd/kioskd-bridge.socket` names. kioskd's
    /// own (``WebBridge/port``, in the browsers' policy), so the two cannot drift apart.
    public static let port = UInt16(WebBridge.port)
    /// The version prefix of every path but the script's.
    public static let prefix = "/v1/apps/"
    /// The path of the ES module the bridge serves (`kioskd.js`).
    public static let scriptPath = "/kioskd.js"
    /// The SSE event that carries every restriction of the app.
    public static let snapshotEvent = "snapshot"
    /// The SSE event that carries one restriction's new state.
    public static let changeEvent = "change"
    /// What `retry:` tells EventSource to wait before it reconnects, in milliseconds.
    public static let retryMilliseconds = 1000
    /// The heartbeat comment sent to every stream now and then, so that a dead client is noticed.
    public static let heartbeat = ": keep-alive\n\n"
}

/// The bridge's bounds (docs/browsers.md § Bounds): how many clients, how much each may lag, how
/// long a request may take to arrive. Defaults are what the package runs with.
public struct BridgeLimits: Sendable, Equatable {
    /// Event streams open at once, over every origin.
    public var streams = 32
    /// Event streams open at once from one origin.
    public var streamsPerOrigin = 8
    /// Connections one peer address (`127.0.0.1`, `::1`) holds at once on a listening socket
    /// (streams, requests and idle ones); more are closed as soon as they are accepted.
    public var connectionsPerPeer = 64
    /// Connections each listening socket holds at once over every peer address (the loopback
    /// range has many): past it the socket is not accepted from until one closes.
    public var connectionsPerListener = 256
    /// The socket send buffer of a stream (the kernel doubles it): what waits there and in the
    /// stream's own backlog is all a client that stops reading can hold.
    public var streamSendBuffer = 16 * 1024
    /// Bytes of request (line and headers) a connection may send: libmicrohttpd's memory per
    /// connection, of which the request takes at most about half.
    public var connectionMemory = 16 * 1024
    /// A connection that sends or takes nothing for this many seconds is closed, so a request
    /// whose headers stop short is dropped.
    public var idleSeconds = 10
    /// A connection whose request line and headers have not all arrived this many seconds after
    /// it was accepted is closed, however slowly it keeps sending.
    public var requestSeconds = 10
    /// Seconds between heartbeats on every stream.
    public var heartbeatSeconds = 15
    /// Bytes of events that may wait for a stream's client beyond its first snapshot: a client
    /// that does not read is dropped once more wait, and nobody else waits for it.
    public var backlogBytes = 16 * 1024

    public init() {}

    /// Whether a stream whose first snapshot was `snapshotBytes` long and which now has
    /// `pendingBytes` waiting has fallen too far behind.
    public func isTooFarBehind(pendingBytes: Int, snapshotBytes: Int) -> Bool {
        pendingBytes > snapshotBytes + backlogBytes
    }
}
