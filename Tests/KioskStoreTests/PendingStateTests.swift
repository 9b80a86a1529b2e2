import Foundation
import KioskCore
import KioskStore
import KioskTestSupport
import Testing

/// The runtime directory's copy of a state whose save failed, and the start's check that the
/// state directory takes writes (docs/state-store.md § When the disk fails).
@Suite struct PendingStateTests {
    @Test func theRuntimeCopyIsItsOwnFileAbsentUntilWrittenAndGoneOnceRemoved() throws {
        let directory = try temporaryDirectory()
        let pending = StateStore(directory: directory, name: StateStore.pendingFileName)
        #expect(pending.path == directory + "/pending-state.json")
        #expect(try pending.loadIfPresent() == nil)
        let state = StateFixtures.state(sequence: 3)
        try pending.save(state)
        #expect(try pending.loadIfPresent() == state)
        // The state file beside it is untouched.
        #expect(try StateStore(directory: directory).loadIfPresent() == nil)
        pending.remove()
        #expect(try pending.loadIfPresent() == nil)
        pending.remove()  // already gone: no error
    }

    @Test func theProbeLeavesNothingBehindAndNamesWhatItMet() throws {
        let directory = try temporaryDirectory()
        try StateStore(directory: directory).probeWritable()
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [])
        let missing = StateStore(directory: directory + "/gone")
        let error = #expect(throws: StoreError.self) { try missing.probeWritable() }
        #expect(error?.code == .io)
        #expect(error?.description.contains("No such file or directory") == true, "\(String(describing: error))")
    }
}
