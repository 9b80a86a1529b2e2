import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskTestSupport
import KioskdProcessTestSupport
import SystemdKit

/// The built `kioskd` on a private bus: `KioskdProcessTestSupport.KioskdProcess`, shared with the
/// client and input tests.
typealias Kioskd = KioskdProcess

/// A blocking SystemdKit client of the manager on a private bus (no loop: one thread).
final class ManagerClient {
    let bus: Bus

    init(address: String) throws { bus = try Bus.open(address: address) }

    /// Calls `member` and returns the reply's values; an error reply throws its `BusError`.
    @discardableResult
    func call(
        _ member: String, _ arguments: [DBusValue] = [], interface: String = KioskWire.managerInterface
    ) throws -> [DBusValue] {
        let m = try bus.makeMethodCall(
            destination: KioskWire.busName, path: KioskWire.objectPath, interface: interface, member: member)
        try m.append(arguments)
        return try bus.callBlocking(m, timeout: .seconds(10)).readAll()
    }

    /// The D-Bus error name a call gets, or nil if it succeeds.
    func errorName(_ member: String, _ arguments: [DBusValue] = []) -> String? {
        do {
            try call(member, arguments)
            return nil
        } catch let error as BusError {
            return error.name
        } catch {
            return "\(error)"
        }
    }

    /// The D-Bus error a call gets (name and message), or nil if it succeeds.
    func error(_ member: String, _ arguments: [DBusValue] = []) -> BusError? {
        do {
            try call(member, arguments)
            return nil
        } catch let error as BusError {
            return error
        } catch {
            return BusError(name: "local", message: "\(error)")
        }
    }

    func register(_ app: String, _ restrictions: [(String, String, String)]) throws {
        try call(
            "RegisterApplication",
            [
                .string(app),
                .array(
                    elementSignature: "(sss)",
                    restrictions.map {
                        .structure([.string($0.0), .string($0.1), .string($0.2)])
                    }),
            ])
    }

    func state(_ app: String, _ id: String) throws -> String? {
        try call("GetRestrictionState", [.string(app), .string(id)]).first?.string
    }

    func property(_ name: String) throws -> DBusValue? {
        let value = try call(
            "Get", [.string(KioskWire.managerInterface), .string(name)], interface: "org.freedesktop.DBus.Properties"
        ).first
        if case .variant(let inner) = value { return inner }
        return value
    }
}

enum Tools {
    static let busctl = "/usr/bin/busctl"
    static let gdbus = "/usr/bin/gdbus"
    static let dbusSend = "/usr/bin/dbus-send"
    static let python = "/usr/bin/python3"  // Debian's, which has python3-dbus
    static let setpriv = "/usr/bin/setpriv"
}

/// python3-dbus (Debian's `/usr/bin/python3`) against the manager on a private bus.
enum Python {
    /// What every script starts with: `bus` (a connection to the address in `argv[1]`), `obj`,
    /// `m` (the manager interface), `props`, a GLib main loop as dbus-python's default, and
    /// `error_name(f, *args)` ("ok" or the D-Bus error name of the call). Further arguments are
    /// `sys.argv[2:]`.
    static let preamble = """
        import sys, time, dbus
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        obj = bus.get_object("\(KioskWire.busName)", "\(KioskWire.objectPath)")
        m = dbus.Interface(obj, "\(KioskWire.managerInterface)")
        props = dbus.Interface(obj, "org.freedesktop.DBus.Properties")
        def error_name(f, *args):
            try:
                f(*args)
                return "ok"
            except dbus.DBusException as e:
                return e.get_dbus_name()

        """

    /// Runs `script` after the preamble, as root or (through `setpriv`) as `uid`.
    static func run(
        _ script: String, bus: PrivateBus, as uid: UInt32? = nil, arguments: [String] = [],
        timeout: Duration = .seconds(30)
    ) throws -> ToolOutput {
        let argv = ["-c", preamble + script, bus.address] + arguments
        guard let uid else { return try runTool(Tools.python, argv, timeout: timeout) }
        return try runTool(
            Tools.setpriv, ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", Tools.python] + argv,
            timeout: timeout)
    }
}

/// A long-running tool (a bus monitor) whose stdout and stderr go to a file the test polls.
final class BackgroundTool {
    let logPath: String
    private let process: ChildProcess

    init(_ path: String, _ arguments: [String], directory: URL) throws {
        logPath =
            directory.appendingPathComponent(
                "\(URL(fileURLWithPath: path).lastPathComponent)-\(UUID().uuidString.prefix(6)).log"
            ).path
        let fd = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(fd) }
        process = try ChildProcess.spawn(path, arguments, stdout: fd, stderr: fd)
    }

    deinit { stop() }

    var output: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Polls until the output satisfies `condition`; returns whether it did within `timeout`.
    @discardableResult
    func waitUntil(timeout: Duration = .seconds(10), _ condition: (String) -> Bool) -> Bool {
        eventually(timeout: timeout, every: .milliseconds(20)) { condition(output) }
    }

    func stop() {
        guard process.isRunning else { return }
        process.signal(SIGTERM)
        process.wait(timeout: .seconds(5))
    }
}
