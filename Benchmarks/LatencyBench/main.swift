// Latency benchmark (docs/benchmarks.md#latency): what kioskd's broker adds between a physical event and its clone,
// next to a plain read→write loop (Benchmarks/PlainLoop/plain-loop.c) of the same events in the
// same VM run. `make bench-latency` builds both in release mode and runs this inside the VM
// (Tests/VM/run-in-vm: root, /dev/uinput, udev).
//
// Two fake physical devices made through uinput, a keyboard (MSC_SCAN with every key) and a
// 10-slot touchscreen, get 500 frames/s, key and touch frames taking turns. Path A is the real
// kioskd (the multi-call binary `make install` ships, $KIOSKD_BINARY) on a private dbus-daemon
// with a session active whose profile locks what these events never hit (power, volume, a
// corner of the screen); path B is the plain loop. Runs alternate A, B, A, B… so that load on
// the machine falls on both. Each frame's latency is the time from just before the feeder's
// write(2) to the source to the reader's return from read(2) on the clone, both CLOCK_MONOTONIC
// in this process: no clock of the events' own is compared. CPU per frame is the forwarder's
// on-CPU time over the run (/proc/PID/task/*/schedstat), divided by the frames.
//
// Before each run's feed, both paths wait for udev to settle and to let its idle workers go
// (quiesceUdev): their exits, ~3 s after the clones were made, took the one vCPU for 15-45 ms.
//
// Environment: LATENCY_ROUNDS (runs per path, default 3), LATENCY_FRAMES (frames per run,
// default 3000, rounded up to whole touches: 3040; the first 100 are warm-up, not counted),
// PLAIN_LOOP (the plain loop's binary), KIOSKD_BINARY, and KIOSKD_BEFORE: a second kioskd
// binary (the tree before a change) run as path A0, alternated with A and B in the same VM.
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

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("LatencyBench: \(message)\n".utf8))
    exit(1)
}

func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
    Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1e6
}

let environment = ProcessInfo.processInfo.environment
let rounds = Int(environment["LATENCY_ROUNDS"] ?? "") ?? 3
let framesPerRun = ((Int(environment["LATENCY_FRAMES"] ?? "") ?? 3000) + 79) / 80 * 80  // whole contacts
let period: UInt64 = 2_000_000  // 500 frames/s
let kioskdPath = environment["KIOSKD_BINARY"] ?? ""
let plainLoopPath = environment["PLAIN_LOOP"] ?? ""
/// Another kioskd to alternate with the first (path A0), e.g. the tree before a change.
let kioskdBeforePath = environment["KIOSKD_BEFORE"].flatMap { $0.isEmpty ? nil : $0 }
for path in [kioskdPath, plainLoopPath, kioskdBeforePath ?? kioskdPath]
where !FileManager.default.isExecutableFile(atPath: path) {
    fail("no executable at '\(path)' (KIOSKD_BINARY, PLAIN_LOOP); run `make bench-latency`")
}
guard getuid() == 0, access("/dev/uinput", W_OK) == 0 else { fail("needs root and /dev/uinput: run it in the VM") }

// MARK: The fake physical devices

func code(_ name: String) -> UInt16 { EventCodes.code(named: name)!.code }

let keyboardPhys = "kioskd-latency/keyboard"
let touchPhys = "kioskd-latency/touch"
let keyboardDescription = DeviceDescription(
    name: "kioskd latency keyboard", phys: keyboardPhys,
    id: .init(bus: 0x03, vendor: 0x046d, product: 0xc31c, version: 0x0111),
    codes: [
        EV.key: Set(["KEY_A", "KEY_B", "KEY_LEFTSHIFT", "KEY_ENTER", "KEY_CAPSLOCK", "KEY_VOLUMEUP"].map(code)),
        EV.msc: [MSC.scan], EV.led: [code("LED_NUML"), code("LED_CAPSL")],
    ])
// Like a real panel's, but no fuzz: the kernel must not swallow a move of a few units.
let touchDescription = DeviceDescription(
    name: "kioskd latency touchscreen", phys: touchPhys,
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

/// The locks of path A's session: nothing the feeder sends is locked, but all of it is judged
/// (the keyboard's keys one by one, each touch against the locked corner).
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
    /// Frames of each run not counted: the first ones pay for cold caches and a first wake-up.
    static let warmUp = 100

    /// Frame `i` of a run: even frames are keys (MSC_SCAN then KEY_A, pressed and released in
    /// turn), odd ones touches (a contact in slot 0 that lands, moves 38 times and lifts). The
    /// MSC_SCAN value and the contact's x carry `i`, so that the reader can check it has the frame
    /// it expects. Runs are whole contacts (`framesPerRun` is a multiple of 80), so each ends
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

// MARK: Reading the clones

/// Opens the clone nodes and records, for each frame, when a read(2) returned it.
final class Reader: @unchecked Sendable {
    private let fds: [Int32]
    private let sent: UnsafeMutablePointer<UInt64>
    private let received: UnsafeMutablePointer<UInt64>
    private let frames: Int
    private let mismatched = Atomic<Int>(0)
    private let done = Atomic<Int>(0)
    private let stopFlag = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(clones: [String], frames: Int) {
        fds = clones.map { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard fds.allSatisfy({ $0 >= 0 }) else { fail("cannot open the clones \(clones)") }
        self.frames = frames
        sent = .allocate(capacity: frames)
        sent.initialize(repeating: 0, count: frames)
        received = .allocate(capacity: frames)
        received.initialize(repeating: 0, count: frames)
        for fd in fds { drain(fd) }
    }

    deinit {
        for fd in fds { close(fd) }
        sent.deallocate()
        received.deallocate()
    }

    private func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while read(fd, &buffer, buffer.count) > 0 {}
    }

    func markSent(_ i: Int, at t: UInt64) { sent[i] = t }

    /// On its own thread: poll both clones, read, match each frame to the next one expected
    /// from its device.
    func start() {
        Thread.detachNewThread { [self] in
            // The frames each device gets, in order: the reader expects them in that order.
            var expected: [[Int]] = [[], []]
            for i in 0..<frames { expected[Stream.frame(i).device].append(i) }
            var next = [0, 0]
            var buffer = [UInt8](repeating: 0, count: 64 * 24)
            var pending: [[(type: UInt16, code: UInt16, value: Int32)]] = [[], []]
            var pfds = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            while !stopFlag.load(ordering: .relaxed) {
                guard poll(&pfds, nfds_t(pfds.count), 100) > 0 else { continue }
                for d in pfds.indices where pfds[d].revents & Int16(POLLIN) != 0 {
                    let n = read(fds[d], &buffer, buffer.count)
                    let t = now()
                    guard n > 0 else { continue }
                    for k in 0..<(n / 24) {
                        let base = k * 24
                        let type = UInt16(buffer[base + 16]) | UInt16(buffer[base + 17]) << 8
                        let code = UInt16(buffer[base + 18]) | UInt16(buffer[base + 19]) << 8
                        let value = buffer.withUnsafeBytes {
                            $0.loadUnaligned(fromByteOffset: base + 20, as: Int32.self)
                        }
                        guard type == EV.syn && code == SYN.report else {
                            pending[d].append((type, code, value))
                            continue
                        }
                        if next[d] < expected[d].count {
                            let i = expected[d][next[d]]
                            next[d] += 1
                            if let c = Stream.carried(pending[d][...]), d == 0 ? c != i : c != i % 3000 {
                                mismatched.add(1, ordering: .relaxed)
                            }
                            received[i] = t
                            done.add(1, ordering: .relaxed)
                        }
                        pending[d].removeAll(keepingCapacity: true)
                    }
                }
            }
            finished.signal()
        }
    }

    /// Waits until every frame arrived (or `timeout`), stops; the counted frames' latencies in ns.
    func finish(timeout: UInt64) -> (latencies: [UInt64], frames: [Int], missing: Int, mismatched: Int) {
        let deadline = now() + timeout
        while done.load(ordering: .relaxed) < frames && now() < deadline { usleep(1000) }
        stopFlag.store(true, ordering: .relaxed)
        finished.wait()
        var latencies: [UInt64] = []
        var counted: [Int] = []
        var missing = 0
        for i in Stream.warmUp..<frames {
            if received[i] >= sent[i] && received[i] != 0 {
                latencies.append(received[i] - sent[i])
                counted.append(i)
            } else {
                missing += 1
            }
        }
        return (latencies, counted, missing, mismatched.load(ordering: .relaxed))
    }
}

/// The device node of the clone whose phys is `phys`, once it exists.
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

/// On-CPU time of every thread of `pid`, ns (the first field of /proc/PID/task/TID/schedstat).
func cpuTime(of pid: pid_t) -> UInt64 {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.reduce(0) { sum, tid in
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/schedstat", encoding: .utf8)) ?? ""
        return sum + (UInt64(text.split(separator: " ").first ?? "") ?? 0)
    }
}

// MARK: One run

struct Run {
    let path: String
    let latencies: [UInt64]
    /// The frame number of each latency: where in the run (2 ms apart) it was sent.
    let frames: [Int]
    /// When its first frame was due, in ms since midnight UTC (to match other logs, e.g. strace -tt).
    let startedAt: Int
    let cpuPerFrame: Double  // µs
    let missing: Int
    let mismatched: Int
}

/// Feeds the sources at 500 frames/s while `reader` watches the clones; `forwarder` is the pid
/// whose CPU time is counted.
func feed(_ sources: [UInputClone], clones: [String], forwarder: pid_t, path: String) -> Run {
    let reader = Reader(clones: clones, frames: framesPerRun)
    reader.start()
    let frames = (0..<framesPerRun).map { Stream.frame($0) }
    let cpuBefore = cpuTime(of: forwarder)
    var due = now() + 50_000_000
    var wall = timespec()
    clock_gettime(CLOCK_REALTIME, &wall)
    let startedAt = wall.tv_sec % 86_400 * 1000 + wall.tv_nsec / 1_000_000 + 50  // ms since midnight UTC
    for (i, f) in frames.enumerated() {
        var ts = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
        reader.markSent(i, at: now())
        do { try sources[f.device].write(frame: f.events) } catch { fail("writing to the source: \(error)") }
        due += period
    }
    let result = reader.finish(timeout: 2_000_000_000)
    let cpu = cpuTime(of: forwarder) - cpuBefore
    return Run(
        path: path, latencies: result.latencies, frames: result.frames, startedAt: startedAt, cpuPerFrame: Double(cpu) / Double(framesPerRun) / 1000,
        missing: result.missing, mismatched: result.mismatched)
}

/// Path A: kioskd on a private bus, a session started, both sources brokered.
func runKioskd(_ sources: [UInputClone], binary: String, path: String) throws -> Run {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let dir = bus.directory.path
    let profiles = dir + "/profiles"
    try FileManager.default.createDirectory(atPath: profiles, withIntermediateDirectories: true)
    try profile.write(toFile: profiles + "/latency.toml", atomically: true, encoding: .utf8)
    chmod(profiles + "/latency.toml", 0o600)
    let log = open(dir + "/kioskd.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    let kioskd = try ChildProcess.spawn(
        binary, ["--state-dir", dir + "/state", "--profile-dir", profiles, "--runtime-dir", dir + "/run"],
        environment: bus.environment, stdout: log, stderr: log)
    close(log)
    defer {
        kioskd.signal(SIGTERM)
        kioskd.wait(timeout: .seconds(20))
    }
    try bus.waitForOwner(KioskWire.busName, timeout: .seconds(60))
    let clones = [keyboardPhys, touchPhys].map { node(withPhys: UInputClone.phys(forSource: $0)) }
    let client = try Bus.open(address: bus.address)
    defer { client.close() }
    let call = try client.makeMethodCall(
        destination: KioskWire.busName, path: KioskWire.objectPath, interface: KioskWire.managerInterface,
        member: KioskWire.Member.startSession)
    try call.append(.string("latency"))
    _ = try client.callBlocking(call, timeout: .seconds(60))
    usleep(500_000)  // the session's log lines
    quiesceUdev()
    let run = feed(sources, clones: clones, forwarder: kioskd.pid, path: path)
    let text = (try? String(contentsOfFile: dir + "/kioskd.log", encoding: .utf8)) ?? ""
    if text.contains("dropped input events") { print("  (kioskd logged dropped input events)") }
    return run
}

/// Path B: the plain loop on the same sources.
func runPlainLoop(_ sources: [UInputClone]) throws -> Run {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { fail("pipe") }
    let loop = try ChildProcess.spawn(plainLoopPath, sources.map { $0.devnode! }, stdout: fds[1])
    close(fds[1])
    defer {
        loop.signal(SIGTERM)
        loop.wait(timeout: .seconds(10))
    }
    var output: [UInt8] = []
    var byte: UInt8 = 0
    while output.filter({ $0 == UInt8(ascii: "\n") }).count < sources.count, read(fds[0], &byte, 1) == 1 {
        output.append(byte)
    }
    close(fds[0])
    let clones = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
    guard clones.count == sources.count else { fail("the plain loop printed \(clones)") }
    quiesceUdev()
    return feed(sources, clones: clones, forwarder: loop.pid, path: "B plain loop")
}

// MARK: Main

/// Where the run's slow frames were: the frames over 2 ms, counted per second of the run (a
/// stall at 500 frames/s delays every frame queued behind it), and the five worst, each with
/// the moment it was sent. Stalls bunched at the start point at a cold path (first use of code
/// or data); spread evenly, at something periodic or at the host.
func stalls(_ run: Run) -> String {
    let slow = zip(run.frames, run.latencies).filter { $0.1 > 2_000_000 }
    guard !slow.isEmpty else { return "no frame over 2 ms" }
    var perSecond = [Int](repeating: 0, count: framesPerRun / 500 + 1)
    for (frame, _) in slow { perSecond[frame / 500] += 1 }
    let worst = slow.sorted { $0.1 > $1.1 }.prefix(5).map {
        String(format: "%.1f ms at %.2f s", Double($0.1) / 1e6, Double($0.0) * Double(period) / 1e9)
    }
    let t = run.startedAt
    let started = String(format: "%02d:%02d:%02d.%03d UTC", t / 3_600_000, t / 60_000 % 60, t / 1000 % 60, t % 1000)
    return "over 2 ms, per second of the run (from \(started)): \(perSecond.map(String.init).joined(separator: " ")); worst: "
        + worst.joined(separator: ", ")
}

func summary(_ latencies: [UInt64]) -> (p50: Double, p99: Double, max: Double) {
    let sorted = latencies.sorted()
    return (percentile(sorted, 0.5), percentile(sorted, 0.99), Double(sorted.last ?? 0) / 1e6)
}

var uname = utsname()
Glibc.uname(&uname)
let kernel = withUnsafeBytes(of: uname.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
let cpus = sysconf(Int32(_SC_NPROCESSORS_ONLN))
let eventsPerRun = (0..<framesPerRun).reduce(0) { $0 + Stream.frame($1).events.count + 1 }
print("bench-latency: kernel \(kernel), \(cpus) CPU(s); \(rounds) runs per path, alternated A/B")
print(
    "  each run \(framesPerRun) frames (\(eventsPerRun) events with their SYN_REPORTs) at 500 frames/s, first \(Stream.warmUp) not counted"
)
print("  A: \(kioskdPath)")
if let kioskdBeforePath { print("  A0: \(kioskdBeforePath)") }
print("  B: \(plainLoopPath)")

let sources = try [keyboardDescription, touchDescription].map { try UInputClone(description: $0) }
usleep(500_000)  // udev's rules for the sources
var runs: [Run] = []
for round in 0..<rounds {
    for path in (kioskdBeforePath == nil ? ["A", "B"] : ["A0", "A", "B"]) {
        let run: Run
        switch path {
        case "A": run = try runKioskd(sources, binary: kioskdPath, path: "A kioskd")
        case "A0": run = try runKioskd(sources, binary: kioskdBeforePath!, path: "A0 kioskd")
        default: run = try runPlainLoop(sources)
        }
        let s = summary(run.latencies)
        print(
            String(
                format:
                    "  run %d %@ p50 %.3f ms  p99 %.3f ms  max %.3f ms  CPU %.1f µs/frame  (n=%d, missing %d, out of order %d)",
                round + 1, run.path.padding(toLength: 13, withPad: " ", startingAt: 0) as NSString, s.p50, s.p99, s.max,
                run.cpuPerFrame, run.latencies.count, run.missing,
                run.mismatched))
        print("      \(stalls(run))")
        runs.append(run)
    }
}

func pooled(_ runs: [Run], _ prefix: String) -> (p50: Double, p99: Double, max: Double, cpu: Double, n: Int) {
    let chosen = runs.filter { $0.path.hasPrefix(prefix + " ") }
    let s = summary(chosen.flatMap(\.latencies))
    return (
        s.p50, s.p99, s.max, chosen.map(\.cpuPerFrame).reduce(0, +) / Double(chosen.count),
        chosen.reduce(0) { $0 + $1.latencies.count }
    )
}
let a = pooled(runs, "A"), b = pooled(runs, "B")
print("all runs, pooled:")
print(
    String(
        format: "  A kioskd      p50 %.3f ms  p99 %.3f ms  max %.3f ms  CPU %.1f µs/frame  (n=%d)", a.p50, a.p99, a.max,
        a.cpu, a.n))
print(
    String(
        format: "  B plain loop  p50 %.3f ms  p99 %.3f ms  max %.3f ms  CPU %.1f µs/frame  (n=%d)", b.p50, b.p99, b.max,
        b.cpu, b.n))
if kioskdBeforePath != nil {
    let a0 = pooled(runs, "A0")
    print(
        String(
            format: "  A0 kioskd     p50 %.3f ms  p99 %.3f ms  max %.3f ms  CPU %.1f µs/frame  (n=%d)", a0.p50, a0.p99,
            a0.max, a0.cpu, a0.n))
    print(
        String(
            format: "  ratio A0/B: p50 %.2f×  p99 %.2f×  CPU %.2f×", a0.p50 / b.p50, a0.p99 / b.p99, a0.cpu / b.cpu))
}
let ratioP99 = a.p99 / b.p99
print(
    String(
        format: "  ratio A/B: p50 %.2f×  p99 %.2f×  CPU %.2f×   target p99 ≤ 1.2×: %@", a.p50 / b.p50, ratioP99,
        a.cpu / b.cpu,
        (ratioP99 <= 1.2 ? "PASS" : "MISS") as NSString))
let bad = runs.reduce(0) { $0 + $1.missing + $1.mismatched }
if bad > 0 { print("  WARNING: \(bad) frames missing or out of order") }
for source in sources { source.destroy() }
