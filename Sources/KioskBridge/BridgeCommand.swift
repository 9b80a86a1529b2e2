import ArgumentParser
import BridgeCore
import Dispatch
import Glibc
import KioskClient
import KioskCore
import KioskFiles
import Logging
import SystemdKit

/// `kioskd-bridge`: parses the flags of kioskd-bridge(8) and runs the bridge
/// (docs/browsers.md § The bridge).
struct BridgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kioskd-bridge",
        abstract:
            "Serves web pages of the origins kioskd's web-app manifests list their restriction states (read-only)."
    )

    @Option(
        name: .customLong("listen"),
        help: "Listen on this loopback address (127.0.0.1:7770, [::1]:7770) instead of systemd's sockets; repeatable.")
    var listen: [String] = []

    @Option(name: .customLong("apps-dir"), help: "Where the web apps' manifests live.")
    var appsDirectory: String = ManifestDirectory.path

    @Option(name: .customLong("script"), help: "The kioskd.js served at /kioskd.js.")
    var script: String = "/usr/share/kioskd/kioskd.js"

    @Option(name: .customLong("heartbeat"), help: "Seconds between heartbeats on every stream.")
    var heartbeat: Int = BridgeLimits().heartbeatSeconds

    func validate() throws {
        for value in listen {
            do { _ = try ListenAddress(value) } catch { throw ValidationError(error.description) }
        }
        guard (1...3600).contains(heartbeat) else { throw ValidationError("--heartbeat must be 1 to 3600 seconds.") }
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "kioskd-bridge")
        logger.logLevel = .info
        var limits = BridgeLimits()
        limits.heartbeatSeconds = heartbeat
        let options = BridgeService.Options(
            listen: try listen.map { try ListenAddress($0) }, appsDirectory: appsDirectory, scriptPath: script,
            limits: limits)
        do {
            try await BridgeService.run(options, logger: logger)
        } catch {  // a BridgeError (typed throws; `catch let error as` crashes Swift 6.2.3's SIL verifier)
            logger.critical("The bridge cannot run", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
    }
}

/// The bridge's entry point, for the `kioskd-bridge` executable.
public enum BridgeProgram {
    public static func main() async {
        await BridgeCommand.main()
    }
}

/// The bridge's wiring: manifests, listening sockets, libmicrohttpd, the feed from kioskd and
/// the heartbeats.
enum BridgeService {
    struct Options {
        var listen: [ListenAddress]
        var appsDirectory: String
        var scriptPath: String
        var limits: BridgeLimits
    }

    static func run(_ options: Options, logger: Logger) async throws(BridgeError) {
        // SIGHUP reads the manifests again (below); until then it is ignored rather than fatal.
        signal(SIGHUP, SIG_IGN)
        let reading = ManifestDirectory.load(options.appsDirectory)
        let manifests = reading.manifests
        for problem in reading.problems { logger.error("Manifest left out", metadata: ["problem": "\(problem)"]) }
        let script = try? Files.readRegular(options.scriptPath, limit: 1 << 20).bytes
        let hub = BridgeHub(manifests: manifests, limits: options.limits, script: script, logger: logger)

        let sockets: [Int32]
        if options.listen.isEmpty {
            do {
                sockets = try SocketActivation.listeningSockets()
            } catch {
                throw BridgeError("A socket systemd passed is not a listening stream socket: \(error.reason).")
            }
            guard !sockets.isEmpty else {
                throw BridgeError(
                    "No socket to serve: start kioskd-bridge.socket, or give --listen 127.0.0.1:\(BridgeWire.port).")
            }
        } else {
            var opened: [Int32] = []
            for address in options.listen { opened.append(try ListenSockets.open(address)) }
            sockets = opened
        }
        let manager: KioskManager
        do {
            manager = try KioskManager.connect()
        } catch {
            throw BridgeError("Could not connect to the system bus: \(error).")
        }
        // Serve only once the states are known (or kioskd could not say within 5 s): until then
        // connections wait in the sockets' queues, and no page is told "unknown" for nothing.
        let (synced, syncedContinuation) = AsyncStream.makeStream(of: Void.self)
        let stateFeed = StateFeed(hub: hub, manager: manager, appsDirectory: options.appsDirectory)
        let feed = Task { await stateFeed.run(synced: { syncedContinuation.yield() }) }
        let hangups = DispatchSource.makeSignalSource(signal: SIGHUP)
        hangups.setEventHandler { stateFeed.rereadManifests() }
        hangups.resume()
        let patience = Task {
            try? await Task.sleep(for: .seconds(5))
            syncedContinuation.yield()
        }
        for await _ in synced { break }
        patience.cancel()
        var servers: [HTTPServer] = []
        for socket in sockets { servers.append(try HTTPServer(socket: socket, hub: hub)) }
        logger.info(
            "Serving",
            metadata: [
                "apps": "\(hub.apps.joined(separator: ","))", "sockets": "\(sockets.count)",
                "listen": "\(options.listen.map(\.description).joined(separator: ","))",
            ])
        _ = try? Notify.ready()

        let heartbeats = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(options.limits.heartbeatSeconds))
                hub.heartbeat()
            }
        }
        let deadlines = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                let dropped = hub.pending.dropOverdue(limit: .seconds(options.limits.requestSeconds))
                if dropped > 0 {
                    logger.notice(
                        "Connections dropped: their request did not arrive in time", metadata: ["count": "\(dropped)"])
                }
            }
        }
        await feed.value
        heartbeats.cancel()
        deadlines.cancel()
        hangups.cancel()
        for server in servers { server.stop() }
        withExtendedLifetime(hub) {}
        throw BridgeError("The bus connection was lost; systemd restarts the bridge.")
    }
}
