// Store benchmark (docs/benchmarks.md#state-store): save with fsync and load of a registry of 1,000 apps × 50
// restrictions, and the memory a load takes at its peak. Run in release mode: `make bench-store`.
import Foundation
import KioskCore
import KioskStore
import KioskTestSupport

func milliseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}

func summary(_ samples: [Double]) -> String {
    let sorted = samples.sorted()
    let median = sorted[sorted.count / 2]
    return String(format: "median %7.2f ms   min %7.2f ms   max %7.2f ms", median, sorted.first!, sorted.last!)
}

func median(_ samples: [Double]) -> Double { samples.sorted()[samples.count / 2] }

/// A field of /proc/self/status, in MiB.
func statusMiB(_ field: String) -> Double {
    let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
    return Double(Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1) / 1024
}

// `StoreBench --load-peak DIR` (`--whole-peak DIR`): a fresh process loads DIR's state (decodes
// the file whole, as loads did before) and prints its resident size before, after, and at the
// peak (VmHWM), so that nothing else this benchmark made is counted.
if CommandLine.arguments.count == 3, ["--load-peak", "--whole-peak"].contains(CommandLine.arguments[1]) {
    let store = StateStore(directory: CommandLine.arguments[2])
    let before = statusMiB("VmRSS")
    let state =
        CommandLine.arguments[1] == "--load-peak"
        ? try store.load() : try store.decode(Data(contentsOf: URL(fileURLWithPath: store.path)))
    print(
        String(
            format: "%.2f %.2f %.2f %d", before, statusMiB("VmRSS"), statusMiB("VmHWM"),
            state.registry.applications.count))
    if ProcessInfo.processInfo.environment["STOREBENCH_DETAIL"] != nil {
        print(String(format: "anon %.3f file %.3f", statusMiB("RssAnon"), statusMiB("RssFile")))
    }
    exit(0)
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-bench-\(UUID().uuidString)").path
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }

var state = KioskState()
state.registry = StateFixtures.registry(apps: 1000, restrictions: 50)
let store = StateStore(directory: directory)
let runs = 15

var saves: [Double] = []
for _ in 0..<runs { saves.append(try milliseconds { try store.save(state) }) }
let size = (try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int) ?? 0

// The encoding alone, into memory (what a save does before its writes and fsyncs), and the
// same with Foundation's JSONEncoder over the whole state, as saves did before.
var encodes: [Double] = []
for _ in 0..<runs {
    encodes.append(
        try milliseconds {
            var total = 0
            try store.encode(state) { bytes throws(StoreError) in
                total += bytes.count; bytes.removeAll(keepingCapacity: true)
            }
            precondition(total == size)
        })
}
struct Envelope: Encodable { var version: Int; var state: KioskState }
var foundationEncodes: [Double] = []
for _ in 0..<runs {
    foundationEncodes.append(
        try milliseconds {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let bytes = try encoder.encode(Envelope(version: StateStore.formatVersion, state: state))
            precondition(bytes.count == size)
        })
}

var loads: [Double] = []
var loaded = KioskState()
for _ in 0..<runs { loads.append(try milliseconds { loaded = try store.load() }) }
precondition(loaded == state, "the loaded state differs from the saved one")

// Decoding the file whole, as loads did before they split it (now the fallback).
let fileData = try Data(contentsOf: URL(fileURLWithPath: store.path))
var wholeDecodes: [Double] = []
var wholeDecoded = KioskState()
for _ in 0..<runs { wholeDecodes.append(try milliseconds { wholeDecoded = try store.decode(fileData) }) }
precondition(wholeDecoded == state, "the whole-file decode differs from the saved state")  // outside the timing, as for loads

print("state store: 1,000 apps × 50 restrictions (\(size / 1024) KiB of JSON), \(runs) runs each, release build")
print("  save (encode + write + fsync + rename + fsync dir)  \(summary(saves))")
print("    of which encode (in memory, no writes)           \(summary(encodes))")
print("    JSONEncoder over the whole state, for comparison \(summary(foundationEncodes))")
print("  load (read + decode + validate)                     \(summary(loads))")
print("    whole-file decode, as loads were before      \(summary(wholeDecodes))")
print(
    String(
        format: "  target: load under 100 ms — %@ (median %.2f ms)", median(loads) < 100 ? "met" : "NOT met",
        median(loads)))
// A baseline from the same run: Foundation's own JSON parser over the same bytes, with no
// decoding into kioskd's types. The load can hardly be faster than this on this machine.
var baseline: [Double] = []
for _ in 0..<runs { baseline.append(milliseconds { _ = try! JSONSerialization.jsonObject(with: fileData) }) }
print("  baseline: JSONSerialization parse only               \(summary(baseline))")
print(String(format: "  load / baseline: %.2f", median(loads) / median(baseline)))

// Finding an app by id (issue: 2.6 µs at app #517 by a scan of the list), in the registry's
// index and by the scan `applications.first { $0.id == appID }`, per lookup.
func perLookup(_ body: (AppID) -> UInt32?) -> Double {
    let ids = (0..<1000).map { try! AppID("org.example.App\($0)") }
    var sum: UInt64 = 0
    let ms = milliseconds { for _ in 0..<100 { for id in ids { sum &+= UInt64(body(id) ?? 0) } } }
    precondition(sum > 0)
    return ms * 1000 / 100_000
}
let app517 = try AppID("org.example.App517")
let indexed = perLookup { state.registry.owner(of: $0) }
let scanned = perLookup { id in state.registry.applications.first { $0.id == id }?.ownerUID }
func at517(_ body: () -> UInt32?) -> Double {
    var samples: [Double] = []
    for _ in 0..<runs { samples.append(milliseconds { for _ in 0..<10_000 { precondition(body() != nil) } } / 10) }
    return median(samples)
}
let indexed517 = at517 { state.registry.owner(of: app517) }
let scanned517 = at517 { state.registry.applications.first { $0.id == app517 }?.ownerUID }
print(
    String(
        format:
            "  app lookup by id: app #517 by index %.3f µs, by scan %.3f µs; mean over all 1,000 apps: index %.3f µs, scan %.3f µs",
        indexed517, scanned517, indexed, scanned))

// The load's memory, in a fresh process (this one holds the state and the benchmark's garbage).
func peak(_ mode: String) throws -> [Double] {
    let child = Process()
    child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    child.arguments = [mode, directory]
    let output = Pipe()
    child.standardOutput = output
    try child.run()
    child.waitUntilExit()
    return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        .split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
}
for (mode, what) in [("--load-peak", "load"), ("--whole-peak", "whole-file decode (before)")] {
    let figures = try peak(mode)
    guard figures.count == 4 else { continue }
    print(
        String(
            format:
                "  %@ in a fresh process: VmRSS %.1f → %.1f MiB, peak (VmHWM) %.1f MiB: %.1f MiB above the start, %.1f above the end",
            what, figures[0], figures[1], figures[2], figures[2] - figures[0], figures[2] - figures[1]))
}
