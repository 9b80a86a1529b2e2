// Store benchmark (issue 2): save with fsync and load of a registry of 1,000 apps × 50
// restrictions. Run in release mode: `make bench-store`.
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

var loads: [Double] = []
var loaded = KioskState()
for _ in 0..<runs { loads.append(try milliseconds { loaded = try store.load() }) }
precondition(loaded == state, "the loaded state differs from the saved one")

print("state store: 1,000 apps × 50 restrictions (\(size / 1024) KiB of JSON), \(runs) runs each, release build")
print("  save (encode + write + fsync + rename + fsync dir)  \(summary(saves))")
print("  load (read + decode + validate)                     \(summary(loads))")
let loadMedian = loads.sorted()[runs / 2]
print(String(format: "  target: load under 100 ms — %@ (median %.2f ms)", loadMedian < 100 ? "met" : "NOT met", loadMedian))
// A baseline from the same run: Foundation's own JSON parser over the same bytes, with no
// decoding into kioskd's types. The load can hardly be faster than this on this machine.
let rawData = try Data(contentsOf: URL(fileURLWithPath: store.path))
var baseline: [Double] = []
for _ in 0..<runs { baseline.append(milliseconds { _ = try! JSONSerialization.jsonObject(with: rawData) }) }
print("  baseline: JSONSerialization parse only               \(summary(baseline))")
print(String(format: "  load / baseline: %.2f", loadMedian / baseline.sorted()[runs / 2]))
