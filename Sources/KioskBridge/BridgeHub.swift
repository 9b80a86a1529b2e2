import BridgeCore
import KioskAPI
import KioskCore
import Logging
import Synchronization

/// The bridge's state: each web app's mirror of kioskd's states and the pages' open streams.
/// Changes reach every stream of their app under one lock, so a stream opened between two
/// changes gets the first in its opening and the second as an event, never both or neither.
final class BridgeHub: Sendable {
    let router: BridgeRouter
    let limits: BridgeLimits
    /// `kioskd.js`'s text; nil when it is not installed.
    let script: [UInt8]?
    let logger: Logger
    /// The connections whose request has not arrived yet.
    let pending = PendingRequests()

    private struct State {
        var mirrors: [String: AppMirror]
        var streams: [ObjectIdentifier: EventStream] = [:]
        var reads = SnapshotReads()
    }
    private let state: Mutex<State>

    init(manifests: [WebAppManifest], limits: BridgeLimits, script: [UInt8]?, logger: Logger) {
        router = BridgeRouter(manifests: manifests)
        self.limits = limits
        self.script = script
        self.logger = logger
        state = Mutex(State(mirrors: Dictionary(manifests.map { ($0.app.rawValue, AppMirror(manifest: $0)) }) { a, _ in a }))
    }

    /// The apps the manifests declare.
    var apps: [String] { router.manifests.keys.sorted() }

    // MARK: pages

    /// Why a stream could not be opened.
    struct Refusal: Error { var status: Int, reason: String }

    /// Opens a stream of `app` for `origin`, with the changes since `lastEventID` or a snapshot.
    func openStream(app: String, origin: WebOrigin, lastEventID: String?) -> Result<EventStream, Refusal> {
        let result = state.withLock { s -> Result<EventStream, Refusal> in
            guard s.streams.count < limits.streams else {
                return .failure(Refusal(status: 503, reason: "The bridge serves \(limits.streams) streams already; try again later."))
            }
            guard s.streams.values.count(where: { $0.origin == origin.text }) < limits.streamsPerOrigin else {
                return .failure(
                    Refusal(status: 503, reason: "\(origin) has \(limits.streamsPerOrigin) streams open already; close one first."))
            }
            guard let mirror = s.mirrors[app] else { return .failure(Refusal(status: 404, reason: "No app \(app).")) }
            let stream = EventStream(app: app, origin: origin.text, opening: mirror.opening(lastEventID: lastEventID))
            s.streams[ObjectIdentifier(stream)] = stream
            return .success(stream)
        }
        switch result {
        case .success:
            logger.info("Stream opened", metadata: ["app": "\(app)", "origin": "\(origin)"])
        case .failure(let refusal):
            logger.notice("Stream refused", metadata: ["app": "\(app)", "origin": "\(origin)", "reason": "\(refusal.reason)"])
        }
        return result
    }

    /// A stream's connection closed.
    func closed(_ stream: EventStream) {
        stream.close()
        _ = state.withLock { $0.streams.removeValue(forKey: ObjectIdentifier(stream)) }
        logger.info("Stream closed", metadata: ["app": "\(stream.app)", "origin": "\(stream.origin)"])
    }

    /// The app's states as JSON (`GET /v1/apps/ID/state`).
    func snapshotJSON(app: String) -> String? {
        state.withLock { $0.mirrors[app]?.snapshotJSON() }
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
                metadata: ["app": "\(stream.app)", "origin": "\(stream.origin)", "backlog.limit": "\(limits.backlogBytes)"])
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
