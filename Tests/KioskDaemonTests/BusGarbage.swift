import BusTestSupport
import Foundation
import Glibc
import KioskCore

/// Garbage on raw connections to a bus: random bytes before and after authentication, broken
/// headers, and a method call to kioskd with invalid UTF-8 in an `s`, hand-encoded because
/// every D-Bus library refuses to send one. dbus-daemon must drop all of it; kioskd must not notice.
enum BusGarbage {
    struct Report: CustomStringConvertible {
        var connections = 0
        var bytes = 0
        /// A well-formed call on a raw connection got kioskd's reply (the encoder is right).
        var controlAnswered = false
        /// The same call with invalid UTF-8 got the connection closed instead.
        var invalidUTF8Dropped = false
        /// After a call with noncharacters, a well-formed call on the same connection was answered.
        var nonCharacterAnswered = false
        var nonCharacterReply = ""
        var description: String {
            "\(connections) connections, \(bytes) bytes; control call answered: \(controlAnswered); invalid UTF-8 dropped: \(invalidUTF8Dropped); answered after noncharacters: \(nonCharacterAnswered) \(nonCharacterReply.prefix(300))"
        }
    }

    static func run(address: String, rng: inout SplitMix64) throws -> Report {
        guard let range = address.range(of: "unix:path=") else {
            throw HarnessError("not a unix:path address: \(address)")
        }
        let path = String(address[range.upperBound...].prefix { $0 != "," })
        var report = Report()
        func random(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) } }

        // Random bytes instead of the SASL handshake.
        for _ in 0..<20 {
            let c = try RawConnection(path: path)
            let junk = random(Int.random(in: 1...4096, using: &rng))
            c.send(junk)
            _ = c.receive(until: { _ in false }, timeout: 0.05)
            report.connections += 1
            report.bytes += junk.count
        }
        // Authenticated, then random bytes instead of messages.
        for _ in 0..<10 {
            let c = try RawConnection(path: path)
            guard c.authenticate() else { continue }
            let junk = random(Int.random(in: 1...8192, using: &rng))
            c.send(junk)
            _ = c.receive(until: { _ in false }, timeout: 0.05)
            report.connections += 1
            report.bytes += junk.count
        }
        // Authenticated with Hello, then broken headers.
        let broken: [[UInt8]] = [
            methodCall(
                serial: 2, member: "Introspect", interface: "org.freedesktop.DBus.Introspectable", signature: "",
                body: []
            )
            .enumerated().map { $0.offset == 4 ? 0xFF : $0.element },  // body length 255 with no body
            [UInt8(ascii: "l"), 1, 0, 1, 0xFF, 0xFF, 0xFF, 0x7F, 2, 0, 0, 0, 0, 0, 0, 0],  // a 2 GiB body
            [UInt8(ascii: "B"), 9, 0, 7] + random(60),  // bad type and version
            methodCall(
                serial: 2, member: "GetRestrictionState", interface: KioskWire.managerInterface, signature: "s(",
                body: encodeStrings([[0x61]])),  // bad signature
        ]
        for message in broken {
            let c = try RawConnection(path: path)
            guard c.authenticate() else { continue }
            c.send(hello() + message)
            _ = c.receive(until: { _ in false }, timeout: 0.1)
            report.connections += 1
            report.bytes += message.count
        }
        // A well-formed call, then the same kind of call with invalid UTF-8 on the same connection.
        let c = try RawConnection(path: path)
        if c.authenticate() {
            c.send(
                hello()
                    + methodCall(
                        serial: 2, member: "Introspect", interface: "org.freedesktop.DBus.Introspectable",
                        signature: "", body: []))
            let marker = Array("<interface name=\"\(KioskWire.managerInterface)\">".utf8)
            let (answer, _) = c.receive(until: { $0.contains(marker) }, timeout: 5)
            report.controlAnswered = answer.contains(marker)
            let invalid = methodCall(
                serial: 3, member: "GetRestrictionState", interface: KioskWire.managerInterface, signature: "ss",
                body: encodeStrings([[0x6F, 0x72, 0x67, 0x2E, 0xC3, 0x28], [0xFF, 0xFE, 0x2E, 0x78]]))
            c.send(invalid)
            let (_, closed) = c.receive(until: { _ in false }, timeout: 5)
            report.invalidUTF8Dropped = closed
            report.connections += 1
            report.bytes += invalid.count
        }
        // Unicode noncharacters (U+FFFE, U+FDD0) are valid UTF-8 to dbus-daemon, which passes them
        // on, but sd-bus refuses them in strings: kioskd must drop the message and keep serving.
        let n = try RawConnection(path: path)
        if n.authenticate() {
            let call = methodCall(
                serial: 2, member: "GetRestrictionState", interface: KioskWire.managerInterface, signature: "ss",
                body: encodeStrings([
                    Array("org.a".utf8) + [0xEF, 0xBF, 0xBE], Array("org.a.".utf8) + [0xEF, 0xB7, 0x90],
                ]))
            let ping = methodCall(
                serial: 3, member: "Introspect", interface: "org.freedesktop.DBus.Introspectable",
                signature: "", body: [])
            n.send(hello() + call + ping)
            let marker = Array("<interface name=\"\(KioskWire.managerInterface)\">".utf8)
            let (answer, closed) = n.receive(until: { $0.contains(marker) }, timeout: 5)
            report.nonCharacterAnswered = answer.contains(marker)
            report.nonCharacterReply = String(decoding: answer.filter { $0 >= 0x20 && $0 < 0x7F }, as: UTF8.self)
            _ = closed
            report.connections += 1
            report.bytes += call.count
        }
        return report
    }

    // MARK: Hand-encoding (little endian, D-Bus 1 wire format)

    static func hello() -> [UInt8] {
        methodCall(
            serial: 1, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", member: "Hello",
            interface: "org.freedesktop.DBus", signature: "", body: [])
    }

    static func methodCall(
        serial: UInt32, destination: String = KioskWire.busName, path: String = KioskWire.objectPath,
        member: String, interface: String, signature: String, body: [UInt8]
    ) -> [UInt8] {
        var m = WireBuffer()
        m.bytes = [UInt8(ascii: "l"), 1, 0, 1]
        m.u32(UInt32(body.count))
        m.u32(serial)
        m.u32(0)  // header fields' length, patched below
        let fieldsStart = m.bytes.count
        func field(_ code: UInt8, _ type: Character, _ value: [UInt8]) {
            m.align(8)
            m.bytes += [code, 1, UInt8(ascii: type.asciiValue.map { Unicode.Scalar($0) }!), 0]
            if type == "g" {
                m.bytes.append(UInt8(value.count)); m.bytes += value; m.bytes.append(0)
            } else {
                m.u32(UInt32(value.count)); m.bytes += value; m.bytes.append(0)
            }
        }
        field(1, "o", Array(path.utf8))
        field(2, "s", Array(interface.utf8))
        field(3, "s", Array(member.utf8))
        field(6, "s", Array(destination.utf8))
        if !signature.isEmpty { field(8, "g", Array(signature.utf8)) }
        let length = UInt32(m.bytes.count - fieldsStart)
        withUnsafeBytes(of: length.littleEndian) { m.bytes.replaceSubrange(12..<16, with: $0) }
        m.align(8)
        return m.bytes + body
    }

    /// A body of `s` values with these raw bytes (no validation: that is the point).
    static func encodeStrings(_ strings: [[UInt8]]) -> [UInt8] {
        var b = WireBuffer()
        for s in strings {
            b.u32(UInt32(s.count))
            b.bytes += s
            b.bytes.append(0)
        }
        return b.bytes
    }

    struct WireBuffer {
        var bytes: [UInt8] = []
        mutating func align(_ n: Int) { while bytes.count % n != 0 { bytes.append(0) } }
        mutating func u32(_ v: UInt32) {
            align(4)
            withUnsafeBytes(of: v.littleEndian) { bytes += $0 }
        }
    }
}

/// A unix socket connection to the bus, spoken to byte by byte.
final class RawConnection {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, b) in path.utf8.enumerated() where i < buffer.count - 1 { buffer[i] = b }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            close(fd)
            throw HarnessError("connect(\(path)) failed: errno \(errno)")
        }
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }  // the bus hung up: fine
            offset += n
        }
    }

    /// Reads until `done` holds for what arrived, the peer closes (`closed`), or `timeout` s pass.
    func receive(until done: ([UInt8]) -> Bool, timeout: Double) -> ([UInt8], closed: Bool) {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ms = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
            guard poll(&pfd, 1, ms) == 1 else { break }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return (received, true) }
            received += buffer[0..<n]
            if done(received) { return (received, false) }
        }
        return (received, false)
    }

    /// SASL EXTERNAL as the current uid; true once the bus said OK and BEGIN is sent.
    func authenticate() -> Bool {
        let uid = Array(String(getuid()).utf8).map { String(format: "%02x", $0) }.joined()
        send([0] + Array("AUTH EXTERNAL \(uid)\r\n".utf8))
        let (answer, _) = receive(until: { $0.contains(UInt8(ascii: "\n")) }, timeout: 5)
        guard answer.starts(with: Array("OK ".utf8)) else { return false }
        send(Array("BEGIN\r\n".utf8))
        return true
    }
}

extension Array where Element == UInt8 {
    func contains(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
