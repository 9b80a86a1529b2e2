import Foundation
import Glibc
import KioskInput
import LinuxInput
import Testing

// Support for the tests that need a real kernel: root, /dev/uinput and evdev.
// They run inside the VM (`make test-vm` sets KIOSKD_VM_TESTS=1 there) and are
// skipped, saying so, everywhere else.

enum VM {
    static let isEnabled = ProcessInfo.processInfo.environment["KIOSKD_VM_TESTS"] == "1"
    static let skipMessage = "needs root, /dev/uinput and a real kernel: runs inside the VM through `make test-vm`"

    /// Tests/VM, found from this file (the guest sees the host's tree at the same path).
    static let toolsDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("VM")
}


/// One event as `evdev-probe.py read` printed it.
struct SeenEvent: Hashable, CustomStringConvertible {
    var path: String
    var type: UInt16
    var code: UInt16
    var value: Int32

    var description: String {
        "\(EventCodes.name(type: type, code: code) ?? "\(type):\(code)") \(value)"
    }
}

/// `Tests/VM/evdev-probe.py`: python-evdev looking at the nodes, so that what
/// LinuxInput creates is checked by code no one here wrote.
enum Probe {
    static let python = "/usr/bin/python3"  // Debian's, which has python3-evdev
    static var script: String { VM.toolsDirectory.appendingPathComponent("evdev-probe.py").path }

    /// The JSON descriptions of the nodes (name, phys, id, props, codes, abs).
    static func describe(_ paths: [String]) throws -> [[String: Any]] {
        let reader = try Reader(arguments: ["describe"] + paths)
        let output = try reader.finish()
        return try output.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    static func setLED(_ path: String, code: UInt16, value: Int32) throws {
        _ = try Reader(arguments: ["set-led", path, "\(code)", "\(value)"]).finish()
    }

    /// A running `evdev-probe.py` and its stdout.
    final class Reader {
        let process = Process()
        private let pipe = Pipe()
        private var output = Data()

        init(arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: Probe.python)
            process.arguments = [Probe.script] + arguments
            process.standardOutput = pipe
            try process.run()
        }

        /// Starts `read` on the nodes and returns once they are all open.
        static func read(_ paths: [String], idle: Double) throws -> Reader {
            let reader = try Reader(arguments: ["read", "--idle", "\(idle)", "--max", "120"] + paths)
            try reader.waitForLine("ready", timeout: 120)
            return reader
        }

        func waitForLine(_ line: String, timeout: Double) throws {
            let fd = pipe.fileHandleForReading.fileDescriptor
            let deadline = ContinuousClock.now + .seconds(timeout)
            while !String(decoding: output, as: UTF8.self).split(separator: "\n").contains(Substring(line)) {
                guard ContinuousClock.now < deadline else { throw ProbeError(message: "no '\(line)' from evdev-probe.py") }
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&pfd, 1, 1000)
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = Glibc.read(fd, &chunk, chunk.count)
                if n == 0 { throw ProbeError(message: "evdev-probe.py ended before '\(line)'") }
                if n > 0 { output.append(contentsOf: chunk[..<n]) }
            }
        }

        /// Waits for the process to end and returns all it printed.
        func finish() throws -> String {
            output.append(pipe.fileHandleForReading.readDataToEndOfFile())
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw ProbeError(message: "evdev-probe.py \(process.arguments ?? []) failed with \(process.terminationStatus)")
            }
            return String(decoding: output, as: UTF8.self)
        }

        /// The events of a `read`, once it has ended.
        func events() throws -> [SeenEvent] {
            try finish().split(separator: "\n").compactMap { line in
                let f = line.split(separator: " ")
                guard f.count == 4, let t = UInt16(f[1]), let c = UInt16(f[2]), let v = Int32(f[3]) else { return nil }
                return SeenEvent(path: String(f[0]), type: t, code: c, value: v)
            }
        }
    }

    struct ProbeError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

/// Fake physical devices, created through /dev/uinput as a driver would.
enum FakeDevice {
    static func keyboard() -> DeviceInfo {
        var caps = DeviceCapabilities()
        caps.codes[type("EV_KEY")] = Set(["KEY_ESC", "KEY_A", "KEY_B", "KEY_LEFTCTRL", "KEY_LEFTALT", "KEY_F1", "KEY_F2",
                                          "KEY_BACKSPACE", "KEY_DELETE", "KEY_SYSRQ", "KEY_CAPSLOCK"].map(code))
        caps.codes[type("EV_MSC")] = [code("MSC_SCAN")]
        caps.codes[type("EV_LED")] = [code("LED_NUML"), code("LED_CAPSL"), code("LED_SCROLLL")]
        caps.codes[type("EV_REP")] = [0, 1]  // REP_DELAY, REP_PERIOD
        return DeviceInfo(name: "kioskd test keyboard", phys: "kioskd-vm-test/keyboard",
                          id: InputDeviceID(bustype: 0x03, vendor: 0x046d, product: 0xc31c, version: 0x0111),
                          capabilities: caps)
    }

    static func powerButton() -> DeviceInfo {
        var caps = DeviceCapabilities()
        caps.codes[type("EV_KEY")] = [code("KEY_POWER"), code("KEY_VOLUMEUP"), code("KEY_VOLUMEDOWN")]
        return DeviceInfo(name: "Power Button", phys: "LNXPWRBN/button/input0",
                          id: InputDeviceID(bustype: 0x19, vendor: 0, product: 1, version: 0),
                          capabilities: caps)
    }

    static func touchscreen() -> DeviceInfo {
        var caps = DeviceCapabilities()
        caps.codes[type("EV_KEY")] = [code("BTN_TOUCH")]
        let axes: [(String, AbsoluteAxis)] = [
            ("ABS_X", AbsoluteAxis(minimum: 0, maximum: 4095, fuzz: 4, resolution: 16)),
            ("ABS_Y", AbsoluteAxis(minimum: 0, maximum: 2399, fuzz: 4, resolution: 16)),
            ("ABS_MT_SLOT", AbsoluteAxis(minimum: 0, maximum: 9)),
            ("ABS_MT_TRACKING_ID", AbsoluteAxis(minimum: 0, maximum: 65535)),
            ("ABS_MT_POSITION_X", AbsoluteAxis(minimum: 0, maximum: 4095, resolution: 16)),
            ("ABS_MT_POSITION_Y", AbsoluteAxis(minimum: 0, maximum: 2399, resolution: 16)),
        ]
        caps.codes[type("EV_ABS")] = Set(axes.map { code($0.0) })
        for (name, axis) in axes { caps.axes[code(name)] = axis }
        caps.properties = [EventCodes.property(named: "INPUT_PROP_DIRECT")!]
        return DeviceInfo(name: "ELAN Touchscreen", phys: "i2c-ELAN0001:00",
                          id: InputDeviceID(bustype: 0x18, vendor: 0x04f3, product: 0x2a1c, version: 0x0100),
                          capabilities: caps)
    }
}

/// The least a broker does: read what the grabbed device has, cut it into
/// frames, drop some keys, write each remaining frame to the clone at once.
/// Returns what was forwarded, without the SYN_REPORTs.
@discardableResult
func forward(from device: EvdevDevice, to clone: UInputClone, dropping dropped: Set<UInt16>) throws -> [InputEvent] {
    var events: [InputEvent] = []
    try device.readEvents(into: &events)
    var frame: [InputEvent] = []
    var forwarded: [InputEvent] = []
    for event in events {
        if event.isSynReport {
            if !frame.isEmpty {
                try clone.write(frame: frame + [event])
                forwarded += frame
            }
            frame.removeAll()
        } else if !(event.type == type("EV_KEY") && dropped.contains(event.code)) {
            frame.append(event)
        }
    }
    return forwarded
}
