import KioskAPI
import TOMLKit

/// A web app's restrictions, declared by the admin because a page cannot register itself
/// (docs/browsers.md § Web apps): `/etc/kioskd/apps/ID.toml` names the app, the restrictions
/// with their titles and details, and the web origins whose pages may read their states.
///
/// ```toml
/// id = "org.example.MuseumGuide"
/// origins = ["https://guide.museum.example"]
///
/// [[restriction]]
/// id = "org.example.MuseumGuide.video"
/// title = "Exhibit videos"
/// detail = "Visitors may play the video beside each exhibit."
/// ```
public struct WebAppManifest: Hashable, Sendable {
    /// The app's id: also the file's name (`ID.toml`).
    public var app: AppID
    /// The restrictions, in the file's order: at least one, at most
    /// ``KioskWire/Limits/restrictionsPerApp``, no id twice.
    public var restrictions: [RestrictionDeclaration]
    /// The origins whose pages may read the restrictions' states: at least one, at most
    /// ``maxOrigins``, no origin twice.
    public var origins: [WebOrigin]

    /// At most this many origins a manifest lists.
    public static let maxOrigins = 16
    /// A manifest file is at most this long (the registry's text bounds, with room for TOML).
    public static let maxBytes = 1 << 20

    public init(app: AppID, restrictions: [RestrictionDeclaration], origins: [WebOrigin]) {
        self.app = app
        self.restrictions = restrictions
        self.origins = origins
    }

    /// Parses the manifest in the bytes of `file`; every problem is reported at its line, as a
    /// profile's are. The file's name must be the app's id followed by `.toml`.
    public static func parse(bytes: some Collection<UInt8>, file: String) throws(ProfileError) -> WebAppManifest {
        try parse(source: ProfileParser.text(of: bytes, file: file), file: file)
    }

    /// Parses a manifest from its text (`file` names it in messages and gives the expected id).
    public static func parse(source: String, file: String) throws(ProfileError) -> WebAppManifest {
        let (root, map) = try ProfileParser.document(source: source, file: file)
        var reader = ProfileReader(file: file, map: map)
        let manifest = reader.manifest(root)
        guard reader.diagnostics.isEmpty, let manifest else {
            throw ProfileError(diagnostics: reader.diagnostics.sorted { $0.position < $1.position })
        }
        return manifest
    }
}

/// A web origin as a browser sends it in `Origin`: `http` or `https`, a lowercase host (a DNS
/// name, an IPv4 address or a bracketed IPv6 one) and a port unless it is the scheme's default —
/// no path, no user, no wildcard. Two origins are the same exactly when their texts are.
public struct WebOrigin: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The origin serialized as browsers do (`https://guide.museum.example`,
    /// `http://127.0.0.1:8080`).
    public let text: String

    public var description: String { text }

    public static func < (a: WebOrigin, b: WebOrigin) -> Bool { a.text < b.text }

    /// Reads an origin, written as browsers serialize it or with a capital letter or the scheme's
    /// default port (which are normalised away); refuses anything else, saying why. `null`
    /// (an opaque origin) is never one.
    public init(_ string: String) throws(KioskError) {
        let quoted = Text.quoted(string)
        guard string.utf8.count <= 255 else { throw .invalid("The origin \(quoted) is longer than 255 bytes.") }
        let lower = string.lowercased()
        let scheme: String, defaultPort: Int
        if lower.hasPrefix("https://") {
            (scheme, defaultPort) = ("https", 443)
        } else if lower.hasPrefix("http://") {
            (scheme, defaultPort) = ("http", 80)
        } else {
            throw .invalid("The origin \(quoted) must start with http:// or https://.")
        }
        var rest = Substring(lower.dropFirst(scheme.count + 3))
        if rest.hasSuffix("/") {
            throw .invalid(
                "The origin \(quoted) has a path; an origin is scheme://host[:port], with no \"/\" at the end.")
        }
        guard !rest.contains(where: { "/?#@*\\ ".contains($0) }) else {
            throw .invalid("The origin \(quoted) must be scheme://host[:port]: no path, query, user or wildcard.")
        }
        var port: Int?
        let host: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw .invalid("The origin \(quoted) has an unclosed \"[\".")
            }
            host = rest[...close]
            rest = rest[rest.index(after: close)...]
            let inside = host.dropFirst().dropLast()
            guard !inside.isEmpty, inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw .invalid("The origin \(quoted) has an IPv6 address that is not one.")
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            rest = rest[colon...]
        } else {
            host = rest
            rest = ""
        }
        if !rest.isEmpty {
            guard rest.first == ":", let number = Int(rest.dropFirst()), rest.count <= 6, (1...65535).contains(number)
            else { throw .invalid("The origin \(quoted) has a port that is not a number from 1 to 65535.") }
            port = number
        }
        if !host.hasPrefix("[") {
            let labels = host.split(separator: ".", omittingEmptySubsequences: false)
            guard !host.isEmpty,
                labels.allSatisfy({ label in
                    !label.isEmpty && label.count <= 63 && label.first != "-" && label.last != "-"
                        && label.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
                })
            else {
                throw .invalid(
                    "The origin \(quoted) has a host that is not a DNS name or an address (letters, digits, \"-\" and dots)."
                )
            }
        }
        text = "\(scheme)://\(host)" + (port == nil || port == defaultPort ? "" : ":\(port!)")
    }
}

extension ProfileReader {
    static let manifestKeys = ["id", "origins", "restriction"]

    /// The manifest in `root`, or nil when it has problems (in ``diagnostics``).
    mutating func manifest(_ root: TOMLTable) -> WebAppManifest? {
        checkKeys(root, at: [], allowed: Self.manifestKeys)
        var app: AppID?
        if let value = root["id"], let text = string(value, at: [.key("id")]) {
            do {
                let id = try AppID(text)
                let name = file.split(separator: "/").last.map(String.init) ?? file
                if name != "\(text).toml" {
                    error(
                        "id is \(Text.quoted(text)), but the file is \(Text.quoted(name)): name it \(text).toml",
                        at: [.key("id")], value: true)
                }
                app = id
            } catch {
                self.error("id: \(error.message)", at: [.key("id")], value: true)
            }
        } else if root["id"] == nil {
            error("the manifest needs id, the web app's reverse-DNS id (the file's name without .toml)", at: [])
        }
        let origins = manifestOrigins(root["origins"])
        let restrictions = manifestRestrictions(root["restriction"])
        guard let app, diagnostics.isEmpty else { return nil }
        return WebAppManifest(app: app, restrictions: restrictions, origins: origins)
    }

    private mutating func manifestOrigins(_ value: (any TOMLValueConvertible)?) -> [WebOrigin] {
        let path: TOMLPath = [.key("origins")]
        guard let value else {
            error("the manifest needs origins, the web origins whose pages may read the states", at: [])
            return []
        }
        guard let array = array(value, at: path) else { return [] }
        if array.count == 0 { error("origins is empty; list at least one origin", at: path, value: true) }
        if array.count > WebAppManifest.maxOrigins {
            error("origins lists \(array.count) origins, more than \(WebAppManifest.maxOrigins)", at: path, value: true)
        }
        var origins: [WebOrigin] = []
        for index in 0..<array.count {
            let itemPath = path + [.index(index)]
            guard let text = string(array[index], at: itemPath) else { continue }
            do {
                let origin = try WebOrigin(text)
                if origins.contains(origin) {
                    error("origins lists \(origin) twice", at: itemPath, value: true)
                } else {
                    origins.append(origin)
                }
            } catch {
                self.error("origins: \(error.message)", at: itemPath, value: true)
            }
        }
        return origins
    }

    private mutating func manifestRestrictions(_ value: (any TOMLValueConvertible)?) -> [RestrictionDeclaration] {
        let path: TOMLPath = [.key("restriction")]
        guard let value else {
            error("the manifest needs at least one [[restriction]] with id, title and detail", at: [])
            return []
        }
        guard let array = array(value, at: path) else { return [] }
        if array.count > KioskWire.Limits.restrictionsPerApp {
            error(
                "\(array.count) restrictions, more than the \(KioskWire.Limits.restrictionsPerApp) an app may declare",
                at: path)
        }
        var declared: [RestrictionDeclaration] = []
        for index in 0..<array.count {
            let itemPath = path + [.index(index)]
            guard let table = table(array[index], at: itemPath) else { continue }
            checkKeys(table, at: itemPath, allowed: ["id", "title", "detail"])
            var fields: [String: String] = [:]
            for key in ["id", "title", "detail"] {
                guard let field = table[key] else {
                    error("restriction needs \(key)", at: itemPath)
                    continue
                }
                fields[key] = string(field, at: itemPath + [.key(key)])
            }
            guard let id = fields["id"], let title = fields["title"], let detail = fields["detail"] else { continue }
            do {
                let declaration = try RestrictionDeclaration(id: id, title: title, detail: detail)
                if declared.contains(where: { $0.id == declaration.id }) {
                    error("restriction \(id) is declared twice", at: itemPath + [.key("id")], value: true)
                } else {
                    declared.append(declaration)
                }
            } catch {
                self.error("restriction: \(error.message)", at: itemPath, value: false)
            }
        }
        return declared
    }
}
