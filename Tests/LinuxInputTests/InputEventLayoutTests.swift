import CEvdev
import KioskInput
import Testing

@testable import LinuxInput

/// The broker hands the filter the kernel's `input_event`s where `readBatch` read them
/// (`InputFilter.process(_:device:into:promptKeys:)` on `UnsafeBufferPointer<input_event>`).
@Suite struct InputEventLayoutTests {
    @Test("input_event is read in place on 64-bit Linux")
    func layoutMatches() {
        #expect(InputEvent.hasKernelLayout == (MemoryLayout<Int>.size == 8))
    }

    @Test("the kernel's events in place: the same frames, exit request and prompt keys as one by one")
    func kernelEventsInPlace() {
        let keyboard = DeviceDescription(name: "kbd", codes: [1: Set(1..<0x100), 4: [4]])
        var events: [input_event] = []
        for (index, (code, value)) in [(116, 1), (116, 0), (116, 1), (116, 0), (2, 1), (2, 0), (30, 1)].enumerated() {
            let time = timeval(tv_sec: 10, tv_usec: index * 1000)
            events.append(input_event(time: time, type: EV.msc, code: MSC.scan, value: 0x70000 + Int32(code)))
            events.append(input_event(time: time, type: EV.key, code: UInt16(code), value: Int32(value)))
            events.append(input_event(time: time, type: EV.syn, code: SYN.report, value: 0))
        }
        events.removeLast()  // the last frame is cut: its SYN_REPORT comes with the next read
        let gesture = ExitGesture(key: 116, presses: 2, within: 1_000_000)
        for policy in [
            FilterPolicy(lockedKeys: [30], exitGesture: gesture),
            FilterPolicy(exitGesture: gesture, readsPasscode: true),
        ] {
            let inPlace = InputFilter(policy: policy)
            let id = inPlace.addDevice(keyboard)
            var output = OutputBuffer()
            var keys: [PromptKey] = []
            let result = events.withUnsafeBufferPointer {
                inPlace.process($0, device: id, into: &output, promptKeys: &keys)
            }

            let oneByOne = InputFilter(policy: policy)
            let other = oneByOne.addDevice(keyboard)
            var expected = OutputBuffer()
            var expectedKeys: [PromptKey] = []
            var exit = false
            for event in events {
                let each = oneByOne.process(InputEvent(event), device: other, into: &expected)
                exit = exit || each.exitRequested
                if let key = each.promptKey { expectedKeys.append(key) }
            }
            #expect(result.exitRequested && exit)
            #expect(!result.resyncNeeded)
            #expect(keys == expectedKeys && keys.count == (policy.readsPasscode ? 3 : 0))
            #expect(output.events == expected.events && output.frames == expected.frames)
            #expect(output.frames.count == (policy.readsPasscode ? 0 : 6))
        }
    }
}
