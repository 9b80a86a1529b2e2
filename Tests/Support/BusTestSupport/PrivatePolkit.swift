import Foundation
import Glibc
import KioskTestSupport

/// `polkitd` serving a `PrivateBus`, with only the test's actions and rules.
///
/// polkitd 122 reads actions only from `/usr/share/polkit-1/actions` and rules only from
/// `/etc/polkit-1/rules.d` and `/usr/share/polkit-1/rules.d`, with no option to change that. So
/// it runs in a private mount namespace (`unshare --mount --propagation private`) where two temp
/// dirs are bind-mounted over the first two: the machine's files are never touched and the
/// test's rules never leak to it. Needs root (the namespace, and polkitd drops to user
/// `polkitd`, which is why the dirs are 0755 and the files 0644) and the `polkitd` package.
/// Readiness is `org.freedesktop.PolicyKit1` owned on the bus.
public final class PrivatePolkit: @unchecked Sendable {
    public static let polkitd = "/usr/lib/polkit-1/polkitd"
    public static let busName = "org.freedesktop.PolicyKit1"

    /// The temp dir with `actions/` and `rules/`.
    public let directory: URL
    /// polkitd's stderr, for diagnosing a failed start.
    public let logPath: String
    private let process: ChildProcess
    private var stopped = false

    /// Starts polkitd against `bus` with `actions` (file name → policy XML) and `rules`
    /// (file name → JavaScript), then waits until it owns its name.
    public init(
        bus: PrivateBus, actions: [String: String], rules: [String: String],
        timeout: Duration = .seconds(20)
    ) throws {
        guard getuid() == 0 else {
            throw HarnessError("PrivatePolkit needs root (mount namespace, polkitd's user switch); uid is \(getuid()).")
        }
        guard access(Self.polkitd, X_OK) == 0 else {
            throw HarnessError("\(Self.polkitd) is missing: install the polkitd package.")
        }
        directory = bus.directory.appendingPathComponent("polkit")
        let actionsDir = directory.appendingPathComponent("actions")
        let rulesDir = directory.appendingPathComponent("rules")
        for dir in [directory, actionsDir, rulesDir] {
            try FileManager.default.createDirectory(
                at: dir, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o755])
        }
        for (name, text) in actions { try Self.write(text, to: actionsDir.appendingPathComponent(name)) }
        for (name, text) in rules { try Self.write(text, to: rulesDir.appendingPathComponent(name)) }

        logPath = directory.appendingPathComponent("polkitd.log").path
        let log = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(log) }
        let script = """
            set -e
            mount --bind "$1" /usr/share/polkit-1/actions
            mount --bind "$2" /etc/polkit-1/rules.d
            exec \(Self.polkitd) --no-debug
            """
        var env = bus.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        process = try ChildProcess.spawn(
            "/usr/bin/unshare",
            [
                "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh",
                actionsDir.path, rulesDir.path,
            ], environment: env, stdout: log, stderr: log)
        do {
            let owned = { try bus.hasOwner(Self.busName) }
            guard try eventually(timeout: timeout, every: .milliseconds(20), { try owned() || !process.isRunning }),
                try owned()
            else {
                let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                throw HarnessError("polkitd did not take \(Self.busName) on \(bus.address); its output: \(text)")
            }
        } catch {
            process.signal(SIGKILL)
            process.wait(timeout: .seconds(2))
            throw error
        }
    }

    deinit { stop() }

    public func stop() {
        guard !stopped else { return }
        stopped = true
        process.signal(SIGTERM)
        process.wait(timeout: .seconds(5))
    }

    private static func write(_ text: String, to url: URL) throws {
        try text.write(to: url, atomically: false, encoding: .utf8)
        chmod(url.path, 0o644)
    }
}
