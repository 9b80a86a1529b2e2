import Foundation
import KioskInput

/// A keyd-style filter scenario: devices and a policy, input frames, a separator, the frames
/// expected at the clones. Format (one frame per line, `SYN_REPORT` implied):
///
///     device kbd1 keyboard
///     device ts touchscreen slots=10 x=0..999 y=0..999
///     policy lock=KEY_A chords=blocked allow-alt=KEY_LEFT combo=ctrl+KEY_N touch=regions rect=0,0,0.5,0.5 gesture=KEY_POWER:3:1.5 hold
///     --- input
///     @0.100 kbd1: MSC_SCAN 0x70004, KEY_A 1
///     policy lock=KEY_B            # a policy change mid-stream (its frames are output)
///     drop kbd1 keys=KEY_B         # SYN_DROPPED, then resync to the given state (the broker's
///                                  # path: libevdev consumed the rest and read the state)
///     kbd1: KEY_C 1, SYN_DROPPED 0 # a frame cut by a drop: no SYN_REPORT is added
///     kbd1: KEY_D 1                # (a recording's path: discarded up to this SYN_REPORT)
///     resync kbd1 keys=KEY_C,KEY_D # InputFilter.resync alone
///     @1.300 advance               # InputFilter.advance(to:): slow keys' timer fires
///     --- output
///     kbd1: KEY_A 1
///     exit-requested
///     cleaning-requested           # the cleaning gesture completed (policy clean-gesture=, touch-clean-gesture=)
///     deadline 1.300               # InputFilter.keyDeadline changed after a line (none: no key waits)
struct Scenario: CustomStringConvertible {
    let name: String
    let text: String
    var description: String { name }

    static func directory() -> URL {
        Bundle.module.resourceURL!.appendingPathComponent("Scenarios")
    }

    static func all() -> [Scenario] {
        let urls =
            (try? FileManager.default.contentsOfDirectory(at: directory(), includingPropertiesForKeys: nil)) ?? []
        return urls.filter { $0.pathExtension == "scenario" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
            .map { Scenario(name: $0.lastPathComponent, text: (try? String(contentsOf: $0, encoding: .utf8)) ?? "") }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs the scenario; returns (actual output lines, expected output lines). Events go to
    /// the filter one by one (`InputFilter.process(_:device:into:)`), or with `cut`, each input
    /// line's as two runs (`InputFilter.process(_:device:into:promptKeys:)`, as the broker reads
    /// them): its first `cut` events, then the rest, so that a frame is cut between two reads.
    func run(cut runCut: Int? = nil) throws -> (actual: [String], expected: [String]) {
        var section = 0
        var names: [String] = []
        var descriptions: [String: DeviceDescription] = [:]
        var policy = FilterPolicy.passThrough
        var inputLines: [(Int, String)] = []
        var expected: [String] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = Self.stripComment(raw)
            if line.isEmpty { continue }
            if line.hasPrefix("---") { section += 1; continue }
            switch section {
            case 0:
                if line.hasPrefix("device ") {
                    let words = line.split(separator: " ").map(String.init)
                    guard words.count >= 3 else { throw Failure(description: "line \(number + 1): device NAME KIND") }
                    names.append(words[1])
                    descriptions[words[1]] = try Self.device(
                        kind: words[2], options: Array(words.dropFirst(3)), line: number + 1)
                } else if line.hasPrefix("policy") {
                    policy = try Self.policy(line, line: number + 1)
                } else {
                    throw Failure(description: "line \(number + 1): expected `device` or `policy`, found `\(line)`")
                }
            case 1: inputLines.append((number + 1, line))
            default: expected.append(Self.normalise(line))
            }
        }

        let filter = InputFilter(policy: policy)
        var ids: [String: DeviceID] = [:]
        var nameOf: [DeviceID: String] = [:]
        for name in names {
            let id = filter.addDevice(descriptions[name]!)
            ids[name] = id
            nameOf[id] = name
        }
        var output = OutputBuffer()
        var actual: [String] = []
        var clock: Int64 = 0
        var deadline: Int64?
        /// Slow keys' deadline, when it changed after a line.
        func noteDeadline() {
            let now = filter.keyDeadline
            guard now != deadline else { return }
            deadline = now
            actual.append(now.map { String(format: "deadline %.3f", Double($0) / 1_000_000) } ?? "deadline none")
        }
        func flush() {
            for frame in output.frames {
                let events = output.events(of: frame)
                precondition(events.last?.isSynReport == true, "frame without SYN_REPORT")
                let body = events.dropLast().map(Self.format).joined(separator: ", ")
                actual.append("\(nameOf[frame.device]!): \(body)")
            }
            output.removeAll()
        }
        for (number, line) in inputLines {
            var rest = Substring(line)
            if rest.hasPrefix("policy") {
                filter.setPolicy(try Self.policy(String(rest), line: number), into: &output)
                flush()
                noteDeadline()
                continue
            }
            if rest.hasPrefix("@") {
                let end = rest.firstIndex(of: " ") ?? rest.endIndex
                guard let seconds = Double(rest[rest.index(after: rest.startIndex)..<end]) else {
                    throw Failure(description: "line \(number): bad time")
                }
                clock = Int64((seconds * 1_000_000).rounded())
                rest = rest[end...].drop { $0 == " " }
            } else {
                clock += 10_000
            }
            let time = (seconds: Int(clock / 1_000_000), micro: Int(clock % 1_000_000))
            if rest == "advance" {
                filter.advance(to: clock, into: &output)
                flush()
                noteDeadline()
                continue
            }
            if rest.hasPrefix("drop ") || rest.hasPrefix("resync ") {
                let words = rest.split(separator: " ").map(String.init)
                guard words.count >= 2, let id = ids[words[1]] else {
                    throw Failure(description: "line \(number): unknown device")
                }
                if words[0] == "drop" {
                    let dropped = InputEvent(
                        seconds: time.seconds, microseconds: time.micro, type: 0, code: 3, value: 0)
                    var unused: [PromptKey] = []
                    let resyncNeeded =
                        runCut == nil
                        ? filter.process(dropped, device: id, into: &output).resyncNeeded
                        : [dropped].withUnsafeBufferPointer {
                            filter.process($0, device: id, into: &output, promptKeys: &unused).resyncNeeded
                        }
                    guard resyncNeeded else {
                        throw Failure(description: "line \(number): SYN_DROPPED not flagged")
                    }
                }
                filter.resync(device: id, to: try Self.state(Array(words.dropFirst(2)), line: number), into: &output)
                flush()
                noteDeadline()
                continue
            }
            guard let colon = rest.firstIndex(of: ":"), let id = ids[String(rest[..<colon])] else {
                throw Failure(description: "line \(number): expected `DEVICE: EVENT value, …`")
            }
            var events: [InputEvent] = []
            for part in rest[rest.index(after: colon)...].split(separator: ",") {
                let words = part.split(separator: " ")
                guard words.count == 2, let code = EventCodes.code(named: String(words[0])),
                    let value = Self.number(words[1])
                else {
                    throw Failure(description: "line \(number): bad event `\(part)`")
                }
                events.append(
                    InputEvent(
                        seconds: time.seconds, microseconds: time.micro, type: code.type, code: code.code, value: value)
                )
            }
            // A line ending in SYN_DROPPED is a frame the drop cut: it gets no SYN_REPORT.
            let cut = events.last.map { $0.type == 0 && $0.code == 3 } ?? false
            if !cut {
                events.append(InputEvent(seconds: time.seconds, microseconds: time.micro, type: 0, code: 0, value: 0))
            }
            var exit = false
            var flagged = false
            var took = false
            var woke = false
            var cleaning = false
            var keys: [PromptKey] = []
            if let runCut {
                let first = min(runCut, events.count)
                for run in [events[..<first], events[first...]] where !run.isEmpty {
                    let result = run.withUnsafeBufferPointer {
                        filter.process($0, device: id, into: &output, promptKeys: &keys)
                    }
                    if result.exitRequested { exit = true }
                    if result.resyncNeeded { flagged = true }
                    if result.tookOffer { took = true }
                    if result.woke { woke = true }
                    if result.cleaningRequested { cleaning = true }
                }
            } else {
                for event in events {
                    let result = filter.process(event, device: id, into: &output)
                    if result.exitRequested { exit = true }
                    if result.resyncNeeded { flagged = true }
                    if let key = result.promptKey { keys.append(key) }
                    if result.tookOffer { took = true }
                    if result.woke { woke = true }
                    if result.cleaningRequested { cleaning = true }
                }
            }
            let promptKeys = keys.map { key in
                switch key {
                case .digit(let digit): "prompt-key digit \(digit)"
                default: "prompt-key \(key)"
                }
            }
            if cut && !flagged { throw Failure(description: "line \(number): SYN_DROPPED not flagged") }
            flush()
            actual += promptKeys
            if exit { actual.append("exit-requested") }
            if took { actual.append("took-offer") }
            if woke { actual.append("woke") }
            if cleaning { actual.append("cleaning-requested") }
            noteDeadline()
        }
        return (actual, expected)
    }

    static func format(_ event: InputEvent) -> String {
        let name = EventCodes.name(type: event.type, code: event.code) ?? "\(event.type):\(event.code)"
        return "\(name) \(event.value)"
    }

    static func normalise(_ line: String) -> String {
        line.split(separator: " ").joined(separator: " ").replacingOccurrences(of: " ,", with: ",")
    }

    static func stripComment(_ raw: Substring) -> String {
        var line = raw
        if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
        return line.trimmingCharacters(in: .whitespaces)
    }

    static func number(_ text: Substring) -> Int32? {
        if text.hasPrefix("0x") { return Int32(text.dropFirst(2), radix: 16) }
        return Int32(text)
    }

    static func combo(_ text: String, line: Int) throws -> KeyCombo {
        let parts = text.split(separator: "+").map(String.init)
        var combo = KeyCombo(key: try key(parts.last ?? "", line: line))
        for modifier in parts.dropLast() {
            let side: KeyCombo.Side =
                modifier.hasPrefix("left") ? .left : modifier.hasPrefix("right") ? .right : .either
            switch modifier.replacingOccurrences(of: "left", with: "").replacingOccurrences(of: "right", with: "") {
            case "ctrl": combo.ctrl = side
            case "alt": combo.alt = side
            case "shift": combo.shift = side
            case "super": combo.meta = side
            default: throw Failure(description: "line \(line): unknown modifier \(modifier)")
            }
        }
        return combo
    }

    static func key(_ name: String, line: Int) throws -> UInt16 {
        guard let code = EventCodes.code(named: name), code.type == 1 else {
            throw Failure(description: "line \(line): unknown key \(name)")
        }
        return code.code
    }

    static func device(kind: String, options: [String], line: Int) throws -> DeviceDescription {
        var slots = 10
        var xRange: (Int32, Int32) = (0, 999)
        var yRange: (Int32, Int32) = (0, 999)
        var calibration: CalibrationMatrix?
        var tools = false
        var name: String?
        var id = DeviceDescription.ID()
        for option in options {
            let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
            switch parts[0] {
            case "name": name = parts[1]
            case "vendor": id.vendor = UInt16(parts[1].dropFirst(2), radix: 16)!
            case "product": id.product = UInt16(parts[1].dropFirst(2), radix: 16)!
            case "slots": slots = Int(parts[1])!
            case "x", "y":
                let bounds = parts[1].components(separatedBy: "..").compactMap { Int32($0) }
                if parts[0] == "x" { xRange = (bounds[0], bounds[1]) } else { yRange = (bounds[0], bounds[1]) }
            case "calibration":
                let n = parts[1].split(separator: ",").compactMap { Double($0) }
                calibration = CalibrationMatrix(n[0], n[1], n[2], n[3], n[4], n[5])
            case "tools": tools = true
            default: throw Failure(description: "line \(line): unknown device option \(option)")
            }
        }
        let x = DeviceDescription.AbsInfo(minimum: xRange.0, maximum: xRange.1)
        let y = DeviceDescription.AbsInfo(minimum: yRange.0, maximum: yRange.1)
        let touchKeys: Set<UInt16> = tools ? [330, 325, 333, 334, 335, 328] : [330]
        var description = try Self.device(
            kind: kind, x: x, y: y, slots: slots, touchKeys: touchKeys, calibration: calibration, line: line)
        if let name { description.name = name }
        description.id = id
        return description
    }

    static func device(
        kind: String, x: DeviceDescription.AbsInfo, y: DeviceDescription.AbsInfo, slots: Int, touchKeys: Set<UInt16>,
        calibration: CalibrationMatrix?, line: Int
    ) throws -> DeviceDescription {
        let slot = DeviceDescription.AbsInfo(minimum: 0, maximum: Int32(slots - 1))
        let tracking = DeviceDescription.AbsInfo(minimum: 0, maximum: 65535)
        switch kind {
        case "mouse", "trackball":
            // REL_X, REL_Y, REL_WHEEL; BTN_LEFT, BTN_RIGHT, BTN_MIDDLE (BTN_SIDE, BTN_EXTRA on the
            // trackball); MSC_SCAN.
            let buttons: Set<UInt16> = kind == "mouse" ? [0x110, 0x111, 0x112] : [0x110, 0x111, 0x112, 0x113, 0x114]
            return DeviceDescription(name: kind, codes: [1: buttons, 2: [0, 1, 8], 4: [4]])
        case "pen":
            // A pen display: ABS_X, ABS_Y, ABS_PRESSURE 0…1023, ABS_DISTANCE; BTN_TOOL_PEN,
            // BTN_TOOL_RUBBER, BTN_TOUCH, BTN_STYLUS, BTN_STYLUS2; MSC_SERIAL; INPUT_PROP_DIRECT.
            return DeviceDescription(
                name: "pen", properties: [1],
                codes: [1: [0x140, 0x141, 0x14a, 0x14b, 0x14c], 3: [0, 1, 0x18, 0x19], 4: [0]],
                absInfo: [0: x, 1: y, 0x18: .init(minimum: 0, maximum: 1023), 0x19: .init(minimum: 0, maximum: 63)],
                calibration: calibration)
        case "absmouse":
            // A VM's "tablet": ABS_X, ABS_Y, BTN_LEFT, BTN_RIGHT, REL_WHEEL.
            return DeviceDescription(
                name: "absmouse", codes: [1: [0x110, 0x111], 2: [8], 3: [0, 1]], absInfo: [0: x, 1: y],
                calibration: calibration)
        case "touchpad":
            // A clickpad: protocol B, BTN_LEFT, BTN_TOOL_FINGER…QUINTTAP, INPUT_PROP_POINTER + BUTTONPAD.
            return DeviceDescription(
                name: "touchpad", properties: [0, 2],
                codes: [1: [0x110, 330, 325, 333, 334, 335, 328], 3: [0, 1, 0x2f, 0x35, 0x36, 0x39]],
                absInfo: [0: x, 1: y, 0x2f: slot, 0x35: x, 0x36: y, 0x39: tracking])
        case "joystick":
            return DeviceDescription(
                name: "joystick", codes: [1: [0x120, 0x121], 3: [0, 1]],
                absInfo: [0: .init(minimum: -127, maximum: 127), 1: .init(minimum: -127, maximum: 127)])
        case "keyboard":
            return DeviceDescription(name: "keyboard", codes: [1: Set(1..<0x2ff), 4: [4], 20: []])
        case "touchscreen":
            return DeviceDescription(
                name: "touchscreen", properties: [1], codes: [1: touchKeys, 3: [0, 1, 0x2f, 0x35, 0x36, 0x39]],
                absInfo: [0: x, 1: y, 0x2f: slot, 0x35: x, 0x36: y, 0x39: tracking], calibration: calibration)
        case "singletouch":
            return DeviceDescription(
                name: "singletouch", properties: [1], codes: [1: touchKeys, 3: [0, 1]], absInfo: [0: x, 1: y],
                calibration: calibration)
        case "protocol-a":
            return DeviceDescription(
                name: "protocol-a", properties: [1], codes: [1: touchKeys, 3: [0, 1, 0x35, 0x36]],
                absInfo: [0: x, 1: y, 0x35: x, 0x36: y], calibration: calibration)
        default:
            throw Failure(description: "line \(line): unknown device kind \(kind)")
        }
    }

    static func policy(_ text: String, line: Int) throws -> FilterPolicy {
        var policy = FilterPolicy.passThrough
        var regions: [TouchRegion] = []
        for word in text.split(separator: " ").dropFirst().map(String.init) {
            let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
            switch parts[0] {
            case "lock":
                policy.lockedKeys = Set(try parts[1].split(separator: ",").map { try key(String($0), line: line) })
            case "chords": policy.blockEscapeChords = parts[1] == "blocked"
            case "combo":  // combo=ctrl+shift+KEY_N (ctrl, alt, shift, super; leftctrl, rightalt, …)
                policy.lockedCombos.append(try combo(parts[1], line: line))
            case "allow-alt":  // keys that make no blocked chord with Alt: allow-alt=KEY_LEFT,KEY_RIGHT
                policy.allowedAltChords = Set(
                    try parts[1].split(separator: ",").map { try key(String($0), line: line) })
            case "hold": policy.holdAllInput = true
            case "sticky": policy.keyAccess.stickyKeys = true
            case "slow":  // slow=SECONDS
                policy.keyAccess.slowKeys = Int64((Double(parts[1])! * 1_000_000).rounded())
            case "bounce":  // bounce=SECONDS
                policy.keyAccess.bounceKeys = Int64((Double(parts[1])! * 1_000_000).rounded())
            case "prompt": policy.readsPasscode = true
            case "offer": policy.offersTime = true
            case "still-there": policy.asksPresence = true
            case "display-off": policy.displayOff = true
            case "clean": policy.cleaning = true
            case "clean-pass":  // keys that pass while cleaning: clean-pass=KEY_SPACE,KEY_ENTER
                policy.cleaningPassKeys = Set(
                    try parts[1].split(separator: ",").map { try key(String($0), line: line) })
            case "clean-gesture":  // clean-gesture=KEY:PRESSES:SECONDS
                let g = parts[1].split(separator: ":").map(String.init)
                policy.cleaningGesture = ExitGesture(
                    key: try key(g[0], line: line), presses: Int(g[1])!, within: Int64(Double(g[2])! * 1_000_000))
            case "touch-clean-gesture":  // touch-clean-gesture=top-right:TAPS:SECONDS
                let g = parts[1].split(separator: ":").map(String.init)
                policy.touchCleaningGesture = TouchExitGesture(
                    corner: TouchExitGesture.Corner(rawValue: g[0])!, taps: Int(g[1])!,
                    within: Int64(Double(g[2])! * 1_000_000))
            case "touch-gesture":  // touch-gesture=top-left:TAPS:SECONDS
                let g = parts[1].split(separator: ":").map(String.init)
                policy.touchExitGesture = TouchExitGesture(
                    corner: TouchExitGesture.Corner(rawValue: g[0])!, taps: Int(g[1])!,
                    within: Int64(Double(g[2])! * 1_000_000))
            case "pointer":
                switch parts[1] {
                case "allowed": policy.pointer = .allowed
                case "locked": policy.pointer = .locked
                case "regions": policy.pointer = .regions
                default: throw Failure(description: "line \(line): pointer=allowed|locked|regions")
                }
            case "allow-combo":  // allow-combo=super+alt+KEY_S
                policy.allowedCombos.append(try combo(parts[1], line: line))
            case "allow-device":  // allow-device=NAME:keys|pointer|all[:vendor:product] (NAME as the device's name=)
                let p = parts[1].split(separator: ":").map(String.init)
                let matcher =
                    p.count >= 4
                    ? DeviceMatcher(
                        name: p[0] == "*" ? nil : p[0], vendor: UInt16(p[2], radix: 16),
                        product: UInt16(p[3], radix: 16))
                    : DeviceMatcher(name: p[0])
                policy.allowedDevices.append(
                    AllowedDevice(
                        role: "test", matcher: matcher, passesKeys: p[1] != "pointer", passesPointer: p[1] != "keys"))
            case "touch":
                switch parts[1] {
                case "all": policy.touch = .all
                case "none": policy.touch = .none
                case "regions": policy.touch = .regions([])
                default: throw Failure(description: "line \(line): touch=all|none|regions")
                }
            case "max-contacts":  // max-contacts=2
                policy.maxContacts = Int(parts[1])
            case "edge-margin":  // edge-margin=0.05
                policy.edgeMargin = Double(parts[1]) ?? 0
            case "rect":
                let n = parts[1].split(separator: ",").compactMap { Double($0) }
                regions.append(.rect(x: n[0], y: n[1], width: n[2], height: n[3]))
            case "polygon":
                let points = parts[1].split(separator: ";").map { pair -> Point in
                    let n = pair.split(separator: ",").compactMap { Double($0) }
                    return Point(x: n[0], y: n[1])
                }
                regions.append(.polygon(points))
            case "gesture":
                let g = parts[1].split(separator: ":").map(String.init)
                policy.exitGesture = ExitGesture(
                    key: try key(g[0], line: line), presses: Int(g[1])!, within: Int64(Double(g[2])! * 1_000_000))
            default: throw Failure(description: "line \(line): unknown policy word \(word)")
            }
        }
        if !regions.isEmpty { policy.touch = .regions(regions) }
        return policy
    }

    /// `keys=KEY_A,KEY_B abs=ABS_X:5,ABS_Y:7 slot0=ID:X:Y slot1=… current=N`
    static func state(_ words: [String], line: Int) throws -> DeviceState {
        var state = DeviceState()
        for word in words {
            let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw Failure(description: "line \(line): bad state word \(word)") }
            if parts[0] == "keys" {
                state.keysDown = Set(try parts[1].split(separator: ",").map { try key(String($0), line: line) })
            } else if parts[0] == "abs" {
                for item in parts[1].split(separator: ",") {
                    let kv = item.split(separator: ":")
                    state.absValues[EventCodes.code(named: String(kv[0]))!.code] = Int32(kv[1])!
                }
            } else if parts[0] == "current" {
                state.currentSlot = Int(parts[1])!
            } else if parts[0].hasPrefix("slot"), let index = Int(parts[0].dropFirst(4)) {
                let n = parts[1].split(separator: ":").compactMap { Int32($0) }
                while state.slots.count <= index { state.slots.append(DeviceState.Slot()) }
                state.slots[index] = DeviceState.Slot(
                    trackingID: n[0], axes: n.count == 3 ? [0x35: n[1], 0x36: n[2]] : [:])
            } else {
                throw Failure(description: "line \(line): bad state word \(word)")
            }
        }
        return state
    }
}
