import Foundation
import Glibc

/// A child process started with `posix_spawn` and a clean signal mask.
///
/// Foundation's `Process`, started from a Swift concurrency thread, passes that thread's blocked
/// signals on: a `dbus-daemon` started that way ignores SIGTERM and never exits.
public struct ChildProcess: Sendable {
    public let pid: pid_t

    /// Starts `path` with `arguments`; stdin/stdout/stderr come from the given fds (or /dev/null).
    /// `extraFiles` maps a child's fd number (3 and up) to the parent's fd it gets, as Chromium's
    /// `--remote-debugging-pipe` wants its fds 3 and 4; `processGroup` puts the child in a new
    /// process group of its own (its pid), so that it and everything it starts can be killed at once.
    public static func spawn(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil,
        stdin: Int32? = nil, stdout: Int32? = nil, stderr: Int32? = nil,
        extraFiles: [Int32: Int32] = [:], processGroup: Bool = false
    ) throws -> ChildProcess {
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if processGroup {
            flags |= POSIX_SPAWN_SETPGROUP
            posix_spawnattr_setpgroup(&attr, 0)
        }
        posix_spawnattr_setflags(&attr, Int16(flags))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let fd = stdin {
            posix_spawn_file_actions_adddup2(&actions, fd, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let fd = stdout {
            posix_spawn_file_actions_adddup2(&actions, fd, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        if let fd = stderr {
            posix_spawn_file_actions_adddup2(&actions, fd, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        for (child, parent) in extraFiles.sorted(by: { $0.key < $1.key }) {
            posix_spawn_file_actions_adddup2(&actions, parent, child)
        }

        let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0)=\($1)" }
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attr, &argv, &envp)
        guard rc == 0 else { throw HarnessError("posix_spawn \(path) failed: \(String(cString: strerror(rc)))") }
        return ChildProcess(pid: pid)
    }

    /// Sends `signal`.
    public func signal(_ signal: Int32 = SIGTERM) { kill(pid, signal) }

    /// Whether it still runs: it exists and has not exited. A child that exited and was not yet
    /// waited for is a zombie, which `kill(pid, 0)` still finds: its state in `/proc/PID/stat`
    /// (the field after the parenthesised name) says `Z`. It is not reaped here, so ``wait(timeout:)``
    /// still gets its status.
    public var isRunning: Bool {
        guard kill(pid, 0) == 0 else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")"),
            let state = stat[close...].dropFirst(2).first
        else { return false }
        return state != "Z" && state != "X"
    }

    /// Waits for the exit, SIGKILLing after `timeout`; returns the exit status, or 128+signal.
    @discardableResult
    public func wait(timeout: Duration = .seconds(10)) -> Int32 {
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 { return -1 }
            if ContinuousClock.now > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                break
            }
            usleep(5_000)
        }
        let sig = status & 0x7f
        return sig == 0 ? (status >> 8) & 0xff : 128 + sig
    }
}

/// The result of running a short-lived tool.
public struct ToolOutput: Sendable, CustomStringConvertible {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
}

/// Runs `path` with `arguments` to completion and collects its output (via temp files, so a
/// chatty tool never blocks on a full pipe). `input`, when given, is its stdin (else /dev/null).
public func runTool(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil,
    input: String? = nil, timeout: Duration = .seconds(20)
) throws -> ToolOutput {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    var inputFD: Int32?
    if let input {
        let inputPath = dir.appendingPathComponent("in").path
        try input.write(toFile: inputPath, atomically: false, encoding: .utf8)
        inputFD = open(inputPath, O_RDONLY | O_CLOEXEC)
    }
    let out = open(dir.appendingPathComponent("out").path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    let err = open(dir.appendingPathComponent("err").path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
    let child = try ChildProcess.spawn(
        path, arguments, environment: environment, stdin: inputFD, stdout: out, stderr: err)
    if let inputFD { close(inputFD) }
    close(out)
    close(err)
    let status = child.wait(timeout: timeout)
    func text(_ name: String) -> String {
        (try? String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }
    return ToolOutput(status: status, stdout: text("out"), stderr: text("err"))
}

/// A harness failure, with a sentence saying what went wrong.
public struct HarnessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
