import Foundation
import Glibc
import InputTestSupport
import KioskInput
import KioskTestSupport
import LinuxInput
import Logging
import SystemdKit
import Testing

// Helpers for BrokerTests: key presses, polling, timings, tools, a value shared with the loop.

/// Press and release of each key, one frame each.
func press(_ device: UInputClone, _ keys: [String]) throws {
    for name in keys { try device.write(frames: [key(name, 1), key(name, 0)]) }
}

/// Polls `probe` until it returns a value; throws naming `what` after `timeout`.
func waitFor<T>(
    _ what: String, timeout: Duration = .seconds(30), poll micros: UInt32 = 10_000, _ probe: () throws -> T?
) throws -> T {
    guard let value = try eventually(timeout: timeout, every: .microseconds(micros), probe, until: { $0 != nil }) else {
        throw HarnessError("timed out waiting for \(what)")
    }
    return value
}

func milliseconds(_ d: Duration) -> String {
    String(format: "%.1f ms", Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15)
}

/// Runs a tool and returns its stdout; a non-zero exit throws.
@discardableResult
func runTool(_ path: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw HarnessError("\(path) \(arguments) failed with \(process.terminationStatus)")
    }
    return String(decoding: data, as: UTF8.self)
}

/// A value shared between the test thread and a loop thread.
final class Locked<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
    func withLock<R>(_ body: (inout T) -> R) -> R { lock.withLock { body(&stored) } }
}
