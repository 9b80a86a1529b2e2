import KioskAPI
import KioskCore

/// A request as the bridge judges it: the method, the path, every `Origin` header it carried
/// and its `Last-Event-ID`. Built by the HTTP edge; judged here, with no I/O.
public struct BridgeRequest: Sendable, Equatable {
    public var method: String
    public var path: String
    /// Each `Origin` header's value, in order (a browser sends exactly one).
    public var origins: [String]
    public var lastEventID: String?

    public init(method: String, path: String, origins: [String], lastEventID: String? = nil) {
        self.method = method
        self.path = path
        self.origins = origins
        self.lastEventID = lastEventID
    }
}

/// What the bridge answers a request with.
public enum BridgeDecision: Sendable, Equatable {
    /// A refusal: the status and a sentence saying why (the body), with no
    /// `Access-Control-Allow-Origin` (405 also names the methods in `Allow`).
    case refuse(status: Int, reason: String)
    /// The app's event stream, for `origin`, resuming after `lastEventID` when it is one.
    case events(app: String, origin: WebOrigin, lastEventID: String?)
    /// The app's states as one JSON document.
    case state(app: String, origin: WebOrigin)
    /// The ES module `kioskd.js`.
    case script(origin: WebOrigin)
    /// A CORS (and Private Network Access) preflight's answer.
    case preflight(origin: WebOrigin)

    /// The origin to name in `Access-Control-Allow-Origin`: nil for a refusal.
    public var allowedOrigin: WebOrigin? {
        switch self {
        case .refuse: nil
        case .events(_, let origin, _), .state(_, let origin), .script(let origin), .preflight(let origin): origin
        }
    }
}

/// Judges requests against the manifests: only GET (and OPTIONS for preflights), only known
/// paths and apps, only an origin the app's manifest lists (the script: any manifest's).
public struct BridgeRouter: Sendable {
    /// Each app's manifest, by app id.
    public let manifests: [String: WebAppManifest]

    public init(manifests: [WebAppManifest]) {
        self.manifests = Dictionary(manifests.map { ($0.app.rawValue, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The answer to `request`. Checked in this order: the method (405), the path (404), the
    /// Origin's presence and form (403), the app (404), the origin against the manifest (403).
    public func decide(_ request: BridgeRequest) -> BridgeDecision {
        let isPreflight = request.method == "OPTIONS"
        guard request.method == "GET" || isPreflight else {
            return .refuse(
                status: 405,
                reason: "The bridge is read-only: it answers GET (and OPTIONS), not \(Text.quoted(request.method)).")
        }
        let parts = request.path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = parts.first.map(String.init) ?? ""
        // A new EventSource cannot send Last-Event-ID; kioskd.js puts it in the query instead.
        let lastEventID =
            request.lastEventID ?? (parts.count == 2 ? Self.queryValue("last-event-id", in: parts[1]) : nil)
        enum Target { case events(String), state(String), script }
        let target: Target
        if path == BridgeWire.scriptPath {
            target = .script
        } else if path.hasPrefix(BridgeWire.prefix) {
            let parts = path.dropFirst(BridgeWire.prefix.count).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty else { return notFound(path) }
            switch parts[1] {
            case "events": target = .events(String(parts[0]))
            case "state": target = .state(String(parts[0]))
            default: return notFound(path)
            }
        } else {
            return notFound(path)
        }
        let origin: WebOrigin
        switch checkOrigin(request.origins) {
        case .success(let o): origin = o
        case .failure(let refusal): return refusal.decision
        }
        switch target {
        case .script:
            guard manifests.values.contains(where: { $0.origins.contains(origin) }) else {
                return .refuse(status: 403, reason: "The origin \(origin) is in no web app's manifest.")
            }
            return isPreflight ? .preflight(origin: origin) : .script(origin: origin)
        case .events(let app), .state(let app):
            guard let manifest = manifests[app] else {
                return .refuse(
                    status: 404, reason: "There is no web app \(Text.quoted(app)): no /etc/kioskd/apps/\(app).toml.")
            }
            guard manifest.origins.contains(origin) else {
                return .refuse(
                    status: 403, reason: Self.notListed(origin, app))
            }
            if isPreflight { return .preflight(origin: origin) }
            if case .events = target { return .events(app: app, origin: origin, lastEventID: lastEventID) }
            return .state(app: app, origin: origin)
        }
    }

    /// Why `origin` may not read `app`: the app's manifest does not list it (also said when the
    /// manifests were read again between a request's judging and its answer).
    public static func notListed(_ origin: WebOrigin, _ app: String) -> String {
        "The origin \(origin) may not read \(app): its manifest does not list it."
    }

    /// `name`'s value in a query (`a=1&b=2`), percent-decoded; nil when absent or malformed.
    static func queryValue(_ name: String, in query: Substring) -> String? {
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard kv.count == 2, kv[0] == name else { continue }
            var bytes: [UInt8] = []
            var it = kv[1].utf8.makeIterator()
            while let b = it.next() {
                if b == UInt8(ascii: "%") {
                    guard let h = it.next(), let l = it.next(),
                        let v = UInt8(String(decoding: [h, l], as: UTF8.self), radix: 16)
                    else { return nil }
                    bytes.append(v)
                } else {
                    bytes.append(b == UInt8(ascii: "+") ? UInt8(ascii: " ") : b)
                }
            }
            return String(validating: bytes, as: UTF8.self)
        }
        return nil
    }

    private struct Refusal: Error { var decision: BridgeDecision }

    private func checkOrigin(_ values: [String]) -> Result<WebOrigin, Refusal> {
        guard let value = values.first else {
            return .failure(
                Refusal(
                    decision: .refuse(
                        status: 403,
                        reason:
                            "The request has no Origin header: only a page of an origin a manifest lists may read states."
                    )))
        }
        guard values.count == 1 else {
            return .failure(
                Refusal(
                    decision: .refuse(status: 403, reason: "The request has \(values.count) Origin headers, not one.")))
        }
        guard value != "null" else {
            return .failure(
                Refusal(
                    decision: .refuse(
                        status: 403,
                        reason: "The request's Origin is null (a sandboxed or file page): no manifest lists it.")))
        }
        do {
            let origin = try WebOrigin(value)
            // A browser sends the serialized form; anything else did not come from one.
            guard origin.text == value else {
                return .failure(
                    Refusal(
                        decision: .refuse(
                            status: 403, reason: "The Origin \(Text.quoted(value)) is not as a browser writes it.")))
            }
            return .success(origin)
        } catch {
            return .failure(Refusal(decision: .refuse(status: 403, reason: "The Origin is not one: \(error.message)")))
        }
    }

    private func notFound(_ path: String) -> BridgeDecision {
        .refuse(
            status: 404,
            reason:
                "Nothing is at \(Text.quoted(path)): the bridge serves /v1/apps/ID/events, /v1/apps/ID/state and /kioskd.js."
        )
    }
}
