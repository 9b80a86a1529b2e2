import BusTestSupport
import Foundation
import Glibc
import InputTestSupport
import KioskCore
import KioskInput
import KioskdProcessTestSupport
import LinuxInput
import Testing

// Helpers for KioskdVMTests: key presses, a writer of locked input, a watch for new device nodes.

/// Press and release of each key, one frame each.
func press(_ device: UInputClone, _ keys: [String]) throws {
    for name in keys { try device.write(frames: [key(name, 1), key(name, 0)]) }
}

/// Writes locked input (VOLUMEUP on the power node and the keyboard, taps in the locked corner)
/// and an allowed KEY_A, every 20 ms, on its own thread, until stopped.
final class Writer: @unchecked Sendable {
    private let keyboard: UInputClone
    private let power: UInputClone
    private let touch: UInputClone
    private let lock = NSLock()
    private var running = false
    private var frames = 0
    private let done = DispatchSemaphore(value: 0)

    init(keyboard: UInputClone, power: UInputClone, touch: UInputClone) {
        self.keyboard = keyboard
        self.power = power
        self.touch = touch
    }

    func start() {
        lock.withLock { running = true }
        Thread.detachNewThread { [self] in
            var id: Int32 = 100
            while lock.withLock({ running }) {
                var n = 0
                do {
                    try press(power, ["KEY_VOLUMEUP"])
                    try press(keyboard, ["KEY_VOLUMEUP", "KEY_A"])
                    try touch.write(frames: FakeDevice.tap(trackingID: id, x: 3950, y: 50))
                    n = 2 + 4 + 3
                } catch {
                    FileHandle.standardError.write(Data("writer: \(error)\n".utf8))
                }
                id += 1
                lock.withLock { frames += n }
                usleep(20_000)
            }
            done.signal()
        }
    }

    /// Stops and returns how many frames were written.
    func stop() -> Int {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { frames }
    }
}

/// inotify on /dev/input: the moment a node with a given phys appears.
final class NodeWatch {
    private let fd: Int32

    init() throws {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0, inotify_add_watch(fd, "/dev/input", UInt32(IN_CREATE)) >= 0 else {
            throw HarnessError("inotify on /dev/input failed: \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(fd) }

    /// Returns when a node whose phys is `phys` has been created (the time of its IN_CREATE).
    func waitForNode(phys: String, timeout: Duration) throws -> ContinuousClock.Instant {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&pfd, 1, 1000)
            let now = ContinuousClock.now
            let n = read(fd, &buffer, buffer.count)
            var offset = 0
            while n > 0 && offset < n {
                let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
                let name = String(
                    decoding: buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }, as: UTF8.self)
                offset += 16 + length
                guard name.hasPrefix("event"),
                    let device = try? EvdevDevice(path: "/dev/input/" + name, access: .readOnly)
                else { continue }
                if device.deviceDescription.phys == phys { return now }
            }
        }
        throw HarnessError("no node with phys \(phys) appeared within \(timeout)")
    }
}
