// The state loader's harness (docs/testing.md § Fuzzing): any bytes as state.json, read as kioskd
// reads it at start (`StateStore.load`, a piece at a time with the whole-file decode behind it).
// What loads must be what the whole-file decode (the authority) makes of the file, and must
// save and load back the same.
import Foundation
import FuzzSupport
import KioskCore
import KioskStore

/// A directory of this process's own, on tmpfs when there is one (a load per input).
let directory: String = {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let path = base + "/kioskd-state-fuzz-\(ProcessInfo.processInfo.processIdentifier)"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: directory) }
    return path
}()

runFuzzer { bytes in
    let store = StateStore(directory: directory)
    guard FileManager.default.createFile(atPath: store.path, contents: Data(bytes)) else {
        fatalError("cannot write \(store.path)")
    }
    let loaded: KioskState
    do throws(StoreError) {
        loaded = try store.load()
    } catch {
        guard error.code == .corrupt || error.code == .unsupportedVersion else {
            fatalError("invariant: a file that reads is refused as \(error.code): \(error)")
        }
        return
    }
    do {
        let whole = try store.decode(Data(bytes))
        guard whole == loaded else { fatalError("invariant: the piecewise load differs from the whole-file decode") }
    } catch {
        fatalError("invariant: the piecewise load took a file the whole-file decode refuses: \(error)")
    }
    do {
        try store.save(loaded)
        guard try store.load() == loaded else { fatalError("invariant: a loaded state saved does not load back the same") }
    } catch {
        fatalError("invariant: a loaded state does not save and load back: \(error)")
    }
}
