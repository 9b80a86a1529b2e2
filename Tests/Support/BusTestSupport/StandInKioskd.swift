import Foundation
import Glibc
import KioskTestSupport

/// Tests/Support/stand-in-kioskd on a private bus: kioskd's name and the Manager's properties,
/// changed and signalled as the test says. For the display side of the passcode prompt (the
/// `Prompt*` properties, `PromptClosed`), which the real kioskd only publishes from its input
/// broker; the daemon's own tests cover kioskd itself.
public final class StandInKioskd: @unchecked Sendable {
    private let process: ChildProcess
    /// The write end of the stand-in's stdin; closing it ends the stand-in.
    private var control: Int32
    private let output: String

    /// Starts the stand-in on `bus` and returns once it owns kioskd's name.
    public init(bus: PrivateBus) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("stand-in-kioskd").path
        output = bus.directory.appendingPathComponent("stand-in-\(UUID().uuidString.prefix(8)).out").path
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw HarnessError("pipe failed") }
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)  // the stand-in must not hold its own stdin open
        let out = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(out) }
        process = try ChildProcess.spawn(
            "/usr/bin/python3", [script, bus.address], stdin: fds[0], stdout: out, stderr: out)
        close(fds[0])
        control = fds[1]
        guard eventually(every: .milliseconds(10), { log.hasPrefix("ready") || !process.isRunning }),
            log.hasPrefix("ready")
        else {
            stop()
            throw HarnessError("stand-in-kioskd did not start: \(log)")
        }
    }

    deinit { stop() }

    /// What the stand-in printed ("ready", and Python's errors).
    public var log: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

    /// Changes properties (one `PropertiesChanged`), e.g. `["PromptState": "open", "PromptLength": 2]`.
    public func set(_ properties: [String: any Sendable]) throws {
        try send(["set": properties])
    }

    /// Emits a signal of the Manager, e.g. `("PromptClosed", ["rejected"])`.
    public func emit(_ member: String, _ arguments: [any Sendable] = []) throws {
        try send(["signal": member, "args": arguments])
    }

    /// From now on `GetAll` is not answered: the caller's call stays in flight (the log says
    /// "GetAll held" for each) until ``answerGetAll()``.
    public func holdGetAll() throws {
        try send(["hold": true])
    }

    /// Answers the `GetAll` calls held, and each one from now on.
    public func answerGetAll() throws {
        try send(["hold": false])
    }

    /// `PropertiesChanged` invalidating `properties` (a client reads them again, with `GetAll`).
    public func invalidate(_ properties: [String]) throws {
        try send(["invalidate": properties])
    }

    private func send(_ command: [String: Any]) throws {
        var line = try JSONSerialization.data(withJSONObject: command)
        line.append(UInt8(ascii: "\n"))
        let written = line.withUnsafeBytes { write(control, $0.baseAddress, $0.count) }
        guard written == line.count else { throw HarnessError("stand-in-kioskd is gone: \(log)") }
    }

    /// Ends the stand-in (EOF on its stdin), so kioskd's name has no owner again.
    public func stop() {
        guard control >= 0 else { return }
        close(control)
        control = -1
        process.wait(timeout: .seconds(5))
    }
}
