import Dispatch
import Foundation
import KioskTestSupport
import Synchronization
import SystemdKit
import Testing

@testable import KioskDaemon

/// `StateWriter` on a real `EventLoop` thread, with a save that records what it wrote and can be
/// held, slowed or made to fail: the ordering and stop rules kioskd's changes rely on.
@Suite struct StateWriterTests {
    struct SaveFailed: Error {}

    /// A loop thread, a writer of `Int` states, and the log of what happened, in order.
    final class Harness: @unchecked Sendable {
        let loop: EventLoop
        private(set) var writer: StateWriter<Int>!
        /// The last durable state (loop thread only).
        var durable = 0
        private let log = Mutex<[String]>([])
        /// While held, saves wait for `release()`.
        private let gate = DispatchSemaphore(value: 0)
        private let held = Atomic<Bool>(false)
        private let failNext = Atomic<Bool>(false)
        let saveDelay: Duration

        init(saveDelay: Duration = .zero, held: Bool = false, maxWaiting: Int = 256, maxWaitingPerUID: Int = 16) throws
        {
            self.saveDelay = saveDelay
            self.held.store(held, ordering: .sequentiallyConsistent)
            loop = try EventLoop()
            try loop.startThread()
            let queue = DispatchQueue(label: "state-writer-test")
            try onLoop {
                self.writer = StateWriter(
                    loop: self.loop, queue: queue, maxWaiting: maxWaiting, maxWaitingPerUID: maxWaitingPerUID
                ) { [self] state in
                    #expect(!loop.isOnLoopThread)
                    record("save \(state) begins")
                    if self.held.load(ordering: .sequentiallyConsistent) { gate.wait() }
                    if saveDelay > .zero {
                        Thread.sleep(
                            forTimeInterval: Double(saveDelay.components.attoseconds) / 1e18
                                + Double(saveDelay.components.seconds))
                    }
                    if failNext.exchange(false, ordering: .sequentiallyConsistent) {
                        record("save \(state) fails")
                        throw SaveFailed()
                    }
                    record("save \(state) ends")
                }
            }
        }

        deinit { loop.exit() }

        func record(_ line: String) { log.withLock { $0.append(line) } }
        var lines: [String] { log.withLock { $0 } }

        func failTheNextSave() { failNext.store(true, ordering: .sequentiallyConsistent) }

        func release() {
            held.store(false, ordering: .sequentiallyConsistent)
            gate.signal()
        }

        /// Runs `body` on the loop thread and waits for it.
        func onLoop<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
            let result = Mutex<Result<T, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
            loop.execute {
                result.withLock { $0 = Result { try body() } }
                done.signal()
            }
            done.wait()
            return try result.withLock { $0! }.get()
        }

        /// Submits a change that adds `delta` to the durable state when its turn comes.
        func submitIncrement(
            _ name: String, by delta: Int = 1, lane: StateWriter<Int>.Lane = .privileged, survivesStop: Bool = false
        ) throws {
            try onLoop { [self] in
                writer.submit(
                    lane, survivesStop: survivesStop,
                    { [self] in
                        record("\(name) computes from \(durable)")
                        let next = durable + delta
                        return StateWriter.Write(
                            state: next,
                            durable: { [self] _ in
                                durable = next
                                record("\(name) durable")
                            }, failed: { [self] _, _ in record("\(name) failed") })
                    },
                    dropped: { [self] refusal in
                        switch refusal {
                        case .stopping: record("\(name) dropped")
                        case .full(let waiting): record("\(name) refused, \(waiting) waiting")
                        }
                    })
            }
        }

        /// Polls until `condition` holds for the log lines; returns whether it did in time.
        func wait(timeout: Duration = .seconds(10), _ condition: ([String]) -> Bool) -> Bool {
            eventually(timeout: timeout) { condition(lines) }
        }
    }

    @Test func changesRunOneAtATimeEachFromTheStateTheEarlierOnesLeftOnDisk() throws {
        let h = try Harness(saveDelay: .milliseconds(20))
        for name in ["a", "b", "c"] { try h.submitIncrement(name) }
        #expect(h.wait { $0.contains("c durable") })
        #expect(
            h.lines == [
                "a computes from 0", "save 1 begins", "save 1 ends", "a durable",
                "b computes from 1", "save 2 begins", "save 2 ends", "b durable",
                "c computes from 2", "save 3 begins", "save 3 ends", "c durable",
            ])
    }

    /// A change kept although its save fails (a wrong passcode, a session's time) still has its
    /// `afterSave` I/O (the browsers' files) run on the writer's queue, never on the loop, and its
    /// result handed to `failed`; a change that is not kept runs no `afterSave` on failure.
    @Test(arguments: [true, false])
    func aKeptChangesAfterSaveRunsOffTheLoopWhenItsSaveFails(kept: Bool) throws {
        let h = try Harness()
        h.failTheNextSave()
        try h.onLoop { [h] in
            h.writer.submit(
                .privileged,
                {
                    StateWriter.Write(
                        state: 1,
                        afterSave: { [h] in
                            h.record("after-save on the loop: \(h.loop.isOnLoopThread)")
                            return "files written"
                        },
                        durable: { _ in h.record("durable") },
                        failed: { _, written in h.record("failed, after-save gave \(String(describing: written))") },
                        keptIfSaveFails: kept)
                }, dropped: { _ in h.record("dropped") })
        }
        #expect(h.wait { $0.contains { $0.hasPrefix("failed") } })
        #expect(
            h.lines
                == (kept
                    ? [
                        "save 1 begins", "save 1 fails", "after-save on the loop: false",
                        "failed, after-save gave Optional(\"files written\")",
                    ]
                    : ["save 1 begins", "save 1 fails", "failed, after-save gave nil"]))
    }

    @Test func theLoopServesOtherWorkWhileASaveIsInFlight() throws {
        let h = try Harness(held: true)
        try h.submitIncrement("a")
        #expect(h.wait { $0.contains("save 1 begins") })
        // The save is held on its queue: the loop still runs other work, and reads the old state.
        let start = ContinuousClock.now
        #expect(try h.onLoop { h.durable } == 0)
        #expect(ContinuousClock.now - start < .seconds(1))
        #expect(!h.lines.contains("a durable"))
        h.release()
        #expect(h.wait { $0.contains("a durable") })
        #expect(try h.onLoop { h.durable } == 1)
    }

    @Test func aFailedSaveChangesNothingAndTheNextChangeStillRuns() throws {
        let h = try Harness()
        h.failTheNextSave()
        try h.submitIncrement("a")
        try h.submitIncrement("b", by: 10)
        #expect(h.wait { $0.contains("b durable") })
        #expect(
            h.lines == [
                "a computes from 0", "save 1 begins", "save 1 fails", "a failed",
                "b computes from 0", "save 10 begins", "save 10 ends", "b durable",
            ])
    }

    @Test func aChangeWithNothingToWriteSavesNothing() throws {
        let h = try Harness()
        try h.onLoop {
            h.writer.submit(
                .privileged,
                {
                    h.record("noop computes"); return nil
                }, dropped: { _ in })
        }
        try h.submitIncrement("a")
        #expect(h.wait { $0.contains("a durable") })
        #expect(h.lines == ["noop computes", "a computes from 0", "save 1 begins", "save 1 ends", "a durable"])
    }

    @Test func stopLetsTheSaveInFlightFinishAndDropsTheChangesStillWaiting() throws {
        let h = try Harness(held: true)
        for name in ["a", "b", "c"] { try h.submitIncrement(name) }
        #expect(h.wait { $0.contains("save 1 begins") })
        try h.onLoop { h.writer.stop(within: .seconds(30)) { h.record("stopped") } }
        try h.submitIncrement("d")  // after the stop: dropped at once
        #expect(h.lines.suffix(3) == ["b dropped", "c dropped", "d dropped"])
        #expect(!h.lines.contains("stopped"))
        h.release()
        #expect(h.wait { $0.contains("stopped") })
        #expect(
            h.lines == [
                "a computes from 0", "save 1 begins", "b dropped", "c dropped", "d dropped",
                "save 1 ends", "a durable", "stopped",
            ])
    }

    @Test func stopWaitsForAStuckSaveNoLongerThanItsLimit() throws {
        let h = try Harness(held: true)
        defer { h.release() }
        try h.submitIncrement("a")
        #expect(h.wait { $0.contains("save 1 begins") })
        let start = ContinuousClock.now
        try h.onLoop { h.writer.stop(within: .milliseconds(200)) { h.record("stopped") } }
        #expect(h.wait { $0.contains("stopped") })
        let waited = ContinuousClock.now - start
        #expect(waited >= .milliseconds(190) && waited < .seconds(5), "\(waited)")
        #expect(!h.lines.contains("a durable"))
    }

    @Test func changesBeyondTheWaitingLimitAreRefusedAtOnce() throws {
        let h = try Harness(held: true, maxWaiting: 2)
        try h.submitIncrement("a")
        #expect(h.wait { $0.contains("save 1 begins") })
        for name in ["b", "c", "d"] { try h.submitIncrement(name) }
        // a is in flight, b and c wait: d is refused without waiting.
        #expect(h.lines == ["a computes from 0", "save 1 begins", "d refused, 2 waiting"])
        h.release()
        #expect(h.wait { $0.contains("c durable") })
        try h.submitIncrement("e")  // room again
        #expect(h.wait { $0.contains("e durable") })
        #expect(h.lines.filter { $0.hasSuffix("durable") } == ["a durable", "b durable", "c durable", "e durable"])
    }

    /// A passcode being hashed when kioskd stops: the stop waits for its outcome (a change that
    /// survives the stop) to be saved, behind the save in flight, while other waiting changes are
    /// dropped.
    @Test func stopWaitsForHeldWorkAndSavesTheChangeThatSurvivesIt() throws {
        let h = try Harness(held: true)
        try h.submitIncrement("a")
        #expect(h.wait { $0.contains("save 1 begins") })
        try h.onLoop { h.writer.hold() }
        try h.submitIncrement("b")
        try h.onLoop { h.writer.stop(within: .seconds(30)) { h.record("stopped") } }
        #expect(h.lines.last == "b dropped")
        h.release()
        #expect(h.wait { $0.contains("a durable") })
        try h.submitIncrement("other")  // an ordinary change after the stop is still refused
        try h.submitIncrement("passcode", survivesStop: true)
        try h.onLoop { h.writer.release() }
        #expect(h.wait { $0.contains("stopped") })
        #expect(
            h.lines == [
                "a computes from 0", "save 1 begins", "b dropped", "save 1 ends", "a durable", "other dropped",
                "passcode computes from 1", "save 2 begins", "save 2 ends", "passcode durable", "stopped",
            ])
    }

    @Test func heldWorkReleasedWithoutAChangeLetsTheStopFinish() throws {
        let h = try Harness()
        try h.onLoop { h.writer.hold() }
        try h.onLoop { h.writer.stop(within: .seconds(30)) { h.record("stopped") } }
        #expect(h.lines.isEmpty)
        try h.onLoop { h.writer.release() }
        #expect(h.lines == ["stopped"])
    }

    @Test func stopWithNothingInFlightIsImmediate() throws {
        let h = try Harness()
        try h.onLoop { h.writer.stop(within: .seconds(30)) { h.record("stopped") } }
        #expect(h.lines == ["stopped"])
    }

    /// One uid's flood of registrations neither delays nor refuses an admin's change
    /// or a passcode attempt, nor another uid's registrations.
    @Test func privilegedChangesGoAheadOfUnprivilegedOnesWhichAreCappedPerUID() throws {
        let h = try Harness(held: true, maxWaiting: 4, maxWaitingPerUID: 2)
        try h.submitIncrement("a", lane: .unprivileged(uid: 65534))
        #expect(h.wait { $0.contains("save 1 begins") })
        for name in ["n1", "n2", "n3"] { try h.submitIncrement(name, lane: .unprivileged(uid: 65534)) }
        #expect(h.lines.last == "n3 refused, 2 waiting", "the uid's cap")
        for name in ["u1", "u2"] { try h.submitIncrement(name, lane: .unprivileged(uid: 1000)) }
        try h.submitIncrement("x", lane: .unprivileged(uid: 1001))
        #expect(h.lines.last == "x refused, 4 waiting", "the unprivileged lane's cap")
        try h.submitIncrement("root", by: 100)  // privileged: its own cap, ahead of every unprivileged one
        h.release()
        #expect(h.wait { $0.contains("u2 durable") })
        #expect(
            h.lines.filter { $0.contains("computes") }.map { $0.split(separator: " ")[0] } == [
                "a", "root", "n1", "n2", "u1", "u2",
            ])
    }

    @Test func anUrgentChangeGoesRightAfterTheSaveInFlightAndIsNeverRefusedForAFullQueue() throws {
        let h = try Harness(held: true, maxWaiting: 2)
        try h.submitIncrement("a")
        #expect(h.wait { $0.contains("save 1 begins") })
        #expect(try h.onLoop { h.writer.isIdle } == false)
        for name in ["b", "c"] { try h.submitIncrement(name) }
        try h.submitIncrement("tick", by: 100, lane: .urgent)  // the queue is full: still taken, and first
        try h.submitIncrement("d")  // not urgent: refused, the urgent one does not count
        #expect(h.lines.last == "d refused, 2 waiting")
        h.release()
        #expect(h.wait { $0.contains("c durable") })
        #expect(
            h.lines.filter { $0.contains("computes") } == [
                "a computes from 0", "tick computes from 1", "b computes from 101", "c computes from 102",
            ])
        #expect(try h.onLoop { h.writer.isIdle } == true)
    }
}
