import BusTestSupport
import Foundation
import Glibc
import InputTestSupport
import KioskCore
import KioskTestSupport
import KioskdProcessTestSupport
import SystemdKit

/// The built `kioskd` on a `PrivateBus` (`KioskdProcessTestSupport.KioskdProcess`); these tests start
/// it with `input: true`, brokering the machine's input devices.
typealias KioskdUnderTest = KioskdProcess

extension KioskdProcess {
    static let busctl = "/usr/bin/busctl"
    static let python = "/usr/bin/python3"  // Debian's: python3-dbus, python3-evdev, python3-gi

    // MARK: Talking to it

    /// `busctl --address=… ARGS`; a failure throws with busctl's stderr.
    @discardableResult
    func busctl(_ arguments: [String]) throws -> String {
        let out = try runTool(Self.busctl, ["--address=\(bus.address)"] + arguments, timeout: .seconds(60))
        guard out.status == 0 else { throw HarnessError("busctl \(arguments) failed (\(out.status)): \(out.stderr)") }
        return out.stdout
    }

    /// Calls a manager method with busctl (as root, so polkit is not asked).
    @discardableResult
    func call(_ member: String, _ signature: String = "", _ arguments: [String] = []) throws -> String {
        var args = ["call", KioskWire.busName, KioskWire.objectPath, KioskWire.managerInterface, member]
        if !signature.isEmpty { args += [signature] + arguments }
        return try busctl(args)
    }

    /// A manager property as busctl prints it, e.g. `s "active"`.
    func property(_ name: String) throws -> String {
        try busctl(["get-property", KioskWire.busName, KioskWire.objectPath, KioskWire.managerInterface, name])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `EndSession(passcode)` through SystemdKit, so the passcode is in no process's argv.
    func endSession(passcode: String) throws {
        let client = try Bus.open(address: bus.address)
        defer { client.close() }
        let m = try client.makeMethodCall(
            destination: KioskWire.busName, path: KioskWire.objectPath,
            interface: KioskWire.managerInterface, member: KioskWire.Member.endSession)
        try m.append(.string(passcode))
        _ = try client.callBlocking(m, timeout: .seconds(60))
    }
}

/// A child process whose stdout lines are collected as they come (python3-dbus listeners).
final class LineCollector: @unchecked Sendable {
    private let process = Process()
    private let output = Pipe()
    private let lock = NSLock()
    private var collected: [String] = []

    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = output
        try process.run()
        forEachLine(of: output.fileHandleForReading) { [self] line in lock.withLock { collected.append(line) } }
    }

    deinit { stop() }

    var lines: [String] { lock.withLock { collected } }

    /// Waits until `condition` holds for the lines so far.
    @discardableResult
    func wait(_ what: String, timeout: Duration = .seconds(60), _ condition: ([String]) -> Bool) throws -> [String] {
        let seen = eventually(timeout: timeout, every: .milliseconds(10)) { lines } until: {
            condition($0) || !process.isRunning
        }
        // A collector whose process exited may still have read its last lines.
        let last = condition(seen) ? seen : lines
        guard condition(last) else { throw HarnessError("timed out waiting for \(what); lines: \(last.suffix(10))") }
        return last
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// python3-dbus, listening for `ExitRequested`: prints "ready" once its match is in place,
/// then "ExitRequested" per signal.
func exitRequestedListener(address: String) throws -> LineCollector {
    try signalListener(
        address: address, member: "ExitRequested", interface: "org.kioskd.GuidedAccess1.Manager",
        line: #""ExitRequested""#)
}

/// python3-dbus printing a line for each `member` signal of `interface`: `line`, a Python
/// expression over the signal's arguments `args`. Returns once the match is in place.
func signalListener(address: String, member: String, interface: String, line: String) throws -> LineCollector {
    let script = """
        import sys, dbus
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        def seen(*args):
            print(\(line), flush=True)
        bus.add_signal_receiver(seen, "\(member)", "\(interface)")
        bus.get_name_owner("org.freedesktop.DBus")  # a round trip: the match is in place
        print("ready", flush=True)
        GLib.MainLoop().run()
        """
    let listener = try LineCollector(KioskdUnderTest.python, ["-c", script, address])
    try listener.wait("the \(member) listener") { $0.contains("ready") }
    return listener
}

/// The yescrypt hash of the demo passcode "1234" (as in `policies/`).
let demoPasscodeHash = "$y$j9T$wu5EV0ZTWsGnMUW7dRD.v/$rUAZoDJKaSqm6adNI/J85tr9e.L1CawC/ZXm0damhMC"
