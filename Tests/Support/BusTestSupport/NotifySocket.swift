import Foundation
import Glibc

/// The datagram socket systemd gives a `Type=notify` service as `$NOTIFY_SOCKET`, owned by the
/// test: point a process (or this one) at `path` and read what it sends with `sd_notify`.
public final class NotifySocket: @unchecked Sendable {
    public let path: String
    private let fd: Int32

    /// Binds a new socket in `directory` (a temp dir by default).
    public init(directory: URL = FileManager.default.temporaryDirectory) throws {
        path = directory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8))").path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket(AF_UNIX) failed: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw HarnessError("notify socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, b) in bytes.enumerated() { buffer[i] = b }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            close(fd)
            throw HarnessError("bind(\(path)) failed: errno \(errno)")
        }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// The next datagram, or nil after `timeout`.
    public func next(timeout: Duration) -> String? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&pfd, 1, ms) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
    }

    /// Reads datagrams until one has the line `line` (e.g. `READY=1`); returns every datagram
    /// read, or throws after `timeout`.
    @discardableResult
    public func waitFor(_ line: String, timeout: Duration = .seconds(10)) throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        var seen: [String] = []
        while ContinuousClock.now < deadline {
            guard let message = next(timeout: deadline - ContinuousClock.now) else { break }
            seen.append(message)
            if message.split(separator: "\n").contains(Substring(line)) { return seen }
        }
        throw HarnessError("no \(line) on \(path) within \(timeout); got \(seen)")
    }
}
