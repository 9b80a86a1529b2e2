// The crash test's child: writes StateFixtures.state(sequence:) for start, start+1, …
// into DIR, printing each number once its save has returned, until it is killed.
// Usage: kiosk-store-writer DIR START
import Foundation
import KioskStore
import KioskTestSupport

let arguments = CommandLine.arguments
guard arguments.count == 3, let start = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: kiosk-store-writer DIR START\n".utf8))
    exit(64)
}
let store = StateStore(directory: arguments[1])
do {
    _ = try store.load()
    var n = start
    while true {
        try store.save(StateFixtures.state(sequence: n))
        FileHandle.standardOutput.write(Data("\(n)\n".utf8))
        n += 1
    }
} catch {
    FileHandle.standardError.write(Data("kiosk-store-writer: \(error)\n".utf8))
    exit(1)
}
