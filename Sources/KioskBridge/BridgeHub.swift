import BridgeCore
import KioskAPI
import KioskCore
import Logging
import Synchronization

/// The bridge's state: each web app's mirror of kioskd's states and the pages' open streams.
/// Changes reach every stream of their app under one lock, so a stream opened between two
/// changes gets the first in its opening and the second as an event, never both or neither.
final class BridgeHub: Sendable {
    let limits: BridgeLimits
    /// `kioskd.js`'s text; nil when it is not installed.
    let script: [UInt8]?
    let logger: Logger
    /// The connections whose request has not arrived yet.
    let pending = PendingRequests()

    private struct State {
        /// Judges requests against the manifests in use.
        var router: BridgeRouter
        var mirrors: [String: AppMirror]
        var streams: [ObjectIdentifier: EventStream] = [:]
        var reads = SnapshotReads()
    }
    private let state: Mutex<State>

    init(manifests: [WebAppManifest], limits: BridgeLimits, script: [UInt8]?, logger: Logger) {
        self.limits = limits
        self.script = script
        self.logger = logger
        let router = BridgeRouter(manifests: manifests)
        state = Mutex(State(router: router, mirrors: router.manifests.mapValues { AppMirror(manifest: $0) }))
    }

    /// The apps the manifests declare.
    var apps: [String] { state.withLock { $0.router.manifests.keys.sorted() } }

    /// The manifests in use, by app id.
    var manifests: [String: WebAppManifest] { state.withLock { $0.router.manifests } }

    /// The answer to `request`, judged against the manifests in use.
    func decide(_ request: BridgeRequest) -> BridgeDecision { state.withLock { $0.router.decide(request) } }

    /// Puts `manifests` in use (the bridge read the directory again): an app whose manifest is
    /// unchanged keeps its mirror and its streams; a changed one keeps the states of the
    /// restrictions it still lists, and its streams end (each page's EventSource reconnects and
    /// is judged, and resumed, by the new manifest); a removed one's streams end and its pages
    /// are refused from now on. Returns the apps to read from kioskd: the new and the changed.
    func use(_ manifests: [WebAppManifest]) -> [String] {
        let (ended, toRead) = state.withLock { s -> ([EventStream], [String]) in
            let router = BridgeRouter(manifests: manifests)
            var mirrors: [String: AppMirror] = [:]
            var toRead: [String] = []
            for (app, manifest) in router.manifests {
                if let old = s.mirrors[app], old.manifest == manifest {
                    mirrors[app] = old
                    continue
                }
                mirrors[app] = s.mirrors[app]?.carried(to: manifest) ?? AppMirror(manifest: manifest)
                toRead.append(app)
            }
            var ended: [EventStream] = []
            for (key, stream) in s.streams where mirrors[stream.app]?.manifest != s.mirrors[stream.app]?.manifest {
                stream.end()
                s.streams.removeValue(forKey: key)
                ended.append(stream)
            }
            s.router = router
            s.mirrors = mirrors
            return (ended, toRead.sorted())
        }
        logger.notice(
            "Manifests read again",
            metadata: [
                "apps": "\(apps.joined(separator: ","))", "apps.changed": "\(toRead.joined(separator: ","))",
                "streams.ended": "\(ended.count)",
            ])
        return toRead
    }

    // MARK: pages

    /// Why a stream could not be opened.
    struct Refusal: Error { var status: Int, reason: String }

    /// Opens a stream of `app` for `origin`, with the changes since `lastEventID` or a snapshot.
    func openStream(app: String, origin: WebOrigin, lastEventID: String?) -> Result<EventStream, Refusal> {
        let result = state.withLock { s -> Result<EventStream, Refusal> in
            guard s.streams.count < limits.streams else {
                return .failure(
                    Refusal(
                        status: 503, reason: "The bridge serves \(limits.streams) streams already; try again later."))
            }
            guard s.streams.values.count(where: { $0.origin == origin.text }) < limits.streamsPerOrigin else {
                return .failure(
                    Refusal(
                        status: 503,
                        reason: "\(origin) has \(limits.streamsPerOrigin) streams open already; close one first."))
            }
            guard let mirror = s.mirrors[app] else { return .failure(Refusal(status: 404, reason: "No app \(app).")) }
            // The manifests may have been read again since the request was judged.
            guard mirror.manifest.origins.contains(origin) else {
                return .failure(
                    Refusal(
                        status: 403, reason: BridgeRouter.notListed(origin, app))
                )
            }
            let stream = EventStream(app: app, origin: origin.text, opening: mirror.opening(lastEventID: lastEventID))
            s.streams[ObjectIdentifier(stream)] = stream
            return .success(stream)
        }
        switch result {
        case .success:
            logger.info("Stream opened", metadata: ["app": "\(app)", "origin": "\(origin)"])
        case .failure(let refusal):
            logger.notice(
                "Stream refused", metadata: ["app": "\(app)", "origin": "\(origin)", "reason": "\(refusal.reason)"])
        }
        return result
    }

    /// A stream's connection closed.
    func closed(_ stream: EventStream) {
        stream.close()
        _ = state.withLock { $0.streams.removeValue(forKey: ObjectIdentifier(stream)) }
        logger.info("Stream closed", metadata: ["app": "\(stream.app)", "origin": "\(stream.origin)"])
    }

    /// The app's states as JSON (`GET /v1/apps/ID/state`); nil when the manifests, read again
    /// since the request was judged, no longer let `origin` read them.
    func snapshotJSON(app: String, origin: WebOrigin) -> String? {
        state.withLock { s in
            guard let mirror = s.mirrors[app], mirror.manifest.origins.contains(origin) else { return nil }
            return mirror.snapshotJSON()
        }
    }

    /// Sends a heartbeat comment to every stream.
    func heartbeat() {
        state.withLock { s in
            for stream in s.streams.values { deliver(BridgeWire.heartbeat, to: stream) }
        }
    }

    /// Must hold the lock.
    private func deliver(_ text: String, to stream: EventStream) {
        if stream.append(text, limits: limits) == .dropped {
            logger.notice(
                "Stream dropped: its client did not read",
                metadata: [
                    "app": "\(stream.app)", "origin": "\(stream.origin)", "backlog.limit": "\(limits.backlogBytes)",
                ])
        }
    }

    /// Sends `change`, which `mirror` (the states after it) holds, to the app's streams. Must
    /// hold the lock.
    private func broadcast(_ change: AppMirror.Change, of mirror: AppMirror, in s: State) {
        let text = mirror.changeEvent(change)
        var count = 0
        for stream in s.streams.values where stream.app == mirror.manifest.app.rawValue {
            deliver(text, to: stream)
            count += 1
        }
        logger.info(
            "Restriction state relayed",
            metadata: [
                "app": "\(mirror.manifest.app)", "restriction.id": "\(change.restriction)",
                "state": "\(change.state?.rawValue ?? "unknown")", "streams": "\(count)",
            ])
    }

    // MARK: kioskd

    /// A `RestrictionStateChanged` from kioskd.
    func signal(app: String, restriction: String, state newState: RestrictionState) {
        state.withLock { s in
            s.reads.signal(app)
            guard var mirror = s.mirrors[app] else { return }
            guard let change = mirror.apply(restriction: restriction, state: newState) else { return }
            s.mirrors[app] = mirror
            broadcast(change, of: mirror, in: s)
        }
    }

    /// Whether to start reading `app`'s snapshot now.
    func beginRead(app: String) -> Bool { state.withLock { $0.reads.begin(app) } }

    /// A snapshot read of `app` finished: `snapshot` is kioskd's states, `.some(nil)` when kioskd
    /// does not know the app, nil when the read failed otherwise (the states are kept). Returns
    /// whether to read again.
    func finishRead(app: String, snapshot: [String: RestrictionState]??) -> Bool {
        state.withLock { s in
            switch s.reads.finish(app) {
            case .retry:
                return true
            case .apply(let again):
                if let snapshot, var mirror = s.mirrors[app] {
                    // One change at a time, so each event's id is the states right after it.
                    for restriction in mirror.manifest.restrictions {
                        let id = restriction.id.rawValue
                        if let change = mirror.apply(restriction: id, state: snapshot?[id]) {
                            broadcast(change, of: mirror, in: s)
                        }
                    }
                    s.mirrors[app] = mirror
                }
                return again
            }
        }
    }
}
