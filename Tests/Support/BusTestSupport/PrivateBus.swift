import Foundation
import Glibc
import KioskTestSupport
import SystemPackage
import SystemdKit

/// A private `dbus-daemon` for tests: a system-type bus with a permissive policy, listening on
/// a socket in its own temp dir. Never the machine's bus.
///
/// Point code under test at it with `Bus.open(address:)`, or with `DBUS_SYSTEM_BUS_ADDRESS`
/// (`environment`) for `Bus.openSystem()` and for tools such as `busctl --address`.
public final class PrivateBus: @unchecked Sendable {
    /// The bus address, e.g. `unix:path=/tmp/private-bus-1a2b3c4d/bus,guid=…` (a new guid after `restart()`).
    public private(set) var address: String
    /// The temp dir holding the config and the socket (0755: polkitd and `nobody` must reach it).
    public let directory: URL
    private var daemon: ChildProcess
    private var stopped = false

    public static let dbusDaemon = "/usr/bin/dbus-daemon"

    /// The config: system type, anyone may connect, own any name, send and eavesdrop (for
    /// `busctl monitor`), and high limits. It must never serve as a real system bus.
    public static let configuration = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>unix:tmpdir=/tmp</listen>
          <auth>EXTERNAL</auth>
          <allow_anonymous/>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_destination="*" eavesdrop="true"/>
            <allow receive_sender="*"/>
            <allow eavesdrop="true"/>
          </policy>
          <limit name="max_replies_per_connection">50000</limit>
          <limit name="max_connections_per_user">1000</limit>
          <limit name="max_match_rules_per_connection">5000</limit>
        </busconfig>
        """

    /// Starts the daemon, with the high limits, and returns once its socket listens.
    public convenience init() throws {
        try self.init(systemLimits: false)
    }

    /// Starts the daemon and returns once its socket listens (it prints the address then).
    /// `systemLimits` keeps dbus-daemon's own limits, a real system bus's (at most 128 calls
    /// waiting for their replies per connection, …), instead of the high ones.
    public init(systemLimits: Bool) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "private-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        let config = directory.appendingPathComponent("bus.conf")
        let text =
            systemLimits
            ? Self.configuration.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.contains("<limit ") }.joined(separator: "\n")
            : Self.configuration
        try text.write(to: config, atomically: true, encoding: .utf8)
        (daemon, address) = try Self.launch(config: config.path, socket: "\(directory.path)/bus")
    }

    /// The address without the server's guid, which stays valid across `restart()`.
    public var socketAddress: String { "unix:path=\(directory.path)/bus" }

    /// Stops dbus-daemon and starts a new one on the same socket: every connection drops, and
    /// clients that reconnect to `socketAddress` find an empty bus.
    public func restart() throws {
        daemon.signal(SIGTERM)
        daemon.wait(timeout: .seconds(5))
        unlink("\(directory.path)/bus")
        (daemon, address) = try Self.launch(
            config: directory.appendingPathComponent("bus.conf").path, socket: "\(directory.path)/bus")
    }

    private static func launch(config: String, socket: String) throws -> (ChildProcess, String) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw HarnessError("pipe failed: \(Errno.last.reason)") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        let daemon: ChildProcess
        do {
            daemon = try ChildProcess.spawn(
                Self.dbusDaemon,
                [
                    "--config-file=\(config)", "--address=unix:path=\(socket)",
                    "--nofork", "--nopidfile", "--print-address=1",
                ], stdout: fds[1], stderr: 2)
        } catch {
            close(fds[0])
            close(fds[1])
            throw error
        }
        close(fds[1])
        defer { close(fds[0]) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(fds[0], &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        guard !line.isEmpty else {
            daemon.wait(timeout: .seconds(1))
            throw HarnessError("dbus-daemon exited before printing its address (config \(config)).")
        }
        return (daemon, String(decoding: line, as: UTF8.self))
    }

    deinit { stop() }

    /// The environment with `DBUS_SYSTEM_BUS_ADDRESS` pointing here (and no session bus).
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = address
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        return env
    }

    /// Stops the daemon (SIGTERM) and removes the temp dir.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        daemon.signal(SIGTERM)
        daemon.wait(timeout: .seconds(5))
        try? FileManager.default.removeItem(at: directory)
    }

    /// Whether `name` has an owner on this bus (asked with a blocking call on a fresh connection).
    public func hasOwner(_ name: String) throws -> Bool {
        let bus = try Bus.open(address: address)
        let call = try bus.makeMethodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", member: "NameHasOwner")
        try call.append(.string(name))
        let reply = try bus.callBlocking(call, timeout: .seconds(5))
        return try reply.read(signature: "b").first?.bool ?? false
    }

    /// Polls until `name` has an owner, or throws after `timeout`.
    public func waitForOwner(_ name: String, timeout: Duration = .seconds(15)) throws {
        guard try eventually(timeout: timeout, every: .milliseconds(20), { try hasOwner(name) }) else {
            throw HarnessError("\(name) did not appear on the private bus within \(timeout).")
        }
    }
}
