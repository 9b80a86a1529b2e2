// Latency benchmark (docs/benchmarks.md#latency): what kioskd's broker adds between a physical
// event and its clone, in one view next to no forwarder at all, a plain C loop
// (Benchmarks/PlainLoop/plain-loop.c) and the same loop in Python (plain-loop.py), all in the
// same VM run. `make bench-latency` builds them in release mode and runs this inside the VM
// (Tests/VM/run-in-vm: root, /dev/uinput, udev, one vCPU).
//
// Every path has its own two fake physical devices, made through uinput: a keyboard (MSC_SCAN
// with every key) and a 10-slot touchscreen. The paths, all alive at once:
// - direct: no forwarder; the reader reads the source node itself (the floor: the kernel's
//   evdev and uinput, the feeder and the reader);
// - C loop: plain-loop.c on its sources (grab, epoll_wait → read → write into a clone);
// - Python loop: plain-loop.py, the same loop (python3-evdev sets up), if python3-evdev imports;
// - kioskd: the real kioskd ($KIOSKD_BINARY, the multi-call binary as packaged) on a private
//   dbus-daemon, with a session active whose profile locks what these events never hit (power,
//   volume, a corner of the screen); there is no run without a session;
// - kioskd before: optionally a second kioskd binary ($KIOSKD_BEFORE, e.g. the tree before a
//   change), set up the same way. The two kioskds take turns run by run on the same sources,
//   one alive at a time: two alive at once retry each other's sources (busy) on their back-off
//   timer, and each retry stalled the retrying kioskd (~60 ms in the TCG guest), which no kiosk
//   sees.
// kioskd takes every input device it sees except its own clones, which it knows by their phys
// (`kioskd-clone/…`, UInputClone.physMarker): the sources of the direct path and of both loops
// carry such a phys, so kioskd leaves them alone (the loops copy it to their clones); the bench
// fails if any output node is grabbed by another process.
//
// Frames go out every 2 ms, the paths taking turns every 10 frames (keys and touches
// alternating within each path); each run starts every forwarder afresh and rotates the order
// of the turns, so that load on the machine and position in the cycle fall on all paths. Each
// frame's latency is the time from just before the feeder's write(2) to the source to the
// reader's return from read(2) on the clone (the source itself for direct), both
// CLOCK_MONOTONIC in this process: no clock of the events' own is compared. Per path and run:
// p50, p99, max; added latency over direct (the path's p50 minus direct's p50, p99 minus p99, of
// the same run or pool; a kioskd is pooled over its own runs, against direct and the C loop of
// those runs); ratios to the C loop (total p50 and p99, added p50 and p99, CPU); CPU per
// frame, the forwarder's on-CPU time over the run's feed (/proc/PID/task/*/schedstat) divided by
// the frames it forwarded. Then the same pooled over all runs, with the spread (min–max) of the
// runs' own figures. A path with no frame through in a run is an error (exit 1).
//
// Before each run's feed the bench waits for udev to settle and to let its idle workers go
// (quiesceUdev): their exits, ~3 s after the clones were made, took the one vCPU for 15-45 ms.
//
// Instruction counts (LATENCY_CALLGRIND=DIR, `make bench-latency-count`): the C loop and each
// kioskd run under `valgrind --tool=callgrind`, and the bench zeroes their counters just before
// a run's feed (`callgrind_control -z`) and dumps them just after it (`-d`): the instructions
// each forwarder executed in user space over the feed, divided by the frames it was sent. Unlike
// CPU time, that count is the same whatever else the machine does, so two binaries compare on a
// loaded or emulated machine; it leaves out the kernel's share (the syscalls), which CPU time
// has. Latencies in such a run are valgrind's, not the forwarders': the figures to read are the
// instruction counts, and the profile in DIR (callgrind_annotate).
//
// Environment: LATENCY_ROUNDS (runs, default 5; per kioskd with KIOSKD_BEFORE), LATENCY_FRAMES (frames per path per run,
// default 3000, rounded up to whole touches: 3040; the first 100 of each path are warm-up, not
// counted), LATENCY_PERIOD_US (µs between frames, default 2000), PLAIN_LOOP (the C loop's binary),
// PYTHON_LOOP (plain-loop.py; empty or unset: no Python loop), KIOSKD_BINARY, KIOSKD_BEFORE (unset
// or empty: no second kioskd), LATENCY_CALLGRIND (above).
import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskInput
import LinuxInput
import Synchronization
import SystemdKit

// MARK: Helpers

/// CLOCK_MONOTONIC in ns.
func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// How to stop each forwarder now running, the newest last: `fail` stops them, so that none
/// outlives the bench (a loop left running would hold the caller's stderr open).
nonisolated(unsafe) var running: [() -> Void] = []

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("LatencyBench: \(message)\n".utf8))
    let stops = running
    running = []
    for stop in stops.reversed() { stop() }
    exit(1)
}

/// The `p` quantile of `sorted` in ms (nearest rank); nil when there is nothing to take it of.
func percentile(_ sorted: [UInt64], _ p: Double) -> Double? {
    guard !sorted.isEmpty else { return nil }
    return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1e6
}

let environment = ProcessInfo.processInfo.environment
func setting(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
func count(_ name: String, default value: Int) -> Int {
    guard let text = setting(name) else { return value }
    guard let n = Int(text), n > 0 else { fail("\(name)=\(text): not a positive whole number") }
    return n
}
let rounds = count("LATENCY_ROUNDS", default: 5)
let framesPerPath = (count("LATENCY_FRAMES", default: 3000) + 79) / 80 * 80  // whole contacts
/// Frames one path sends before the next path's turn.
let block = 10
let period = UInt64(count("LATENCY_PERIOD_US", default: 2000)) * 1000  // default 500 frames/s
/// Where callgrind writes its profiles, when the forwarders run under it.
let callgrindDir = setting("LATENCY_CALLGRIND")
let kioskdPath = setting("KIOSKD_BINARY") ?? ""
let plainLoopPath = setting("PLAIN_LOOP") ?? ""
let kioskdBeforePath = setting("KIOSKD_BEFORE")
let pythonLoopPath = setting("PYTHON_LOOP")
let python = "/usr/bin/python3"
for (name, path) in [("KIOSKD_BINARY", kioskdPath), ("PLAIN_LOOP", plainLoopPath), ("KIOSKD_BEFORE", kioskdBeforePath)]
where path.map({ !FileManager.default.isExecutableFile(atPath: $0) }) ?? false {
    fail("no executable at '\(path!)' (\(name)); run `make bench-latency`")
}
guard getuid() == 0, access("/dev/uinput", W_OK) == 0 else { fail("needs root and /dev/uinput: run it in the VM") }
guard framesPerPath > Stream.warmUp else { fail("LATENCY_FRAMES must be over \(Stream.warmUp), the warm-up") }

// MARK: The fake physical devices

func code(_ name: String) -> UInt16 { EventCodes.code(named: name)!.code }

func keyboardDescription(phys: String) -> DeviceDescription {
    DeviceDescription(
        name: "kioskd latency keyboard", phys: phys,
        id: .init(bus: 0x03, vendor: 0x046d, product: 0xc31c, version: 0x0111),
        codes: [
            EV.key: Set(["KEY_A", "KEY_B", "KEY_LEFTSHIFT", "KEY_ENTER", "KEY_CAPSLOCK", "KEY_VOLUMEUP"].map(code)),
            EV.msc: [MSC.scan], EV.led: [code("LED_NUML"), code("LED_CAPSL")],
        ])
}
// Like a real panel's, but no fuzz: the kernel must not swallow a move of a few units.
func touchDescription(phys: String) -> DeviceDescription {
    DeviceDescription(
        name: "kioskd latency touchscreen", phys: phys,
        id: .init(bus: 0x18, vendor: 0x04f3, product: 0x2a1c, version: 0x0100),
        properties: [EventCodes.property(named: "INPUT_PROP_DIRECT")!],
        codes: [
            EV.key: [BTN.touch],
            EV.abs: [ABS.x, ABS.y, ABS.mtSlot, ABS.mtTrackingID, ABS.mtPositionX, ABS.mtPositionY],
        ],
        absInfo: [
            ABS.x: .init(minimum: 0, maximum: 4095, resolution: 16),
            ABS.y: .init(minimum: 0, maximum: 2399, resolution: 16),
            ABS.mtSlot: .init(minimum: 0, maximum: 9), ABS.mtTrackingID: .init(minimum: 0, maximum: 65535),
            ABS.mtPositionX: .init(minimum: 0, maximum: 4095, resolution: 16),
            ABS.mtPositionY: .init(minimum: 0, maximum: 2399, resolution: 16),
        ])
}

/// The locks of the kioskd paths' session: nothing the feeder sends is locked, but all of it is
/// judged (the keyboard's keys one by one, each touch against the locked corner).
let profile = """
    description = "bench-latency: power and volume locked, the top-right corner locked"
    [buttons]
    power = "locked"
    volume = "locked"
    keyboard = "allowed"
    escape-chords = "blocked"
    [touch]
    mode = "regions"
    [[touch.locked-region]]
    name = "corner"
    rect = { x = 0.9, y = 0.0, width = 0.1, height = 0.2 }
    [passcode]
    hash = "$y$j9T$wu5EV0ZTWsGnMUW7dRD.v/$rUAZoDJKaSqm6adNI/J85tr9e.L1CawC/ZXm0damhMC"
    """

/// What the feeder sends and the reader expects.
enum Stream {
    /// Frames of each path in each run not counted: the first ones pay for cold caches and a first wake-up.
    static let warmUp = 100

    /// Frame `i` of a path in a run: even frames are keys (MSC_SCAN then KEY_A, pressed and released in
    /// turn), odd ones touches (a contact in slot 0 that lands, moves 38 times and lifts). The
    /// MSC_SCAN value and the contact's x carry `i`, so that the reader can check it has the frame
    /// it expects. Runs are whole contacts (`framesPerPath` is a multiple of 80), so each ends
    /// with the contact lifted and the key up: a contact left down would still be down when the
    /// next run's kioskd takes the device, and kioskd never forwards a contact it did not see land.
    static func frame(_ i: Int) -> (device: Int, events: [InputEvent]) {
        if i % 2 == 0 {
            return (
                0,
                [
                    InputEvent(type: EV.msc, code: MSC.scan, value: Int32(i)),
                    InputEvent(type: EV.key, code: code("KEY_A"), value: (i / 2) % 2 == 0 ? 1 : 0),
                ]
            )
        }
        let touch = i / 2, step = touch % 40
        let x = Int32(100 + i % 3000), y = Int32(1000 + step * 20)
        let move = [
            InputEvent(type: EV.abs, code: ABS.mtPositionX, value: x),
            InputEvent(type: EV.abs, code: ABS.mtPositionY, value: y),
            InputEvent(type: EV.abs, code: ABS.x, value: x), InputEvent(type: EV.abs, code: ABS.y, value: y),
        ]
        switch step {
        case 0:
            return (
                1,
                [
                    InputEvent(type: EV.abs, code: ABS.mtSlot, value: 0),
                    InputEvent(type: EV.abs, code: ABS.mtTrackingID, value: Int32(touch % 60000)),
                ] + move + [InputEvent(type: EV.key, code: BTN.touch, value: 1)]
            )
        case 39:
            return (
                1,
                [
                    InputEvent(type: EV.abs, code: ABS.mtTrackingID, value: -1),
                    InputEvent(type: EV.key, code: BTN.touch, value: 0),
                ]
            )
        default:
            return (1, move)
        }
    }

    /// The frame number a clone's frame carries, if it carries one.
    static func carried(_ events: ArraySlice<(type: UInt16, code: UInt16, value: Int32)>) -> Int? {
        for e in events {
            if e.type == EV.msc && e.code == MSC.scan { return Int(e.value) }
            if e.type == EV.abs && e.code == ABS.mtPositionX { return Int(e.value) - 100 }
        }
        return nil
    }
}

// MARK: Reading the outputs

/// Opens every path's output nodes (clones; the sources themselves for direct) and records, for
/// each frame of each path, when a read(2) returned it.
final class Reader: @unchecked Sendable {
    /// Each node read, with its path and device (0 keyboard, 1 touchscreen).
    private let nodes: [(fd: Int32, path: Int, device: Int)]
    private let paths: Int
    /// Per path `p`, frame `i`: index `p * framesPerPath + i`.
    private let sent: UnsafeMutablePointer<UInt64>
    private let received: UnsafeMutablePointer<UInt64>
    /// Per path; written by the reader's thread only, read once it has finished.
    private let mismatched: UnsafeMutablePointer<Int>
    private let done = Atomic<Int>(0)
    private let stopFlag = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// `outputs[p]`: path `p`'s keyboard and touchscreen output nodes.
    init(outputs: [[String]]) {
        paths = outputs.count
        var nodes: [(fd: Int32, path: Int, device: Int)] = []
        for (p, pair) in outputs.enumerated() {
            for (d, node) in pair.enumerated() {
                let fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
                guard fd >= 0 else { fail("cannot open \(node): \(String(cString: strerror(errno)))") }
                nodes.append((fd, p, d))
            }
        }
        self.nodes = nodes
        let total = paths * framesPerPath
        sent = .allocate(capacity: total)
        sent.initialize(repeating: 0, count: total)
        received = .allocate(capacity: total)
        received.initialize(repeating: 0, count: total)
        mismatched = .allocate(capacity: paths)
        mismatched.initialize(repeating: 0, count: paths)
        for node in nodes { drain(node.fd) }
    }

    deinit {
        for node in nodes { close(node.fd) }
        sent.deallocate()
        received.deallocate()
        mismatched.deallocate()
    }

    private func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while read(fd, &buffer, buffer.count) > 0 {}
    }

    func markSent(path: Int, frame i: Int, at t: UInt64) { sent[path * framesPerPath + i] = t }

    /// On its own thread: poll every node, read, match each frame to the next one expected from
    /// its device.
    func start() {
        Thread.detachNewThread { [self] in
            // The frames each device gets, in order: the reader expects them in that order.
            var expected: [[Int]] = [[], []]
            for i in 0..<framesPerPath { expected[Stream.frame(i).device].append(i) }
            var next = [Int](repeating: 0, count: nodes.count)
            var buffer = [UInt8](repeating: 0, count: 64 * 24)
            var pending: [[(type: UInt16, code: UInt16, value: Int32)]] = Array(repeating: [], count: nodes.count)
            var pfds = nodes.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            while !stopFlag.load(ordering: .relaxed) {
                guard poll(&pfds, nfds_t(pfds.count), 100) > 0 else { continue }
                for n in pfds.indices where pfds[n].revents & Int16(POLLIN) != 0 {
                    let got = read(nodes[n].fd, &buffer, buffer.count)
                    let t = now()
                    guard got > 0 else { continue }
                    let (p, d) = (nodes[n].path, nodes[n].device)
                    for k in 0..<(got / 24) {
                        let base = k * 24
                        let type = UInt16(buffer[base + 16]) | UInt16(buffer[base + 17]) << 8
                        let code = UInt16(buffer[base + 18]) | UInt16(buffer[base + 19]) << 8
                        let value = buffer.withUnsafeBytes {
                            $0.loadUnaligned(fromByteOffset: base + 20, as: Int32.self)
                        }
                        guard type == EV.syn && code == SYN.report else {
                            pending[n].append((type, code, value))
                            continue
                        }
                        if next[n] < expected[d].count {
                            let i = expected[d][next[n]]
                            next[n] += 1
                            if let c = Stream.carried(pending[n][...]), d == 0 ? c != i : c != i % 3000 {
                                mismatched[p] += 1
                            }
                            received[p * framesPerPath + i] = t
                            done.add(1, ordering: .relaxed)
                        }
                        pending[n].removeAll(keepingCapacity: true)
                    }
                }
            }
            finished.signal()
        }
    }

    /// Waits until every frame arrived (or `timeout`), stops; per path, the counted frames'
    /// latencies in ns, their frame numbers, and the frames missing or out of order.
    func finish(timeout: UInt64) -> [(latencies: [UInt64], frames: [Int], missing: Int, mismatched: Int)] {
        let deadline = now() + timeout
        while done.load(ordering: .relaxed) < paths * framesPerPath && now() < deadline { usleep(1000) }
        stopFlag.store(true, ordering: .relaxed)
        finished.wait()
        return (0..<paths).map { p in
            var latencies: [UInt64] = []
            var counted: [Int] = []
            var missing = 0
            for i in Stream.warmUp..<framesPerPath {
                let (s, r) = (sent[p * framesPerPath + i], received[p * framesPerPath + i])
                if r >= s && r != 0 {
                    latencies.append(r - s)
                    counted.append(i)
                } else {
                    missing += 1
                }
            }
            return (latencies, counted, missing, mismatched[p])
        }
    }
}

/// The device node whose phys is `phys`, once it exists.
func node(withPhys phys: String, timeout: UInt64 = 30_000_000_000) -> String {
    let deadline = now() + timeout
    while now() < deadline {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/input")) ?? []
        for name in names where name.hasPrefix("event") {
            let path = "/dev/input/" + name
            if let device = try? EvdevDevice(path: path, access: .readOnly), device.deviceDescription.phys == phys {
                return path
            }
        }
        usleep(20_000)
    }
    fail("no node with phys \(phys)")
}

/// Waits until udev has handled every event (`udevadm settle`) and has let its idle workers go.
/// systemd-udevd ends its idle workers ~3 s after its queue empties; in the VM's one vCPU their
/// exits took the CPU for 15-45 ms, stalling whichever forwarder ran then (seen with `perf` in
/// the guest: every "(udev-worker)" running at once during kioskd's one stall per run). That is
/// udev cleaning up after the clones this run made, not forwarding; both paths wait for it.
func quiesceUdev() {
    if access("/usr/bin/udevadm", X_OK) == 0, let settle = try? ChildProcess.spawn("/usr/bin/udevadm", ["settle"]) {
        settle.wait(timeout: .seconds(30))
    }
    let deadline = now() + 15_000_000_000
    while now() < deadline {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        let workers = names.filter { $0.first?.isNumber == true }.contains {
            (try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8))?.hasPrefix("(udev-worker)") == true
        }
        if !workers { return }
        usleep(50_000)
    }
    print("  (udev's workers were still there after 15 s)")
}

/// On-CPU time of each thread of `pid`, ns, by thread id (the first field of
/// /proc/PID/task/TID/schedstat).
func cpuTimes(of pid: pid_t) -> [String: UInt64] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    var times: [String: UInt64] = [:]
    for tid in tasks {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/schedstat", encoding: .utf8)) ?? ""
        times[tid] = UInt64(text.split(separator: " ").first ?? "") ?? 0
    }
    return times
}

/// The on-CPU time `pid`'s threads spent since `before`, ns: each thread alive now, less what
/// it had then (a thread started since counts whole). A thread that ended in between is not
/// counted (its time is gone from /proc): a sum over whatever threads there are would then go
/// backwards, which trapped the bench (an unsigned subtraction) under `make text-order`.
func cpuTime(of pid: pid_t, since before: [String: UInt64]) -> UInt64 {
    cpuTimes(of: pid).reduce(0) { sum, entry in
        let start = before[entry.key] ?? 0
        return sum + (entry.value > start ? entry.value - start : 0)
    }
}

// MARK: The paths

enum Kind { case direct, cLoop, pythonLoop, kioskd }

/// One way from a source to the reader, with its own two source devices.
struct Path {
    let name: String
    let kind: Kind
    let sources: [UInputClone]
    var sourcePhys: [String] { sources.map { $0.deviceDescription.phys ?? "" } }

    /// `phys`: the sources' phys prefix; for the paths no kioskd may take, under kioskd's clone
    /// marker.
    init(name: String, kind: Kind, phys: String) throws {
        self.name = name
        self.kind = kind
        sources = [
            try UInputClone(description: keyboardDescription(phys: phys + "/keyboard")),
            try UInputClone(description: touchDescription(phys: phys + "/touch")),
        ]
    }
}

/// A path's forwarder for one run: the nodes the reader reads and the pid whose CPU counts.
struct Forwarder {
    var outputs: [String]
    var pid: pid_t?
    /// Under callgrind (LATENCY_CALLGRIND): the label its profiles are named by.
    var counted: String?
    var stop: () -> Void
}

/// Starts kioskd on a private bus and waits for its name; the session is started separately.
final class Kioskd {
    let bus: PrivateBus
    let process: ChildProcess
    let name: String

    init(binary: String, name: String) throws {
        self.name = name
        bus = try PrivateBus()
        let dir = bus.directory.path
        let profiles = dir + "/profiles"
        try FileManager.default.createDirectory(atPath: profiles, withIntermediateDirectories: true)
        try profile.write(toFile: profiles + "/latency.toml", atomically: true, encoding: .utf8)
        chmod(profiles + "/latency.toml", 0o600)
        let log = open(dir + "/kioskd.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let (executable, arguments) = counted(
            binary, ["--state-dir", dir + "/state", "--profile-dir", profiles, "--runtime-dir", dir + "/run"],
            label: name.replacingOccurrences(of: " ", with: "-"))
        process = try ChildProcess.spawn(executable, arguments, environment: bus.environment, stdout: log, stderr: log)
        close(log)
        // valgrind takes minutes to start kioskd in an emulated guest; a kioskd (or valgrind) that
        // exits stops the wait at once.
        let deadline = ContinuousClock.now + .seconds(callgrindDir == nil ? 60 : 1200)
        while true {
            do {
                try bus.waitForOwner(KioskWire.busName, timeout: .seconds(5))
                break
            } catch {
                let log = (try? String(contentsOfFile: dir + "/kioskd.log", encoding: .utf8)) ?? ""
                guard process.isRunning else { fail("\(name) exited before it took its bus name:\n\(log)") }
                guard ContinuousClock.now < deadline else { throw error }
            }
        }
    }

    func startSession() throws {
        let client = try Bus.open(address: bus.address)
        defer { client.close() }
        let call = try client.makeMethodCall(
            destination: KioskWire.busName, path: KioskWire.objectPath, interface: KioskWire.managerInterface,
            member: KioskWire.Member.startSession)
        try call.append(.string("latency"))
        _ = try client.callBlocking(call, timeout: .seconds(60))
    }

    func stop() {
        process.signal(SIGTERM)
        process.wait(timeout: .seconds(callgrindDir == nil ? 20 : 300))
        let text = (try? String(contentsOfFile: bus.directory.path + "/kioskd.log", encoding: .utf8)) ?? ""
        if text.contains("dropped input events") { print("  (\(name) logged dropped input events)") }
        bus.stop()
    }
}

/// `executable` with `arguments`, under callgrind if LATENCY_CALLGRIND is set (its profile in
/// `label.PID`, the dumps `label.PID.N`).
func counted(_ executable: String, _ arguments: [String], label: String) -> (String, [String]) {
    guard let callgrindDir else { return (executable, arguments) }
    return (
        "/usr/bin/valgrind",
        ["--tool=callgrind", "--callgrind-out-file=\(callgrindDir)/\(label).%p", executable] + arguments
    )
}

/// Runs `callgrind_control ARGUMENT PID`: `-z` zeroes the counters, `-d` dumps them.
func callgrindControl(_ argument: String, _ pid: pid_t) {
    guard let control = try? ChildProcess.spawn("/usr/bin/callgrind_control", [argument, String(pid)]),
        control.wait(timeout: .seconds(300)) == 0
    else { fail("callgrind_control \(argument) \(pid) failed") }
}

/// The instructions of callgrind's newest dump of `label`'s `pid` (its `totals:` line). The
/// label matters: the guest's pids repeat from run to run, for other processes too.
func dumpedInstructions(_ label: String, _ pid: pid_t) -> UInt64 {
    let files = (try? FileManager.default.contentsOfDirectory(atPath: callgrindDir!)) ?? []
    let dumps = files.filter { $0.hasPrefix("\(label).\(pid).") }
        .compactMap { name in Int(name.split(separator: ".").last!).map { (n: $0, name: name) } }
    guard let newest = dumps.max(by: { $0.n < $1.n }),
        let text = try? String(contentsOfFile: callgrindDir! + "/" + newest.name, encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("totals:") }),
        let total = line.split(separator: " ").dropFirst().first.flatMap({ UInt64($0) })
    else { fail("no callgrind dump with totals for \(label) (pid \(pid)) in \(callgrindDir!)") }
    return total
}

/// Starts a loop (C or Python) on `path`'s sources; its clones are the nodes it prints.
func startLoop(_ executable: String, _ arguments: [String], path: Path, label: String? = nil) throws -> Forwarder {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { fail("pipe") }
    let (program, all) =
        label.map { counted(executable, arguments + path.sources.map { $0.devnode! }, label: $0) }
        ?? (executable, arguments + path.sources.map { $0.devnode! })
    let loop = try ChildProcess.spawn(program, all, stdout: fds[1])
    close(fds[1])
    let stop = {
        loop.signal(SIGTERM)
        _ = loop.wait(timeout: .seconds(10))
    }
    running.append(stop)
    var output: [UInt8] = []
    var byte: UInt8 = 0
    while output.filter({ $0 == UInt8(ascii: "\n") }).count < path.sources.count, read(fds[0], &byte, 1) == 1 {
        output.append(byte)
    }
    close(fds[0])
    let clones = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
    guard clones.count == path.sources.count else { fail("\(path.name) printed \(clones) (stderr above)") }
    return Forwarder(outputs: clones, pid: loop.pid, stop: stop)
}

/// Starts every path's forwarder for one run, kioskd first (with `binary`), so that the loops'
/// clones appear while it runs: it must leave them alone.
func startForwarders(_ paths: [Path], kioskd binary: String, name: String) throws -> [Forwarder] {
    var forwarders = [Forwarder?](repeating: nil, count: paths.count)
    for (p, path) in paths.enumerated() where path.kind == .kioskd {
        let kioskd = try Kioskd(binary: binary, name: name)
        running.append { kioskd.stop() }
        let clones = path.sourcePhys.map { node(withPhys: UInputClone.phys(forSource: $0)) }
        try kioskd.startSession()
        let label = callgrindDir.map { _ in name.replacingOccurrences(of: " ", with: "-") }
        forwarders[p] = Forwarder(outputs: clones, pid: kioskd.process.pid, counted: label) { kioskd.stop() }
    }
    for p in paths.indices where forwarders[p] == nil {
        let path = paths[p]
        switch path.kind {
        case .direct: forwarders[p] = Forwarder(outputs: path.sources.map { $0.devnode! }, pid: nil) {}
        case .cLoop:
            forwarders[p] = try startLoop(plainLoopPath, [], path: path, label: "c-loop")
            forwarders[p]!.counted = callgrindDir.map { _ in "c-loop" }
        case .pythonLoop: forwarders[p] = try startLoop(python, [pythonLoopPath!], path: path)
        case .kioskd: break
        }
    }
    usleep(500_000)  // the sessions' log lines
    // Each output node must reach the reader: nobody may hold its grab (e.g. a kioskd that took
    // a loop's clone would swallow every frame of that path).
    for (p, forwarder) in forwarders.enumerated() {
        for output in forwarder!.outputs {
            let fd = open(output, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0, ioctl(fd, UInt(0x4004_4590), 1) == 0 else {  // EVIOCGRAB
                fail(
                    "\(paths[p].kind == .kioskd ? name : paths[p].name)'s output \(output) is held by another process: \(String(cString: strerror(errno)))"
                )
            }
            _ = ioctl(fd, UInt(0x4004_4590), 0)
            close(fd)
        }
    }
    return forwarders.map { $0! }
}

// MARK: One run

struct PathRun {
    let latencies: [UInt64]
    /// The frame number of each latency: where in the path's stream it was sent.
    let frames: [Int]
    let cpuPerFrame: Double?  // µs
    /// Instructions in user space per frame (callgrind), for a counted forwarder.
    let instructionsPerFrame: Double?
    let missing: Int
    let mismatched: Int
}

struct Run {
    /// Each path's name in this run (the kioskd path's: kioskd or kioskd before).
    let names: [String]
    let order: [Int]
    /// When its first frame was due, in ms since midnight UTC (to match other logs, e.g. strace -tt).
    let startedAt: Int
    let paths: [PathRun]
}

/// Feeds every path's sources, 500 frames/s, the paths taking turns every `block` frames in
/// `order`, while a reader watches their outputs.
func feed(_ paths: [Path], _ forwarders: [Forwarder], order: [Int], names: [String]) -> Run {
    let reader = Reader(outputs: forwarders.map(\.outputs))
    reader.start()
    let frames = (0..<framesPerPath).map { Stream.frame($0) }
    for f in forwarders where f.counted != nil { callgrindControl("-z", f.pid!) }
    let cpuBefore = forwarders.map { $0.pid.map(cpuTimes(of:)) }
    var due = now() + 50_000_000
    var wall = timespec()
    clock_gettime(CLOCK_REALTIME, &wall)
    let startedAt = wall.tv_sec % 86_400 * 1000 + wall.tv_nsec / 1_000_000 + 50  // ms since midnight UTC
    for first in stride(from: 0, to: framesPerPath, by: block) {
        for p in order {
            for i in first..<(first + block) {
                var ts = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
                reader.markSent(path: p, frame: i, at: now())
                do {
                    try paths[p].sources[frames[i].device].write(frame: frames[i].events)
                } catch {
                    fail("writing to \(names[p])'s source: \(error)")
                }
                due += period
            }
        }
    }
    let results = reader.finish(timeout: 2_000_000_000)
    let cpu = zip(forwarders, cpuBefore).map { f, before in
        f.pid.map { Double(cpuTime(of: $0, since: before!)) / Double(framesPerPath) / 1000 }
    }
    let instructions = forwarders.map { f -> Double? in
        guard let label = f.counted else { return nil }
        callgrindControl("-d", f.pid!)
        return Double(dumpedInstructions(label, f.pid!)) / Double(framesPerPath)
    }
    return Run(
        names: names, order: order, startedAt: startedAt,
        paths: paths.indices.map {
            PathRun(
                latencies: results[$0].latencies, frames: results[$0].frames, cpuPerFrame: cpu[$0],
                instructionsPerFrame: instructions[$0], missing: results[$0].missing, mismatched: results[$0].mismatched
            )
        })
}

// MARK: Figures

/// Where a path's slow frames were in a run: the frames over 2 ms, counted per second of the
/// run (a stall at 500 frames/s delays every frame queued behind it), and the five worst, each
/// with the moment it was sent. Stalls bunched at the start point at a cold path (first use of
/// code or data); spread evenly, at something periodic or at the host.
func stalls(_ run: PathRun, pathCount: Int) -> String {
    let slow = zip(run.frames, run.latencies).filter { $0.1 > 2_000_000 }
    guard !slow.isEmpty else { return "no frame over 2 ms" }
    // Frame i of a path goes out in turn i / block, at (turn × paths + place) × block + i % block.
    let runFrames = framesPerPath * pathCount
    var perSecond = [Int](repeating: 0, count: runFrames * Int(period) / 1_000_000_000 + 1)
    let at = { (i: Int) in Double(i / block * pathCount * block + i % block) * Double(period) / 1e9 }
    for (frame, _) in slow { perSecond[min(perSecond.count - 1, Int(at(frame)))] += 1 }
    let worst = slow.sorted { $0.1 > $1.1 }.prefix(5).map {
        String(format: "%.1f ms at ~%.1f s", Double($0.1) / 1e6, at($0.0))
    }
    return "over 2 ms per second: \(perSecond.map(String.init).joined(separator: " ")); worst: "
        + worst.joined(separator: ", ")
}

struct Figures {
    var p50: Double
    var p99: Double
    var max: Double
    var n: Int

    /// nil when no frame got through.
    init?(_ latencies: [UInt64]) {
        let sorted = latencies.sorted()
        guard let p50 = percentile(sorted, 0.5), let p99 = percentile(sorted, 0.99) else { return nil }
        (self.p50, self.p99, self.max, n) = (p50, p99, Double(sorted.last!) / 1e6, sorted.count)
    }
}

/// What one path came to, in one run or pooled: latency, added over direct, ratios to the C loop.
struct Row {
    var total: Figures
    var addedP50: Double
    var addedP99: Double
    var cpu: Double?
    /// Ratios to the C loop's: p50, p99, added p50, added p99, CPU.
    var ratios: (p50: Double, p99: Double, addedP50: Double, addedP99: Double, cpu: Double?)?
}

func rows(_ figures: [Figures], cpu: [Double?], direct: Int, cLoop: Int) -> [Row] {
    let d = figures[direct], c = figures[cLoop]
    let cAdded = (c.p50 - d.p50, c.p99 - d.p99)
    return figures.indices.map { p in
        let f = figures[p]
        let added = (f.p50 - d.p50, f.p99 - d.p99)
        let isForwarder = p != direct && p != cLoop
        return Row(
            total: f, addedP50: added.0, addedP99: added.1, cpu: cpu[p],
            ratios: isForwarder
                ? (
                    f.p50 / c.p50, f.p99 / c.p99, added.0 / cAdded.0, added.1 / cAdded.1,
                    cpu[p].flatMap { a in cpu[cLoop].map { a / $0 } }
                ) : nil)
    }
}

func ms(_ v: Double) -> String { String(format: "%.3f", v) }
func signed(_ v: Double) -> String { String(format: "%+.3f", v) }
func times(_ v: Double) -> String { v.isFinite ? String(format: "%.2f×", v) : "—" }
func spread(_ values: [Double], _ format: (Double) -> String) -> String {
    guard let low = values.min(), let high = values.max() else { return "" }
    return "\(format(low))–\(format(high))"
}
func pad(_ s: String, _ n: Int) -> String { s.padding(toLength: max(n, s.count), withPad: " ", startingAt: 0) }

// MARK: Main

var uname = utsname()
Glibc.uname(&uname)
let kernel = withUnsafeBytes(of: uname.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
let cpus = sysconf(Int32(_SC_NPROCESSORS_ONLN))
let eventsPerPath = (0..<framesPerPath).reduce(0) { $0 + Stream.frame($1).events.count + 1 }

/// Why the Python loop does not run, if it does not.
var pythonSkipped: String?
if pythonLoopPath == nil {
    pythonSkipped = "PYTHON_LOOP not set"
} else if let check = try? ChildProcess.spawn(python, ["-c", "import evdev"]), check.wait(timeout: .seconds(30)) == 0 {
    pythonSkipped = nil
} else {
    pythonSkipped = "\(python) cannot import evdev (python3-evdev)"
}

var paths = [
    try Path(name: "direct", kind: .direct, phys: UInputClone.physMarker + "latency-direct"),
    try Path(name: "C loop", kind: .cLoop, phys: UInputClone.physMarker + "latency-c-loop"),
]
if pythonSkipped == nil {
    paths.append(try Path(name: "Python loop", kind: .pythonLoop, phys: UInputClone.physMarker + "latency-python-loop"))
}
paths.append(try Path(name: "kioskd", kind: .kioskd, phys: "kioskd-latency"))
let (direct, cLoop) = (0, 1)
/// The kioskds, taking turns run by run: (name, binary).
let kioskds = [("kioskd", kioskdPath)] + (kioskdBeforePath.map { [("kioskd before", $0)] } ?? [])
let labels = paths.dropLast().map(\.name) + kioskds.map(\.0)
let width = labels.map(\.count).max()! + 2
let totalRuns = rounds * kioskds.count

print("bench-latency: kernel \(kernel), \(cpus) CPU(s); \(totalRuns) runs, every forwarder started afresh in each")
print(
    "  each path \(framesPerPath) frames a run (\(eventsPerPath) events with their SYN_REPORTs), first \(Stream.warmUp) not counted;"
)
print(
    "  one frame every \(Double(period) / 1e6) ms, the \(paths.count) paths taking turns every \(block) frames, the order rotating each run"
)
print("  direct: the reader reads the source node itself (no forwarder)")
print("  C loop: \(plainLoopPath)")
print("  Python loop: " + (pythonSkipped.map { "not run: \($0)" } ?? "\(python) \(pythonLoopPath!)"))
print("  kioskd: \(kioskdPath), a session active (this bench has no run without one)")
if let kioskdBeforePath {
    print("  kioskd before: \(kioskdBeforePath), the same; the two kioskds take turns run by run, one alive at a time")
}
print("  added = the path's p50 (p99) minus direct's p50 (p99) of the same run; ratios are to the C loop's")

usleep(500_000)  // udev's rules for the sources
var runs: [Run] = []
var empty: [String] = []
for k in 0..<totalRuns {
    let (kioskdName, kioskdBinary) = kioskds[k % kioskds.count]
    let names = paths.map(\.name).dropLast() + [kioskdName]
    let order = paths.indices.map { ($0 + k / kioskds.count) % paths.count }
    let forwarders = try startForwarders(paths, kioskd: kioskdBinary, name: kioskdName)
    quiesceUdev()
    let run = feed(paths, forwarders, order: order, names: Array(names))
    running = []
    for f in forwarders.reversed() { f.stop() }
    runs.append(run)
    let t = run.startedAt
    print(
        String(
            format: "run %d (from %02d:%02d:%02d.%03d UTC), turns in the order: ", k + 1, t / 3_600_000,
            t / 60_000 % 60, t / 1000 % 60, t % 1000)
            + order.map { run.names[$0] }.joined(separator: ", "))
    let figures = run.paths.map { Figures($0.latencies) }
    for (p, r) in run.paths.enumerated() where figures[p] == nil {
        empty.append("\(run.names[p]) in run \(k + 1) (\(r.missing) frames missing)")
    }
    let table =
        figures.allSatisfy({ $0 != nil })
        ? rows(figures.map { $0! }, cpu: run.paths.map(\.cpuPerFrame), direct: direct, cLoop: cLoop) : nil
    for (p, r) in run.paths.enumerated() {
        var line = "  " + pad(run.names[p], width)
        if let f = figures[p] {
            line += "p50 \(ms(f.p50))  p99 \(ms(f.p99))  max \(ms(f.max)) ms"
        } else {
            line += "no frame got through"
        }
        if let row = table?[p], p != direct { line += "  added \(signed(row.addedP50)) / \(signed(row.addedP99)) ms" }
        if let cpu = r.cpuPerFrame { line += String(format: "  CPU %.1f µs/frame", cpu) }
        if let n = r.instructionsPerFrame { line += String(format: "  %.0f instructions/frame", n) }
        line += "  (n=\(r.latencies.count), missing \(r.missing), out of order \(r.mismatched))"
        print(line)
        print("      " + stalls(r, pathCount: paths.count))
    }
}
guard empty.isEmpty else {
    fail("no frame got through for " + empty.joined(separator: "; ") + ": the forwarder's log or stderr above says why")
}

/// A path pooled over the runs it was in (the kioskds: their own runs; direct and the C loop,
/// which its added latency and ratios are taken against, pooled over the same runs), and its row
/// in each of those runs.
func pooled(_ label: String, of runs: [Run], pathCount: Int) -> (row: Row, runs: [Row]) {
    let chosen = runs.filter { $0.names.contains(label) }
    let slot = chosen[0].names.firstIndex(of: label)!
    let figures = (0..<pathCount).map { p in Figures(chosen.flatMap { $0.paths[p].latencies })! }
    let cpu = (0..<pathCount).map { p -> Double? in
        let values = chosen.compactMap { $0.paths[p].cpuPerFrame }
        return values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
    }
    let perRun = chosen.map { run in
        rows(run.paths.map { Figures($0.latencies)! }, cpu: run.paths.map(\.cpuPerFrame), direct: direct, cLoop: cLoop)[
            slot]
    }
    return (rows(figures, cpu: cpu, direct: direct, cLoop: cLoop)[slot], perRun)
}
let pooledRows = labels.map { pooled($0, of: runs, pathCount: paths.count) }

print("all \(totalRuns) runs pooled (in brackets: the lowest and highest of the runs' own figures):")
for (label, (row, runsOf)) in zip(labels, pooledRows) {
    var line = "  " + pad(label, width)
    line += "p50 \(ms(row.total.p50)) (\(spread(runsOf.map(\.total.p50), ms)))"
    line += "  p99 \(ms(row.total.p99)) (\(spread(runsOf.map(\.total.p99), ms)))  max \(ms(row.total.max)) ms"
    print(line + "  (n=\(row.total.n), \(runsOf.count) runs)")
    if label != paths[direct].name {
        print(
            "  " + pad("", width) + "added p50 \(signed(row.addedP50)) (\(spread(runsOf.map(\.addedP50), signed)))"
                + "  p99 \(signed(row.addedP99)) (\(spread(runsOf.map(\.addedP99), signed))) ms")
    }
    if let cpu = row.cpu {
        print(
            "  " + pad("", width)
                + String(
                    format: "CPU %.1f µs/frame (%@)", cpu,
                    spread(runsOf.compactMap(\.cpu), { String(format: "%.1f", $0) }) as NSString))
    }
}
print("ratios to the C loop, pooled (runs' lowest–highest):")
for (label, (row, runsOf)) in zip(labels, pooledRows) {
    guard let r = row.ratios else { continue }
    let ratios = runsOf.compactMap(\.ratios)
    var line = "  " + pad(label, width)
    line +=
        "p50 \(times(r.p50)) (\(spread(ratios.map(\.p50), times)))  p99 \(times(r.p99)) (\(spread(ratios.map(\.p99), times)))"
    line += "  added p50 \(times(r.addedP50)) (\(spread(ratios.map(\.addedP50), times)))"
    line += "  added p99 \(times(r.addedP99)) (\(spread(ratios.map(\.addedP99), times)))"
    if let cpu = r.cpu { line += "  CPU \(times(cpu)) (\(spread(ratios.compactMap(\.cpu), times)))" }
    print(line)
}
for (label, (row, _)) in zip(labels, pooledRows) where kioskds.contains(where: { $0.0 == label }) {
    guard let r = row.ratios else { continue }
    let verdict = { (ok: Bool) in ok ? "met" : "missed" }
    print(
        "  \(label), goals (docs/benchmarks.md § Latency): CPU ≤ 1.3×: \(verdict((r.cpu ?? .infinity) <= 1.3)); "
            + "added p50 ≤ 1.5×: \(verdict(r.addedP50 <= 1.5)); p99 ≤ 1.2×: \(verdict(r.p99 <= 1.2))")
}
if let callgrindDir {
    print(
        "instructions per frame in user space (callgrind, profiles in \(callgrindDir)), mean of the runs (lowest–highest):"
    )
    let cLoopCounts = runs.compactMap { $0.paths[cLoop].instructionsPerFrame }
    let mean = { (values: [Double]) in values.reduce(0, +) / Double(max(1, values.count)) }
    let count = { (v: Double) in String(format: "%.0f", v) }
    print("  " + pad(paths[cLoop].name, width) + "\(count(mean(cLoopCounts))) (\(spread(cLoopCounts, count)))")
    for (label, _) in kioskds {
        let chosen = runs.filter { $0.names.contains(label) }
        let counts = chosen.compactMap { $0.paths.last!.instructionsPerFrame }
        let loops = chosen.compactMap { $0.paths[cLoop].instructionsPerFrame }
        print(
            "  " + pad(label, width) + "\(count(mean(counts))) (\(spread(counts, count)))  "
                + "\(times(mean(counts) / mean(loops))) the C loop's")
    }
}
let bad = runs.reduce(0) { $0 + $1.paths.reduce(0) { $0 + $1.missing + $1.mismatched } }
if bad > 0 { print("  WARNING: \(bad) frames missing or out of order") }
for path in paths { for source in path.sources { source.destroy() } }
