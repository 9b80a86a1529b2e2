import Testing

@testable import KioskInput

/// The keyboard access features' deadline across devices (docs/profiles.md#keyboard-access-features):
/// what `InputFilter.keyDeadline` reports and what `advance(to:into:)` counts.
@Suite struct KeyAccessTests {
    static let keyboard = DeviceDescription(name: "kbd", codes: [1: Set(1..<0x2ff), 4: [4]])

    /// A key event and its SYN_REPORT at `time` µs.
    static func key(_ code: UInt16, _ value: Int32, at time: Int64) -> [InputEvent] {
        let (s, u) = (Int(time / 1_000_000), Int(time % 1_000_000))
        return [
            InputEvent(seconds: s, microseconds: u, type: 1, code: code, value: value),
            InputEvent(seconds: s, microseconds: u, type: 0, code: 0, value: 0),
        ]
    }

    static func feed(_ filter: InputFilter, _ id: DeviceID, _ events: [InputEvent], into output: inout OutputBuffer) {
        for event in events { filter.process(event, device: id, into: &output) }
    }

    /// Each frame as (device, time of its SYN_REPORT, "code value" of its keys).
    static func frames(_ output: OutputBuffer) -> [String] {
        output.frames.map { frame in
            let events = output.events(of: frame)
            let keys = events.filter { $0.type == 1 }.map { "\($0.code) \($0.value)" }
            return "\(frame.device.rawValue)@\(events.last!.time): \(keys.joined(separator: ", "))"
        }
    }

    @Test func theEarliestWaitAcrossDevicesComesFirstAndEachPressIsItsOwnFrame() {
        var policy = FilterPolicy()
        policy.keyAccess = KeyAccessSettings(slowKeys: 300_000)
        let filter = InputFilter(policy: policy)
        #expect(filter.timesKeys)
        let first = filter.addDevice(Self.keyboard)
        let second = filter.addDevice(Self.keyboard)
        var output = OutputBuffer()
        #expect(filter.keyDeadline == nil)
        Self.feed(filter, second, Self.key(30, 1, at: 1_100_000), into: &output)
        Self.feed(filter, first, Self.key(48, 1, at: 1_000_000), into: &output)
        Self.feed(filter, first, Self.key(46, 1, at: 1_200_000), into: &output)
        #expect(output.isEmpty)
        #expect(filter.keyDeadline == 1_300_000)

        // Before the first deadline nothing counts; at it, only the first device's first key.
        filter.advance(to: 1_299_999, into: &output)
        #expect(output.isEmpty)
        filter.advance(to: 1_300_000, into: &output)
        #expect(Self.frames(output) == ["0@1300000: 48 1"])
        #expect(filter.keyDeadline == 1_400_000)
        output.removeAll()

        // Late (the timer slow): both that came, each a frame stamped with its own deadline.
        filter.advance(to: 1_600_000, into: &output)
        #expect(Self.frames(output) == ["0@1500000: 46 1", "1@1400000: 30 1"])
        #expect(filter.keyDeadline == nil)
    }

    @Test func anUnpluggedDeviceOrAPolicyWithoutSlowKeysLeavesNoDeadline() {
        var policy = FilterPolicy()
        policy.keyAccess = KeyAccessSettings(slowKeys: 300_000)
        let filter = InputFilter(policy: policy)
        let first = filter.addDevice(Self.keyboard)
        let second = filter.addDevice(Self.keyboard)
        var output = OutputBuffer()
        Self.feed(filter, first, Self.key(30, 1, at: 1_000_000), into: &output)
        Self.feed(filter, second, Self.key(48, 1, at: 1_100_000), into: &output)
        filter.removeDevice(first)
        #expect(filter.keyDeadline == 1_400_000)
        filter.setPolicy(.passThrough, into: &output)
        #expect(filter.keyDeadline == nil)
        #expect(!filter.timesKeys)
        // The press that waited never reached the kiosk: neither does its release.
        Self.feed(filter, second, Self.key(48, 0, at: 1_500_000), into: &output)
        #expect(output.isEmpty)
    }

    @Test func negativeDelaysAreOff() {
        let settings = KeyAccessSettings(stickyKeys: false, slowKeys: -5, bounceKeys: -1)
        #expect(settings == KeyAccessSettings())
        #expect(!settings.isOn)
    }
}
