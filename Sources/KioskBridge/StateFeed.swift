import Dispatch
import KioskAPI
import KioskClient
import KioskCore
import Logging
import Synchronization

/// kioskd's side of the bridge: follows every app's `RestrictionStateChanged` through
/// `KioskManager` (which believes only kioskd, docs/dbus-api.md § Believe only kioskd), and
/// reads each web app's `ListRestrictions` when the bridge starts and whenever kioskd
/// (re)starts, so a change made while either was down shows up as a difference. Read-only: it
/// calls nothing that changes kioskd, and never blocks it (every call is asynchronous, and
/// pages are served from the hub's mirror, never by a call per request).
///
/// It also reads the manifests again when kioskd reloads (kioskd asks systemd to reload the
/// bridge: SIGHUP) and when kioskd starts, the two moments kioskd reads them, so the bridge
/// serves the origins kioskd has declared.
struct StateFeed {
    let hub: BridgeHub
    let manager: KioskManager
    /// Where the manifests live (`--apps-dir`).
    let appsDirectory: String
    /// Readings of the manifests, one at a time and in the order asked.
    private let manifestReads = DispatchQueue(label: "kioskd-bridge.manifests")

    init(hub: BridgeHub, manager: KioskManager, appsDirectory: String) {
        self.hub = hub
        self.manager = manager
        self.appsDirectory = appsDirectory
    }

    /// Reads the manifests again (SIGHUP, or kioskd started), then kioskd's states of the apps
    /// that are new or changed (`everyApp`: of every app). A manifest that can no longer be used
    /// leaves its app as it was, as kioskd does; one removed takes its app away.
    func rereadManifests(everyApp: Bool = false) {
        manifestReads.async { [self] in
            let reading = ManifestDirectory.load(appsDirectory)
            for problem in reading.problems {
                hub.logger.error(
                    "A manifest cannot be used; its app keeps what it had", metadata: ["problem": "\(problem)"])
            }
            let previous = hub.manifests
            let kept = reading.failed.compactMap { previous[$0.rawValue] }
            let changed = hub.use(reading.manifests + kept)
            for app in everyApp ? hub.apps : changed { read(app) }
        }
    }

    /// Follows kioskd until the bus connection is lost (then returns). `synced` is called once,
    /// when every app's first read has finished (kioskd answered, or could not).
    func run(synced: @escaping @Sendable () -> Void = {}) async {
        let events = await manager.events()  // subscribed before the first snapshot
        let apps = hub.apps
        let left = Mutex(apps.count)
        if apps.isEmpty { synced() }
        for app in apps {
            read(app) {
                let wasLast = left.withLock { count -> Bool in
                    count -= 1
                    return count == 0
                }
                if wasLast { synced() }
            }
        }
        for await event in events {
            switch event {
            case .restrictionStateChanged(let app, let restriction, let state):
                hub.signal(app: app, restriction: restriction, state: state)
            case .daemonStarted:
                hub.logger.info("kioskd started: reading the manifests and the states again")
                rereadManifests(everyApp: true)
            case .daemonStopped:
                hub.logger.notice("kioskd stopped: the states are kept as it last said")
            case .disconnected:
                hub.logger.error("The bus connection was lost")
                return
            default:
                break
            }
        }
    }

    private func read(_ app: String, then done: @escaping @Sendable () -> Void = {}) {
        guard hub.beginRead(app: app) else { return done() }
        let hub = hub, manager = manager
        Task {
            var again = true
            while again {
                let snapshot: [String: RestrictionState]??
                do {
                    let list = try await manager.listRestrictions(of: app)
                    snapshot = .some(Dictionary(list.map { ($0.id, $0.state) }) { a, _ in a })
                } catch let error as KioskError where error.code == .unknownApplication {
                    hub.logger.notice(
                        "kioskd does not know the app: its states are unknown", metadata: ["app": "\(app)"])
                    snapshot = .some(nil)
                } catch {
                    hub.logger.notice("Could not read the states", metadata: ["app": "\(app)", "error": "\(error)"])
                    snapshot = nil
                }
                again = hub.finishRead(app: app, snapshot: snapshot)
            }
            done()
        }
    }
}
