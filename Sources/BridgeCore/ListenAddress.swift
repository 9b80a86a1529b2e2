/// A `--listen` address: a loopback IPv4 or IPv6 address and a port (`127.0.0.1:7770`,
/// `[::1]:7770`). The bridge never listens beyond the machine.
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// The address without brackets (`127.0.0.1`, `::1`).
    public var host: String
    public var port: UInt16
    public var isIPv6: Bool

    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Reads `HOST:PORT`; refuses, saying why, anything not on loopback.
    public init(_ text: String) throws(ListenAddressError) {
        let host: Substring, port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw ListenAddressError(text: text, why: "write an IPv6 address as [::1]:PORT")
            }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
            isIPv6 = true
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw ListenAddressError(text: text, why: "it has no port (HOST:PORT)")
            }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
            isIPv6 = false
        }
        guard let number = UInt16(port), number > 0 else {
            throw ListenAddressError(text: text, why: "the port is not a number from 1 to 65535")
        }
        if isIPv6 {
            guard host == "::1" else { throw ListenAddressError(text: text, why: "the only IPv6 loopback address is ::1") }
        } else {
            let octets = host.split(separator: ".", omittingEmptySubsequences: false)
            guard octets.count == 4, octets.allSatisfy({ UInt8($0) != nil && !$0.isEmpty }), octets[0] == "127" else {
                throw ListenAddressError(text: text, why: "the address is not a loopback IPv4 address (127.x.y.z)")
            }
        }
        self.host = String(host)
        self.port = number
    }
}

/// A `--listen` value the bridge refuses.
public struct ListenAddressError: Error, Sendable, Equatable, CustomStringConvertible {
    public var text: String
    public var why: String
    public var description: String { "The listen address \"\(text)\" is refused: \(why)." }
}
