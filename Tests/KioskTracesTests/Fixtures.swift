import Foundation
import KioskInput
import KioskTraces

enum Fixtures {
    static let touchTraces = [
        "atmel-maxtouch-ts.2-fingers-touch-release.evemu",
        "atmel-maxtouch-ts.4-finger-drag-down.evemu",
        "ep0430m09-ts.2-finger-scroll-down.evemu",
    ]
    static let keyboardDescription = "razer-blackwidow-2013.multimedia-node.desc.evemu"

    static func text(_ name: String) throws -> String {
        let url = Bundle.module.resourceURL!.appendingPathComponent("Fixtures").appendingPathComponent(name)
        return try String(contentsOf: url, encoding: .utf8)
    }

    static func trace(_ name: String) throws -> Trace {
        try Trace.parse(try text(name))
    }
}

/// Runs events of one device through a fresh filter, returning the output frames. After each
/// event, `resyncAfter(index, result)` may return the state to resync the device to.
func filterFrames(
    _ description: DeviceDescription, _ events: [InputEvent], policy: FilterPolicy,
    resyncAfter: ((Int, FilterResult) -> DeviceState?)? = nil
) -> [[InputEvent]] {
    let filter = InputFilter(policy: policy)
    let id = filter.addDevice(description)
    var output = OutputBuffer()
    var frames: [[InputEvent]] = []
    for (index, event) in events.enumerated() {
        let result = filter.process(event, device: id, into: &output)
        if let state = resyncAfter?(index, result) {
            filter.resync(device: id, to: state, into: &output)
        }
        for frame in output.frames { frames.append(Array(output.events(of: frame))) }
        output.removeAll()
    }
    return frames
}

/// A consumer of the clone (what the kiosk sees), checking every frame it is sent against the
/// invariants of docs/input-enforcement.md.
struct CloneChecker {
    let description: DeviceDescription
    var slot = 0
    var tracking: [Int32]
    var order: [Int]
    var position: [(x: Int32, y: Int32)]
    var nextOrder = 0
    var touch: Int32 = 0
    var absX: Int32?, absY: Int32?
    var keysDown: Set<UInt16> = []
    var seenTrackingIDs: Set<Int32> = []
    var problems: [String] = []
    var frameIndex = 0

    init(_ description: DeviceDescription) {
        self.description = description
        var slots = 1
        if case .multitouchB(let count) = description.touchProtocol { slots = count }
        tracking = Array(repeating: -1, count: slots)
        order = Array(repeating: 0, count: slots)
        position = Array(repeating: (0, 0), count: slots)
    }

    var activeContacts: Int { tracking.filter { $0 >= 0 }.count }

    mutating func check(_ frame: [InputEvent]) {
        frameIndex += 1
        func fail(_ message: String) { problems.append("output frame \(frameIndex): \(message)") }
        guard let last = frame.last, last.isSynReport else { return fail("does not end in SYN_REPORT") }
        if frame.dropLast().contains(where: \.isSynReport) { fail("SYN_REPORT inside the frame") }
        if frame.count == 1 { fail("empty frame") }
        for event in frame.dropLast() {
            switch (event.type, event.code) {
            case (3, 0x2f):
                slot = Int(event.value)
                if !tracking.indices.contains(slot) { fail("slot \(slot) out of range") }
            case (3, 0x39):
                guard tracking.indices.contains(slot) else { continue }
                if event.value >= 0 {
                    if tracking[slot] >= 0 {
                        fail("tracking id \(event.value) starts in slot \(slot) while \(tracking[slot]) is live")
                    }
                    tracking[slot] = event.value
                    order[slot] = nextOrder
                    nextOrder += 1
                    seenTrackingIDs.insert(event.value)
                } else {
                    if tracking[slot] < 0 { fail("contact ends in idle slot \(slot)") }
                    tracking[slot] = -1
                }
            case (3, 0x35): if tracking.indices.contains(slot) { position[slot].x = event.value }
            case (3, 0x36): if tracking.indices.contains(slot) { position[slot].y = event.value }
            case (3, 0): absX = event.value
            case (3, 1): absY = event.value
            case (1, 0x14a): touch = event.value
            case (1, let code) where (0x145...0x14f).contains(code):
                break
            case (1, let code):
                switch event.value {
                case 1:
                    if keysDown.contains(code) { fail("second press of key \(code) without a release") }
                    keysDown.insert(code)
                case 0:
                    if !keysDown.contains(code) { fail("release of key \(code) that was not pressed") }
                    keysDown.remove(code)
                default:
                    if !keysDown.contains(code) { fail("repeat of key \(code) that is not down") }
                }
            default:
                break
            }
        }
        if case .multitouchB = description.touchProtocol {
            let live = tracking.indices.filter { tracking[$0] >= 0 }
            if touch != (live.isEmpty ? 0 : 1) { fail("BTN_TOUCH \(touch) with \(live.count) forwarded contacts") }
            if let oldest = live.min(by: { order[$0] < order[$1] }) {
                if absX != position[oldest].x || absY != position[oldest].y {
                    fail(
                        "ABS_X/Y \(String(describing: absX)),\(String(describing: absY)) but the oldest contact (slot \(oldest)) is at \(position[oldest])"
                    )
                }
            }
        }
    }

    /// After the whole stream: nothing left pressed or touching.
    mutating func checkNeutral() {
        if !keysDown.isEmpty { problems.append("keys stuck down at the end: \(keysDown.sorted())") }
        if activeContacts > 0 { problems.append("contacts stuck at the end: \(tracking.filter { $0 >= 0 })") }
        if touch != 0 { problems.append("BTN_TOUCH stuck at the end") }
    }
}

/// Events of a protocol B stream attributed to the contact (tracking id) they belong to.
func eventsByContact(_ events: [InputEvent], slots: Int) -> [Int32: [InputEvent]] {
    var slot = 0
    var tracking = Array(repeating: Int32(-1), count: slots)
    var result: [Int32: [InputEvent]] = [:]
    for event in events where event.type == 3 && (0x2f...0x3d).contains(event.code) {
        if event.code == 0x2f { slot = Int(event.value); continue }
        guard tracking.indices.contains(slot) else { continue }
        if event.code == 0x39 {
            if event.value >= 0 {
                tracking[slot] = event.value
                result[event.value, default: []].append(event)
            } else {
                result[tracking[slot], default: []].append(event)
                tracking[slot] = -1
            }
            continue
        }
        if tracking[slot] >= 0 { result[tracking[slot], default: []].append(event) }
    }
    return result
}
