import BrowserTestSupport
import BusTestSupport
import Foundation
import Glibc
import KioskTestSupport
import Testing

/// Debian's `chromium` obeys a managed policy file of the shape kioskd writes
/// (docs/browsers.md § Chromium policies and when they apply): each policy in force in
/// chrome://policy, navigation outside the allow-list blocked, DevTools refused, downloads
/// refused, Local Network Access to a loopback bridge allowed for the listed origins only, and
/// which policies Chromium applies while it runs. A real headless Chromium
/// (BrowserTestSupport's `HeadlessChromium`) in mount and network namespaces of its own: the
/// policy directory and the web are the test's, never the machine's.
///
/// Needs root (the namespaces; Chromium then runs only with `--no-sandbox`, as in CI, where
/// `make test` runs as root) and Debian's chromium (`make deps-browser`, which `make test` runs).
@Suite(
    .serialized,
    .enabled(
        if: Root.isRoot,
        Comment(rawValue: Root.needs("Chromium in mount and network namespaces of its own, with --no-sandbox"))),
    .enabled(
        if: HeadlessChromium.isInstalled,
        "needs Debian's chromium (/usr/bin/chromium): make deps-browser installs it, as make test does"))
struct ChromiumPolicyTests {
    static let allowedPage = HeadlessChromium.loopbackSite + "/allowed"
    static let otherPage = HeadlessChromium.loopbackSite + "/other"
    static let download = HeadlessChromium.loopbackSite + "/file.bin"
    static let publicPage = HeadlessChromium.publicSite + "/app"

    /// The policy in the shape the brief for kioskd's writer gives: every restriction on, the
    /// kiosk's pages allowed (the allowed page, the download, the public site), and the public
    /// site's origin allowed to reach the loopback bridge. `devTools: false` leaves
    /// DeveloperToolsAvailability out, so that the test can still read chrome://policy.
    static func kioskPolicy(devTools: Bool = true) -> [String: Any] {
        var policy: [String: Any] = [
            "URLBlocklist": ["*"],
            "URLAllowlist": [allowedPage, download, HeadlessChromium.publicSite],
            "DownloadRestrictions": 3,
            "PrintingEnabled": false,
            "AllowFileSelectionDialogs": false,
            "IncognitoModeAvailability": 1,
            "VideoCaptureAllowed": false,
            "AudioCaptureAllowed": false,
            "LocalNetworkAccessAllowedForUrls": [HeadlessChromium.publicSite],
            "LoopbackNetworkAllowedForUrls": [HeadlessChromium.publicSite],
        ]
        if devTools { policy["DeveloperToolsAvailability"] = 2 }
        return policy
    }

    /// The public site is plain http: Local Network Access asks for a secure context, which a
    /// kiosk's https site is; this flag makes the test's http origin one.
    static let publicSiteIsSecure = "--unsafely-treat-insecure-origin-as-secure=\(HeadlessChromium.publicSite)"

    /// Every policy of the file is in chrome://policy from the platform, with status OK, no
    /// error and the file's value; and the version under test is printed for the record.
    @Test func chromiumReportsEachPolicyInForce() async throws {
        let policy = Self.kioskPolicy(devTools: false)
        try await HeadlessChromium.with(policy: policy) { (chromium: HeadlessChromium) async throws in
            print("ChromiumPolicyTests: \(try HeadlessChromium.version()); DevTools: \(try chromium.product())")
            let reported = try chromium.policies()
            for (name, value) in policy {
                let row = reported.first { $0.name == name }
                #expect(row?.source == "Platform", "\(name): \(reported)")
                #expect(row?.status == "OK", "\(name): \(String(describing: row))")
                #expect(row?.errors == "", "\(name): \(String(describing: row))")
                #expect(row.map { Self.same($0.json, value) } == true, "\(name): \(String(describing: row)) vs \(value)")
            }
            #expect(Set(reported.map(\.name)) == Set(policy.keys))
        }
    }

    /// A policy chrome://policy cannot take is reported with its error, so the check above could fail.
    @Test func chromiumReportsAWrongPolicyWithItsError() async throws {
        try await HeadlessChromium.with(policy: ["DownloadRestrictions": "3", "NoSuchPolicy": true]) { (chromium: HeadlessChromium) async throws in
            let reported = try chromium.policies()
            let restrictions = reported.first { $0.name == "DownloadRestrictions" }
            #expect(restrictions?.status == "Error")
            #expect(restrictions?.errors == "Expected integer value.")
            #expect(reported.first { $0.name == "NoSuchPolicy" }?.errors == "Unknown policy.")
        }
    }

    /// URLBlocklist ["*"] with URLAllowlist: the allowed page loads, another page of the same
    /// site is blocked by the administrator, and the allowed public site loads.
    @Test func navigationOutsideTheAllowListIsBlocked() async throws {
        try await HeadlessChromium.with(policy: Self.kioskPolicy(devTools: false)) { (chromium: HeadlessChromium) async throws in
            #expect(try chromium.navigate(Self.allowedPage) == .loaded)
            #expect(try chromium.evaluate("document.title") as? String == "page /allowed")
            #expect(try chromium.navigate(Self.otherPage) == .failed("net::ERR_BLOCKED_BY_ADMINISTRATOR"))
            #expect(try chromium.navigate(Self.publicPage) == .loaded)
            #expect(try chromium.evaluate("document.title") as? String == "page /app")
        }
    }

    /// DeveloperToolsAvailability 2 with the whole kiosk policy: Chromium still answers the
    /// browser-level commands on its DevTools pipe, but refuses to attach it to a page ("Not
    /// allowed"), so no page can be driven or read over DevTools; without the policy it attaches.
    @Test func developerToolsDeniedRefusesToAttachToAPage() async throws {
        try await HeadlessChromium.with(policy: Self.kioskPolicy()) { (chromium: HeadlessChromium) async throws in
            #expect(try chromium.product().hasPrefix("Chrome/"))
            #expect(chromium.session == nil)
            let error = #expect(throws: DevToolsError.self) { try chromium.attach() }
            #expect(error?.message == "Not allowed")
        }
        try await HeadlessChromium.with(policy: Self.kioskPolicy(devTools: false)) { (chromium: HeadlessChromium) async throws in
            #expect(chromium.session != nil)
        }
    }

    /// DownloadRestrictions 3: a link with a `download` attribute starts a download that
    /// Chromium cancels, and no file appears; without the policy the same link's file lands in
    /// the download directory. (The download goes Chromium's own way, `Browser.setDownloadBehavior`
    /// "default": "allow" would hand it to the DevTools client, past the policy.)
    @Test(arguments: [true, false]) func downloadsAreRefused(restricted: Bool) async throws {
        let policy = restricted ? Self.kioskPolicy(devTools: false) : [:]
        try await HeadlessChromium.with(policy: policy) { (chromium: HeadlessChromium) async throws in
            let state = try Self.downloadThroughALink(chromium)
            let files = (try? FileManager.default.contentsOfDirectory(atPath: chromium.downloadsDirectory.path)) ?? []
            if restricted {
                #expect(state["state"] as? String == "canceled", "\(state)")
                #expect(files.isEmpty, "\(files)")
            } else {
                #expect(state["state"] as? String == "completed", "\(state)")
                #expect(files == ["file.bin"])
            }
        }
    }

    /// Local Network Access: a page from a public origin opens an EventSource to a loopback
    /// server (a stand-in for the loopback bridge). Chromium 156 blocks it without policy and
    /// allows it when the page's origin is in LocalNetworkAccessAllowedForUrls or in
    /// LoopbackNetworkAllowedForUrls, each alone; from a page that is not a secure context
    /// neither policy helps. From a loopback page the same request is not a local network request
    /// and gets through: the server answers.
    @Test(arguments: [
        (nil, true, "error"),
        ("LocalNetworkAccessAllowedForUrls", true, "message:hello"),
        ("LoopbackNetworkAllowedForUrls", true, "message:hello"),
        ("LocalNetworkAccessAllowedForUrls+LoopbackNetworkAllowedForUrls", false, "error"),
    ] as [(String?, Bool, String)])
    func localNetworkAccessToTheLoopbackBridge(policyNames: String?, secure: Bool, expected: String) async throws {
        var policy: [String: Any] = [:]
        for name in policyNames?.split(separator: "+") ?? [] { policy[String(name)] = [HeadlessChromium.publicSite] }
        try await HeadlessChromium.with(policy: policy, arguments: secure ? [Self.publicSiteIsSecure] : []) { (chromium: HeadlessChromium) async throws in
            #expect(try chromium.navigate(Self.allowedPage) == .loaded)
            #expect(try Self.openEventSource(chromium) == "message:hello")
            #expect(try chromium.navigate(Self.publicPage) == .loaded)
            #expect(try chromium.evaluate("isSecureContext") as? Bool == secure)
            #expect(try Self.openEventSource(chromium) == expected)
        }
    }

    /// The policy file written while Chromium runs, without a restart: once the directory watcher
    /// is on (see `waitUntilWatchingPolicies`), it takes the file (chrome://policy shows it; the
    /// time it took is printed), and then every
    /// behaviour this suite can see follows — navigation, downloads, Local Network Access,
    /// DevTools — and each preference a policy sets is "managed" with the policy's value.
    /// Removing the file lifts them the same way.
    @Test func policiesChangedWhileChromiumRunsApplyWithoutRestart() async throws {
        try await HeadlessChromium.with(arguments: [Self.publicSiteIsSecure]) { (chromium: HeadlessChromium) async throws in
            // Before: nothing restricted.
            #expect(try chromium.navigate(Self.otherPage) == .loaded)
            #expect(try Self.downloadThroughALink(chromium)["state"] as? String == "completed")
            #expect(try chromium.navigate(Self.publicPage) == .loaded)
            #expect(try Self.openEventSource(chromium) == "error")
            #expect(try chromium.preference("download_restrictions")?.isManaged == false)
            try chromium.waitUntilWatchingPolicies()

            let policy = Self.kioskPolicy(devTools: false)
            let written = ContinuousClock.now
            try chromium.writePolicy(policy)
            let reported = try chromium.policies(timeout: .seconds(30)) { Set($0.map(\.name)) == Set(policy.keys) }
            print("ChromiumPolicyTests: chrome://policy showed the new file after \(ContinuousClock.now - written)")
            #expect(Set(reported.map(\.name)) == Set(policy.keys), "\(reported)")

            #expect(try chromium.navigate(Self.otherPage) == .failed("net::ERR_BLOCKED_BY_ADMINISTRATOR"))
            #expect(try Self.downloadThroughALink(chromium)["state"] as? String == "canceled")
            // The first download's file, and no other (a canceled download's partial file goes).
            let files = try eventually(timeout: .seconds(5)) {
                try FileManager.default.contentsOfDirectory(atPath: chromium.downloadsDirectory.path)
            } until: { $0 == ["file.bin"] }
            #expect(files == ["file.bin"])
            #expect(try chromium.navigate(Self.publicPage) == .loaded)
            #expect(try Self.openEventSource(chromium) == "message:hello")
            let preferences: [(String, Any)] = [
                ("download_restrictions", 3), ("printing.enabled", false), ("incognito.mode_availability", 1),
                ("hardware.video_capture_enabled", false), ("hardware.audio_capture_enabled", false),
            ]
            for (path, value) in preferences {
                let preference = try chromium.preference(path)
                #expect(preference?.isManaged == true, "\(path): \(String(describing: preference))")
                #expect(Self.same(preference?.value, value), "\(path): \(String(describing: preference))")
            }
            let fileDialogs = try chromium.localStatePreference("select_file_dialogs.allowed")
            #expect(fileDialogs?.isManaged == true, "\(String(describing: fileDialogs))")
            #expect(Self.same(fileDialogs?.value, false), "\(String(describing: fileDialogs))")

            // The file removed: the restrictions lift, live too.
            try FileManager.default.removeItem(
                at: chromium.policyDirectory.appendingPathComponent(HeadlessChromium.policyFileName))
            let removed = ContinuousClock.now
            #expect(try chromium.policies(timeout: .seconds(30)) { $0.isEmpty }.isEmpty)
            print("ChromiumPolicyTests: chrome://policy dropped the removed file after \(ContinuousClock.now - removed)")
            #expect(try chromium.navigate(Self.otherPage) == .loaded)
            #expect(try chromium.preference("printing.enabled")?.isManaged == false)

            // DevTools denied while attached: Chromium detaches the session and refuses a new one.
            _ = try chromium.navigate(Self.allowedPage)
            let session = chromium.session
            try chromium.writePolicy(["DeveloperToolsAvailability": 2])
            let detached = try chromium.event("Target.detachedFromTarget", timeout: .seconds(30))
            #expect(detached["sessionId"] as? String == session)
            let error = #expect(throws: DevToolsError.self) { try chromium.attach() }
            #expect(error?.message == "Not allowed")
        }
    }

    /// The "Reload policies" button of chrome://policy reads the file at once, well before the
    /// directory watcher's settle delay (5 s in Chromium's ConfigDirPolicyLoader).
    @Test func reloadPoliciesReadsTheFileAtOnce() async throws {
        try await HeadlessChromium.with { (chromium: HeadlessChromium) async throws in
            #expect(try chromium.policies().isEmpty)
            try chromium.writePolicy(["PrintingEnabled": false])
            let written = ContinuousClock.now
            try chromium.reloadPolicies()
            let reported = try chromium.policies(timeout: .seconds(30)) { !$0.isEmpty }
            let took = ContinuousClock.now - written
            #expect(reported.map(\.name) == ["PrintingEnabled"])
            #expect(took < .seconds(4), "took \(took)")
        }
    }

    // MARK: Helpers

    /// Clicks a link with a `download` attribute to the test's file on the allowed page, with
    /// downloads left to Chromium (`Browser.setDownloadBehavior` "default", events on), and returns
    /// the final `Browser.downloadProgress` (state "completed" or "canceled").
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

    /// Opens an EventSource to the loopback bridge from the current page: "message:DATA" when an
    /// event arrives, "error" when Chromium fails the request (its error event).
    static func openEventSource(_ chromium: HeadlessChromium) throws -> String? {
        try chromium.evaluate(
            """
            new Promise(done => { const source = new EventSource('\(HeadlessChromium.bridgeEvents)');
              source.onmessage = e => { source.close(); done('message:' + e.data); };
              source.onerror = () => { source.close(); done('error'); }; })
            """, timeout: .seconds(20)) as? String
    }

    /// Whether two JSON values are the same (numbers and booleans told apart).
    static func same(_ a: Any?, _ b: Any?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        let wrap = { (v: Any) in try? JSONSerialization.data(withJSONObject: [v], options: [.sortedKeys]) }
        return wrap(a) == wrap(b)
    }
}
