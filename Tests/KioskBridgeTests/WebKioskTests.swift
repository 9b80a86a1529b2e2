import BrowserTestSupport
import BusTestSupport
import Foundation
import Glibc
import KioskTestSupport
import KioskdProcessTestSupport
import Testing

/// The web kiosk end to end, every part real (docs/browsers.md): the built kioskd on a private
/// bus, with a web app's manifest in its apps directory and a profile for Chromium; Debian's
/// chromium (BrowserTestSupport's `HeadlessChromium`) reading, in kioskd's own Chromium policy
/// directory bind-mounted as its managed one, the policy file kioskd itself writes; the built kioskd-bridge inside the browser's network
/// namespace on 127.0.0.1:7770; the real kioskctl making the changes. It shows that Chromium
/// obeys each policy kioskd writes, live, and that a page of the manifest's origin hears a change
/// through kioskd.js while a page of another origin is refused by the bridge.
///
/// Needs root (Chromium's namespaces) and Debian's chromium (`make deps-browser`).
@Suite(
    .serialized,
    .enabled(
        if: Root.isRoot,
        Comment(rawValue: Root.needs("Chromium in mount and network namespaces of its own, with --no-sandbox"))),
    .enabled(
        if: HeadlessChromium.isInstalled,
        "needs Debian's chromium (/usr/bin/chromium): make deps-browser installs it, as make test does"))
struct WebKioskTests {
    static let app = "org.example.MuseumGuide"
    static let video = "org.example.MuseumGuide.video"
    static let chromiumApp = "org.chromium.Chromium"
    /// The manifest's one origin: the harness's public site.
    static let manifest = """
        id = "org.example.MuseumGuide"
        origins = ["\(HeadlessChromium.publicSite)"]

        [[restriction]]
        id = "org.example.MuseumGuide.video"
        title = "Exhibit videos"
        detail = "Visitors may play the video beside each exhibit."
        """
    static let allowedPage = HeadlessChromium.loopbackSite + "/allowed"
    static let otherPage = HeadlessChromium.loopbackSite + "/other"
    static let publicPage = HeadlessChromium.publicSite + "/guide"
    static let bridge = "http://127.0.0.1:7770"

    /// A Chromium profile allowing the public site and one loopback page, keeping DevTools
    /// allowed (the test drives the page through them).
    static let profile = """
        app = "org.chromium.Chromium"
        description = "The museum's web guide"

        [browser]
        allowed-urls = ["\(HeadlessChromium.publicSite)", "\(allowedPage)"]

        [restrictions."org.chromium.Chromium"]
        "org.chromium.Chromium.devtools" = "allow"

        [passcode]
        hash = "\(KioskdProcess.passcodeHash)"
        """

    /// The public site is plain http: Local Network Access asks for a secure context.
    static let publicSiteIsSecure = "--unsafely-treat-insecure-origin-as-secure=\(HeadlessChromium.publicSite)"

    // MARK: The tests

    /// `kioskctl start` of the Chromium profile, then Chromium started (as a kiosk starts its
    /// browser once the session is on): chrome://policy shows exactly the policies kioskd's
    /// `BrowserPolicies` lists, values and all, from the platform, status OK; a page outside
    /// allowed-urls is blocked by the administrator, the allowed ones load. `kioskctl force-end`:
    /// kioskd's file keeps only the web app's Local Network Access policies, and a browser
    /// started then shows just those and loads the page. (A browser running through the change
    /// takes it too: `aChangeWhileChromiumRunsIsApplied`.)
    @Test func chromiumObeysThePolicyKioskdWritesForASession() async throws {
        try await Self.withWebKiosk { kiosk in
            let before = try kiosk.chromiumPolicies()
            #expect(Set(before.keys) == ["LocalNetworkAccessAllowedForUrls", "LoopbackNetworkAllowedForUrls"], "\(before)")
            try kiosk.withChromium { (chromium: HeadlessChromium) throws in
                try kiosk.expectChromiumReports(before, chromium)
                #expect(try chromium.navigate(Self.otherPage) == .loaded)
            }

            try kiosk.kioskctl("start", "web")
            let during = try kiosk.chromiumPolicies()
            #expect(during["URLBlocklist"] as? [String] == ["*"], "\(during)")
            let allowlist = Set(during["URLAllowlist"] as? [String] ?? [])
            #expect(allowlist.isSuperset(of: [HeadlessChromium.publicSite, Self.allowedPage]), "\(during)")
            #expect(Self.same(try kiosk.chromiumFile(), during))
            try kiosk.withChromium { (chromium: HeadlessChromium) throws in
                try kiosk.expectChromiumReports(during, chromium)
                #expect(try chromium.navigate(Self.otherPage) == .failed("net::ERR_BLOCKED_BY_ADMINISTRATOR"))
                #expect(try chromium.navigate(Self.allowedPage) == .loaded)
                #expect(try chromium.navigate(Self.publicPage) == .loaded)
                #expect(try chromium.evaluate("document.title") as? String == "page /guide")
            }

            try kiosk.kioskctl("force-end")
            let after = try kiosk.chromiumPolicies()
            #expect(Self.same(after, before), "\(after)")
            #expect(Self.same(try kiosk.chromiumFile(), before))
            try kiosk.withChromium { (chromium: HeadlessChromium) throws in
                try kiosk.expectChromiumReports(after, chromium)
                #expect(try chromium.navigate(Self.otherPage) == .loaded)
            }
        }
    }

    /// `kioskctl deny …downloads`: a download (chromium-web's file, through a link) is canceled
    /// and no file appears. `kioskctl deny …devtools` too: Chromium refuses to attach DevTools to
    /// its page ("Not allowed"; the refusal is the evidence: nothing else can be read then).
    @Test func chromiumObeysDownloadsAndDevToolsDeniedByKioskctl() async throws {
        try await Self.withWebKiosk { kiosk in
            try kiosk.kioskctl("deny", Self.chromiumApp, "\(Self.chromiumApp).downloads")
            let policies = try kiosk.chromiumPolicies()
            #expect(policies["DownloadRestrictions"] as? Int == 3, "\(policies)")
            try kiosk.withChromium { (chromium: HeadlessChromium) throws in
                try kiosk.expectChromiumReports(policies, chromium)
                #expect(try Self.downloadThroughALink(chromium)["state"] as? String == "canceled")
                let files = (try? FileManager.default.contentsOfDirectory(atPath: chromium.downloadsDirectory.path)) ?? []
                #expect(files.isEmpty, "\(files)")
            }

            try kiosk.kioskctl("deny", Self.chromiumApp, "\(Self.chromiumApp).devtools")
            #expect(try kiosk.chromiumPolicies()["DeveloperToolsAvailability"] as? Int == 2)
            try kiosk.withChromium { (chromium: HeadlessChromium) throws in
                #expect(try chromium.product().hasPrefix("Chrome/"))
                #expect(chromium.session == nil)
                let error = #expect(throws: DevToolsError.self) { try chromium.attach() }
                #expect(error?.message == "Not allowed")
            }
        }
    }

    /// A change kioskd makes while Chromium runs: kioskd renames its new file into the managed
    /// directory Chromium watches, so `kioskctl deny …printing` is in chrome://policy after the
    /// watcher's settle delay (about 5 s; printed), values and all, without a restart. (A file
    /// linked from that directory would not be: docs/browsers.md § Timing.)
    @Test func aChangeWhileChromiumRunsIsApplied() async throws {
        try await Self.withWebKiosk { kiosk in
            try kiosk.withChromium { (chromium: HeadlessChromium) throws in
                try chromium.waitUntilWatchingPolicies()
                let denied = ContinuousClock.now
                try kiosk.kioskctl("deny", Self.chromiumApp, "\(Self.chromiumApp).printing")
                let policies = try kiosk.chromiumPolicies()
                #expect(policies["PrintingEnabled"] as? Bool == false, "\(policies)")
                let reported = try chromium.policies(timeout: .seconds(15)) { $0.contains { $0.name == "PrintingEnabled" } }
                #expect(reported.contains { $0.name == "PrintingEnabled" }, "\(reported)")
                try kiosk.expectChromiumReports(policies, chromium)
                print("WebKioskTests: chrome://policy showed kioskd's change \(ContinuousClock.now - denied) after kioskctl deny")
            }
        }
    }

    /// A page of the manifest's origin imports kioskd.js from the bridge, connects, hears the
    /// first states, then hears `kioskctl deny` and `kioskctl allow` of its restriction as
    /// `change` events; the time from just before kioskctl is spawned to the page's event is
    /// printed and bounded.
    @Test func aPageOfTheManifestsOriginHearsAChange() async throws {
        try await Self.withWebKiosk { kiosk in try kiosk.withChromium { (chromium: HeadlessChromium) throws in
            try kiosk.startBridge(in: chromium)
            #expect(try chromium.navigate(Self.publicPage) == .loaded)
            let first = try chromium.evaluate(
                """
                (async () => {
                  const { KioskRestrictions } = await import("\(Self.bridge)/kioskd.js");
                  const kiosk = await KioskRestrictions.connect("\(Self.app)");
                  window.changes = [];
                  kiosk.addEventListener("change", (e) => changes.push({ ...e.detail, at: Date.now() }));
                  return kiosk.restrictions.map((r) => r.id + "=" + r.state);
                })()
                """) as? [String]
            #expect(first == ["\(Self.video)=allow"])

            for (verb, state) in [("deny", "deny"), ("allow", "allow")] {
                let spawned = Date().timeIntervalSince1970 * 1000
                try kiosk.kioskctl(verb, Self.app, Self.video)
                let change = try chromium.evaluate(
                    """
                    new Promise((done) => { const look = () => changes.length ? done(changes.shift()) : setTimeout(look, 2); look(); })
                    """, timeout: .seconds(10)) as? [String: Any]
                #expect(change?["id"] as? String == Self.video)
                #expect(change?["state"] as? String == state)
                let heard = (change?["at"] as? Double ?? .infinity) - spawned
                print("WebKioskTests: the page heard kioskctl \(verb) \(Int(heard)) ms after kioskctl was spawned")
                #expect(heard < 2000, "\(heard) ms")
            }
            // Nothing more: each change once.
            #expect(try chromium.evaluate("changes.length") as? Int == 0)
        } }
    }

    /// A page of an origin the manifest does not list (a loopback page, which navigation and
    /// Local Network Access both let through) opens the app's stream: the bridge answers
    /// `403` with its plain-text reason and no `Access-Control-Allow-Origin`, so the page gets
    /// an error. The network log shows the bridge's answer, not a request blocked in the browser.
    @Test func aPageOfAnotherOriginIsRefusedByTheBridge() async throws {
        try await Self.withWebKiosk { kiosk in try kiosk.withChromium { (chromium: HeadlessChromium) throws in
            try kiosk.startBridge(in: chromium)
            #expect(try chromium.navigate(Self.allowedPage) == .loaded)
            let session = try #require(chromium.session)
            try chromium.send("Network.enable", session: session)
            chromium.discardEvents()
            let url = "\(Self.bridge)/v1/apps/\(Self.app)/events"
            let outcome = try chromium.evaluate(
                """
                new Promise((done) => { const source = new EventSource("\(url)");
                  source.onopen = () => { source.close(); done("open"); };
                  source.onerror = () => { const state = source.readyState; source.close(); done("error:" + state); }; })
                """, timeout: .seconds(20)) as? String
            #expect(outcome == "error:2")
            let request = try Self.requestID(of: url, chromium)
            let response = try chromium.event("Network.responseReceivedExtraInfo", timeout: .seconds(10)) {
                $0["requestId"] as? String == request
            }
            #expect(response["statusCode"] as? Int == 403, "\(response)")
            let headers = Dictionary(
                ((response["headers"] as? [String: Any]) ?? [:]).map { ($0.key.lowercased(), "\($0.value)") },
                uniquingKeysWith: { a, _ in a })
            #expect(headers["access-control-allow-origin"] == nil, "\(headers)")
            #expect(headers["content-type"]?.hasPrefix("text/plain") == true, "\(headers)")
            #expect(headers["cache-control"] == "no-store", "\(headers)")
            let failed = try chromium.event("Network.loadingFailed", timeout: .seconds(10)) { $0["requestId"] as? String == request }
            #expect(failed["blockedReason"] == nil, "\(failed)")
            // The bridge logged nothing of a stream for that origin; and the same request from
            // the manifest's origin is served (the refusal is about the origin).
            #expect(try chromium.navigate(Self.publicPage) == .loaded)
            let allowed = try chromium.evaluate(
                """
                new Promise((done) => { const source = new EventSource("\(url)");
                  source.addEventListener("snapshot", (e) => { source.close(); done(JSON.parse(e.data).app); });
                  source.onerror = () => { source.close(); done("error"); }; })
                """, timeout: .seconds(20)) as? String
            #expect(allowed == Self.app)
        } }
    }

    /// The same page and bridge (the manifest is the bridge's), but kioskd declares no web app,
    /// so its file lists no origin for Local Network Access: Chromium itself stops the page's
    /// request to the loopback bridge — it fails with no response from the bridge before it,
    /// where the bridge's own refusal above had one.
    @Test func withoutTheOriginInKioskdsFileChromiumStopsThePage() async throws {
        try await Self.withWebKiosk(declared: false) { kiosk in try kiosk.withChromium { (chromium: HeadlessChromium) throws in
            #expect(try kiosk.chromiumPolicies().isEmpty)
            let bridgeApps = kiosk.kioskd.browserDirectory.appendingPathComponent("bridge-apps").path
            try kiosk.startBridge(in: chromium, appsDirectory: bridgeApps)
            #expect(try chromium.navigate(Self.publicPage) == .loaded)
            #expect(try chromium.evaluate("isSecureContext") as? Bool == true)
            let session = try #require(chromium.session)
            try chromium.send("Network.enable", session: session)
            chromium.discardEvents()
            let url = "\(Self.bridge)/v1/apps/\(Self.app)/events"
            let outcome = try chromium.evaluate(
                """
                new Promise((done) => { const source = new EventSource("\(url)");
                  source.onopen = () => { source.close(); done("open"); };
                  source.onerror = () => { const state = source.readyState; source.close(); done("error:" + state); }; })
                """, timeout: .seconds(20)) as? String
            #expect(outcome == "error:2")
            let request = try Self.requestID(of: url, chromium)
            let failed = try chromium.event("Network.loadingFailed", timeout: .seconds(10)) { $0["requestId"] as? String == request }
            print("WebKioskTests: without the origin in kioskd's file Chromium failed the request: \(failed)")
            let cors = failed["corsErrorStatus"] as? [String: Any]
            #expect(cors?["corsError"] as? String == "LocalNetworkAccessPermissionDenied", "\(failed)")
            // Events come in order on the pipe: a response of the bridge's would be before it.
            #expect(throws: HarnessError.self) {
                try chromium.event("Network.responseReceivedExtraInfo", timeout: .zero) { $0["requestId"] as? String == request }
            }
        } }
    }

    // MARK: The kiosk

    /// kioskd with the web app and the profile, and what the tests run beside it: Chromium reading
    /// kioskd's file through a link, the bridge in Chromium's network namespace, kioskctl.
    final class WebKiosk: @unchecked Sendable {
        let kioskd: KioskdProcess
        let bus: PrivateBus
        private var bridgeProcess: ChildProcess?

        init(kioskd: KioskdProcess, bus: PrivateBus) {
            self.kioskd = kioskd
            self.bus = bus
        }

        /// kioskd's Chromium policy directory (its `--chromium-policy-dir`).
        var chromiumDirectory: URL { kioskd.browserDirectory.appendingPathComponent("chromium") }
        /// kioskd's Chromium file, `kioskd.json` in it.
        var chromiumFilePath: String { chromiumDirectory.appendingPathComponent("kioskd.json").path }
        var appsDirectory: String { kioskd.browserDirectory.appendingPathComponent("apps").path }

        /// Runs `body` with a Chromium whose managed policy directory is kioskd's, the public site a
        /// secure context; stops it and the bridge after.
        func withChromium(_ body: (HeadlessChromium) throws -> Void) throws {
            let chromium = try HeadlessChromium(
                managedDirectory: chromiumDirectory, arguments: [WebKioskTests.publicSiteIsSecure])
            defer {
                stopBridge()
                chromium.stop()
            }
            try body(chromium)
        }

        /// Runs the real kioskctl on the private bus; a failure throws with its output.
        func kioskctl(_ arguments: String...) throws {
            let out = try runTool(BuildProducts.path(of: "kioskctl"), arguments, environment: bus.environment)
            guard out.status == 0 else { throw HarnessError("kioskctl \(arguments.joined(separator: " ")): \(out)") }
        }

        /// Chromium's policies as kioskd's `BrowserPolicies` property lists them: name → value.
        func chromiumPolicies() throws -> [String: Any] {
            let out = try runTool(
                "/usr/bin/busctl",
                [
                    "--address=\(bus.address)", "--json=short", "get-property", "org.kioskd.GuidedAccess1",
                    "/org/kioskd/GuidedAccess1", "org.kioskd.GuidedAccess1.Manager", "BrowserPolicies",
                ])
            guard out.status == 0,
                let json = try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any],
                let rows = json["data"] as? [[String]]
            else { throw HarnessError("busctl get-property BrowserPolicies: \(out)") }
            var policies: [String: Any] = [:]
            for row in rows where row.count == 4 && row[0] == "chromium" {
                policies[row[1]] = try JSONSerialization.jsonObject(with: Data(row[2].utf8), options: .fragmentsAllowed)
            }
            return policies
        }

        /// kioskd's file.
        func chromiumFile() throws -> [String: Any] {
            let data = try Data(contentsOf: URL(fileURLWithPath: chromiumFilePath))
            return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        }

        /// Waits until chrome://policy shows exactly `policies` (names), then expects each row
        /// from the platform, status OK, no error, and the value kioskd lists.
        func expectChromiumReports(_ policies: [String: Any], _ chromium: HeadlessChromium) throws {
            let reported = try chromium.policies(timeout: .seconds(10)) { Set($0.map(\.name)) == Set(policies.keys) }
            #expect(Set(reported.map(\.name)) == Set(policies.keys), "\(reported) vs \(policies)")
            for (name, value) in policies {
                let row = reported.first { $0.name == name }
                #expect(row?.source == "Platform", "\(name): \(reported)")
                #expect(row?.status == "OK", "\(name): \(String(describing: row))")
                #expect(row?.errors == "", "\(name): \(String(describing: row))")
                #expect(row.map { WebKioskTests.same($0.json, value) } == true, "\(name): \(String(describing: row)) vs \(value)")
            }
        }

        /// Starts kioskd-bridge in `chromium`'s namespaces, listening on 127.0.0.1:7770 there,
        /// on the private bus (a socket path, reachable from the mount namespace), and waits
        /// until it serves.
        func startBridge(in chromium: HeadlessChromium, appsDirectory: String? = nil) throws {
            let appsDirectory = appsDirectory ?? self.appsDirectory
            let log = chromium.directory.appendingPathComponent("bridge.log").path
            bridgeProcess = try chromium.spawnInNamespaces(
                "/usr/bin/env",
                [
                    "DBUS_SYSTEM_BUS_ADDRESS=\(bus.address)", BuildProducts.path(of: "kioskd-bridge"),
                    "--listen", "127.0.0.1:7770", "--apps-dir", appsDirectory, "--script", BridgeHarness.script,
                ], log: log)
            let text = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
            guard eventually(timeout: .seconds(15), { text().contains("Serving") || self.bridgeProcess?.isRunning != true }),
                text().contains("Serving")
            else { throw HarnessError("kioskd-bridge did not start in the browser's namespace: \(text())") }
        }

        func stopBridge() {
            bridgeProcess?.signal(SIGTERM)
            _ = bridgeProcess?.wait(timeout: .seconds(10))
            bridgeProcess = nil
        }
    }

    /// Runs `body` with kioskd: the manifest, the profile `web`, and its Chromium policy
    /// directory (the package makes it), where it has written its file once it owns its name.
    /// With `declared` false, kioskd's apps directory is left empty (the bridge gets the manifest
    /// from a directory of its own: ``WebKiosk/startBridge(in:appsDirectory:)``).
    static func withWebKiosk(declared: Bool = true, _ body: (WebKiosk) async throws -> Void) async throws {
        try await withKioskd(profiles: ["web": profile]) { kioskd in
            let apps = kioskd.browserDirectory.appendingPathComponent(declared ? "apps" : "bridge-apps")
            let policies = kioskd.browserDirectory.appendingPathComponent("chromium")
            for dir in [apps, policies] {
                try FileManager.default.createDirectory(
                    at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
                chmod(dir.path, 0o755)
            }
            chmod(kioskd.browserDirectory.path, 0o755)
            let manifest = apps.appendingPathComponent("\(app).toml")
            try Self.manifest.write(to: manifest, atomically: false, encoding: .utf8)
            chmod(manifest.path, 0o644)
        } _: { kioskd, bus in
            let kiosk = WebKiosk(kioskd: kioskd, bus: bus)
            guard FileManager.default.fileExists(atPath: kiosk.chromiumFilePath) else {
                throw HarnessError("kioskd wrote no Chromium policy file at \(kiosk.chromiumFilePath): \(kioskd.log)")
            }
            try await body(kiosk)
        }
    }

    // MARK: Helpers

    /// Clicks a link with a `download` attribute to chromium-web's file on the allowed page,
    /// downloads left to Chromium (`Browser.setDownloadBehavior` "default": "allow" would hand
    /// them to the DevTools client, past the policy), and returns the final `Browser.downloadProgress`.
    static func downloadThroughALink(_ chromium: HeadlessChromium) throws -> [String: Any] {
        try chromium.send("Browser.setDownloadBehavior", ["behavior": "default", "eventsEnabled": true])
        #expect(try chromium.navigate(allowedPage) == .loaded)
        _ = try chromium.evaluate(
            "(() => { const a = document.createElement('a'); a.href = '/file.bin'; a.download = 'file.bin'; document.body.append(a); a.click(); })()"
        )
        return try chromium.event("Browser.downloadProgress", timeout: .seconds(20)) {
            $0["state"] as? String != "inProgress"
        }
    }

    /// The DevTools request id of the page's request to `url` (`Network.requestWillBeSent`).
    static func requestID(of url: String, _ chromium: HeadlessChromium) throws -> String {
        let sent = try chromium.event("Network.requestWillBeSent", timeout: .seconds(10)) {
            ($0["request"] as? [String: Any])?["url"] as? String == url
        }
        guard let id = sent["requestId"] as? String else { throw HarnessError("no request id: \(sent)") }
        return id
    }

    /// Whether two JSON values are the same (numbers and booleans told apart).
    static func same(_ a: Any?, _ b: Any?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        let wrap = { (v: Any) in try? JSONSerialization.data(withJSONObject: [v], options: [.sortedKeys]) }
        return wrap(a) == wrap(b)
    }
}
