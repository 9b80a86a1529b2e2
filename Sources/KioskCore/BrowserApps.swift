import KioskAPI

/// A browser kioskd governs through its own managed policy (docs/browsers.md § Built-in browser
/// apps): Debian's `chromium` and `firefox-esr`. Each is an app in the registry with the
/// restrictions of ``Kind``, declared by kioskd itself as root's; their ids are reserved.
public enum Browser: String, CaseIterable, Hashable, Sendable, Comparable, Codable {
    case chromium
    case firefox

    /// What a browser restriction governs; its id is the browser's app id, a dot and this.
    public enum Kind: String, CaseIterable, Hashable, Sendable {
        case navigation
        case devtools
        case downloads
        case printing
        case fileDialogs = "file-dialogs"
        case privateWindows = "private-windows"
        case camera
        case microphone
    }

    /// The browser's app id in the registry.
    public var app: AppID {
        switch self {
        case .chromium: try! AppID("org.chromium.Chromium")
        case .firefox: try! AppID("org.mozilla.firefox")
        }
    }

    /// The browser as an admin knows it.
    public var name: String {
        switch self {
        case .chromium: "Chromium"
        case .firefox: "Firefox"
        }
    }

    /// The browser whose app id is `app`, if it is one.
    public init?(app: AppID) {
        guard let browser = Self.allCases.first(where: { $0.app == app }) else { return nil }
        self = browser
    }

    /// The id of the restriction `kind` of this browser (`org.chromium.Chromium.navigation`).
    public func restriction(_ kind: Kind) -> RestrictionID {
        try! RestrictionID("\(app.rawValue).\(kind.rawValue)")
    }

    /// The restriction `id` names, if it is one of this browser's.
    public func kind(of id: RestrictionID) -> Kind? {
        Kind.allCases.first { restriction($0) == id }
    }

    /// The restrictions kioskd declares for this browser, in presentation order: each detail says
    /// what `deny` does in this browser.
    public var declarations: [RestrictionDeclaration] {
        Kind.allCases.map { kind in
            let (title, detail) = text(of: kind)
            return try! RestrictionDeclaration(id: restriction(kind), title: title, detail: detail)
        }
    }

    private func text(of kind: Kind) -> (String, String) {
        let browser = name
        switch kind {
        case .navigation:
            return (
                "Open any web page",
                "Deny: \(browser) opens only the pages the session's profile allows ([browser] allowed-urls); every other address is blocked. With no allowed URLs, no page opens."
            )
        case .devtools:
            return (
                "Developer tools",
                "Deny: \(browser)'s developer tools (F12, Inspect, the JavaScript console) cannot be opened."
            )
        case .downloads:
            return (
                "Downloads",
                self == .chromium
                    ? "Deny: Chromium downloads no file; every download is blocked."
                    : "Deny: Firefox has no policy that blocks downloads, so kioskd writes none; deny the navigation restriction and allow only pages that offer no downloads."
            )
        case .printing:
            return ("Printing", "Deny: \(browser) cannot print; the Print menu item and window.print() do nothing.")
        case .fileDialogs:
            return (
                "File dialogs",
                self == .chromium
                    ? "Deny: Chromium opens no file chooser: a page's file upload and Save As show no dialog."
                    : "Deny: Firefox has no policy that hides its file dialogs, so kioskd writes none."
            )
        case .privateWindows:
            return ("Private windows", "Deny: \(browser) cannot open a private (incognito) window.")
        case .camera:
            return ("Camera", "Deny: no page may use the camera, and \(browser) asks no visitor whether it may.")
        case .microphone:
            return (
                "Microphone", "Deny: no page may use the microphone, and \(browser) asks no visitor whether it may."
            )
        }
    }

    public static func < (a: Browser, b: Browser) -> Bool { a.rawValue < b.rawValue }
}

/// The app ids kioskd declares itself, which nobody's `RegisterApplication` or
/// `UnregisterApplication` may touch: the built-in browsers' and those of the web apps' manifests.
public struct ReservedApps: Hashable, Sendable {
    /// The web apps' ids (from `/etc/kioskd/apps`).
    public var manifests: Set<AppID>

    public init(manifests: Set<AppID> = []) { self.manifests = manifests }

    /// Why `method` may not touch `app`, or nil when it may.
    public func refusal(_ app: AppID, method: String) -> KioskError? {
        if let browser = Browser(app: app) {
            return KioskError(
                .accessDenied,
                "\(app) is \(browser.name), a browser kioskd declares itself (docs/browsers.md); \(method) cannot change it, even for root."
            )
        }
        if manifests.contains(app) {
            return KioskError(
                .accessDenied,
                "\(app) is a web app declared by its manifest in kioskd's apps directory; \(method) cannot change it. Edit or remove the manifest and reload kioskd instead."
            )
        }
        return nil
    }
}

extension KioskState {
    /// Declares the built-in browsers as root's (kioskd does at every start), reconciling as a
    /// re-registration does: new restrictions start as `allow` (or the session's preset), states
    /// are kept. Returns whether anything changed.
    @discardableResult
    public mutating func declareBrowsers() throws(KioskError) -> Bool {
        var changed = false
        for browser in Browser.allCases {
            if try declare(browser.app, restrictions: browser.declarations, uid: 0, isAdmin: true, takeOwnership: true)
            {
                changed = true
            }
        }
        return changed
    }
}
