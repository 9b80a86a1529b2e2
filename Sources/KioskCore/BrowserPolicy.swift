import KioskAPI

/// The loopback bridge that serves restriction states to web pages (docs/browsers.md § The
/// bridge).
public enum WebBridge {
    /// The bridge's fixed loopback port, `http://127.0.0.1:7770`: the origin kioskd allows in
    /// Chromium's policy, and the one kioskd-bridge listens on (`BridgeWire.port`).
    public static let port = 7770
}

/// One browser policy kioskd puts in force, and why: what `BrowserPolicies` publishes and
/// `kioskctl status` shows (docs/browsers.md § What kioskctl status shows).
public struct BrowserPolicy: Hashable, Sendable {
    public var browser: Browser
    /// The policy's name as the browser reads it (`DeveloperToolsAvailability`); for a part of
    /// Firefox's `Permissions`, `Permissions.Camera`.
    public var name: String
    public var value: JSONValue
    /// What put it in force: the denied restriction's id, or for the loopback policies the web
    /// apps whose manifests list the origins (their ids, comma-separated).
    public var cause: String

    public init(browser: Browser, name: String, value: JSONValue, cause: String) {
        self.browser = browser
        self.name = name
        self.value = value
        self.cause = cause
    }
}

/// What the browsers' policies derive from: the registry's states, the session's allowed URLs
/// and the web apps' origins (docs/browsers.md § What kioskd writes where and when). Pure.
public struct BrowserPolicyInputs: Hashable, Sendable {
    /// Each browser restriction that is denied.
    public var denied: Set<RestrictionID>
    /// The active session's `[browser] allowed-urls`, for the browser its profile names.
    public var allowedURLs: [Browser: [BrowserURLPattern]]
    /// The web apps' manifests: each app's id and origins.
    public var manifests: [WebAppManifest]
    public var bridgePort: Int

    public init(
        denied: Set<RestrictionID> = [], allowedURLs: [Browser: [BrowserURLPattern]] = [:],
        manifests: [WebAppManifest] = [], bridgePort: Int = WebBridge.port
    ) {
        self.denied = denied
        self.allowedURLs = allowedURLs
        self.manifests = manifests
        self.bridgePort = bridgePort
    }

    /// The inputs of `state` (its registry's states; an active session's profile's allowed URLs)
    /// and of the manifests.
    public init(state: KioskState, profile: Profile?, manifests: [WebAppManifest], bridgePort: Int = WebBridge.port) {
        var denied = Set<RestrictionID>()
        for browser in Browser.allCases {
            for kind in Browser.Kind.allCases {
                let id = browser.restriction(kind)
                if (try? state.registry.state(of: id, in: browser.app)) == .deny { denied.insert(id) }
            }
        }
        var allowed: [Browser: [BrowserURLPattern]] = [:]
        if state.session.isActive, let profile, let app = profile.app, let browser = Browser(app: app) {
            allowed[browser] = profile.browser.allowedURLs
        }
        self.init(denied: denied, allowedURLs: allowed, manifests: manifests, bridgePort: bridgePort)
    }
}

extension BrowserPolicy {
    /// Every policy `inputs` put in force, Chromium's first, each browser's in the order of
    /// ``Browser/Kind``, then the loopback policies.
    public static func derive(_ inputs: BrowserPolicyInputs) -> [BrowserPolicy] {
        Browser.allCases.flatMap { derive(inputs, for: $0) }
    }

    /// The policies `inputs` put in force in `browser`.
    public static func derive(_ inputs: BrowserPolicyInputs, for browser: Browser) -> [BrowserPolicy] {
        var policies: [BrowserPolicy] = []
        func add(_ name: String, _ value: JSONValue, _ kind: Browser.Kind) {
            policies.append(
                BrowserPolicy(browser: browser, name: name, value: value, cause: browser.restriction(kind).rawValue))
        }
        let origins = inputs.manifests.flatMap(\.origins).map(\.text)
        let bridge = "http://127.0.0.1:\(inputs.bridgePort)"
        for kind in Browser.Kind.allCases where inputs.denied.contains(browser.restriction(kind)) {
            let allowed = inputs.allowedURLs[browser] ?? []
            switch (browser, kind) {
            case (.chromium, .navigation):
                add("URLBlocklist", .strings(["*"]), kind)
                // The bridge is reached by the web apps' pages, not opened; listed all the same,
                // so that a Chromium blocking subresources as well still lets them hear it.
                let extra = origins.isEmpty ? [] : [bridge]
                add("URLAllowlist", .strings(allowed.map(\.text) + extra), kind)
            case (.chromium, .devtools): add("DeveloperToolsAvailability", .int(2), kind)
            case (.chromium, .downloads): add("DownloadRestrictions", .int(3), kind)
            case (.chromium, .printing): add("PrintingEnabled", .bool(false), kind)
            case (.chromium, .fileDialogs): add("AllowFileSelectionDialogs", .bool(false), kind)
            case (.chromium, .privateWindows): add("IncognitoModeAvailability", .int(1), kind)
            case (.chromium, .camera): add("VideoCaptureAllowed", .bool(false), kind)
            case (.chromium, .microphone): add("AudioCaptureAllowed", .bool(false), kind)
            case (.firefox, .navigation):
                // A pattern Firefox cannot match was refused when the profile was read.
                let exceptions = allowed.compactMap { try? $0.firefoxPattern() }
                add(
                    "WebsiteFilter",
                    .object([.init("Block", .strings(["<all_urls>"])), .init("Exceptions", .strings(exceptions))]),
                    kind)
            case (.firefox, .devtools): add("DisableDeveloperTools", .bool(true), kind)
            case (.firefox, .printing): add("PrintingEnabled", .bool(false), kind)
            case (.firefox, .privateWindows): add("DisablePrivateBrowsing", .bool(true), kind)
            case (.firefox, .camera): add("Permissions.Camera", lockedBlock, kind)
            case (.firefox, .microphone): add("Permissions.Microphone", lockedBlock, kind)
            case (.firefox, .downloads), (.firefox, .fileDialogs):
                break  // Firefox has no such policy (docs/browsers.md)
            }
        }
        if browser == .chromium, !origins.isEmpty {
            let cause = inputs.manifests.map(\.app.rawValue).joined(separator: ",")
            for name in ["LocalNetworkAccessAllowedForUrls", "LoopbackNetworkAllowedForUrls"] {
                policies.append(BrowserPolicy(browser: browser, name: name, value: .strings(origins), cause: cause))
            }
        }
        return policies
    }

    private static let lockedBlock = JSONValue.object([
        .init("BlockNewRequests", .bool(true)), .init("Locked", .bool(true)),
    ])

    /// Chromium's managed policy file: one object of every Chromium policy in `policies`
    /// (`{}` when there is none).
    public static func chromiumDocument(_ policies: [BrowserPolicy]) -> JSONValue {
        .object(policies.filter { $0.browser == .chromium }.map { .init($0.name, $0.value) })
    }

    /// The keys kioskd puts in Firefox's `policies` object: every Firefox policy of `policies`,
    /// with `Permissions.Camera` and `Permissions.Microphone` one `Permissions` object.
    public static func firefoxKeys(_ policies: [BrowserPolicy]) -> [JSONValue.Member] {
        var members: [JSONValue.Member] = []
        var permissions: [JSONValue.Member] = []
        for policy in policies where policy.browser == .firefox {
            if policy.name.hasPrefix("Permissions.") {
                if permissions.isEmpty { members.append(.init("Permissions", .null)) }
                permissions.append(.init(String(policy.name.dropFirst("Permissions.".count)), policy.value))
            } else {
                members.append(.init(policy.name, policy.value))
            }
        }
        if let index = members.firstIndex(where: { $0.key == "Permissions" }) {
            members[index].value = .object(permissions)
        }
        return members
    }
}

/// kioskd's keys in the admin's Firefox `policies.json` (docs/browsers.md § What kioskd writes
/// where and when): merged into the admin's `policies` object, every other key and member kept
/// as it was. While kioskd holds a key, the admin's own value for it (if any) is kept aside, in
/// ``held``, and put back when kioskd lets go.
public struct FirefoxPolicyMerge: Hashable, Sendable {
    /// The keys kioskd holds in `policies`, each with the admin's value it replaced (nil: the
    /// admin had none). kioskd keeps this in its state directory.
    public var held: [String: JSONValue?]

    public init(held: [String: JSONValue?] = [:]) { self.held = held }

    /// What is wrong with the admin's file.
    public struct Problem: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The admin's document (`nil`: no file yet) with `keys` as kioskd's, and the keys it held
    /// before and no longer has put back as the admin had them; updates ``held``.
    /// - Throws: ``Problem`` when the document is not an object or its `policies` is not one:
    ///   kioskd then writes nothing (an admin's file is never replaced by a guess).
    public mutating func merge(into document: JSONValue?, keys: [JSONValue.Member]) throws(Problem) -> JSONValue {
        var root: [JSONValue.Member]
        switch document {
        case nil: root = []
        case .object(let members)?: root = members
        default: throw Problem(description: "the file is not a JSON object")
        }
        var policies: [JSONValue.Member] = []
        let slot = root.firstIndex { $0.key == "policies" }
        if let slot {
            guard case .object(let members) = root[slot].value else {
                throw Problem(description: "its \"policies\" is not a JSON object")
            }
            policies = members
        }
        // Let go of what is no longer kioskd's: the admin's value back, or the key gone.
        for (key, adminValue) in held.sorted(by: { $0.key < $1.key }) where !keys.contains(where: { $0.key == key }) {
            if let index = policies.firstIndex(where: { $0.key == key }) {
                if let adminValue { policies[index].value = adminValue } else { policies.remove(at: index) }
            } else if let adminValue {
                policies.append(.init(key, adminValue))
            }
            held[key] = nil
        }
        for member in keys {
            if let index = policies.firstIndex(where: { $0.key == member.key }) {
                if held.index(forKey: member.key) == nil { held[member.key] = .some(policies[index].value) }
                policies[index].value = member.value
            } else {
                if held.index(forKey: member.key) == nil { held[member.key] = .some(nil) }
                policies.append(member)
            }
        }
        if let slot {
            root[slot].value = .object(policies)
        } else {
            root.insert(.init("policies", .object(policies)), at: 0)
        }
        return .object(root)
    }

    /// ``held`` as JSON, for kioskd's state directory: `{"KEY": [admin's value] or []}`.
    public var json: JSONValue {
        .object(held.sorted { $0.key < $1.key }.map { .init($0.key, .array($0.value.map { [$0] } ?? [])) })
    }

    /// Reads ``json``; nil when it is not that shape.
    public init?(json: JSONValue) {
        guard case .object(let members) = json else { return nil }
        var held: [String: JSONValue?] = [:]
        for member in members {
            guard case .array(let items) = member.value, items.count <= 1 else { return nil }
            held[member.key] = .some(items.first)
        }
        self.held = held
    }
}
