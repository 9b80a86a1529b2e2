import BridgeCore
import CMicroHTTPD
import Glibc
import KioskCore
import Logging

/// One listening socket served by libmicrohttpd on a thread of its own (epoll, one thread for
/// every connection; streams are suspended while they wait, so no thread polls for them). It
/// parses HTTP, bounds connections, request size and idle time; the bridge decides everything
/// else (`BridgeRouter`) and holds the states (`BridgeHub`).
final class HTTPServer {
    private let daemon: OpaquePointer

    /// Serves `socket` (a listening TCP socket) with `hub`, which must outlive the server. The
    /// corresponding C call is `MHD_start_daemon` with `MHD_OPTION_LISTEN_SOCKET`.
    init(socket: Int32, hub: BridgeHub) throws(BridgeError) {
        let limits = hub.limits
        var options = [
            cmhd_option(.LISTEN_SOCKET, Int(socket), nil),
            // Past the per-peer bound a connection is accepted and closed at once (a clear refusal);
            // the overall one only stops accepting (the kernel's queue holds the rest).
            cmhd_option(.PER_IP_CONNECTION_LIMIT, limits.connectionsPerPeer, nil),
            cmhd_option(.CONNECTION_LIMIT, limits.connectionsPerListener, nil),
            cmhd_option(.CONNECTION_MEMORY_LIMIT, limits.connectionMemory, nil),
            cmhd_option(.CONNECTION_TIMEOUT, limits.idleSeconds, nil),
            cmhd_notify_connection_option(notifyConnection, Unmanaged.passUnretained(hub).toOpaque()),
            cmhd_option(.END, 0, nil),
        ]
        let flags =
            MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_ERROR_LOG.rawValue
        guard let daemon = cmhd_start(flags, accessHandler, Unmanaged.passUnretained(hub).toOpaque(), &options) else {
            throw BridgeError("libmicrohttpd could not serve the socket \(socket) (MHD_start_daemon failed).")
        }
        self.daemon = daemon
    }

    /// Stops serving: closes every connection and waits for the thread. The corresponding C call
    /// is `MHD_stop_daemon`.
    func stop() { MHD_stop_daemon(daemon) }
}

/// The bridge's error: a sentence saying what could not be done.
public struct BridgeError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

// MARK: libmicrohttpd's callbacks (on its thread)

private let accessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, _, _, _ in
    let hub = Unmanaged<BridgeHub>.fromOpaque(context!).takeUnretainedValue()
    hub.pending.done(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection))))
    return respond(
        hub, connection!, url: url.map { String(cString: $0) } ?? "", method: method.map { String(cString: $0) } ?? "")
}

private let notifyConnection: MHD_NotifyConnectionCallback = { context, connection, _, code in
    let hub = Unmanaged<BridgeHub>.fromOpaque(context!).takeUnretainedValue()
    let key = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
    if code == .CONNECTION_NOTIFY_STARTED, let connection {
        hub.pending.started(key, socket: cmhd_connection_fd(connection))
    } else {
        hub.pending.done(key)
    }
}

private let readStream: MHD_ContentReaderCallback = { context, _, buffer, max in
    Unmanaged<StreamContext>.fromOpaque(context!).takeUnretainedValue().stream.read(into: buffer!, max: max)
}

private let freeStream: MHD_ContentReaderFreeCallback = { context in
    let context = Unmanaged<StreamContext>.fromOpaque(context!).takeRetainedValue()
    context.hub.closed(context.stream)
}

/// What the reader callbacks get: the stream and its hub.
private final class StreamContext {
    let stream: EventStream
    let hub: BridgeHub
    init(stream: EventStream, hub: BridgeHub) {
        self.stream = stream
        self.hub = hub
    }
}

private func header(_ connection: OpaquePointer, _ name: String) -> String? {
    MHD_lookup_connection_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
}

/// Answers one request on its first call (the bridge reads no request body).
private func respond(_ hub: BridgeHub, _ connection: OpaquePointer, url: String, method: String) -> MHD_Result {
    let origins: [String]
    switch cmhd_count_header(connection, "Origin") {
    case 0: origins = []
    case 1: origins = [header(connection, "Origin") ?? ""]
    case let n: origins = Array(repeating: header(connection, "Origin") ?? "", count: Int(n))
    }
    let request = BridgeRequest(
        method: method, path: url, origins: origins, lastEventID: header(connection, "Last-Event-ID"))
    let decision = hub.decide(request)
    let plain: [(String, String)] = [("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")]
    var headers = plain
    if let origin = decision.allowedOrigin {
        headers += [("Access-Control-Allow-Origin", origin.text), ("Vary", "Origin")]
    }
    switch decision {
    case .refuse(let status, let reason):
        if status == 405 { headers.append(("Allow", "GET, OPTIONS")) }
        hub.logger.notice(
            "Request refused",
            metadata: ["http.status": "\(status)", "http.path": "\(url)", "reason": "\(reason)"])
        return queue(
            connection, status: status, body: Array((reason + "\n").utf8), type: "text/plain; charset=utf-8", headers)
    case .preflight:
        headers += [
            ("Access-Control-Allow-Methods", "GET"), ("Access-Control-Allow-Headers", "Last-Event-ID"),
            ("Access-Control-Allow-Private-Network", "true"), ("Access-Control-Max-Age", "600"),
        ]
        return queue(connection, status: 204, body: [], type: nil, headers)
    case .script:
        guard let script = hub.script else {
            let reason = "kioskd.js is not installed beside the bridge.\n"
            return queue(connection, status: 404, body: Array(reason.utf8), type: "text/plain; charset=utf-8", headers)
        }
        return queue(connection, status: 200, body: script, type: "text/javascript; charset=utf-8", headers)
    case .state(let app, let origin):
        guard let json = hub.snapshotJSON(app: app, origin: origin) else {
            let reason = BridgeRouter.notListed(origin, app) + "\n"
            return queue(connection, status: 403, body: Array(reason.utf8), type: "text/plain; charset=utf-8", plain)
        }
        return queue(connection, status: 200, body: Array(json.utf8), type: "application/json", headers)
    case .events(let app, let origin, let lastEventID):
        switch hub.openStream(app: app, origin: origin, lastEventID: lastEventID) {
        case .failure(let refusal):
            return queue(
                connection, status: refusal.status, body: Array((refusal.reason + "\n").utf8),
                type: "text/plain; charset=utf-8",
                headers)
        case .success(let stream):
            stream.attach(to: connection, limits: hub.limits)
            let context = Unmanaged.passRetained(StreamContext(stream: stream, hub: hub)).toOpaque()
            guard
                let response = MHD_create_response_from_callback(
                    cmhd_size_unknown(), 4096, readStream, context, freeStream)
            else {
                Unmanaged<StreamContext>.fromOpaque(context).release()
                hub.closed(stream)
                return .NO
            }
            headers.append(("Content-Type", "text/event-stream; charset=utf-8"))
            for (name, value) in headers { MHD_add_response_header(response, name, value) }
            let queued = MHD_queue_response(connection, 200, response)
            MHD_destroy_response(response)  // the connection keeps it; its free callback closes the stream
            return queued
        }
    }
}

private func queue(
    _ connection: OpaquePointer, status: Int, body: [UInt8], type: String?, _ headers: [(String, String)]
) -> MHD_Result {
    let response = body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(
            bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let response else { return .NO }
    if let type { MHD_add_response_header(response, "Content-Type", type) }
    for (name, value) in headers { MHD_add_response_header(response, name, value) }
    let queued = MHD_queue_response(connection, UInt32(status), response)
    MHD_destroy_response(response)
    return queued
}
