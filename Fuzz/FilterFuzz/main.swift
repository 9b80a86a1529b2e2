// The input filter's harness (docs/testing.md § Fuzzing): a device, a policy and the raw event
// stream a read(2) of the node could return, decoded from the input; the stream goes through two
// filters, one a run at a time as the broker feeds it and one an event at a time, and what
// comes out must be the same, well formed, and hold the locks.
import FuzzSupport
import KioskInput

/// A device of one of four kinds, with axis ranges that may be absurd (empty, reversed, huge)
/// and a slot count that may exceed the filter's cap.
func device(_ input: inout FuzzInput) -> DeviceDescription {
    var description = DeviceDescription(name: "fuzz", id: .init(bus: 3, vendor: 1, product: 1))
    var keys: Set<UInt16> = Set(1...120)
    var absInfo: [UInt16: DeviceDescription.AbsInfo] = [:]
    func range(_ input: inout FuzzInput) -> DeviceDescription.AbsInfo {
        switch input.choose(4) {
        case 0: return .init(minimum: 0, maximum: 4095)
        case 1: return .init(minimum: 0, maximum: 255)
        case 2: return .init(minimum: input.int32(), maximum: input.int32())
        default: return .init(minimum: Int32(Int16(bitPattern: input.uint16())), maximum: Int32(input.uint16()))
        }
    }
    let kind = input.choose(4)
    if kind != 0 {
        keys.insert(BTN.touch)
        description.properties.insert(INPUT_PROP.direct)
        absInfo[ABS.x] = range(&input)
        absInfo[ABS.y] = range(&input)
    }
    if kind == 1 || kind == 2 {
        absInfo[ABS.mtPositionX] = range(&input)
        absInfo[ABS.mtPositionY] = range(&input)
        absInfo[ABS.mtTrackingID] = .init(minimum: 0, maximum: 65535)
    }
    if kind == 1 {
        let slots: [Int32] = [0, 1, 4, 9, 15, -1, 300, Int32.max]
        absInfo[ABS.mtSlot] = .init(minimum: 0, maximum: slots[input.choose(slots.count)])
    }
    if input.bool() { keys.insert(BTN.left) }
    if input.choose(4) == 0 {
        description.calibration = CalibrationMatrix(
            input.fraction(), input.fraction(), input.fraction(), input.fraction(), input.fraction(), input.fraction())
    }
    description.codes = [EV.syn: [SYN.report, SYN.mtReport, SYN.dropped], EV.key: keys, EV.msc: [MSC.scan]]
    if !absInfo.isEmpty { description.codes[EV.abs] = Set(absInfo.keys) }
    description.absInfo = absInfo
    return description
}

/// Locked keys and, for touch, locked regions or none at all; never an allowed device or an
/// allowed combo (they let locked keys through by design).
func policy(_ input: inout FuzzInput) -> FilterPolicy {
    var policy = FilterPolicy(blockEscapeChords: input.bool())
    for _ in 0..<input.choose(8) { policy.lockedKeys.insert(UInt16(1 + input.choose(120))) }
    if input.bool() { policy.lockedKeys.insert(BTN.left) }
    switch input.choose(4) {
    case 0: policy.touch = .all
    case 1: policy.touch = .none
    default:
        var regions: [TouchRegion] = []
        for _ in 0..<(1 + input.choose(3)) {
            if input.bool() {
                regions.append(
                    .rect(x: input.fraction(), y: input.fraction(), width: input.fraction(), height: input.fraction()))
            } else {
                regions.append(.polygon((0..<input.choose(6)).map { _ in Point(x: input.fraction(), y: input.fraction()) }))
            }
        }
        policy.touch = .regions(regions)
    }
    if input.choose(4) == 0 { policy.maxContacts = 1 + input.choose(10) }
    if input.choose(8) == 0 { policy.edgeMargin = Double(input.choose(20)) / 100 }
    return policy
}

/// The raw stream: events of the kinds a touchscreen or a keyboard sends, with the values a
/// broken or hostile device could give (duplicate tracking ids, slots out of range, frames
/// without `SYN_REPORT`, `SYN_DROPPED` anywhere), and after each the length of the run it ends.
func events(_ input: inout FuzzInput) -> [(event: InputEvent, endsRun: Bool)] {
    var stream: [(InputEvent, Bool)] = []
    var time = 1_000_000
    let absCodes: [UInt16] = [
        ABS.mtSlot, ABS.mtTrackingID, ABS.mtPositionX, ABS.mtPositionY, ABS.x, ABS.y, ABS.mtPressure, ABS.pressure,
    ]
    while !input.isEmpty && stream.count < 4096 {
        let selector = input.byte()
        time += Int(selector >> 5) * 1000
        var event: InputEvent
        switch selector & 7 {
        case 0, 1: event = InputEvent(type: EV.syn, code: SYN.report, value: 0)
        case 2:
            event = InputEvent(type: EV.key, code: UInt16(1 + input.choose(120)), value: Int32(input.choose(3)))
        case 3:
            let code = input.bool() ? BTN.touch : BTN.left
            event = InputEvent(type: EV.key, code: code, value: Int32(input.choose(3)))
        case 4, 5:
            let code = absCodes[input.choose(absCodes.count)]
            let value: Int32 =
                switch input.choose(4) {
                case 0: input.int32()
                case 1: Int32(input.choose(12)) - 1
                default: Int32(input.uint16() & 0x0fff)
                }
            event = InputEvent(type: EV.abs, code: code, value: value)
        case 6:
            let codes = [SYN.mtReport, SYN.dropped, SYN.config]
            event = InputEvent(type: EV.syn, code: codes[input.choose(codes.count)], value: 0)
        default:
            event = InputEvent(type: UInt16(input.choose(Int(EV.max) + 2)), code: input.uint16(), value: input.int32())
        }
        event.seconds = time / 1_000_000
        event.microseconds = time % 1_000_000
        stream.append((event, selector & 0x18 == 0x18))
    }
    return stream
}

/// The clone as a compositor sees it, built from the filter's output only: keys down, the
/// current slot, each slot's tracking id and position, the single-touch state.
struct CloneView {
    var keysDown: Set<UInt16> = []
    var slot = 0
    var trackingIDs: [Int32]
    var positions: [(x: Int32, y: Int32)]
    var position = (x: Int32(0), y: Int32(0))

    init(slots: Int) {
        trackingIDs = Array(repeating: -1, count: slots)
        positions = Array(repeating: (0, 0), count: slots)
    }
}

extension InputEvent {
    /// `type/code/value`, for ``trace(_:)``.
    var compact: String { "\(type)/\(code)/\(value)" }
}

/// Where device coordinates are on the screen, as docs/input-enforcement.md maps them; nil
/// when the device lacks an axis.
func screenPoint(_ description: DeviceDescription, x: Int32, y: Int32, xAxis: UInt16, yAxis: UInt16) -> Point? {
    guard let xInfo = description.absInfo[xAxis], let yInfo = description.absInfo[yAxis] else { return nil }
    var point = Point(x: xInfo.fraction(of: x), y: yInfo.fraction(of: y))
    if let matrix = description.calibration {
        let mapped = matrix.apply(x: point.x, y: point.y)
        point = Point(x: mapped.x, y: mapped.y)
    }
    return point
}

/// Fails the run when a contact the clone sees start would be locked by the regions: inside
/// one, or at a place that cannot be located on the screen at all (fail closed).
func checkStart(_ point: Point?, _ policy: FilterPolicy, what: String) {
    guard case .regions(let regions) = policy.touch, !regions.isEmpty, let point else { return }
    guard point.x.isFinite && point.y.isFinite else {
        fatalError("invariant: \(what) starts at an unlocatable point \(point) under locked regions")
    }
    for region in regions where region.contains(point) {
        fatalError("invariant: \(what) starts at \(point), inside the locked region \(region)")
    }
}

/// Checks every output frame: one device's, ending in its only `SYN_REPORT`, no `SYN_DROPPED`,
/// slots in range, key values 0…2 (of the codes the device reports: the kernel drops the others
/// on its clone), no press or repeat of a locked key, no contact starting in
/// a locked region (nor with touch off). Not checked: one tracking id live in two slots, which
/// the filter passes on as the device sends it (libinput tells contacts apart by slot).
func check(_ output: OutputBuffer, _ description: DeviceDescription, _ policy: FilterPolicy, _ view: inout CloneView) {
    let slotCount: Int
    if case .multitouchB(let slots) = description.touchProtocol { slotCount = slots } else { slotCount = 0 }
    for frame in output.frames {
        let events = output.events(of: frame)
        guard let last = events.last, last.isSynReport else { fatalError("invariant: a frame does not end in SYN_REPORT") }
        var startedSlots: Set<Int> = []
        var touchWentDown = false
        for (index, event) in events.enumerated() {
            if event.isSynReport && index != events.count - 1 { fatalError("invariant: SYN_REPORT inside a frame") }
            if event.isSynDropped { fatalError("invariant: SYN_DROPPED in the output") }
            // The clone is made from the description: the kernel drops what it does not report.
            guard event.type == EV.syn || description.supports(type: event.type, code: event.code) else { continue }
            switch event.type {
            case EV.key:
                guard (0...2).contains(event.value) else { fatalError("invariant: key value \(event.value)") }
                if event.value != 0 && policy.lockedKeys.contains(event.code) {
                    fatalError("invariant: the locked key \(event.code) came out (value \(event.value))")
                }
                if event.code == BTN.touch && event.value == 1 && !view.keysDown.contains(BTN.touch) {
                    touchWentDown = true
                }
                if event.value == 0 { view.keysDown.remove(event.code) } else { view.keysDown.insert(event.code) }
            case EV.abs where event.code == ABS.mtSlot && slotCount > 0:
                guard (0..<slotCount).contains(Int(event.value)) else {
                    fatalError("invariant: slot \(event.value) out of 0..<\(slotCount)")
                }
                view.slot = Int(event.value)
            case EV.abs where slotCount > 0 && event.code == ABS.mtTrackingID:
                if event.value >= 0 && view.trackingIDs[view.slot] < 0 { startedSlots.insert(view.slot) }
                view.trackingIDs[view.slot] = event.value
            case EV.abs where slotCount > 0 && event.code == ABS.mtPositionX:
                view.positions[view.slot].x = event.value
            case EV.abs where slotCount > 0 && event.code == ABS.mtPositionY:
                view.positions[view.slot].y = event.value
            case EV.abs where event.code == ABS.x: view.position.x = event.value
            case EV.abs where event.code == ABS.y: view.position.y = event.value
            default: break
            }
        }
        // A touchscreen's contacts follow `touch`; an absolute pointer's strokes (a single-touch
        // device with a mouse button) follow `pointer`, which this harness leaves allowed.
        guard description.pointerKind == .none else { continue }
        if policy.touch == .none && (!startedSlots.isEmpty || (slotCount == 0 && touchWentDown)) {
            fatalError("invariant: a contact came out with touch off")
        }
        for slot in startedSlots {
            let (x, y) = view.positions[slot]
            checkStart(
                screenPoint(description, x: x, y: y, xAxis: ABS.mtPositionX, yAxis: ABS.mtPositionY), policy,
                what: "the contact in slot \(slot)")
        }
        if case .singleTouch = description.touchProtocol, touchWentDown {
            checkStart(
                screenPoint(description, x: view.position.x, y: view.position.y, xAxis: ABS.x, yAxis: ABS.y), policy,
                what: "the single-touch contact")
        }
    }
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let description = device(&input)
    let policy = policy(&input)
    let stream = events(&input)

    let byRun = InputFilter(policy: policy)
    let byEvent = InputFilter(policy: policy)
    let runDevice = byRun.addDevice(description)
    let eventDevice = byEvent.addDevice(description)
    var runOutput = OutputBuffer()
    var eventOutput = OutputBuffer()
    var kernel = DeviceState(for: description)
    var promptKeys: [PromptKey] = []
    var slots = 0
    if case .multitouchB(let count) = description.touchProtocol { slots = count }
    var view = CloneView(slots: slots)
    trace("device: \(description)\n  touch: \(description.touchProtocol), pointer: \(description.pointerKind)")
    trace("policy: \(policy)")

    var start = 0
    while start < stream.count {
        var end = start
        while end < stream.count - 1 && !stream[end].endsRun { end += 1 }
        let run = stream[start...end].map(\.event)
        for event in run { kernel.apply(event) }
        let result = run.withUnsafeBufferPointer {
            byRun.process($0, device: runDevice, into: &runOutput, promptKeys: &promptKeys)
        }
        for event in run where byEvent.process(event, device: eventDevice, into: &eventOutput).resyncNeeded {
            break
        }
        if result.resyncNeeded {
            byRun.resync(device: runDevice, to: kernel, into: &runOutput)
            byEvent.resync(device: eventDevice, to: kernel, into: &eventOutput)
        }
        guard Array(runOutput.events) == Array(eventOutput.events) else {
            fatalError("invariant: a run's output differs from its events' one by one:\n\(runOutput.events)\n\(eventOutput.events)")
        }
        trace("run: \(run.map(\.compact))\n  out: \(runOutput.events.map(\.compact))")
        check(runOutput, description, policy, &view)
        runOutput.removeAll()
        eventOutput.removeAll()
        start = end + 1
    }
}
