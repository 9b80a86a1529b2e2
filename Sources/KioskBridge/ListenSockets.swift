import BridgeCore
import Glibc

/// The bridge's listening sockets: the ones systemd passes (`kioskd-bridge.socket`), or ones it
/// opens itself for `--listen`.
enum ListenSockets {
    /// A listening TCP socket on `address` (`SO_REUSEADDR`, close-on-exec). The corresponding C
    /// calls are `socket`, `bind` and `listen`.
    static func open(_ address: ListenAddress) throws(BridgeError) -> Int32 {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw failure("create a socket for", address) }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var bound: Int32
        if address.isIPv6 {
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            var sa = sockaddr_in6()
            sa.sin6_family = sa_family_t(AF_INET6)
            sa.sin6_port = address.port.bigEndian
            _ = inet_pton(AF_INET6, address.host, &sa.sin6_addr)
            bound = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = address.port.bigEndian
            _ = inet_pton(AF_INET, address.host, &sa.sin_addr)
            bound = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard bound == 0 else {
            let error = failure("bind", address)
            close(fd)
            throw error
        }
        guard listen(fd, 64) == 0 else {
            let error = failure("listen on", address)
            close(fd)
            throw error
        }
        return fd
    }

    private static func failure(_ what: String, _ address: ListenAddress) -> BridgeError {
        BridgeError("Could not \(what) \(address): \(String(cString: strerror(errno))) (errno \(errno)).")
    }
}
