import BridgeCore
import BusTestSupport
import Foundation
import Glibc
import KioskTestSupport
import KioskdProcessTestSupport

/// kioskd-bridge as the package runs it, on a private bus with the built kioskd: a manifest in
/// kioskd's apps directory (kioskd declares the app from it), the bridge listening on a free loopback port, and the real
/// clients its tests use (curl, python3 for raw sockets, node for kioskd.js).
final class BridgeHarness: @unchecked Sendable {
    static let app = "org.example.MuseumGuide"
    static let video = "org.example.MuseumGuide.video"
    static let print = "org.example.MuseumGuide.print"
    static let origin = "https://guide.museum.example"
    static let manifest = """
        id = "org.example.MuseumGuide"
        origins = ["https://guide.museum.example"]

        [[restriction]]
        id = "org.example.MuseumGuide.video"
        title = "Exhibit videos"
        detail = "Visitors may play the video beside each exhibit."

        [[restriction]]
        id = "org.example.MuseumGuide.print"
        title = "Printing"
        detail = "Visitors may print the guide."
        """

    let bus: PrivateBus
    let directory: URL
    let port: UInt16
    private(set) var bridge: ChildProcess?
    let logPath: String
    var eventsURL: String { "http://127.0.0.1:\(port)/v1/apps/\(Self.app)/events" }
    var stateURL: String { "http://127.0.0.1:\(port)/v1/apps/\(Self.app)/state" }

    /// Puts the manifest where `kioskd` reads web apps' manifests (`--apps-dir`), before it
    /// starts: kioskd declares the app from it, as on a kiosk, and the bridge reads the same file.
    static func install(_ kioskd: KioskdProcess) throws {
        let apps = kioskd.browserDirectory.appendingPathComponent("apps")
        try FileManager.default.createDirectory(at: apps, withIntermediateDirectories: true)
        let file = apps.appendingPathComponent("\(Self.app).toml")
        try Self.manifest.write(to: file, atomically: false, encoding: .utf8)
        chmod(file.path, 0o644)
    }

    /// The bridge for `kioskd`, which was started with the manifest ``install(_:)`` put in place.
    init(_ kioskd: KioskdProcess) throws {
        bus = kioskd.bus
        appsDirectory = kioskd.browserDirectory.appendingPathComponent("apps").path
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("bridge-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        logPath = directory.appendingPathComponent("bridge.log").path
        port = try Self.freePort()
    }

    deinit {
        stopBridge()
        try? FileManager.default.removeItem(at: directory)
    }

    /// kioskd's `--apps-dir`, which the bridge reads too.
    let appsDirectory: String
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("packaging/web/kioskd.js").path
    }
    var arguments: [String] { ["--apps-dir", appsDirectory, "--script", Self.script] }

    /// Starts the bridge with `--listen` and waits until it accepts connections.
    func startBridge(extra: [String] = []) throws {
        let fd = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        defer { close(fd) }
        let serving = log.components(separatedBy: "Serving").count
        bridge = try ChildProcess.spawn(
            BuildProducts.path(of: "kioskd-bridge"), ["--listen", "127.0.0.1:\(port)"] + arguments + extra,
            environment: bus.environment, stdout: fd, stderr: fd)
        guard eventually(timeout: .seconds(10), { log.components(separatedBy: "Serving").count > serving }) else {
            throw HarnessError("kioskd-bridge did not start: \(self.log)")
        }
    }

    func stopBridge() {
        bridge?.signal(SIGTERM)
        _ = bridge?.wait(timeout: .seconds(10))
        bridge = nil
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Sets a restriction's state over the bus, as root (an admin's `kioskctl deny`).
    func set(_ restriction: String, _ state: String) throws {
        try busctl(
            "call", "org.kioskd.GuidedAccess1", "/org/kioskd/GuidedAccess1", "org.kioskd.GuidedAccess1.Manager",
            "SetRestrictionState", "sss", Self.app, restriction, state)
    }

    func busctl(_ arguments: String...) throws {
        let out = try runTool("/usr/bin/busctl", ["--address=\(bus.address)"] + arguments)
        guard out.status == 0 else { throw HarnessError("busctl \(arguments.joined(separator: " ")): \(out)") }
    }

    // MARK: clients

    /// `curl` once: the status line and headers, then the body.
    func curl(_ arguments: [String]) throws -> ToolOutput {
        try runTool("/usr/bin/curl", ["-sS", "-i", "--max-time", "10"] + arguments)
    }

    /// A `curl -N` stream kept open, its output in a file.
    final class Stream {
        let process: ChildProcess
        let path: String
        init(_ process: ChildProcess, _ path: String) {
            self.process = process
            self.path = path
        }
        var text: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        /// The `data:` lines of the events named `name`, in order.
        func data(of name: String) -> [String] {
            text.components(separatedBy: "\n\n").compactMap { block in
                let lines = block.split(separator: "\n")
                guard lines.contains("event: \(name)") else { return nil }
                return lines.first { $0.hasPrefix("data: ") }.map { String($0.dropFirst(6)) }
            }
        }
        /// The last `id:` sent.
        var lastID: String? {
            text.split(separator: "\n").last { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
        }
        func stop() {
            process.signal(SIGTERM)
            _ = process.wait(timeout: .seconds(5))
        }
    }

    func stream(headers: [String] = ["Origin: \(BridgeHarness.origin)"]) throws -> Stream {
        let path = directory.appendingPathComponent("stream-\(UUID().uuidString.prefix(8))").path
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        defer { close(fd) }
        let process = try ChildProcess.spawn(
            "/usr/bin/curl", ["-sS", "-N", "-i"] + headers.flatMap { ["-H", $0] } + [eventsURL], stdout: fd, stderr: fd)
        return Stream(process, path)
    }

    /// Runs a python3 script with the port as its first argument.
    func python(_ script: String, _ arguments: [String] = [], timeout: Duration = .seconds(60)) throws -> ToolOutput {
        try runTool("/usr/bin/python3", ["-c", script, String(port)] + arguments, timeout: timeout)
    }

    // MARK: sockets

    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p -> Bool in
                bind(fd, p, length) == 0 && getsockname(fd, p, &length) == 0
            }
        }
        guard bound else { throw HarnessError("no free port") }
        return UInt16(bigEndian: sa.sin_port)
    }

    static func accepts(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_port = port.bigEndian
        sa.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

extension String {
    /// The body of `curl -i`'s output (after the first blank line).
    var httpBody: String { components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n") }
    /// The status line of `curl -i`'s output.
    var httpStatus: String { components(separatedBy: "\r\n").first ?? "" }
    /// Whether `curl -i`'s headers carry `name` (case-insensitive).
    func hasHeader(_ name: String) -> Bool {
        (components(separatedBy: "\r\n\r\n").first ?? "").lowercased().contains("\r\n\(name.lowercased()):")
    }
}
