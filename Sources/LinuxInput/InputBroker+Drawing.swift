import CEvdev
import KioskInput
import SystemdKit

// Drawing the locked regions (docs/input-enforcement.md § Drawing the regions): while staff
// draw, the filter holds all input (kioskd's policy says so) and the broker also hands kioskd
// the touchscreens' contacts and the keys pressed, read from the same events.

extension InputBroker {
    /// Starts (`true`) or stops handing kioskd the touches and keys read: ``onDrawing`` gets them
    /// after each read. Every brokered touchscreen is read from now on, and each one brokered
    /// later; at the stop, contacts down end (``DrawingTouches/Event/up(contact:)``).
    public func setDrawing(_ on: Bool) {
        if on {
            guard drawing == nil else { return }
            var touches = DrawingTouches()
            for case let node? in nodesByID {
                if let id = node.id { touches.add(id, judged(node)) }
            }
            drawing = touches
        } else {
            drawing = nil
        }
    }

    /// Whether a brokered device is a touchscreen staff can draw on (protocol B or single touch).
    public var brokersTouchscreen: Bool {
        nodesByID.contains { node in
            guard let node else { return false }
            let description = node.description
            switch description.touchProtocol {
            case .multitouchB, .singleTouch: return description.pointerKind == .none
            case .multitouchA, .none: return false
            }
        }
    }

    /// A node under the filter while drawing: its contacts are read too.
    func drawingAdd(_ node: Node) {
        guard drawing != nil, let id = node.id else { return }
        drawing?.add(id, judged(node))
    }

    /// A node leaves the filter while drawing: its contacts down end.
    func drawingRemove(_ id: DeviceID) {
        guard drawing != nil else { return }
        var events: [DrawingTouches.Event] = []
        drawing?.remove(id, into: &events)
        if !events.isEmpty { onDrawing?(events) }
    }

    /// The read's events through the drawing's tracker; what it saw to ``onDrawing``.
    @inline(never)
    func drawingRead(_ events: UnsafeBufferPointer<input_event>, device: DeviceID) {
        guard drawing != nil else { return }
        var out: [DrawingTouches.Event] = []
        for event in events { drawing?.feed(InputEvent(event), device: device, into: &out) }
        guard !out.isEmpty else { return }
        loop.requestCycle()  // the callback sends on the bus
        onDrawing?(out)
    }
}
