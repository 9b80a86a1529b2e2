// InputFilterBench: filter throughput and allocations per event, in release mode.
// `make bench-input` builds and runs it from the package root; it reads the real traces from
// Tests/KioskTracesTests/Fixtures (or the directory given as the first argument).
//
// Throughput: events per second through `InputFilter.process`, event by event and in runs of
// a frame (output cleared after every frame, as the broker does after its write), next to a
// plain copy loop over the same events in the same run, and their ratio. `--count`: a fixed
// amount of work for callgrind (below). Allocations: ordo-one/malloc-interposer counts every
// malloc-family call (LD_PRELOADed by the make target); the count is checked against a loop
// that allocates a known number of arrays before anything is measured.

import Glibc
import KioskInput
import KioskTraces
import MallocInterposerSwift

// MARK: - Allocation counting (ordo-one/malloc-interposer, preloaded by `make bench-input`)

/// malloc/calloc/realloc/posix_memalign calls made by this thread since `reset`.
func mallocCount() -> Int {
    MallocInterposerSwift.getStatistics().mallocCount
}

@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

// MARK: - Workloads

struct Workload {
    let name: String
    let description: DeviceDescription
    let events: [InputEvent]
    let policy: FilterPolicy
}

/// A 10-finger touchscreen at 240 Hz: every frame moves all ten contacts (slot, x, y each),
/// plus BTN_TOUCH/ABS_X/ABS_Y emulation; contacts lift and land again every second.
func syntheticTenFinger(seconds: Int) -> (DeviceDescription, [InputEvent]) {
    let axis = DeviceDescription.AbsInfo(minimum: 0, maximum: 4095)
    let description = DeviceDescription(
        name: "synthetic 10-finger", properties: [1],
        codes: [0: [0], 1: [330], 3: [0, 1, 0x2f, 0x35, 0x36, 0x39]],
        absInfo: [
            0: axis, 1: axis, 0x2f: DeviceDescription.AbsInfo(minimum: 0, maximum: 9),
            0x35: axis, 0x36: axis, 0x39: DeviceDescription.AbsInfo(minimum: 0, maximum: 65535),
        ])
    var events: [InputEvent] = []
    var trackingID: Int32 = 0
    for frame in 0..<(seconds * 240) {
        let usec = frame * 1_000_000 / 240
        let t = (usec / 1_000_000, usec % 1_000_000)
        func add(_ type: UInt16, _ code: UInt16, _ value: Int32) {
            events.append(InputEvent(seconds: t.0, microseconds: t.1, type: type, code: code, value: value))
        }
        let phase = frame % 240
        for slot in 0..<10 {
            add(3, 0x2f, Int32(slot))
            if phase == 0 { add(3, 0x39, trackingID); trackingID += 1 }
            if phase == 239 { add(3, 0x39, -1); continue }
            add(3, 0x35, Int32(200 + slot * 360 + phase))
            add(3, 0x36, Int32(300 + phase * 10))
        }
        if phase == 0 { add(1, 330, 1) }
        if phase == 239 { add(1, 330, 0) } else { add(3, 0, Int32(200 + phase)); add(3, 1, Int32(300 + phase * 10)) }
        add(0, 0, 0)
    }
    return (description, events)
}

/// A region over the left tenth of the screen: about one contact in ten is suppressed.
let leftStrip = FilterPolicy(
    lockedKeys: [116, 114, 115], blockEscapeChords: true,
    touch: .regions([.rect(x: 0, y: 0, width: 0.1, height: 1)]))

// MARK: - Measurement

struct Measurement { var eventsPerSecond: Double; var allocationsPerEvent: Double }

/// `inRuns`: each frame fed as one run (`process(_:device:into:promptKeys:)`, the broker's path
/// when frames come one by one), the output cleared after each; otherwise event by event,
/// cleared at each `SYN_REPORT`.
func measureFilter(_ workload: Workload, minimumEvents: Int, inRuns: Bool) -> Measurement {
    let filter = InputFilter(policy: workload.policy)
    let device = filter.addDevice(workload.description)
    var output = OutputBuffer(capacity: 4096)
    var promptKeys: [PromptKey] = []
    promptKeys.reserveCapacity(64)
    let frames = runs(of: workload.events, feed: "frame")
    var forwarded = 0
    func pass() {
        if inRuns {
            workload.events.withUnsafeBufferPointer { buffer in
                for frame in frames {
                    filter.process(
                        UnsafeBufferPointer(rebasing: buffer[frame]), device: device, into: &output,
                        promptKeys: &promptKeys)
                    forwarded &+= output.events.count
                    output.removeAll()
                    promptKeys.removeAll(keepingCapacity: true)
                }
            }
            return
        }
        for event in workload.events {
            filter.process(event, device: device, into: &output)
            if event.type == 0 && event.code == 0 {
                forwarded &+= output.events.count
                output.removeAll()
            }
        }
    }
    pass()  // warm-up: buffers reach their steady-state capacity
    let repetitions = max(1, minimumEvents / max(1, workload.events.count))
    var best = Double.infinity
    var allocationsPerEvent = 0.0
    for _ in 0..<5 {
        let allocationsBefore = mallocCount()
        let start = now()
        for _ in 0..<repetitions { pass() }
        let elapsed = now() - start
        allocationsPerEvent = Double(mallocCount() - allocationsBefore) / Double(repetitions * workload.events.count)
        best = min(best, elapsed)
    }
    blackHole(forwarded)
    return Measurement(
        eventsPerSecond: Double(repetitions * workload.events.count) / best,
        allocationsPerEvent: allocationsPerEvent)
}

/// The floor: copy each event into a reusable output array, clearing it at every SYN_REPORT.
func measureCopy(_ workload: Workload, minimumEvents: Int) -> Double {
    var output: [InputEvent] = []
    output.reserveCapacity(4096)
    var checksum = 0
    func pass() {
        for event in workload.events {
            output.append(event)
            if event.type == 0 && event.code == 0 {
                checksum &+= output.count
                output.removeAll(keepingCapacity: true)
            }
        }
    }
    pass()
    let repetitions = max(1, minimumEvents / max(1, workload.events.count))
    var best = Double.infinity
    for _ in 0..<5 {
        let start = now()
        for _ in 0..<repetitions { pass() }
        best = min(best, now() - start)
    }
    blackHole(checksum)
    return Double(repetitions * workload.events.count) / best
}

func format(_ value: Double) -> String {
    if value >= 1e6 { return "\(Double(Int(value / 1e4)) / 100) M" }
    return "\(Int(value))"
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

/// A keyboard typing: MSC_SCAN + key press, release, with Ctrl and Shift now and then.
func syntheticTyping(keys: Int) -> (DeviceDescription, [InputEvent]) {
    let description = DeviceDescription(name: "synthetic keyboard", codes: [1: Set(1..<0x100), 4: [4]])
    var events: [InputEvent] = []
    var time: Int64 = 0
    func frame(_ code: UInt16, _ value: Int32) {
        time += 8_000
        let (s, us) = (Int(time / 1_000_000), Int(time % 1_000_000))
        events.append(InputEvent(seconds: s, microseconds: us, type: 4, code: 4, value: 0x70000 + Int32(code)))
        events.append(InputEvent(seconds: s, microseconds: us, type: 1, code: code, value: value))
        events.append(InputEvent(seconds: s, microseconds: us, type: 0, code: 0, value: 0))
    }
    let letters: [UInt16] = [30, 48, 46, 32, 18, 33, 34, 35, 23, 36, 37, 38, 50, 49, 24, 25, 16, 19, 31, 20]
    for index in 0..<keys {
        let modifier: UInt16? = index % 10 == 0 ? 29 : index % 7 == 0 ? 42 : nil  // Ctrl, Shift
        if let modifier { frame(modifier, 1) }
        let key = letters[index % letters.count]
        frame(key, 1)
        frame(key, 0)
        if let modifier { frame(modifier, 0) }
    }
    return (description, events)
}

let typingPolicy = FilterPolicy(
    lockedKeys: [102, 125, 126], blockEscapeChords: true,
    lockedCombos: [
        KeyCombo(ctrl: .either, key: 49), KeyCombo(ctrl: .either, key: 20), KeyCombo(ctrl: .either, key: 17),
        KeyCombo(alt: .either, key: 62),
    ],
    allowedCombos: [KeyCombo(alt: .either, meta: .either, key: 31)],
    allowedDevices: [
        AllowedDevice(role: "keypad", matcher: DeviceMatcher(name: "keypad"), passesKeys: true, passesPointer: false)
    ])

/// The same with the keyboard access features on (docs/profiles.md#keyboard-access-features):
/// every key through sticky keys, slow keys (4 ms: each press counts when its release comes, 8 ms
/// later) and bounce keys.
let typingAccessPolicy: FilterPolicy = {
    var policy = typingPolicy
    policy.keyAccess = KeyAccessSettings(stickyKeys: true, slowKeys: 4_000, bounceKeys: 50_000)
    return policy
}()

// MARK: - Fixed counts

/// The measured passes: the events through the filter as `feed` says, the output cleared
/// after each call that ends a frame (as the broker does after its write). Out of line, so
/// callgrind can count it alone. `runs`: the events' split into the runs fed at once (`frame`,
/// `run64`); empty for `event`, which feeds them one by one.
@inline(never)
func countedPasses(
    _ filter: InputFilter, _ device: DeviceID, _ events: [InputEvent], runs: [Range<Int>], passes: Int,
    output: inout OutputBuffer, promptKeys: inout [PromptKey]
) -> Int {
    var forwarded = 0
    for _ in 0..<passes {
        if runs.isEmpty {
            for event in events {
                filter.process(event, device: device, into: &output)
                if event.type == 0 && event.code == 0 {
                    forwarded &+= output.events.count
                    output.removeAll()
                }
            }
            continue
        }
        events.withUnsafeBufferPointer { buffer in
            for run in runs {
                filter.process(
                    UnsafeBufferPointer(rebasing: buffer[run]), device: device, into: &output, promptKeys: &promptKeys)
                forwarded &+= output.events.count
                output.removeAll()
                promptKeys.removeAll(keepingCapacity: true)
            }
        }
    }
    return forwarded
}

/// The runs a stream is fed in: one per frame (a device read as frames come, what kioskd sees
/// under a person's input), or reads of up to 64 events (`EvdevDevice.readCapacity`: a backlog).
func runs(of events: [InputEvent], feed: String) -> [Range<Int>] {
    var runs: [Range<Int>] = []
    switch feed {
    case "frame":
        var start = 0
        for (index, event) in events.enumerated() where event.type == 0 && event.code == 0 {
            runs.append(start..<index + 1)
            start = index + 1
        }
    case "run64":
        for start in stride(from: 0, to: events.count, by: 64) { runs.append(start..<min(start + 64, events.count)) }
    default:
        break
    }
    return runs
}

/// `typing`: the typing workload (`typing-access`: with the keyboard access features on); `ten-finger`: the synthetic 10-finger screen under the left
/// strip's regions; or a recording's file name (under the left strip); one device each. `feed`: `event` (one by one), `frame` or `run64`.
/// Prints the events per pass (divide callgrind's count of `countedPasses` by events × passes).
func runCounted(_ name: String, passes: Int, feed: String) {
    let (description, events, policy): (DeviceDescription, [InputEvent], FilterPolicy)
    switch name {
    case "typing", "typing-access":
        let (d, e) = syntheticTyping(keys: 2_000)
        (description, events, policy) = (d, e, name == "typing" ? typingPolicy : typingAccessPolicy)
    case "ten-finger":
        let (d, e) = syntheticTenFinger(seconds: 1)
        (description, events, policy) = (d, e, leftStrip)
    default:
        // A recording of Tests/KioskTracesTests/Fixtures by its file name, under the left strip.
        guard let text = readFile("Tests/KioskTracesTests/Fixtures/\(name)"), let trace = try? Trace.parse(text) else {
            print(
                "unknown workload \(name): typing, typing-access, ten-finger or a fixture's file name"
                    + " (run from the package root)")
            exit(2)
        }
        (description, events, policy) = (trace.devices[0].description, trace.devices[0].events, leftStrip)
    }
    guard ["event", "frame", "run64"].contains(feed) else {
        print("unknown feed \(feed): event, frame or run64")
        exit(2)
    }
    let filter = InputFilter(policy: policy)
    let device = filter.addDevice(description)
    var output = OutputBuffer(capacity: 4096)
    var promptKeys: [PromptKey] = []
    promptKeys.reserveCapacity(64)
    let split = runs(of: events, feed: feed)
    // The first pass warms up: buffers grow to their steady-state capacity.
    let warm = countedPasses(filter, device, events, runs: split, passes: 1, output: &output, promptKeys: &promptKeys)
    let forwarded = countedPasses(
        filter, device, events, runs: split, passes: passes, output: &output, promptKeys: &promptKeys)
    blackHole(warm)
    print(
        "\(name), fed by \(feed): \(events.count) events per pass, \(passes) passes (after one to warm up),"
            + " \(forwarded) forwarded")
}

// MARK: - Main

// `InputFilterBench --count WORKLOAD PASSES [FEED]`: a fixed amount of filter work and nothing else
// measured, for an instruction count under callgrind (docs/benchmarks.md § Instructions per
// frame): `valgrind --tool=callgrind --toggle-collect='*countedPasses*'` counts only the passes.
if (4...5).contains(CommandLine.arguments.count), CommandLine.arguments[1] == "--count",
    let passes = Int(CommandLine.arguments[3])
{
    runCounted(CommandLine.arguments[2], passes: passes, feed: CommandLine.arguments.dropFirst(4).first ?? "event")
    exit(0)
}

let fixtureDirectory = CommandLine.arguments.dropFirst().first ?? "Tests/KioskTracesTests/Fixtures"
let traceNames = [
    "atmel-maxtouch-ts.2-fingers-touch-release.evemu",
    "atmel-maxtouch-ts.4-finger-drag-down.evemu",
    "ep0430m09-ts.2-finger-scroll-down.evemu",
]

func readFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes.append(contentsOf: chunk[0..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}

MallocInterposerSwift.initialize()
MallocInterposerSwift.hook()

// Check the counter before trusting it: 1000 fresh arrays must count as (at least) 1000.
var kept: [[Int]] = []
kept.reserveCapacity(1000)
let beforeCheck = mallocCount()
for index in 0..<1000 { kept.append(Array(repeating: index, count: 2 + index % 5)) }
let counted = mallocCount() - beforeCheck
blackHole(kept)
print("allocation counter check: 1000 array allocations counted as \(counted)")
guard counted >= 1000 else {
    print("allocation counter does not work (run with LD_PRELOAD=…/libMallocInterposerSwift.so: make bench-input)")
    exit(1)
}

/// `[touch] max-contacts = 2` and `edge-margin = 0.02` (docs/profiles.md#fingers-at-once-and-edge-swipes),
/// touch otherwise allowed: beside the pass-through workload it is the limit's own cost.
let fingers: FilterPolicy = {
    var policy = FilterPolicy()
    policy.maxContacts = 2
    policy.edgeMargin = 0.02
    return policy
}()

var workloads: [Workload] = []
for name in traceNames {
    guard let text = readFile("\(fixtureDirectory)/\(name)") else {
        print("missing fixture \(fixtureDirectory)/\(name) (run from the package root)")
        exit(1)
    }
    let device = try Trace.parse(text).devices[0]
    let short = String(name.dropLast(".evemu".count))
    workloads.append(
        Workload(name: short, description: device.description, events: device.events, policy: .passThrough))
    workloads.append(
        Workload(name: short + " +regions", description: device.description, events: device.events, policy: leftStrip))
    workloads.append(
        Workload(
            name: short + " +2 fingers, edge", description: device.description, events: device.events,
            policy: fingers))
}
let (syntheticDescription, syntheticEvents) = syntheticTenFinger(seconds: 10)
workloads.append(
    Workload(
        name: "synthetic 10-finger 240 Hz", description: syntheticDescription, events: syntheticEvents,
        policy: .passThrough))
workloads.append(
    Workload(
        name: "synthetic 10-finger 240 Hz +regions", description: syntheticDescription, events: syntheticEvents,
        policy: leftStrip))
workloads.append(
    Workload(
        name: "synthetic 10-finger 240 Hz +2 fingers, edge", description: syntheticDescription,
        events: syntheticEvents, policy: fingers))

// The rules of docs/profiles.md#pointers and its key rules: pointers (real mouse, trackpad and pen recordings) and typing under a
// session's key rules (escape chords, locked and allowed combos, an allowed-device entry).
let pointerTraces: [(String, String, FilterPolicy)] = [
    ("saitek-cyborg-rat5-mouse.motion-and-clicks.evemu", "+pointer allowed", FilterPolicy(pointer: .allowed)),
    ("saitek-cyborg-rat5-mouse.motion-and-clicks.evemu", "+pointer locked", FilterPolicy(pointer: .locked)),
    ("cypress-trackpad.two-finger-tap.evemu", "+pointer locked", FilterPolicy(pointer: .locked)),
    ("wacom-cintiq-13hd-pen.strokes.evemu", "+regions", FilterPolicy(touch: leftStrip.touch, pointer: .regions)),
]
for (name, label, policy) in pointerTraces {
    guard let text = readFile("\(fixtureDirectory)/\(name)") else {
        print("missing fixture \(fixtureDirectory)/\(name) (run from the package root)")
        exit(1)
    }
    let device = try Trace.parse(text).devices[0]
    let short = String(name.dropLast(".evemu".count))
    workloads.append(
        Workload(name: "\(short) \(label)", description: device.description, events: device.events, policy: policy))
}
let (keyboardDescription, typingEvents) = syntheticTyping(keys: 20_000)
workloads.append(
    Workload(
        name: "synthetic typing +chords, combos, devices", description: keyboardDescription, events: typingEvents,
        policy: typingPolicy))
workloads.append(
    Workload(
        name: "synthetic typing +sticky, slow, bounce keys", description: keyboardDescription, events: typingEvents,
        policy: typingAccessPolicy))
// Cleaning the screen (docs/input-enforcement.md#cleaning-the-screen): every touch held, and
// typing held but the keys an allowed-device entry and allowed-keys pass, the cleaning gesture
// counted on every press.
var cleaningTouch = FilterPolicy.passThrough
cleaningTouch.cleaning = true
cleaningTouch.touchCleaningGesture = TouchExitGesture(corner: .topRight, taps: 4, within: 2_000_000)
workloads.append(
    Workload(
        name: "synthetic 10-finger 240 Hz +cleaning", description: syntheticDescription, events: syntheticEvents,
        policy: cleaningTouch))
var cleaningTyping = typingPolicy
cleaningTyping.cleaning = true
cleaningTyping.cleaningPassKeys = [57]  // KEY_SPACE
cleaningTyping.cleaningGesture = ExitGesture(key: 88, presses: 5, within: 3_000_000)  // KEY_F12
workloads.append(
    Workload(
        name: "synthetic typing +cleaning", description: keyboardDescription, events: typingEvents,
        policy: cleaningTyping))

let minimumEvents = 4_000_000
print("")
print(
    pad("workload", 62) + pad("events", 8) + pad("filter ev/s", 14) + pad("in runs ev/s", 14) + pad("copy ev/s", 14)
        + pad("ratio", 8) + "allocs/event")
for workload in workloads {
    let filter = measureFilter(workload, minimumEvents: minimumEvents, inRuns: false)
    let inRuns = measureFilter(workload, minimumEvents: minimumEvents, inRuns: true)
    let copy = measureCopy(workload, minimumEvents: minimumEvents)
    let ratio = Double(Int(copy / filter.eventsPerSecond * 100)) / 100
    print(
        pad(workload.name, 62) + pad("\(workload.events.count)", 8) + pad(format(filter.eventsPerSecond), 14)
            + pad(format(inRuns.eventsPerSecond), 14) + pad(format(copy), 14) + pad("\(ratio)x", 8)
            + "\(max(filter.allocationsPerEvent, inRuns.allocationsPerEvent))")
}
print("")
print("filter: event by event (process(_:device:into:)); in runs: a frame a run (process(_:device:into:promptKeys:),")
print("the broker's path); ratio = copy loop throughput / filter throughput, event by event.")
print("targets: filter >= 10 M events/s, 0 allocations per event in steady state.")
