import BusTestSupport
import Foundation
import Glibc
import KioskTestSupport
import KioskdProcessTestSupport
import Testing

/// kioskd-bridge against the built kioskd on a private bus, spoken to by real clients: curl for
/// the streams and refusals, python3 for what no well-behaved client does (huge headers, slow
/// requests, a stream nobody reads, a flood of connections), systemd-socket-activate for the
/// sockets systemd passes (docs/browsers.md § The bridge).
@Suite(.serialized) struct BridgeTests {
    typealias H = BridgeHarness

    @Test func anAllowedOriginHearsTheSnapshotThenADeny() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            let stream = try h.stream()
            defer { stream.stop() }
            #expect(eventually { stream.data(of: "snapshot").count == 1 }, "\(stream.text)")
            let head = stream.text.components(separatedBy: "\r\n\r\n").first ?? ""
            #expect(head.hasPrefix("HTTP/1.1 200"))
            #expect(head.contains("Access-Control-Allow-Origin: \(H.origin)"))
            #expect(head.contains("Vary: Origin"))
            #expect(head.contains("Content-Type: text/event-stream"))
            let snapshot = stream.data(of: "snapshot").first ?? ""
            #expect(
                snapshot.contains(
                    #"{"id":"\#(H.video)","title":"Exhibit videos","detail":"Visitors may play the video beside each exhibit.","state":"allow"}"#
                ))
            #expect(snapshot.contains(#""reset":false"#))

            try h.set(H.video, "deny")
            #expect(eventually { stream.data(of: "change").count == 1 }, "\(stream.text)")
            #expect(stream.data(of: "change") == [#"{"app":"\#(H.app)","restriction":"\#(H.video)","state":"deny"}"#])
            #expect(stream.lastID?.hasSuffix(".da") == true, "the id carries the states seen: video deny, print allow")

            // The same answer as one document.
            let state = try h.curl(["-H", "Origin: \(H.origin)", h.stateURL])
            #expect(state.stdout.httpStatus == "HTTP/1.1 200 OK")
            #expect(
                state.stdout.httpBody.contains(
                    #""id":"\#(H.video)","title":"Exhibit videos","detail":"Visitors may play the video beside each exhibit.","state":"deny""#
                ))
        }
    }

    @Test(arguments: [
        ([], "The request has no Origin header"),
        (["Origin: null"], "The request's Origin is null"),
        (["Origin: https://evil.example"], "The origin https://evil.example may not read org.example.MuseumGuide"),
        (
            ["Origin: https://guide.museum.example", "Origin: https://guide.museum.example"],
            "The request has 2 Origin headers"
        ),
    ])
    func aMissingForeignOrNullOriginIsRefusedByTheBridge(headers: [String], why: String) throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            for url in [h.eventsURL, h.stateURL] {
                let out = try h.curl(headers.flatMap { ["-H", $0] } + [url])
                #expect(out.stdout.httpStatus == "HTTP/1.1 403 Forbidden", "\(out)")
                #expect(out.stdout.httpBody.hasPrefix(why), "the bridge's own sentence: \(out.stdout)")
                #expect(!out.stdout.hasHeader("Access-Control-Allow-Origin"))
            }
            #expect(h.log.contains("Request refused"), "logged by the bridge")
        }
    }

    @Test func anythingButGetIsRefusedWith405() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            for method in ["POST", "PUT", "DELETE", "PATCH"] {
                let out = try h.curl(["-X", method, "-H", "Origin: \(H.origin)", "--data", "state=allow", h.stateURL])
                #expect(out.stdout.httpStatus == "HTTP/1.1 405 Method Not Allowed", "\(method): \(out)")
                #expect(out.stdout.contains("Allow: GET, OPTIONS"))
                #expect(out.stdout.httpBody.hasPrefix("The bridge is read-only"))
            }
            let unknown = try h.curl([
                "-H", "Origin: \(H.origin)", "http://127.0.0.1:\(h.port)/v1/apps/org.example.Other/events",
            ])
            #expect(unknown.stdout.httpStatus == "HTTP/1.1 404 Not Found")
            let preflight = try h.curl(["-X", "OPTIONS", "-H", "Origin: \(H.origin)", h.eventsURL])
            #expect(preflight.stdout.httpStatus == "HTTP/1.1 204 No Content", "\(preflight)")
            #expect(preflight.stdout.contains("Access-Control-Allow-Private-Network: true"))
            // Nothing changed: the states are still kioskd's.
            let state = try h.curl(["-H", "Origin: \(H.origin)", h.stateURL])
            #expect(state.stdout.contains(#""state":"allow""#))
        }
    }

    @Test func aHugeHeaderIsRefused() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            let big = String(repeating: "a", count: 64 * 1024)
            let out = try h.curl(["-H", "Origin: \(H.origin)", "-H", "X-Big: \(big)", h.stateURL])
            #expect(
                out.stdout.httpStatus == "HTTP/1.1 431 Request Header Fields Too Large", "\(out.stdout.prefix(200))")
            #expect(!out.stdout.contains("\"restrictions\""))
            // A request of an ordinary size still gets its answer.
            #expect(try h.curl(["-H", "Origin: \(H.origin)", h.stateURL]).stdout.httpStatus == "HTTP/1.1 200 OK")
        }
    }

    /// A request whose headers never end is dropped within the idle bound (10 s).
    @Test func aSlowRequestIsDropped() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            let out = try h.python(
                """
                import socket, sys, time
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
                s.sendall(b"GET /v1/apps/org.example.MuseumGuide/state HTTP/1.1\\r\\nHost: x\\r\\n")
                start = time.monotonic()
                s.settimeout(30)
                try:
                    data = s.recv(4096)
                except (TimeoutError, socket.timeout):
                    data = None
                print("eof" if data == b"" else f"got {data!r}", round(time.monotonic() - start, 1))
                """)
            let words = out.stdout.split(separator: " ")
            #expect(words.first == "eof", "\(out)")
            let seconds = Double(words.last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 99
            #expect(seconds >= 9 && seconds <= 13, "dropped after \(seconds) s (the bound is 10 s)")
        }
    }

    /// A request whose headers trickle in (a line every 2 s, never idle long enough for the idle
    /// bound) is dropped once 10 s passed since it was accepted.
    @Test func aTricklingRequestIsDroppedAtItsDeadline() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            let out = try h.python(
                """
                import socket, sys, time
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
                start = time.monotonic()
                s.sendall(b"GET /v1/apps/org.example.MuseumGuide/state HTTP/1.1\\r\\nHost: x\\r\\n")
                s.settimeout(2)
                result = "still open"
                while time.monotonic() - start < 30:
                    try:
                        data = s.recv(4096)
                        result = "eof" if data == b"" else f"got {data!r}"
                        break
                    except (TimeoutError, socket.timeout):
                        try:
                            s.sendall(b"X-Trickle: 1\\r\\n")
                        except OSError:
                            result = "eof"
                            break
                    except ConnectionResetError:
                        result = "eof"
                        break
                print(result, round(time.monotonic() - start, 1))
                """)
            let words = out.stdout.split(separator: " ")
            #expect(words.first == "eof", "\(out)")
            let seconds = Double(words.last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 99
            #expect(seconds >= 9 && seconds <= 13, "dropped after \(seconds) s (the deadline is 10 s)")
            #expect(h.log.contains("Connections dropped: their request did not arrive in time"))
        }
    }

    /// A stream whose client never reads is dropped once 16 KiB wait for it; another stream goes
    /// on hearing every change meanwhile.
    @Test func aStreamNobodyReadsIsDroppedWithoutBlockingOthers() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            let reader = try h.stream()
            defer { reader.stop() }
            #expect(eventually { reader.data(of: "snapshot").count == 1 })
            // A client with a tiny receive buffer that sends its request and never reads.
            let stuckPath = h.directory.appendingPathComponent("stuck").path
            let stuckLog = open(stuckPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            let (readEnd, writeEnd) = try Self.pipe()
            let stuck = try ChildProcess.spawn(
                "/usr/bin/python3",
                [
                    "-c",
                    """
                    import socket, sys
                    s = socket.socket()
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
                    s.connect(("127.0.0.1", int(sys.argv[1])))
                    s.sendall(b"GET /v1/apps/org.example.MuseumGuide/events HTTP/1.1\\r\\nHost: x\\r\\nOrigin: https://guide.museum.example\\r\\n\\r\\n")
                    print("sent", flush=True)
                    sys.stdin.readline()  # the test says when to read
                    s.settimeout(20)
                    total = 0
                    while True:
                        d = s.recv(65536)
                        if not d: break
                        total += len(d)
                    print("eof after", total, flush=True)
                    """, String(h.port),
                ], stdin: readEnd, stdout: stuckLog, stderr: stuckLog)
            close(readEnd)
            close(stuckLog)
            #expect(eventually { h.log.components(separatedBy: "Stream opened").count == 3 })
            var toggles = 0
            let states = ["deny", "allow"]
            while !h.log.contains("Stream dropped: its client did not read"), toggles < 3000 {
                try h.set(H.video, states[toggles % 2])
                toggles += 1
            }
            #expect(h.log.contains("Stream dropped: its client did not read"), "after \(toggles) changes")
            // The reader heard every change, the last one included.
            #expect(
                eventually { reader.data(of: "change").count == toggles },
                "\(reader.data(of: "change").count) of \(toggles)")
            // The stuck client, reading at last, finds its stream ended.
            _ = write(writeEnd, "go\n", 3)
            close(writeEnd)
            _ = stuck.wait(timeout: .seconds(30))
            let said = (try? String(contentsOfFile: stuckPath, encoding: .utf8)) ?? ""
            #expect(said.contains("eof after"), "\(said)")
        }
    }

    /// 8 streams from one origin: the 9th is refused with 503 and a reason, and the 8 go on.
    @Test func aNinthStreamFromOneOriginIsRefused() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            var streams: [BridgeHarness.Stream] = []
            defer { streams.forEach { $0.stop() } }
            for _ in 0..<8 {
                let stream = try h.stream()
                streams.append(stream)
                #expect(eventually { stream.data(of: "snapshot").count == 1 })
            }
            let ninth = try h.curl(["-H", "Origin: \(H.origin)", h.eventsURL])
            #expect(ninth.stdout.httpStatus == "HTTP/1.1 503 Service Unavailable", "\(ninth)")
            #expect(ninth.stdout.httpBody.hasPrefix("\(H.origin) has 8 streams open already"))
            try h.set(H.video, "deny")
            #expect(eventually { streams.allSatisfy { $0.data(of: "change").count == 1 } })
        }
    }

    /// 150 connections at once: past the bound (64 a socket) they are closed as soon as they are
    /// accepted, while an open stream goes on hearing changes.
    @Test func aFloodOfConnectionsIsRefusedBeyondTheBound() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            let reader = try h.stream()
            defer { reader.stop() }
            #expect(eventually { reader.data(of: "snapshot").count == 1 })
            let outPath = h.directory.appendingPathComponent("flood").path
            let outFD = open(outPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            let (readEnd, writeEnd) = try Self.pipe()
            let flood = try ChildProcess.spawn(
                "/usr/bin/python3",
                [
                    "-c",
                    """
                    import socket, sys, select, time
                    socks = []
                    for _ in range(150):
                        socks.append(socket.create_connection(("127.0.0.1", int(sys.argv[1]))))
                    closed = set()
                    deadline = time.monotonic() + 8
                    while len(closed) < 150 - 63 and time.monotonic() < deadline:
                        r, _, _ = select.select([s for s in socks if s not in closed], [], [], 0.2)
                        for s in r:
                            try:
                                if s.recv(1) == b"": closed.add(s)
                            except ConnectionResetError:
                                closed.add(s)
                    print("refused", len(closed), "held", 150 - len(closed), flush=True)
                    sys.stdin.readline()
                    """, String(h.port),
                ], stdin: readEnd, stdout: outFD, stderr: outFD)
            close(readEnd)
            close(outFD)
            let said = { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
            #expect(eventually(timeout: .seconds(20)) { said().contains("refused") }, "\(said())")
            let words = said().split(whereSeparator: \.isWhitespace)
            let refused = Int(words.dropFirst().first ?? "") ?? 0
            #expect(refused >= 150 - 63, "\(said())")
            // While the flood holds its connections, the stream hears a change.
            try h.set(H.video, "deny")
            #expect(eventually { reader.data(of: "change").count == 1 }, "\(reader.text)")
            _ = write(writeEnd, "done\n", 5)
            close(writeEnd)
            _ = flood.wait(timeout: .seconds(10))
        }
    }

    /// The page's last id brings the change it missed while the bridge was down.
    @Test func aReconnectAfterABridgeRestartGetsTheMissedChange() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            let first = try h.stream()
            #expect(eventually { first.data(of: "snapshot").count == 1 })
            let seen = try #require(first.lastID)
            #expect(seen.hasSuffix(".aa"))
            h.stopBridge()
            first.stop()
            try h.set(H.video, "deny")  // while the bridge is down
            try h.startBridge()
            let again = try h.stream(headers: ["Origin: \(H.origin)", "Last-Event-ID: \(seen)"])
            defer { again.stop() }
            #expect(eventually { again.data(of: "change").count == 1 }, "\(again.text)")
            #expect(again.data(of: "change") == [#"{"app":"\#(H.app)","restriction":"\#(H.video)","state":"deny"}"#])
            #expect(again.data(of: "snapshot").isEmpty, "the changes, not a snapshot")
            // The next change comes after, once.
            try h.set(H.print, "deny")
            #expect(eventually { again.data(of: "change").count == 2 })
            #expect(again.lastID?.hasSuffix(".dd") == true)
        }
    }

    /// A change made while kioskd was down (its state file changed by a kioskd on another bus)
    /// reaches the stream once kioskd is back: the bridge reads a snapshot when the name gets a
    /// new owner and sends the difference, once. A manifest added meanwhile is served too.
    @Test func aKioskdRestartBringsTheDifference() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            let stream = try h.stream()
            defer { stream.stop() }
            #expect(eventually { stream.data(of: "snapshot").count == 1 })
            kioskd.stop()
            #expect(eventually { h.log.contains("kioskd stopped") })
            // An admin's change the bridge cannot hear: made on another bus, to the same state.
            let elsewhere = try PrivateBus()
            defer { elsewhere.stop() }
            let other = try KioskdProcess(bus: elsewhere, sharingStateWith: kioskd)
            try other.start()
            let out = try runTool(
                "/usr/bin/busctl",
                [
                    "--address=\(elsewhere.address)", "call", "org.kioskd.GuidedAccess1", "/org/kioskd/GuidedAccess1",
                    "org.kioskd.GuidedAccess1.Manager", "SetRestrictionState", "sss", H.app, H.print, "deny",
                ])
            #expect(out.status == 0, "\(out)")
            other.stop()
            // A manifest added while kioskd was down: kioskd declares it at its start, and the
            // bridge reads the manifests again then too.
            let map = "org.example.MuseumMap"
            let mapFile = "\(h.appsDirectory)/\(map).toml"
            try H.manifest.replacingOccurrences(of: H.app, with: map).write(
                toFile: mapFile, atomically: false, encoding: .utf8)
            chmod(mapFile, 0o644)
            let mapState = "http://127.0.0.1:\(h.port)/v1/apps/\(map)/state"
            #expect(try h.curl(["-H", "Origin: \(H.origin)", mapState]).stdout.httpStatus == "HTTP/1.1 404 Not Found")
            try kioskd.start()
            #expect(
                eventually(every: .milliseconds(100)) {
                    (try? h.curl(["-H", "Origin: \(H.origin)", mapState]))?.stdout.httpBody.contains(
                        #""state":"allow""#) == true
                }, "\(h.log)")
            #expect(eventually { stream.data(of: "change").count == 1 }, "\(stream.text)")
            #expect(stream.data(of: "change") == [#"{"app":"\#(H.app)","restriction":"\#(H.print)","state":"deny"}"#])
            #expect(h.log.contains("kioskd started: reading the manifests and the states again"))
            // A sentinel change after it: it arrives, and the difference did not come twice.
            try h.set(H.video, "deny")
            #expect(eventually { stream.data(of: "change").count == 2 }, "\(stream.text)")
            #expect(
                stream.data(of: "change").last == #"{"app":"\#(H.app)","restriction":"\#(H.video)","state":"deny"}"#)
        }
    }

    /// A reload (kioskd's `ReloadProfiles`, then the SIGHUP systemd's `ExecReload=` sends the
    /// bridge) puts the manifests as edited in use without a restart: a new app is served with
    /// the states kioskd declared, an unchanged one keeps its streams, an origin taken out of a
    /// manifest ends its stream and is refused, a broken manifest keeps its app as it was (as
    /// kioskd does), and a removed one takes its app away.
    @Test func aReloadServesTheManifestsAsEdited() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge()
            let guide = try h.stream()
            defer { guide.stop() }
            #expect(eventually { guide.data(of: "snapshot").count == 1 }, "\(guide.text)")
            let map = "org.example.MuseumMap", mapOrigin = "https://map.museum.example"
            let mapFile = "\(h.appsDirectory)/\(map).toml"
            let mapState = "http://127.0.0.1:\(h.port)/v1/apps/\(map)/state"
            func install(_ text: String, _ file: String) throws {
                try text.write(toFile: file + ".new", atomically: false, encoding: .utf8)
                chmod(file + ".new", 0o644)
                #expect(rename(file + ".new", file) == 0)
            }
            func reload() throws {
                try h.busctl(
                    "call", "org.kioskd.GuidedAccess1", "/org/kioskd/GuidedAccess1", "org.kioskd.GuidedAccess1.Manager",
                    "ReloadProfiles")
                h.bridge?.signal(SIGHUP)
            }
            func status(_ url: String, _ origin: String) throws -> String {
                try h.curl(["-H", "Origin: \(origin)", url]).stdout.httpStatus
            }
            let reloads = { h.log.components(separatedBy: "Manifests read again").count - 1 }

            try install(
                """
                id = "\(map)"
                origins = ["\(mapOrigin)"]

                [[restriction]]
                id = "\(map).zoom"
                title = "Zoom"
                detail = "Visitors may zoom the map."
                """, mapFile)
            #expect(try status(mapState, mapOrigin) == "HTTP/1.1 404 Not Found", "not read until a reload")
            try reload()
            #expect(
                eventually(every: .milliseconds(100)) { (try? status(mapState, mapOrigin)) == "HTTP/1.1 200 OK" },
                "\(h.log)")
            let body = try h.curl(["-H", "Origin: \(mapOrigin)", mapState]).stdout.httpBody
            #expect(
                body.contains(
                    #""id":"\#(map).zoom","title":"Zoom","detail":"Visitors may zoom the map.","state":"allow""#),
                "\(body)")
            #expect(h.log.contains("apps.changed=\(map)"), "\(h.log)")

            // The guide's manifest did not change: its stream goes on and hears the next change.
            try h.set(H.video, "deny")
            #expect(eventually { guide.data(of: "change").count == 1 }, "\(guide.text)")
            #expect(guide.process.isRunning && guide.data(of: "snapshot").count == 1)

            // A broken manifest: the map keeps what it had.
            let before = reloads()
            try install("id = \"\(map)\"\norigins = [", mapFile)
            h.bridge?.signal(SIGHUP)
            #expect(eventually { reloads() > before }, "\(h.log)")
            #expect(h.log.contains("A manifest cannot be used; its app keeps what it had"), "\(h.log)")
            #expect(try status(mapState, mapOrigin) == "HTTP/1.1 200 OK")

            // The guide's origin taken out: its stream ends, its requests are refused.
            try install(
                H.manifest.replacingOccurrences(of: H.origin, with: "https://other.museum.example"),
                "\(h.appsDirectory)/\(H.app).toml")
            try reload()
            #expect(eventually(timeout: .seconds(20)) { !guide.process.isRunning }, "the stream ended: \(guide.text)")
            #expect(try status(h.stateURL, H.origin) == "HTTP/1.1 403 Forbidden")
            let refused = try h.curl(["-H", "Origin: \(H.origin)", h.eventsURL])
            #expect(refused.stdout.httpStatus == "HTTP/1.1 403 Forbidden", "\(refused.stdout)")
            #expect(try status(h.stateURL, "https://other.museum.example") == "HTTP/1.1 200 OK")

            // The map's manifest removed: its app is gone.
            unlink(mapFile)
            try reload()
            #expect(
                eventually(every: .milliseconds(100)) {
                    (try? status(mapState, mapOrigin)) == "HTTP/1.1 404 Not Found"
                }, "\(h.log)")
        }
    }

    /// Heartbeats come on every stream, so a client that went away is noticed.
    @Test func streamsGetHeartbeats() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            try h.startBridge(extra: ["--heartbeat", "1"])
            let stream = try h.stream()
            defer { stream.stop() }
            #expect(eventually { stream.text.contains("\n: keep-alive\n\n") }, "\(stream.text)")
        }
    }

    /// A manifest others may write is left out: its app is unknown to the bridge.
    @Test func aManifestOthersMayWriteIsLeftOut() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            chmod("\(h.appsDirectory)/\(H.app).toml", 0o666)
            try h.startBridge()
            #expect(h.log.contains("must be root's and writable by root alone"), "\(h.log)")
            let out = try h.curl(["-H", "Origin: \(H.origin)", h.stateURL])
            #expect(out.stdout.httpStatus == "HTTP/1.1 404 Not Found")
        }
    }

    /// A manifest claiming a browser's id, which kioskd refuses, is refused by the bridge too
    /// (one rule, `WebAppDirectoryReading`): its origins read nothing of the browser's states.
    @Test func aManifestClaimingABrowserIsLeftOutAsKioskdLeavesItOut() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            let file = "\(h.appsDirectory)/org.chromium.Chromium.toml"
            try """
            id = "org.chromium.Chromium"
            origins = ["\(H.origin)"]

            [[restriction]]
            id = "org.chromium.Chromium.video"
            title = "Videos"
            detail = "Visitors may play videos."
            """.write(toFile: file, atomically: false, encoding: .utf8)
            chmod(file, 0o644)
            try h.startBridge()
            #expect(h.log.contains("a browser kioskd declares itself"), "\(h.log)")
            let out = try h.curl([
                "-H", "Origin: \(H.origin)", "http://127.0.0.1:\(h.port)/v1/apps/org.chromium.Chromium/state",
            ])
            #expect(out.stdout.httpStatus == "HTTP/1.1 404 Not Found", "\(out.stdout)")
            let guide = try h.curl(["-H", "Origin: \(H.origin)", h.stateURL])
            #expect(guide.stdout.httpStatus == "HTTP/1.1 200 OK", "the other manifest still serves: \(guide.stdout)")
        }
    }

    /// The sockets systemd passes (`kioskd-bridge.socket`), as systemd-socket-activate passes them.
    @Test func socketActivation() throws {
        try withKioskd(setUp: BridgeHarness.install) { kioskd, bus in
            let h = try BridgeHarness(kioskd)
            let log = open(h.logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            let activator = try ChildProcess.spawn(
                "/usr/bin/systemd-socket-activate",
                [
                    "-l", "127.0.0.1:\(h.port)", "-E", "DBUS_SYSTEM_BUS_ADDRESS=\(bus.address)",
                    BuildProducts.path(of: "kioskd-bridge"),
                ]
                    + h.arguments,
                environment: bus.environment, stdout: log, stderr: log)
            close(log)
            defer {
                activator.signal(SIGTERM)
                _ = activator.wait(timeout: .seconds(10))
            }
            #expect(eventually { BridgeHarness.accepts(port: h.port) })
            let out = try h.curl(["-H", "Origin: \(H.origin)", h.stateURL])  // the first connection starts it
            #expect(out.stdout.httpStatus == "HTTP/1.1 200 OK", "\(out) \(h.log)")
            #expect(out.stdout.httpBody.contains(#""state":"allow""#))
            #expect(h.log.contains("sockets=1"))
            #expect(h.log.contains("listen= "), "no --listen: the socket came from systemd-socket-activate")
        }
    }

    @Test func withoutASocketOrListenItSaysSoAndExits() throws {
        let out = try runTool(
            BuildProducts.path(of: "kioskd-bridge"), ["--apps-dir", "/nonexistent"], timeout: .seconds(20))
        #expect(out.status != 0)
        #expect(
            out.stderr.contains("No socket to serve: start kioskd-bridge.socket, or give --listen 127.0.0.1:7770."),
            "\(out)")
        let far = try runTool(BuildProducts.path(of: "kioskd-bridge"), ["--listen", "0.0.0.0:7770"])
        #expect(far.status != 0)
        #expect(far.stderr.contains("The listen address \"0.0.0.0:7770\" is refused"), "\(far)")
    }

    static func pipe() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { throw HarnessError("pipe failed") }
        return (fds[0], fds[1])
    }
}
