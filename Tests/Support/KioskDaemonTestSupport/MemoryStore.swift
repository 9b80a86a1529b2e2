import Glibc
import KioskCore
import KioskDaemon
import Synchronization

/// An in-memory `StateSaving` with a gate: while the gate is closed, a save waits (on the
/// writer's queue, as a slow disk would) until the test opens it.
public final class MemoryStore: StateSaving, Sendable {
    private struct Storage {
        var saved: [KioskState] = []
        var isOpen = true
        var waiting = 0
        var failures: [any Error] = []
    }

    private let storage = Mutex(Storage())
    private let journal: CallJournal?

    public init(journal: CallJournal? = nil) { self.journal = journal }

    public var path: String { "memory" }

    /// Every state saved, oldest first.
    public var saved: [KioskState] { storage.withLock { $0.saved } }
    /// How many saves wait at the closed gate.
    public var waitingAtGate: Int { storage.withLock { $0.waiting } }

    public func closeGate() { storage.withLock { $0.isOpen = false } }
    public func openGate() { storage.withLock { $0.isOpen = true } }
    /// The next save throws `error` (once its turn at the gate comes) and stores nothing.
    public func failNextSave(with error: any Error) { storage.withLock { $0.failures.append(error) } }

    public func save(_ state: KioskState) throws {
        journal?.note("save")
        storage.withLock { $0.waiting += 1 }
        while !storage.withLock({ $0.isOpen }) { usleep(1000) }
        let failure: (any Error)? = storage.withLock {
            $0.waiting -= 1
            guard $0.failures.isEmpty else { return $0.failures.removeFirst() }
            $0.saved.append(state)
            return nil
        }
        if let failure {
            journal?.note("save failed")
            throw failure
        }
        journal?.note("saved")
    }

    /// Waits (polling) until `condition` holds, at most `timeout`; whether it held.
    public func wait(timeout: Duration = .seconds(5), until condition: (MemoryStore) -> Bool) -> Bool {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while clock.now < end {
            if condition(self) { return true }
            usleep(1000)
        }
        return condition(self)
    }
}
