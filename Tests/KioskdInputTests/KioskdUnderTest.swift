import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskTestSupport
import SystemdKit

/// The built `kioskd` on a `PrivateBus`, with its own temp state and profile directories, and
/// (unless told `--no-input`) brokering the machine's input devices.
final class KioskdUnderTest: @unchecked Sendable {
    let bus: PrivateBus
    let stateDirectory: URL
    let profileDirectory: URL
    let logPath: String
    private(set) var process: ChildProcess?

    static var binary: String { BuildProducts.path(of: "kioskd") }
    static let busctl = "/usr/bin/busctl"
    static let python = "/usr/bin/python3"  // Debian's: python3-dbus, python3-evdev, python3-gi

    init(bus: PrivateBus) throws {
        self.bus = bus
        stateDirectory = bus.directory.appendingPathComponent("state")
        profileDirectory = bus.directory.appendingPathComponent("profiles")
        logPath = bus.directory.appendingPathComponent("kioskd.log").path
        for dir in [stateDirectory, profileDirectory] {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        }
    }

    deinit { stop(SIGKILL) }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Starts kioskd; returns once it owns its name (which it takes after it has taken the devices).
    func start(input: Bool = true) throws {
        var env = bus.environment
        env.removeValue(forKey: "NOTIFY_SOCKET")
        env.removeValue(forKey: "WATCHDOG_USEC")
        let fd = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        defer { close(fd) }
        var arguments = ["--state-dir", stateDirectory.path, "--profile-dir", profileDirectory.path]
        if !input { arguments.append("--no-input") }
        process = try ChildProcess.spawn(Self.binary, arguments, environment: env, stdout: fd, stderr: fd)
        try bus.waitForOwner(KioskAPI.busName, timeout: .seconds(60))
    }

    /// Sends `signal` and returns the exit status (128+signal when killed).
    @discardableResult
    func stop(_ signal: Int32 = SIGTERM) -> Int32 {
        guard let process else { return -1 }
        self.process = nil
        process.signal(signal)
        return process.wait(timeout: .seconds(20))
    }

    func writeProfile(_ name: String, _ text: String) throws {
        try text.write(to: profileDirectory.appendingPathComponent(name + ".toml"), atomically: true, encoding: .utf8)
    }

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
        var args = ["call", KioskAPI.busName, KioskAPI.objectPath, KioskAPI.managerInterface, member]
        if !signature.isEmpty { args += [signature] + arguments }
        return try busctl(args)
    }

    /// A manager property as busctl prints it, e.g. `s "active"`.
    func property(_ name: String) throws -> String {
        try busctl(["get-property", KioskAPI.busName, KioskAPI.objectPath, KioskAPI.managerInterface, name])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `EndSession(passcode)` through SystemdKit, so the passcode is in no process's argv.
    func endSession(passcode: String) throws {
        let client = try Bus.open(address: bus.address)
        defer { client.close() }
        let m = try client.makeMethodCall(destination: KioskAPI.busName, path: KioskAPI.objectPath,
                                          interface: KioskAPI.managerInterface, member: KioskAPI.Member.endSession)
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
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { return }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    lock.withLock { collected.append(line) }
                }
            }
        }
    }

    deinit { stop() }

    var lines: [String] { lock.withLock { collected } }

    /// Waits until `condition` holds for the lines so far.
    @discardableResult
    func wait(_ what: String, timeout: Duration = .seconds(60), _ condition: ([String]) -> Bool) throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let now = lines
            if condition(now) { return now }
            guard ContinuousClock.now < deadline, process.isRunning else {
                throw HarnessError("timed out waiting for \(what); lines: \(now.suffix(10))")
            }
            usleep(10_000)
        }
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// python3-dbus, listening for `ExitRequested`: prints "ready" once its match is in place,
/// then "ExitRequested" per signal.
func exitRequestedListener(address: String) throws -> LineCollector {
    let script = """
        import sys, dbus
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        def seen(*args):
            print("ExitRequested", flush=True)
        bus.add_signal_receiver(seen, "ExitRequested", "org.kioskd.GuidedAccess1.Manager")
        bus.get_name_owner("org.freedesktop.DBus")  # a round trip: the match is in place
        print("ready", flush=True)
        GLib.MainLoop().run()
        """
    let listener = try LineCollector(KioskdUnderTest.python, ["-c", script, address])
    try listener.wait("the ExitRequested listener") { $0.contains("ready") }
    return listener
}

/// The yescrypt hash of the demo passcode "1234" (as in `policies/`).
let demoPasscodeHash = "$y$j9T$wu5EV0ZTWsGnMUW7dRD.v/$rUAZoDJKaSqm6adNI/J85tr9e.L1CawC/ZXm0damhMC"
