import KioskInput
import KioskTraces
import Testing

/// `[pointer]` on real recordings: a USB mouse, a PS/2 trackpad, a pen display (whot/evemu-devices,
/// see Fixtures/README.md).
@Suite struct PointerTraceTests {
    static let mouse = "saitek-cyborg-rat5-mouse.motion-and-clicks.evemu"
    static let trackpad = "cypress-trackpad.two-finger-tap.evemu"
    static let pen = "wacom-cintiq-13hd-pen.strokes.evemu"

    @Test("each recording is the pointer kind udev would call it")
    func kinds() throws {
        #expect(try Fixtures.trace(Self.mouse).devices[0].description.pointerKind == .relative)
        #expect(try Fixtures.trace(Self.trackpad).devices[0].description.pointerKind == .touchpad)
        #expect(try Fixtures.trace(Self.pen).devices[0].description.pointerKind == .absolute)
        for name in Fixtures.touchTraces {
            #expect(try Fixtures.trace(name).devices[0].description.pointerKind == .none, "\(name)")
        }
    }

    @Test("a locked pointer forwards nothing; an allowed one forwards every event", arguments: [mouse, trackpad, pen])
    func lockedAndAllowed(name: String) throws {
        let device = try Fixtures.trace(name).devices[0]
        let allowed = FilterPolicy(lockedKeys: EventCodes.keyboardKeys, touch: .none, pointer: .allowed)
        // Every frame, as a set of events (a touchpad's pointer emulation is recomputed, in the
        // kernel's order); the mouse's one release of a button the recording never pressed
        // (BTN_MOUSE + 8) is not forwarded: the clone never saw it go down.
        let expected = Self.frames(device.events).map { $0.filter { !($0.type == EV.key && $0.code == 0x118) } }
            .filter { $0.count > 1 }
        let actual = filterFrames(device.description, device.events, policy: allowed)
        #expect(actual.map(Self.sorted) == expected.map(Self.sorted))
        for pointer in [PointerPolicy.locked, .regions] where !(name == Self.pen && pointer == .regions) {
            let policy = FilterPolicy(touch: .regions([.rect(x: 0, y: 0, width: 0.1, height: 0.1)]), pointer: pointer)
            let frames = filterFrames(device.description, device.events, policy: policy)
            #expect(frames.isEmpty, "\(name) under \(pointer): \(frames.prefix(3))")
        }
    }

    @Test("a pen's stroke that starts in a locked region is swallowed whole; hover and other strokes pass")
    func penStrokesAgainstARegion() throws {
        let device = try Fixtures.trace(Self.pen).devices[0]
        let strokes = Self.strokeStarts(device.events, device.description)
        try #require(strokes.count == 2, "the recording has two strokes")
        // A region around the first stroke's start only.
        let first = strokes[0], second = strokes[1]
        let region = TouchRegion.rect(x: first.x - 0.01, y: first.y - 0.01, width: 0.02, height: 0.02)
        #expect(!region.contains(Point(x: second.x, y: second.y)))
        let policy = FilterPolicy(touch: .regions([region]), pointer: .regions)
        let output = filterFrames(device.description, device.events, policy: policy)
        let touches = output.flatMap { $0 }.filter { $0.type == EV.key && $0.code == BTN.touch }.map(\.value)
        #expect(touches == [1, 0], "only the second stroke's tip reaches the clone")
        // Nothing of the first stroke: no pressure outside the second one.
        let pressures = output.flatMap { $0 }.filter { $0.type == EV.abs && $0.code == ABS.pressure && $0.value > 0 }
        #expect(pressures.allSatisfy { $0.time >= second.time && $0.time <= second.endTime })
        // Hover passes: the pen's motion before the first stroke reached the clone.
        let hover = output.flatMap { $0 }.filter { $0.type == EV.abs && $0.code == ABS.x && $0.time < first.time }
        #expect(!hover.isEmpty)
    }

    static func frames(_ events: [InputEvent]) -> [[InputEvent]] {
        var frames: [[InputEvent]] = [[]]
        for event in events {
            frames[frames.count - 1].append(event)
            if event.isSynReport { frames.append([]) }
        }
        return frames.filter { !$0.isEmpty }
    }

    static func sorted(_ frame: [InputEvent]) -> [String] {
        frame.map { "\($0.type) \($0.code) \($0.value) \($0.time)" }.sorted()
    }

    struct Stroke { var x: Double, y: Double, time: Int64, endTime: Int64 }

    /// Where each stroke (BTN_TOUCH down … up) starts, in screen fractions, at the end of its
    /// first frame; read from the recording independently of the filter.
    static func strokeStarts(_ events: [InputEvent], _ description: DeviceDescription) -> [Stroke] {
        let xAxis = description.absInfo[ABS.x]!, yAxis = description.absInfo[ABS.y]!
        var x: Int32 = 0, y: Int32 = 0
        var starting = false
        var strokes: [Stroke] = []
        for event in events {
            if event.type == EV.abs && event.code == ABS.x { x = event.value }
            if event.type == EV.abs && event.code == ABS.y { y = event.value }
            if event.type == EV.key && event.code == BTN.touch {
                if event.value == 1 { starting = true } else if event.value == 0, !strokes.isEmpty {
                    strokes[strokes.count - 1].endTime = event.time
                }
            }
            if event.isSynReport && starting {
                starting = false
                strokes.append(
                    Stroke(x: xAxis.fraction(of: x), y: yAxis.fraction(of: y), time: event.time, endTime: .max))
            }
        }
        return strokes
    }
}
