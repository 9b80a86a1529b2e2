import Foundation
import Glibc
import InputTestSupport
import KioskInput
import LinuxInput
import SystemPackage
import SystemdKit
import Testing

@Suite(
    "Real kernel: grab, clone and forward (VM, root)", .serialized,
    .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct RealKernelTests {
    @Test(
        "clones look like their sources, forward allowed events, never dropped ones; grabbed nodes stay silent until released"
    )
    func grabCloneForward() throws {
        let fakes = try [FakeDevice.keyboard(), FakeDevice.powerButton(), FakeDevice.touchscreen()]
            .map { try UInputClone(description: $0) }
        let physicalPaths = try fakes.map { try #require($0.devnode) }
        var devices = try physicalPaths.map { try EvdevDevice(path: $0) }
        for device in devices { try device.grab() }
        let clones = try devices.map { try UInputClone(cloning: $0) }
        let clonePaths = try clones.map { try #require($0.devnode) }

        // What python-evdev sees of each clone equals what it sees of its source,
        // but for phys (the marker) and the fuzz (dropped on purpose).
        let seen = try Probe.describe(physicalPaths + clonePaths)
        for (index, device) in devices.enumerated() {
            let source = seen[index], clone = seen[index + devices.count]
            for key in ["name", "id", "props", "abs"] {
                #expect(
                    try canonicalJSON(clone[key]!) == canonicalJSON(source[key]!),
                    "\(key) of \(device.deviceDescription.name)")
            }
            // The codes too, but EV_REP: the clone leaves the repeating to the source.
            var sourceCodes = source["codes"] as! [String: Any]
            sourceCodes["\(type("EV_REP"))"] = nil
            #expect(
                try canonicalJSON(clone["codes"]!) == canonicalJSON(sourceCodes),
                "codes of \(device.deviceDescription.name)")
            #expect(clone["phys"] as? String == UInputClone.phys(forSource: source["phys"] as? String))
            #expect(device.deviceDescription.shouldBroker)
        }
        #expect(seen[devices.count...].allSatisfy { UInputClone.isClone(phys: $0["phys"] as? String) })

        // Readers: every clone, and (as a non-grabbing spy) every physical node.
        let reader = try Probe.Reader.read(clonePaths + physicalPaths, idle: 2)
        let (keyboard, power, touch) = (fakes[0], fakes[1], fakes[2])
        for key in ["KEY_A", "KEY_B"] {
            try keyboard.write(frame: [event("EV_MSC", "MSC_SCAN", 0x70004), event("EV_KEY", key, 1)])
            try keyboard.write(frame: [event("EV_MSC", "MSC_SCAN", 0x70004), event("EV_KEY", key, 0)])
        }
        for key in ["KEY_VOLUMEUP", "KEY_VOLUMEDOWN", "KEY_POWER"] {
            try power.write(frame: [event("EV_KEY", key, 1)])
            try power.write(frame: [event("EV_KEY", key, 0)])
        }
        try touch.write(frame: [
            event("EV_ABS", "ABS_MT_SLOT", 0), event("EV_ABS", "ABS_MT_TRACKING_ID", 7),
            event("EV_ABS", "ABS_MT_POSITION_X", 1000), event("EV_ABS", "ABS_MT_POSITION_Y", 500),
            event("EV_KEY", "BTN_TOUCH", 1), event("EV_ABS", "ABS_X", 1000), event("EV_ABS", "ABS_Y", 500),
        ])
        try touch.write(frame: [event("EV_ABS", "ABS_MT_POSITION_X", 1200), event("EV_ABS", "ABS_X", 1200)])
        try touch.write(frame: [event("EV_ABS", "ABS_MT_TRACKING_ID", -1), event("EV_KEY", "BTN_TOUCH", 0)])

        let dropped: Set<UInt16> = [code("KEY_VOLUMEUP"), code("KEY_POWER")]
        var forwarded: [[InputEvent]] = []
        for (device, clone) in zip(devices, clones) {
            forwarded.append(try forward(from: device, to: clone, dropping: dropped))
        }
        let events = try reader.events()

        for (index, clonePath) in clonePaths.enumerated() {
            let got = events.filter { $0.path == clonePath && $0.type != type("EV_SYN") }
            let sent = forwarded[index].map {
                SeenEvent(path: clonePath, type: $0.type, code: $0.code, value: $0.value)
            }
            #expect(got == sent, "what \(devices[index].deviceDescription.name)'s clone delivered")
        }
        let keyboardKeys = events.filter { $0.path == clonePaths[0] && $0.type == type("EV_KEY") }.map(\.description)
        #expect(keyboardKeys == ["KEY_A 1", "KEY_A 0", "KEY_B 1", "KEY_B 0"])
        let powerKeys = events.filter { $0.path == clonePaths[1] && $0.type == type("EV_KEY") }.map(\.description)
        #expect(powerKeys == ["KEY_VOLUMEDOWN 1", "KEY_VOLUMEDOWN 0"])
        let touchEvents = events.filter { $0.path == clonePaths[2] && $0.type != type("EV_SYN") }.map(\.description)
        #expect(touchEvents.contains("ABS_MT_TRACKING_ID 7") && touchEvents.contains("ABS_MT_TRACKING_ID -1"))
        #expect(touchEvents.contains("ABS_MT_POSITION_X 1200") && touchEvents.contains("BTN_TOUCH 0"))
        let spied = events.filter { physicalPaths.contains($0.path) }
        #expect(spied.isEmpty, "a grabbed node delivered to another reader: \(spied)")

        // Released (one by ungrab, the others by close), the nodes deliver again.
        try devices[0].ungrab()
        for device in devices.dropFirst() { device.close() }
        let after = try Probe.Reader.read(physicalPaths, idle: 1.5)
        try keyboard.write(frame: [event("EV_KEY", "KEY_A", 1)])
        try keyboard.write(frame: [event("EV_KEY", "KEY_A", 0)])
        try power.write(frame: [event("EV_KEY", "KEY_VOLUMEUP", 1)])
        try power.write(frame: [event("EV_KEY", "KEY_VOLUMEUP", 0)])
        let released = try after.events().filter { $0.type == type("EV_KEY") }
        #expect(released.map(\.description) == ["KEY_A 1", "KEY_A 0", "KEY_VOLUMEUP 1", "KEY_VOLUMEUP 0"])
        devices.removeAll()
    }

    @Test("a second grab fails with EBUSY until the first holder closes")
    func secondGrabIsBusy() throws {
        let fake = try UInputClone(description: FakeDevice.powerButton())
        let path = try #require(fake.devnode)
        let first = try EvdevDevice(path: path)
        try first.grab()
        let second = try EvdevDevice(path: path)
        let error = #expect(throws: EvdevError.self) { try second.grab() }
        #expect(error?.code == .busy)
        #expect(error?.errno == Errno(rawValue: EBUSY))
        #expect(
            error?.description
                == "\(path) is busy: ioctl(EVIOCGRAB) failed with Device or resource busy (errno 16); another process holds the grab."
        )
        first.close()
        try second.grab()
        #expect(second.isGrabbed)
    }

    @Test("a vanished device reads as ENODEV, not as silence")
    func unpluggedDevice() throws {
        let fake = try UInputClone(description: FakeDevice.keyboard())
        let device = try EvdevDevice(path: try #require(fake.devnode))
        try device.grab()
        fake.destroy()
        var events: [InputEvent] = []
        let error = #expect(throws: EvdevError.self) {
            while true { try device.readEvents(into: &events) }
        }
        #expect(error?.code == .noDevice)
        #expect(error?.errno == Errno(rawValue: ENODEV))
        #expect(
            error?.description.hasSuffix("failed with No such device (errno 19); the device was unplugged.") ?? false)
        let missing = #expect(throws: EvdevError.self) { try EvdevDevice(path: "/dev/input/event-none") }
        #expect(missing?.code == .notFound)
        #expect(
            missing?.description
                == "/dev/input/event-none does not exist: open failed with No such file or directory (errno 2).")
    }

    @Test(
        "an overflowing buffer reads as SYN_DROPPED, and the state after it shows what the drop hid: no key is left stuck"
    )
    func synDropped() throws {
        let fake = try UInputClone(description: FakeDevice.keyboard())
        let device = try EvdevDevice(path: try #require(fake.devnode))
        try device.grab()
        try fake.write(frame: [event("EV_KEY", "KEY_A", 1)])
        var events: [InputEvent] = []
        #expect(try device.readEvents(into: &events) == .drained)
        #expect(events.filter { $0.type == EV.key }.map(\.code) == [code("KEY_A")], "\(events)")

        // Far more than the client buffer (64 events) holds: A goes up, B goes down.
        try fake.write(frame: [event("EV_KEY", "KEY_A", 0)])
        for _ in 0..<200 {
            try fake.write(frame: [event("EV_KEY", "KEY_ESC", 1)])
            try fake.write(frame: [event("EV_KEY", "KEY_ESC", 0)])
        }
        try fake.write(frame: [event("EV_KEY", "KEY_B", 1)])
        events.removeAll()
        #expect(try device.readEvents(into: &events) == .dropped)
        #expect(events.last?.isSynDropped == true)
        #expect(events.dropLast().allSatisfy { !$0.isSynDropped })
        #expect(device.state.keysDown == [code("KEY_B")])

        // Reading goes on normally after the drop.
        try fake.write(frame: [event("EV_KEY", "KEY_B", 0)])
        events.removeAll()
        #expect(try device.readEvents(into: &events) == .drained)
        #expect(events.map(\.code) == [code("KEY_B"), code("SYN_REPORT")])
        print("SYN_DROPPED: \(events.count) events read after the drop; state after it: B down, A up")
    }

    @Test(
        "more than one read's worth (64 events) comes in batches: full reads say .more, the last short one .drained, nothing lost or reordered"
    )
    func batchedReads() throws {
        // A 10-slot touchscreen: the kernel gives its readers a buffer of hundreds of events, so
        // twelve taps (~140 events) fit without a drop but take more than one read.
        let fake = try UInputClone(description: FakeDevice.touchscreen(phys: "kioskd-vm-test/batches"))
        let device = try EvdevDevice(path: try #require(fake.devnode))
        try device.grab()
        let taps = 12
        for i in 0..<taps {
            for frame in FakeDevice.tap(trackingID: Int32(100 + i), x: Int32(100 + 200 * i), y: 300) {
                try fake.write(frame: frame)
            }
        }
        var events: [InputEvent] = []
        var statuses: [EvdevDevice.ReadStatus] = []
        repeat {
            let before = events.count
            statuses.append(try device.readEvents(into: &events))
            if statuses.last == .more { #expect(events.count - before == 64) }
        } while statuses.last == .more && statuses.count < 20
        #expect(events.count > 64, "\(events.count) events")
        #expect(statuses.first == .more)
        #expect(statuses.last == .drained)
        #expect(!statuses.contains(.dropped))
        let trackingIDs = events.filter { $0.type == EV.abs && $0.code == code("ABS_MT_TRACKING_ID") && $0.value >= 0 }
            .map(\.value)
        #expect(trackingIDs == (0..<taps).map { Int32(100 + $0) })
        #expect(events.last?.isSynReport == true)
        print("batched reads: \(events.count) events in \(statuses.count) reads: \(statuses)")
    }

    @Test("an LED set on the clone reaches the physical device")
    func ledsGoBack() throws {
        let fake = try UInputClone(description: FakeDevice.keyboard())
        let device = try EvdevDevice(path: try #require(fake.devnode))
        try device.grab()
        let clone = try UInputClone(cloning: device)
        try Probe.setLED(try #require(clone.devnode), code: code("LED_CAPSL"), value: 1)
        var requests: [InputEvent] = []
        try clone.readFeedback(into: &requests)
        let led = try #require(requests.first { $0.type == type("EV_LED") })
        #expect(led.code == code("LED_CAPSL") && led.value == 1)
        try device.setLED(led.code, on: led.value != 0)
        var atPhysical: [InputEvent] = []
        try fake.readFeedback(into: &atPhysical)
        #expect(atPhysical.contains { $0.type == type("EV_LED") && $0.code == code("LED_CAPSL") && $0.value == 1 })
    }

    @Test("time from a new node appearing to holding its grab")
    func hotplugToGrab() throws {
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        try #require(inotify >= 0)
        defer { close(inotify) }
        try #require(inotify_add_watch(inotify, "/dev/input", UInt32(IN_CREATE)) >= 0)
        let clock = ContinuousClock()
        var samples: [(create: Duration, grab: Duration)] = []
        for _ in 0..<5 {
            let start = clock.now
            let fake = try UInputClone(description: FakeDevice.keyboard())
            let created = clock.now
            // Wait for the node's IN_CREATE, as a monitor would.
            var name = ""
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !name.hasPrefix("event") {
                var pfd = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
                _ = poll(&pfd, 1, 5000)
                let n = read(inotify, &buffer, buffer.count)
                var offset = 0
                while n > 0 && offset < n {
                    let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
                    let bytes = buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }
                    let entry = String(decoding: bytes, as: UTF8.self)
                    if entry.hasPrefix("event") { name = entry }
                    offset += 16 + length
                }
            }
            let appeared = clock.now
            let device = try EvdevDevice(path: "/dev/input/\(name)")
            try device.grab()
            let grabbed = clock.now
            #expect("/dev/input/\(name)" == fake.devnode)
            samples.append((create: appeared - start, grab: grabbed - appeared))
            _ = created
        }
        let format = { (d: Duration) in
            String(format: "%.2f ms", Double(d.components.attoseconds) / 1e15 + Double(d.components.seconds) * 1e3)
        }
        for (i, s) in samples.enumerated() {
            print(
                "hotplug \(i + 1): UI_DEV_CREATE -> node seen \(format(s.create)), node seen -> grabbed \(format(s.grab))"
            )
        }
        let grabs = samples.map(\.grab).sorted()
        print(
            "hotplug: node appearing -> grabbed: median \(format(grabs[grabs.count / 2])), max \(format(grabs.last!)) (TCG guest)"
        )
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

func canonicalJSON(_ value: Any) throws -> String {
    String(
        decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]),
        as: UTF8.self)
}
