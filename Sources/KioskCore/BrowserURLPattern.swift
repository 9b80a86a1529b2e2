import KioskAPI

/// One entry of a profile's `[browser] allowed-urls`: a URL pattern in Chromium's
/// `URLBlocklist`/`URLAllowlist` format, `[scheme://][.]host[:port][/path][?query]`, or `*`
/// alone (docs/browsers.md § The profile's [browser]).
///
/// - no scheme: any scheme; a scheme is letters, digits, `+`, `-` and `.`, then `://`;
/// - the host is `*` (any host), a DNS name (which also matches its subdomains, unless it starts
///   with `.`), an IPv4 address or a bracketed IPv6 one (no subdomains);
/// - the port is 1 to 65535; the path (from `/`) matches every path it starts; the query is
///   `&`-separated tokens.
///
/// Chromium ignores a user, a password and a fragment in a pattern; kioskd refuses them, so that
/// what an admin reads is what the browser does. ``firefoxPattern()`` translates the pattern
/// into a WebExtension match pattern for Firefox's `WebsiteFilter`.
public struct BrowserURLPattern: Hashable, Sendable, CustomStringConvertible {
    /// The pattern as written (a capital letter in the scheme or host lowered).
    public let text: String
    /// The scheme, lowercase, or nil for any.
    public let scheme: String?
    /// Whether subdomains are left out (`.example.com`).
    public let exactHost: Bool
    /// The host, lowercase: `*`, a DNS name, an IPv4 address or `[IPv6]`.
    public let host: String
    public let port: Int?
    /// The path, from its `/`, or nil.
    public let path: String?
    /// The query, without its `?`, or nil.
    public let query: String?

    public var description: String { text }

    /// The most a pattern is long.
    public static let maxBytes = 2048

    /// Reads a pattern, refusing anything Chromium would not read as written, saying why.
    public init(_ string: String) throws(KioskError) {
        let quoted = Text.quoted(string)
        func refuse(_ why: String) -> KioskError { .invalid("The URL pattern \(quoted) \(why)") }
        guard !string.isEmpty else { throw .invalid("A URL pattern is empty; write * for every URL.") }
        guard string.utf8.count <= Self.maxBytes else { throw refuse("is longer than \(Self.maxBytes) bytes.") }
        guard string.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f }) else {
            throw refuse("has a space, a control character or a character beyond ASCII (write a host in punycode).")
        }
        if string == "*" {
            (text, scheme, exactHost, host, port, path, query) = ("*", nil, false, "*", nil, nil, nil)
            return
        }
        guard !string.contains("#") else { throw refuse("has a fragment (#…), which Chromium ignores: leave it out.") }
        var rest = Substring(string)
        var scheme: String?
        if let separator = Self.schemeSeparator(in: rest) {
            let name = rest[..<separator.lowerBound].lowercased()
            guard let first = name.first, first.isLetter,
                name.allSatisfy({ ($0.isLetter || $0.isNumber || "+-.".contains($0)) && $0.isASCII })
            else {
                throw refuse(
                    name == "*"
                        ? "has * as its scheme; leave the scheme out to match every scheme."
                        : "has a scheme that is not one (letters, digits, +, - and ., then ://).")
            }
            scheme = name
            rest = rest[separator.upperBound...]
        }
        let hostEnd = rest.firstIndex { "/?".contains($0) } ?? rest.endIndex
        var authority = rest[..<hostEnd]
        rest = rest[hostEnd...]
        guard !authority.contains("@") else {
            throw refuse("has a user or password (…@), which Chromium ignores: leave it out.")
        }
        var port: Int?
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            let digits = authority[authority.index(after: colon)...]
            guard let number = Int(digits), digits.count <= 5, digits.allSatisfy(\.isNumber),
                (1...65535).contains(number)
            else { throw refuse("has a port that is not a number from 1 to 65535.") }
            port = number
            authority = authority[..<colon]
        }
        var exact = false
        if authority.hasPrefix(".") {
            exact = true
            authority = authority.dropFirst()
        }
        if authority.hasSuffix("."), authority.count > 1 { authority = authority.dropLast() }
        let host = authority.lowercased()
        if host.isEmpty { throw refuse("has no host; write * for any host.") }
        if host != "*" && !Self.isAddress(host) {
            if host.contains("*") {
                throw refuse(
                    "has * in its host; a host matches its subdomains already (example.com matches www.example.com), and * alone matches every host."
                )
            }
            let labels = host.split(separator: ".", omittingEmptySubsequences: false)
            guard
                labels.allSatisfy({ label in
                    !label.isEmpty && label.count <= 63 && label.first != "-" && label.last != "-"
                        && label.allSatisfy {
                            ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
                        }
                })
            else {
                throw refuse("has a host that is not a DNS name or an address (letters, digits, \"-\" and dots).")
            }
        }
        if exact && (host == "*" || Self.isAddress(host)) {
            throw refuse("puts a dot before \(host), which has no subdomains to leave out.")
        }
        var path: String?
        var query: String?
        if let mark = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: mark)...])
            rest = rest[..<mark]
            if query!.isEmpty { throw refuse("has an empty query after ?.") }
        }
        if !rest.isEmpty { path = String(rest) }
        self.scheme = scheme
        self.exactHost = exact
        self.host = host
        self.port = port
        self.path = path
        self.query = query
        text =
            (scheme.map { $0 + "://" } ?? "") + (exact ? "." : "") + host + (port.map { ":\($0)" } ?? "")
            + (path ?? "") + (query.map { "?" + $0 } ?? "")
    }

    /// Where the first `://` is in `text`.
    static func schemeSeparator(in text: Substring) -> Range<Substring.Index>? {
        var index = text.startIndex
        while index < text.endIndex {
            if text[index...].hasPrefix("://") { return index..<text.index(index, offsetBy: 3) }
            index = text.index(after: index)
        }
        return nil
    }

    /// Whether `host` is an IPv4 address (four numbers 0 to 255) or a bracketed IPv6 one.
    static func isAddress(_ host: String) -> Bool {
        if host.hasPrefix("[") {
            let inside = host.dropFirst().dropLast()
            return host.hasSuffix("]") && !inside.isEmpty && inside.allSatisfy { $0.isHexDigit || ":.".contains($0) }
        }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { $0.count <= 3 && !$0.isEmpty && $0.allSatisfy(\.isNumber) && Int($0)! <= 255 }
    }

    /// The schemes a Firefox match pattern takes that a kiosk's pages use.
    public static let firefoxSchemes = ["http", "https", "ws", "wss"]

    /// The pattern as a WebExtension match pattern for Firefox's `WebsiteFilter`
    /// (`<scheme>://<host><path>`): no scheme becomes `*` (http, https, ws and wss: narrower
    /// than Chromium's any scheme, so an allow list lets fewer pages through, never more); a
    /// host with its subdomains `*.host`; a path `path*` (a prefix, as in Chromium); none `/*`.
    /// - Throws: `InvalidArgs` saying why, when Firefox cannot match the same URLs: a port, a
    ///   query, a `*` in the path, or a scheme other than http, https, ws and wss.
    public func firefoxPattern() throws(KioskError) -> String {
        let quoted = Text.quoted(text)
        func refuse(_ why: String) -> KioskError {
            .invalid("The URL pattern \(quoted) cannot be given to Firefox: \(why)")
        }
        if text == "*" { return "<all_urls>" }
        if let scheme, !Self.firefoxSchemes.contains(scheme) {
            throw refuse("its WebsiteFilter takes only the schemes http, https, ws and wss, not \(scheme).")
        }
        if port != nil { throw refuse("a Firefox match pattern has no port; leave the port out.") }
        if query != nil { throw refuse("a Firefox match pattern cannot match a query as Chromium does; leave it out.") }
        if path?.contains("*") == true {
            throw refuse("* in a Firefox path matches anything, but in Chromium's only itself; leave it out.")
        }
        let firefoxHost: String
        if host == "*" {
            firefoxHost = "*"
        } else if exactHost || Self.isAddress(host) {
            firefoxHost = host
        } else {
            firefoxHost = "*." + host
        }
        return "\(scheme ?? "*")://\(firefoxHost)\(path ?? "/")*"
    }
}
