import BridgeCore
import BusTestSupport
import Foundation
import Glibc
import KioskTestSupport
import KioskdProcessTestSupport
import Testing

/// kioskd.js (packaging/web/kioskd.js) as a page uses it, run by node against the bridge and
/// kioskd: the first states, each change once, and the change missed while the bridge restarted
/// (docs/browsers.md § kioskd.js). The real-browser run is the browser harness's.
@Suite(.serialized) struct KioskJSTests {
    typealias H = BridgeHarness
    static let client = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "kioskd-js-client.mjs"
    ).path

    final class Page {
        let process: ChildProcess
        let path: String
        init(_ h: BridgeHarness, app: String = H.app) throws {
            path = h.directory.appendingPathComponent("page-\(UUID().uuidString.prefix(6))").path
            let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            defer { close(fd) }
            process = try ChildProcess.spawn(
                "/usr/bin/node", [KioskJSTests.client, H.script, "http://127.0.0.1:\(h.port)", H.origin, app], stdout: fd,
                stderr: fd)
        }
        var lines: [String] {
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        func changes() -> [String] { lines.filter { $0.hasPrefix(#"{"change""#) } }
        func stop() {
            process.signal(SIGTERM)
            _ = process.wait(timeout: .seconds(5))
        }
    }

    @Test func aPageHearsEachChangeOnceAcrossABridgeRestart() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            let page = try Page(h)
            defer { page.stop() }
            #expect(eventually { page.lines.contains { $0.hasPrefix(#"{"ready""#) } }, "\(page.lines)")
            #expect(
                page.lines.first
                    == #"{"ready":[{"id":"\#(H.video)","state":"allow"},{"id":"\#(H.print)","state":"allow"}]}"#)
            #expect(page.changes().isEmpty, "the first states are not changes")

            try h.set(H.video, "deny")
            #expect(eventually { page.changes().count == 1 }, "\(page.lines)")
            #expect(page.changes() == [#"{"change":{"id":"\#(H.video)","state":"deny","previous":"allow"}}"#])

            h.stopBridge()
            #expect(eventually { page.lines.contains(#"{"connected":false}"#) })
            try h.set(H.print, "deny")  // missed while the bridge is down
            try h.startBridge()
            #expect(eventually(timeout: .seconds(15)) { page.changes().count == 2 }, "\(page.lines)")
            #expect(page.changes().last == #"{"change":{"id":"\#(H.print)","state":"deny","previous":"allow"}}"#)
            #expect(eventually { page.lines.contains(#"{"connected":true}"#) }, "told that the stream is back")

            // A sentinel change after the reconnect: it arrives, and nothing came twice before it.
            try h.set(H.video, "allow")
            #expect(eventually { page.changes().count == 3 }, "\(page.lines)")
            #expect(page.changes().last == #"{"change":{"id":"\#(H.video)","state":"allow","previous":"deny"}}"#)
        }
    }

    @Test func anAppWithoutAManifestIsRefused() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            let page = try Page(h, app: "org.example.Other")
            defer { page.stop() }
            #expect(eventually { page.lines.contains { $0.hasPrefix(#"{"refused""#) } }, "\(page.lines)")
        }
    }

    @Test func theBridgeServesTheScriptToAnAllowedOriginOnly() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            let served = try h.curl(["-H", "Origin: \(H.origin)", "http://127.0.0.1:\(h.port)/kioskd.js"])
            #expect(served.stdout.httpStatus == "HTTP/1.1 200 OK")
            #expect(served.stdout.contains("Content-Type: text/javascript"))
            #expect(served.stdout.httpBody == (try String(contentsOfFile: H.script, encoding: .utf8)))
            let foreign = try h.curl(["-H", "Origin: https://evil.example", "http://127.0.0.1:\(h.port)/kioskd.js"])
            #expect(foreign.stdout.httpStatus == "HTTP/1.1 403 Forbidden")
        }
    }
}

/// The port is one constant, `BridgeWire.port`: the socket unit, kioskd.js, the man page and
/// browsers.md name the same one.
@Suite struct BridgePortTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func text(_ path: String) throws -> String {
        try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func everyFileNamesBridgeWirePort() throws {
        let port = BridgeWire.port
        let socket = try text("packaging/systemd/kioskd-bridge.socket")
        let listens = socket.split(separator: "\n").filter { $0.hasPrefix("ListenStream=") }
        #expect(listens == ["ListenStream=127.0.0.1:\(port)", "ListenStream=[::1]:\(port)"])
        #expect(try text("packaging/web/kioskd.js").contains("export const BRIDGE = \"http://127.0.0.1:\(port)\";"))
        #expect(try text("packaging/man/kioskd-bridge.8").contains("127.0.0.1:\(port) and [::1]:\(port)"))
        #expect(try text("docs/browsers.md").contains("`http://127.0.0.1:\(port)` and `http://[::1]:\(port)`"))
    }
}
