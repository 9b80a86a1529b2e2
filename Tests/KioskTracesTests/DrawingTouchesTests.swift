import KioskCore
import KioskInput
import KioskTraces
import Testing

/// The touches kioskd reads for itself while staff draw regions, on a real touchscreen's
/// recording and on hand-made frames: contacts in screen fractions through the calibration,
/// ends on a dropped stretch or a device gone, and keys.
@Suite struct DrawingTouchesTests {
    func run(_ trace: Trace, _ touches: inout DrawingTouches) -> [DrawingTouches.Event] {
        let device = DeviceID(rawValue: 1)
        touches.add(device, trace.devices[0].description)
        var out: [DrawingTouches.Event] = []
        for event in trace.devices[0].events { touches.feed(event, device: device, into: &out) }
        return out
    }

    @Test func aFourFingerDragComesOutAsEachContactsStartMovesAndEnd() throws {
        let trace = try Fixtures.trace("atmel-maxtouch-ts.4-finger-drag-down.evemu")
        var touches = DrawingTouches()
        let events = run(trace, &touches)
        var open: [Int: Point] = [:]
        var starts: [Int: Point] = [:]
        var downs = 0
        for event in events {
            switch event {
            case .down(let contact, let point):
                #expect(open[contact] == nil, "a contact comes down once before it goes up")
                open[contact] = point
                starts[contact] = starts[contact] ?? point
                downs += 1
            case .move(let contact, let point):
                #expect(open[contact] != nil, "a move of a contact that is down")
                open[contact] = point
            case .up(let contact):
                #expect(open.removeValue(forKey: contact) != nil)
            case .key(let code):
                Issue.record("a touchscreen's recording has no key: \(code)")
            }
        }
        #expect(open.isEmpty, "every contact ended")
        #expect(downs == 4, "the recording's four fingers")
        // The first finger starts at x 415 of 0…799 (ReplayTests has the panel's numbers).
        let first = try #require(events.first)
        guard case .down(_, let at) = first else {
            Issue.record("starts with \(first)")
            return
        }
        #expect(abs(at.x - 415.0 / 800) < 1e-9)
    }

    /// A finger dragged straight down draws nothing: the rectangle is narrower than a fingertip,
    /// which ends the drawing when the drawing finger lifts.
    @Test func aStraightDragThroughTheDrawingIsTooNarrow() throws {
        let trace = try Fixtures.trace("atmel-maxtouch-ts.4-finger-drag-down.evemu")
        var touches = DrawingTouches()
        var drawing = RegionDrawing(regions: [])
        var ends: [RegionDrawing.Outcome] = []
        for event in run(trace, &touches) {
            switch event {
            case .down(let contact, let p): _ = drawing.touchDown(contact: contact, at: Profile.Point(x: p.x, y: p.y))
            case .move(let contact, let p): _ = drawing.touchMove(contact: contact, to: Profile.Point(x: p.x, y: p.y))
            case .up(let contact):
                let outcome = drawing.touchUp(contact: contact)
                if outcome != .none { ends.append(outcome) }
            case .key: break
            }
        }
        #expect(ends.first == .refused(.tooSmall), "\(ends)")
        #expect(drawing.shapes.isEmpty)
    }

    static let panel: DeviceDescription = {
        var d = DeviceDescription(
            name: "panel", properties: [INPUT_PROP.direct],
            codes: [EV.syn: [], EV.key: [BTN.touch], EV.abs: [ABS.x, ABS.y]],
            absInfo: [ABS.x: .init(minimum: 0, maximum: 999), ABS.y: .init(minimum: 0, maximum: 999)])
        d.calibration = CalibrationMatrix(-1, 0, 1, 0, 1, 0)  // mirrored left to right
        return d
    }()

    func event(_ type: UInt16, _ code: UInt16, _ value: Int32) -> InputEvent {
        InputEvent(type: type, code: code, value: value)
    }

    @Test func aSingleTouchPanelThroughItsCalibrationAndADroppedStretch() {
        var touches = DrawingTouches()
        let device = DeviceID(rawValue: 3)
        touches.add(device, Self.panel)
        var out: [DrawingTouches.Event] = []
        for e in [
            event(EV.key, BTN.touch, 1), event(EV.abs, ABS.x, 250), event(EV.abs, ABS.y, 500),
            event(EV.syn, SYN.report, 0), event(EV.abs, ABS.x, 500), event(EV.syn, SYN.report, 0),
        ] { touches.feed(e, device: device, into: &out) }
        #expect(out.count == 2)
        guard out.count == 2, case .down(let contact, let at) = out[0], case .move(contact, let to) = out[1] else {
            Issue.record("\(out)")
            return
        }
        #expect(at == Point(x: 0.75, y: 0.5), "x mirrored by the matrix")
        #expect(to == Point(x: 0.5, y: 0.5))
        // The kernel dropped events: the contact ends, and nothing is read to the next report.
        out.removeAll()
        for e in [event(EV.syn, SYN.dropped, 0), event(EV.abs, ABS.x, 900), event(EV.key, BTN.touch, 0)] {
            touches.feed(e, device: device, into: &out)
        }
        #expect(out == [.up(contact: contact)])
        out.removeAll()
        for e in [event(EV.syn, SYN.report, 0), event(EV.key, BTN.touch, 1), event(EV.abs, ABS.x, 0), event(EV.syn, SYN.report, 0)] {
            touches.feed(e, device: device, into: &out)
        }
        #expect(out == [.down(contact: contact, at: Point(x: 1.0, y: 0.5))])
        // The device goes away with the finger down: it ends.
        out.removeAll()
        touches.remove(device, into: &out)
        #expect(out == [.up(contact: contact)])
        #expect(touches.isEmpty)
    }

    /// A new tracking id in a slot whose contact is down: that contact ended, another began.
    @Test func aReplacedContactEndsAndANewOneBegins() {
        let screen = DeviceDescription(
            name: "screen", properties: [INPUT_PROP.direct],
            codes: [EV.syn: [], EV.abs: [ABS.mtSlot, ABS.mtTrackingID, ABS.mtPositionX, ABS.mtPositionY]],
            absInfo: [
                ABS.mtSlot: .init(minimum: 0, maximum: 9), ABS.mtTrackingID: .init(minimum: 0, maximum: 65535),
                ABS.mtPositionX: .init(minimum: 0, maximum: 99), ABS.mtPositionY: .init(minimum: 0, maximum: 99),
            ])
        var touches = DrawingTouches()
        let device = DeviceID(rawValue: 0)
        touches.add(device, screen)
        var out: [DrawingTouches.Event] = []
        for e in [
            event(EV.abs, ABS.mtSlot, 2), event(EV.abs, ABS.mtTrackingID, 7), event(EV.abs, ABS.mtPositionX, 10),
            event(EV.abs, ABS.mtPositionY, 20), event(EV.syn, SYN.report, 0),
            event(EV.abs, ABS.mtTrackingID, 8), event(EV.abs, ABS.mtPositionX, 50), event(EV.syn, SYN.report, 0),
            event(EV.abs, ABS.mtTrackingID, -1), event(EV.syn, SYN.report, 0),
        ] { touches.feed(e, device: device, into: &out) }
        #expect(
            out == [
                .down(contact: 2, at: Point(x: 0.1, y: 0.2)), .up(contact: 2), .down(contact: 2, at: Point(x: 0.5, y: 0.2)),
                .up(contact: 2),
            ])
    }

    /// Keys on any device, pressed only (not released, not repeated); buttons are no keys.
    @Test func keysArePressesOfKeyboardKeys() {
        var touches = DrawingTouches()
        var out: [DrawingTouches.Event] = []
        let keyboard = DeviceID(rawValue: 5)
        for e in [
            event(EV.key, 28, 1), event(EV.key, 28, 2), event(EV.key, 28, 0), event(EV.key, BTN.left, 1),
            event(EV.key, 1, 1), event(EV.syn, SYN.report, 0),
        ] { touches.feed(e, device: keyboard, into: &out) }
        #expect(out == [.key(28), .key(1)])
    }

    /// A touchpad or a mouse draws nothing.
    @Test func aTouchpadIsNotRead() throws {
        let trace = try Fixtures.trace("cypress-trackpad.two-finger-tap.evemu")
        var touches = DrawingTouches()
        #expect(run(trace, &touches).allSatisfy { if case .key = $0 { true } else { false } })
        #expect(touches.isEmpty)
    }
}
