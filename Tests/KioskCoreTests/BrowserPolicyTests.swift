import KioskAPI
import Testing

@testable import KioskCore

/// The built-in browsers (docs/browsers.md § Built-in browser apps), a profile's `[browser]`
/// (its URL patterns, read as Chromium does and translated for Firefox), and the policies each
/// denied restriction puts in each browser.
struct BrowserPolicyTests {
    // MARK: Built-in browser apps

    @Test(arguments: Browser.allCases)
    func eachBrowserDeclaresItsRestrictionsWithAdminText(browser: Browser) throws {
        let ids = browser.declarations.map(\.id.rawValue)
        let kinds = [
            "navigation", "devtools", "downloads", "printing", "file-dialogs", "private-windows", "camera",
            "microphone",
        ]
        #expect(ids == kinds.map { "\(browser.app.rawValue).\($0)" })
        for declaration in browser.declarations {
            #expect(!declaration.title.isEmpty)
            #expect(declaration.detail.hasPrefix("Deny: "), "\(declaration.id) says what deny does")
            #expect(declaration.detail.contains(browser.name))
        }
        #expect(Browser(app: browser.app) == browser)
    }

    @Test func theBrowsersAreDeclaredAsRootsAndStatesSurviveADeclarationAgain() throws {
        var state = KioskState()
        #expect(try state.declareBrowsers())
        #expect(state.registry.owner(of: Browser.chromium.app) == 0)
        #expect(state.registry.owner(of: Browser.firefox.app) == 0)
        let devtools = Browser.chromium.restriction(.devtools)
        #expect(try state.registry.setState(.deny, of: devtools, in: Browser.chromium.app))
        #expect(try state.declareBrowsers() == false, "the same declarations: nothing changes")
        #expect(try state.registry.state(of: devtools, in: Browser.chromium.app) == .deny)
    }

    @Test func reservedIdsAreRefusedWithTheReason() throws {
        let guide = try AppID("org.example.MuseumGuide")
        let reserved = ReservedApps(manifests: [guide])
        let chromium = try #require(reserved.refusal(Browser.chromium.app, method: "RegisterApplication"))
        #expect(chromium.code == .accessDenied)
        #expect(chromium.message.contains("Chromium, a browser kioskd declares itself"))
        #expect(chromium.message.contains("even for root"))
        let manifest = try #require(reserved.refusal(guide, method: "UnregisterApplication"))
        #expect(manifest.message.contains("declared by its manifest"))
        #expect(reserved.refusal(try AppID("org.example.Other"), method: "RegisterApplication") == nil)
    }

    // MARK: URL patterns

    /// Written → as read (normalised) → as Firefox's match pattern.
    @Test(arguments: [
        ("*", "*", "<all_urls>"),
        ("example.com", "example.com", "*://*.example.com/*"),
        ("Example.COM", "example.com", "*://*.example.com/*"),
        (".example.com", ".example.com", "*://example.com/*"),
        ("https://museum.example/exhibits", "https://museum.example/exhibits", "https://*.museum.example/exhibits*"),
        ("https://.museum.example/", "https://.museum.example/", "https://museum.example/*"),
        ("http://192.168.1.20", "http://192.168.1.20", "http://192.168.1.20/*"),
        ("http://[::1]/kiosk", "http://[::1]/kiosk", "http://[::1]/kiosk*"),
        ("wss://live.museum.example", "wss://live.museum.example", "wss://*.live.museum.example/*"),
        ("museum.example.", "museum.example", "*://*.museum.example/*"),
    ])
    func patternsAreReadAndTranslated(written: String, read: String, firefox: String) throws {
        let pattern = try BrowserURLPattern(written)
        #expect(pattern.text == read)
        #expect(try pattern.firefoxPattern() == firefox)
    }

    @Test(arguments: [
        ("", "is empty"),
        ("exa mple.com", "has a space"),
        ("https://*.example.com", "has * in its host"),
        ("*://example.com", "has * as its scheme"),
        ("1http://example.com", "has a scheme that is not one"),
        ("https://user:pw@example.com", "has a user or password"),
        ("example.com/#top", "has a fragment"),
        ("example.com:0", "port that is not a number from 1 to 65535"),
        ("example.com:99999", "port that is not a number from 1 to 65535"),
        ("example.com:http", "port that is not a number from 1 to 65535"),
        ("https://", "has no host"),
        ("exa!mple.com", "not a DNS name or an address"),
        ("-example.com", "not a DNS name or an address"),
        (".*", "has no subdomains to leave out"),
        (".10.0.0.1", "has no subdomains to leave out"),
        ("example.com/?", "has an empty query"),
        ("éxample.com", "beyond ASCII"),
    ])
    func badPatternsAreRefusedSayingWhy(written: String, why: String) {
        #expect {
            try BrowserURLPattern(written)
        } throws: { error in
            (error as? KioskError)?.message.contains(why) == true
        }
    }

    @Test(arguments: [
        ("example.com:8080", "has no port"),
        ("example.com/search?q=art", "cannot match a query"),
        ("example.com/a*b", "* in a Firefox path"),
        ("chrome://settings", "only the schemes http, https, ws and wss, not chrome"),
        ("file://*", "not file"),
    ])
    func patternsFirefoxCannotMatchAreRefusedForFirefox(written: String, why: String) throws {
        let pattern = try BrowserURLPattern(written)
        #expect {
            try pattern.firefoxPattern()
        } throws: { error in
            (error as? KioskError)?.message.contains(why) == true
        }
    }

    // MARK: [browser] in a profile

    static func diagnostics(_ source: String) -> [String] {
        do {
            _ = try ProfileParser.parse(source: source, file: "p.toml")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func aBrowserProfileWithAllowedURLsDeniesNavigation() throws {
        let profile = try ProfileParser.parse(
            source: """
                app = "org.chromium.Chromium"
                [browser]
                allowed-urls = ["https://museum.example", "example.org/tickets"]
                """, file: "p.toml")
        #expect(profile.browser.allowedURLs.map(\.text) == ["https://museum.example", "example.org/tickets"])
        #expect(
            profile.presets == [
                Profile.Preset(
                    app: Browser.chromium.app, restriction: Browser.chromium.restriction(.navigation), state: .deny)
            ])
    }

    @Test func anExplicitDenyIsKeptAndNotDoubled() throws {
        let profile = try ProfileParser.parse(
            source: """
                app = "org.mozilla.firefox"
                [browser]
                allowed-urls = ["https://museum.example"]
                [restrictions."org.mozilla.firefox"]
                "org.mozilla.firefox.navigation" = "deny"
                "org.mozilla.firefox.devtools" = "deny"
                """, file: "p.toml")
        #expect(profile.presets.count == 2)
    }

    /// Each problem at its line: the pattern's own, Firefox's untranslatable one, `[browser]` in
    /// a profile of another app, navigation explicitly allowed.
    @Test func problemsAreReportedAtTheirLines() {
        #expect(
            Self.diagnostics(
                """
                app = "org.chromium.Chromium"
                [browser]
                allowed-urls = [
                  "https://museum.example",
                  "https://*.museum.example",
                  "museum.example:8080",
                ]
                """) == [
                    "p.toml:5:3: browser.allowed-urls: The URL pattern \"https://*.museum.example\" has * in its host; a host matches its subdomains already (example.com matches www.example.com), and * alone matches every host."
                ])
        let firefox = Self.diagnostics(
            """
            app = "org.mozilla.firefox"
            [browser]
            allowed-urls = [
              "https://museum.example",
              "museum.example:8080",
            ]
            """)
        #expect(firefox.count == 1)
        #expect(
            firefox.first?.hasPrefix(
                "p.toml:5:3: browser.allowed-urls: The URL pattern \"museum.example:8080\" cannot be given to Firefox")
                == true)
        let other = Self.diagnostics(
            """
            app = "org.example.MuseumGuide"

            [browser]
            allowed-urls = ["museum.example"]
            """)
        #expect(other.count == 1)
        #expect(other.first?.hasPrefix("p.toml:3:") == true, "\(other)")
        #expect(other.first?.contains("not org.example.MuseumGuide") == true)
        let allowed = Self.diagnostics(
            """
            app = "org.chromium.Chromium"
            [browser]
            allowed-urls = ["museum.example"]
            [restrictions."org.chromium.Chromium"]
            "org.chromium.Chromium.navigation" = "allow"
            """)
        #expect(allowed.count == 1)
        #expect(allowed.first?.hasPrefix("p.toml:5:") == true, "\(allowed)")
        #expect(allowed.first?.contains("would hold nothing back") == true)
        #expect(
            Self.diagnostics(
                """
                app = "org.chromium.Chromium"
                [browser]
                allowed-urls = ["museum.example", "museum.example"]
                """
            ).first?.contains("lists museum.example twice") == true)
        #expect(Self.diagnostics("app = \"org.chromium.Chromium\"\n[browser]\nallowed = []\n").count == 1)
    }

    /// 999 patterns and no more: Chromium reads 1000, and kioskd may add the bridge's.
    @Test func atMost999Patterns() {
        func profile(_ count: Int) -> String {
            let list = (0..<count).map { "\"h\($0).museum.example\"" }.joined(separator: ", ")
            return "app = \"org.chromium.Chromium\"\n[browser]\nallowed-urls = [\(list)]\n"
        }
        #expect(Self.diagnostics(profile(999)).isEmpty)
        let refused = Self.diagnostics(profile(1000))
        #expect(refused.count == 1)
        #expect(refused.first?.contains("lists 1000 patterns, more than the 999 kioskd gives a browser") == true, "\(refused)")
    }

    // MARK: Policies

    static let guide = try! WebAppManifest(
        app: AppID("org.example.MuseumGuide"),
        restrictions: [RestrictionDeclaration(id: "org.example.MuseumGuide.video", title: "Videos", detail: "Videos.")],
        origins: [WebOrigin("https://guide.museum.example"), WebOrigin("http://127.0.0.1:8080")])

    /// Each restriction denied alone → the policies it causes, in each browser.
    @Test(arguments: [
        (
            Browser.Kind.navigation, #"{"URLBlocklist":["*"],"URLAllowlist":["https://museum.example"]}"#,
            #"{"WebsiteFilter":{"Block":["<all_urls>"],"Exceptions":["https://*.museum.example/*"]}}"#
        ),
        (.devtools, #"{"DeveloperToolsAvailability":2}"#, #"{"DisableDeveloperTools":true}"#),
        (.downloads, #"{"DownloadRestrictions":3}"#, "{}"),
        (.printing, #"{"PrintingEnabled":false}"#, #"{"PrintingEnabled":false}"#),
        (.fileDialogs, #"{"AllowFileSelectionDialogs":false}"#, "{}"),
        (.privateWindows, #"{"IncognitoModeAvailability":1}"#, #"{"DisablePrivateBrowsing":true}"#),
        (
            .camera, #"{"VideoCaptureAllowed":false}"#,
            #"{"Permissions":{"Camera":{"BlockNewRequests":true,"Locked":true}}}"#
        ),
        (
            .microphone, #"{"AudioCaptureAllowed":false}"#,
            #"{"Permissions":{"Microphone":{"BlockNewRequests":true,"Locked":true}}}"#
        ),
    ])
    func eachDeniedRestrictionBecomesItsPolicy(kind: Browser.Kind, chromium: String, firefox: String) throws {
        let urls = [try BrowserURLPattern("https://museum.example")]
        let inputs = BrowserPolicyInputs(
            denied: [Browser.chromium.restriction(kind), Browser.firefox.restriction(kind)],
            allowedURLs: [.chromium: urls, .firefox: urls])
        let policies = BrowserPolicy.derive(inputs)
        #expect(BrowserPolicy.chromiumDocument(policies).description == chromium)
        #expect(JSONValue.object(BrowserPolicy.firefoxKeys(policies)).description == firefox)
        for policy in policies {
            #expect(policy.cause == policy.browser.restriction(kind).rawValue)
        }
    }

    @Test func nothingDeniedAndNoManifestIsNoPolicy() {
        let policies = BrowserPolicy.derive(BrowserPolicyInputs())
        #expect(policies.isEmpty)
        #expect(BrowserPolicy.chromiumDocument(policies).description == "{}")
    }

    @Test func manifestsLetTheirOriginsReachTheBridge() throws {
        let policies = BrowserPolicy.derive(
            BrowserPolicyInputs(denied: [Browser.chromium.restriction(.navigation)], manifests: [Self.guide]))
        #expect(
            BrowserPolicy.chromiumDocument(policies).description
                == #"{"URLBlocklist":["*"],"URLAllowlist":["http://127.0.0.1:7770"],"LocalNetworkAccessAllowedForUrls":["https://guide.museum.example","http://127.0.0.1:8080"],"LoopbackNetworkAllowedForUrls":["https://guide.museum.example","http://127.0.0.1:8080"]}"#
        )
        #expect(policies.last?.cause == "org.example.MuseumGuide")
        #expect(BrowserPolicy.firefoxKeys(policies).isEmpty)
    }

    @Test func theInputsComeFromTheStatesAndTheActiveSessionsProfile() throws {
        var state = KioskState()
        try state.declareBrowsers()
        try state.registry.setState(.deny, of: Browser.firefox.restriction(.printing), in: Browser.firefox.app)
        let profile = try ProfileParser.parse(
            source: "app = \"org.chromium.Chromium\"\n[browser]\nallowed-urls = [\"museum.example\"]\n", file: "p.toml")
        let idle = BrowserPolicyInputs(state: state, profile: profile, manifests: [])
        #expect(idle.denied == [Browser.firefox.restriction(.printing)])
        #expect(idle.allowedURLs.isEmpty, "no session: no allowed URLs")
    }

    // MARK: Firefox's policies.json

    @Test func kioskdsKeysMergeIntoTheAdminsFileAndLeaveAsTheyCame() throws {
        let admin = try JSONValue.parse(
            Array(
                #"{"policies": {"Homepage": {"URL": "https://museum.example", "Locked": true}, "PrintingEnabled": true, "DisableTelemetry": true}, "comment": 1.50}"#
                    .utf8))
        var merge = FirefoxPolicyMerge()
        let held = try merge.merge(
            into: admin,
            keys: [.init("PrintingEnabled", .bool(false)), .init("DisableDeveloperTools", .bool(true))])
        #expect(
            held.description
                == #"{"policies":{"Homepage":{"URL":"https://museum.example","Locked":true},"PrintingEnabled":false,"DisableTelemetry":true,"DisableDeveloperTools":true},"comment":1.50}"#
        )
        // Kept aside across a restart of kioskd.
        let reread = try #require(FirefoxPolicyMerge(json: try JSONValue.parse(Array(merge.json.description.utf8))))
        #expect(reread == merge)
        merge = reread
        let released = try merge.merge(into: held, keys: [])
        #expect(released == admin, "the admin's value back, kioskd's own key gone: \(released)")
        #expect(merge.held.isEmpty)
        // No file: kioskd's keys alone.
        var fresh = FirefoxPolicyMerge()
        #expect(
            try fresh.merge(into: nil, keys: [.init("PrintingEnabled", .bool(false))]).description
                == #"{"policies":{"PrintingEnabled":false}}"#)
        #expect(try fresh.merge(into: nil, keys: []).description == #"{"policies":{}}"#)
    }

    @Test func aFileThatIsNotPoliciesIsNeverReplaced() throws {
        var merge = FirefoxPolicyMerge()
        #expect(throws: FirefoxPolicyMerge.Problem.self) { try merge.merge(into: .array([]), keys: []) }
        #expect(throws: FirefoxPolicyMerge.Problem.self) {
            try merge.merge(into: .object([.init("policies", .strings([]))]), keys: [])
        }
    }

    @Test(arguments: [
        (#"{"a": [1, -2.5e3, true, null, "x\"\u00e9\ud83d\ude00"]}"#, #"{"a":[1,-2.5e3,true,null,"x\"é😀"]}"#),
        ("  []  ", "[]"),
        (#"{"a":{}}"#, #"{"a":{}}"#),
    ])
    func jsonIsReadAndWrittenBack(text: String, compact: String) throws {
        #expect(try JSONValue.parse(Array(text.utf8)).description == compact)
    }

    @Test(arguments: [#"{"a":1,"a":2}"#, "{", "[1,]", "01", #""\x""#, "tru", "[1] 2", #"{"a" 1}"#, "\"\u{1}\""])
    func badJSONIsRefused(text: String) {
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(Array(text.utf8)) }
    }
}
