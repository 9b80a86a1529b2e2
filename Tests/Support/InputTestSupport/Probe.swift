import Foundation
import Glibc
import KioskInput
import KioskTestSupport

// Support for the tests that need a real kernel: root, /dev/uinput and evdev.
// They run inside the VM (`make test-vm` sets KIOSKD_VM_TESTS=1 there) and are
// skipped, saying so, everywhere else.

public enum VM {
    public static let isEnabled = ProcessInfo.processInfo.environment["KIOSKD_VM_TESTS"] == "1"
    public static let skipMessage =
        "needs root, /dev/uinput and a real kernel: runs inside the VM through `make test-vm`"

    /// Tests/VM, found from this file (the guest sees the host's tree at the same path).
    public static let toolsDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("VM")
}

/// One event as `evdev-probe.py` printed it, with the phys of the node it came from.
public struct SeenEvent: Hashable, CustomStringConvertible, Sendable {
    public var path: String
    public var type: UInt16
    public var code: UInt16
    public var value: Int32
    /// The phys of the node when it delivered the event (`kioskd-clone/…` for a clone).
    public var phys: String

    public init(path: String, type: UInt16, code: UInt16, value: Int32, phys: String = "") {
        self.path = path
        self.type = type
        self.code = code
        self.value = value
        self.phys = phys
    }

    /// `KEY_A 1`.
    public var description: String {
        "\(EventCodes.name(type: type, code: code) ?? "\(type):\(code)") \(value)"
    }
}

/// `Tests/VM/evdev-probe.py`: python-evdev looking at the nodes, so that what
/// LinuxInput creates is checked by code no one here wrote.
public enum Probe {
    public static let python = "/usr/bin/python3"  // Debian's, which has python3-evdev
    public static var script: String { VM.toolsDirectory.appendingPathComponent("evdev-probe.py").path }

    /// The JSON descriptions of the nodes (name, phys, id, props, codes, abs).
    public static func describe(_ paths: [String]) throws -> [[String: Any]] {
        let reader = try Reader(arguments: ["describe"] + paths)
        let output = try reader.finish()
        return try output.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    public static func setLED(_ path: String, code: UInt16, value: Int32) throws {
        _ = try Reader(arguments: ["set-led", path, "\(code)", "\(value)"]).finish()
    }

    /// A running `evdev-probe.py` and its stdout.
    public final class Reader {
        let process = Process()
        private let pipe = Pipe()
        private var output = Data()

        public init(arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: Probe.python)
            process.arguments = [Probe.script] + arguments
            process.standardOutput = pipe
            try process.run()
        }

        /// Starts `read` on the nodes and returns once they are all open.
        public static func read(_ paths: [String], idle: Double) throws -> Reader {
            let reader = try Reader(arguments: ["read", "--idle", "\(idle)", "--max", "120"] + paths)
            try reader.waitForLine("ready", timeout: 120)
            return reader
        }

        public func waitForLine(_ line: String, timeout: Double) throws {
            let fd = pipe.fileHandleForReading.fileDescriptor
            let deadline = ContinuousClock.now + .seconds(timeout)
            while !String(decoding: output, as: UTF8.self).split(separator: "\n").contains(Substring(line)) {
                guard ContinuousClock.now < deadline else { throw ProbeError("no '\(line)' from evdev-probe.py") }
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&pfd, 1, 1000)
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = Glibc.read(fd, &chunk, chunk.count)
                if n == 0 { throw ProbeError("evdev-probe.py ended before '\(line)'") }
                if n > 0 { output.append(contentsOf: chunk[..<n]) }
            }
        }

        /// Waits for the process to end and returns all it printed.
        public func finish() throws -> String {
            output.append(pipe.fileHandleForReading.readDataToEndOfFile())
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw ProbeError("evdev-probe.py \(process.arguments ?? []) failed with \(process.terminationStatus)")
            }
            return String(decoding: output, as: UTF8.self)
        }

        /// The events of a `read`, once it has ended.
        public func events() throws -> [SeenEvent] {
            try finish().split(separator: "\n").compactMap { line in
                let f = line.split(separator: " ")
                guard f.count == 4, let t = UInt16(f[1]), let c = UInt16(f[2]), let v = Int32(f[3]) else { return nil }
                return SeenEvent(path: String(f[0]), type: t, code: c, value: v)
            }
        }
    }

    /// `evdev-probe.py watch`: a long-running reader of every kioskd clone that appears (and of
    /// the nodes given, to spy on physical devices), whose lines are collected as they come.
    public final class Watcher: @unchecked Sendable {
        /// A node as it was opened: its path and phys at the time.
        public struct Node: Hashable, Sendable {
            public var path: String
            public var phys: String
            public var name: String
        }

        private let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        private let lock = NSLock()
        private var lines: [String] = []
        private var events: [SeenEvent] = []
        private var opened: [Node] = []
        private var gone: [String] = []
        private var current: [String: String] = [:]  // path → phys
        private var marks = 0
        private let start = ContinuousClock.now

        /// Starts watching; returns once the given nodes are open and the first scan is done.
        public init(spying paths: [String] = []) throws {
            process.executableURL = URL(fileURLWithPath: Probe.python)
            process.arguments = [Probe.script, "watch"] + paths
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            forEachLine(of: output.fileHandleForReading) { [self] line in lock.withLock { take(line) } }
            try wait("evdev-probe.py watch to start", timeout: .seconds(60)) { $0.lines.contains("ready") }
        }

        deinit {
            if process.isRunning { process.terminate() }
        }

        private func take(_ line: String) {
            lines.append(line)
            let f = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
            switch f.first {
            case "open" where f.count >= 3:
                current[f[1]] = f[2]
                opened.append(Node(path: f[1], phys: f[2], name: f.count > 3 ? f[3] : ""))
            case "gone" where f.count >= 2:
                current[f[1]] = nil
                gone.append(f[1])
            default:
                if f.count == 4, f[0].hasPrefix("/"), let t = UInt16(f[1]), let c = UInt16(f[2]), let v = Int32(f[3]) {
                    events.append(SeenEvent(path: f[0], type: t, code: c, value: v, phys: current[f[0]] ?? ""))
                }
            }
        }

        /// What has been collected so far.
        public struct Snapshot {
            public var lines: [String]
            public var events: [SeenEvent]
            public var opened: [Node]
            public var gone: [String]
            /// The nodes open now (opened and not gone), by phys.
            public var openNow: [String: String]
        }

        public var snapshot: Snapshot {
            lock.withLock {
                Snapshot(
                    lines: lines, events: events, opened: opened, gone: gone,
                    openNow: Dictionary(current.map { ($0.value, $0.key) }, uniquingKeysWith: { $1 }))
            }
        }

        /// Waits until `condition` holds for what was collected; throws naming `what` after `timeout`.
        @discardableResult
        public func wait(
            _ what: String, timeout: Duration = .seconds(30), _ condition: (Snapshot) -> Bool
        ) throws -> Snapshot {
            let seen = eventually(timeout: timeout) { snapshot } until: {
                condition($0) || !(process.isRunning || $0.lines.contains("end"))
            }
            guard condition(seen) else {
                throw ProbeError("timed out waiting for \(what); last lines: \(seen.lines.suffix(12))")
            }
            return seen
        }

        /// The path of the clone whose source has `sourcePhys`, once the watcher has it open.
        public func clone(of sourcePhys: String, timeout: Duration = .seconds(30)) throws -> String {
            let phys = "kioskd-clone/" + sourcePhys
            return try wait("the clone of \(sourcePhys)", timeout: timeout) { $0.openNow[phys] != nil }.openNow[phys]!
        }

        /// Returns once the watcher has read everything its nodes had when the mark arrived.
        public func sync() throws {
            let n = lock.withLock {
                marks += 1; return marks
            }
            input.fileHandleForWriting.write(Data("mark \(n)\n".utf8))
            try wait("mark \(n)") { $0.lines.contains("mark \(n)") }
        }

        /// Seconds since the watcher started (for messages).
        public var elapsed: Duration { ContinuousClock.now - start }

        /// Stops the watcher.
        public func stop() {
            input.fileHandleForWriting.write(Data("quit\n".utf8))
            eventually(every: .milliseconds(10)) { !process.isRunning }
            if process.isRunning { process.terminate() }
        }
    }

    /// `evdev-probe.py grab`: another process (python-evdev) holding a node's grab, as a
    /// second remapper or `evtest --grab` would, and the events it reads meanwhile.
    public final class Holder: @unchecked Sendable {
        private let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        private let lock = NSLock()
        private var lines: [String] = []

        /// Starts the holder; returns once it holds the grab of `path`.
        public init(grabbing path: String) throws {
            process.executableURL = URL(fileURLWithPath: Probe.python)
            process.arguments = [Probe.script, "grab", path]
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            forEachLine(of: output.fileHandleForReading) { [self] line in lock.withLock { lines.append(line) } }
            try wait(for: "grabbed")
        }

        deinit {
            if process.isRunning { process.terminate() }
        }

        /// Events it read, as `KEY_A 1`.
        public var events: [String] {
            lock.withLock { lines }.compactMap { line in
                let f = line.split(separator: " ")
                guard f.count == 4, let t = UInt16(f[1]), let c = UInt16(f[2]), let v = Int32(f[3]) else { return nil }
                return SeenEvent(path: String(f[0]), type: t, code: c, value: v).description
            }
        }

        /// Lets go of the grab (the node stays open, and read).
        public func release() throws {
            input.fileHandleForWriting.write(Data("release\n".utf8))
            try wait(for: "released")
        }

        public func stop() {
            input.fileHandleForWriting.write(Data("quit\n".utf8))
            eventually(every: .milliseconds(10)) { !process.isRunning }
            if process.isRunning { process.terminate() }
        }

        private func wait(for line: String) throws {
            let seen = { self.lock.withLock { self.lines.contains(line) } }
            guard eventually(timeout: .seconds(60), { seen() || !process.isRunning }), seen() else {
                throw ProbeError("evdev-probe.py grab: no \"\(line)\"; lines: \(lock.withLock { lines.suffix(8) })")
            }
        }
    }

    public struct ProbeError: Error, CustomStringConvertible {
        public var message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }
}

extension Sequence where Element == SeenEvent {
    /// Key events (`KEY_A 1`, …) from nodes whose phys is `phys`.
    ///
    /// Autorepeats (value 2) are left out: the kernel makes them on a clone (it has `EV_REP`) for a
    /// key held past the repeat delay, 250 ms, which a loaded machine can take between a press and
    /// the test's next step; they are no decision of kioskd's filter.
    public func keys(phys: String) -> [String] {
        filter { $0.phys == phys && $0.type == type("EV_KEY") && $0.value != 2 }.map(\.description)
    }

    /// Every event but `SYN_*` from nodes whose phys is `phys`.
    public func nonSync(phys: String) -> [String] {
        filter { $0.phys == phys && $0.type != type("EV_SYN") }.map(\.description)
    }
}

/// Calls `body` with each line `handle` reads (without its newline), on a thread of its own,
/// until the end of the input: a child process's output, collected as it comes.
public func forEachLine(of handle: FileHandle, _ body: @escaping @Sendable (String) -> Void) {
    Thread.detachNewThread {
        var buffer = Data()
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { return }
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                body(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                buffer.removeSubrange(buffer.startIndex...newline)
            }
        }
    }
}
