import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskTestSupport

/// The built `kioskd` binary running against a `PrivateBus` (`--no-input` unless told), with a state
/// directory and a profile directory under the bus's temp dir (removed with it).
///
/// A second instance may share the first one's state directory (`sharingStateWith:`), on the
/// same bus or another: that is how tests change the state "while kioskd was down".
/// The test target must depend on the `kioskd` product so that it is built.
public final class KioskdProcess: @unchecked Sendable {
    public let bus: PrivateBus
    public let stateDirectory: URL
    public let profileDirectory: URL
    /// Its `--runtime-dir`: what `RuntimeDirectory=` is, emptied at every boot. Shared with the
    /// instance it shares the state with (the same boot); ``simulateReboot()`` empties it.
    public let runtimeDirectory: URL
    public let logPath: String
    public private(set) var process: ChildProcess?

    public static var binary: String { BuildProducts.path(of: "kioskd") }

    /// The passcode of `writeTestProfile` (and of the `policies/` examples): "1234".
    public static let passcode = "1234"
    /// `mkpasswd -m yescrypt 1234`, as in `policies/museum-map.toml`.
    public static let passcodeHash = "$y$j9T$wu5EV0ZTWsGnMUW7dRD.v/$rUAZoDJKaSqm6adNI/J85tr9e.L1CawC/ZXm0damhMC"

    public init(bus: PrivateBus, sharingStateWith other: KioskdProcess? = nil) throws {
        self.bus = bus
        let suffix = other == nil ? "" : "-\(UUID().uuidString.prefix(4))"
        stateDirectory = other?.stateDirectory ?? bus.directory.appendingPathComponent("state")
        profileDirectory = other?.profileDirectory ?? bus.directory.appendingPathComponent("profiles")
        runtimeDirectory = other?.runtimeDirectory ?? bus.directory.appendingPathComponent("run")
        logPath = bus.directory.appendingPathComponent("kioskd\(suffix).log").path
        for dir in [stateDirectory, profileDirectory] {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        }
        // Chromium's policy directory, as kioskd's package makes /etc/chromium/policies/managed
        // (Firefox's is left out: no Firefox here unless a test makes it).
        let chromium = browserDirectory.appendingPathComponent("chromium")
        try FileManager.default.createDirectory(at: chromium, withIntermediateDirectories: true)
        for dir in [browserDirectory, chromium] { chmod(dir.path, 0o755) }
    }

    /// Where this kioskd's browser policy directories and web apps' manifests are (`chromium/`,
    /// made at init, `firefox/` and `apps/`, when a test makes them).
    public var browserDirectory: URL { bus.directory.appendingPathComponent("browser-policies") }

    public var statePath: String { stateDirectory.appendingPathComponent("state.json").path }
    public var stateBytes: Data? { FileManager.default.contents(atPath: statePath) }
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Starts kioskd (`--no-input` unless `input`), with `NOTIFY_SOCKET` and `WATCHDOG_USEC`
    /// only when given; with `waitForName`, returns once it owns its name (which it takes after
    /// the state is loaded and, with `input`, the devices are taken).
    public func start(
        input: Bool = false, notify: NotifySocket? = nil, watchdog: Duration? = nil,
        waitForName: Bool = true, timeout: Duration = .seconds(60)
    ) throws {
        var environment = bus.environment
        environment["NOTIFY_SOCKET"] = notify?.path
        environment.removeValue(forKey: "WATCHDOG_PID")
        environment["WATCHDOG_USEC"] = watchdog.map {
            "\($0.components.seconds * 1_000_000 + $0.components.attoseconds / 1_000_000_000_000)"
        }
        let fd = open(logPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        defer { close(fd) }
        // The browsers' policy directories: the bus's own (absent unless a test makes them), never
        // the machine's /etc (docs/browsers.md).
        var arguments = [
            "--state-dir", stateDirectory.path, "--profile-dir", profileDirectory.path, "--runtime-dir",
            runtimeDirectory.path, "--chromium-policy-dir", browserDirectory.path + "/chromium",
            "--firefox-policy-dir", browserDirectory.path + "/firefox", "--apps-dir",
            browserDirectory.path + "/apps",
        ]
        if !input { arguments.append("--no-input") }
        process = try ChildProcess.spawn(Self.binary, arguments, environment: environment, stdout: fd, stderr: fd)
        if waitForName { try bus.waitForOwner(KioskWire.busName, timeout: timeout) }
    }

    /// What a reboot does to kioskd's runtime directory (a tmpfs): empties it. Call it while
    /// kioskd is stopped.
    public func simulateReboot() throws {
        try? FileManager.default.removeItem(at: runtimeDirectory)
    }

    /// Waits for kioskd to exit by itself; returns the exit status.
    public func waitForExit() -> Int32 {
        guard let process else { return -1 }
        self.process = nil
        return process.wait(timeout: .seconds(10))
    }

    /// Sends `signal`, waits for the exit and for the name to be free; returns the exit status.
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM) -> Int32 {
        guard let process else { return -1 }
        self.process = nil
        process.signal(signal)
        let status = process.wait(timeout: .seconds(20))
        eventually(timeout: .seconds(5), every: .milliseconds(10)) { (try? bus.hasOwner(KioskWire.busName)) != true }
        return status
    }

    deinit { stop(SIGKILL) }

    public func writeProfile(_ name: String, _ text: String) throws {
        // Private to its owner, as `make install` installs profiles: kioskd takes a passcode hash
        // only from such a file.
        let url = profileDirectory.appendingPathComponent(name + ".toml")
        try text.write(to: url, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    /// A profile `name` for `app` that presets `deny` on each of `denied`, with the passcode
    /// "1234" and optionally a time limit (`"2s"`) with warnings. `appOwner` is the uid (or
    /// user name) that may register `app` besides root (docs/profiles.md § app-owner).
    public func writeTestProfile(
        _ name: String, app: String, appOwner: String? = nil, denied: [String] = [],
        timeLimit: String? = nil, warnings: [String] = []
    ) throws {
        var text = "app = \"\(app)\"\ndescription = \"A test session\"\n"
        if let appOwner { text += "app-owner = \(UInt32(appOwner) == nil ? "\"\(appOwner)\"" : appOwner)\n" }
        if !denied.isEmpty {
            text += "[restrictions.\"\(app)\"]\n" + denied.map { "\"\($0)\" = \"deny\"\n" }.joined()
        }
        if let timeLimit {
            text += "[session]\ntime-limit = \"\(timeLimit)\"\n"
            if !warnings.isEmpty {
                text += "warnings = [" + warnings.map { "\"\($0)\"" }.joined(separator: ", ") + "]\n"
            }
        }
        text += "[passcode]\nhash = \"\(Self.passcodeHash)\"\n"
        try writeProfile(name, text)
    }
}
