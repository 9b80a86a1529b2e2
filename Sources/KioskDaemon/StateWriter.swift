import Dispatch
import KioskAPI
import SystemdKit

/// Writes the daemon's state off the loop, one change at a time, in order of arrival.
///
/// A change is a closure that, when its turn comes, computes the next state from the current one
/// (on the loop, after every earlier change is on disk or has failed) and says what to do once
/// it is durable or if saving it failed. The save (encode, write, two fsyncs: milliseconds on a
/// quiet disk, seconds on a slow one) runs on `queue`; meanwhile the loop serves reads, other callers'
/// validation and polkit checks, and input. One save is in flight at a time.
///
/// Lives on the loop thread: `submit`, `stop` and every closure it is given run there.
final class StateWriter<State: Sendable> {
    /// What a change writes, and what follows on the loop once the save is done.
    struct Write {
        var state: State
        /// Runs on the writer's queue once `state` is on disk, before `durable`: I/O that must be
        /// done before the change is reported, kept off the loop (the browsers' policy files).
        /// What it returns is `durable`'s argument.
        var afterSave: (@Sendable () -> any Sendable)? = nil
        /// `state` is on disk (and `afterSave` done, its result given): make it the state, then
        /// emit and reply.
        var durable: (_ afterSave: (any Sendable)?) -> Void
        /// The save failed; nothing on disk changed. With ``keptIfSaveFails``, `afterSave` ran
        /// anyway and its result is given; nil otherwise.
        var failed: (_ error: any Error, _ afterSave: (any Sendable)?) -> Void
        /// The change is made although its save fails (one that only tightens: a wrong passcode,
        /// a session's time), so `afterSave`'s I/O runs after a failed save too, still off the
        /// loop.
        var keptIfSaveFails = false
    }

    /// Why a change was not made.
    enum Refusal: Equatable {
        /// The writer stopped before the change's turn came.
        case stopping
        /// `waiting` changes of the same lane (for an unprivileged one: of the same uid) already wait
        /// for their turn, the most the writer queues.
        case full(waiting: Int)
    }

    /// Which changes go first, and which are capped how. Every lane is in order of arrival.
    enum Lane: Equatable {
        /// A session's time limit running out (a lock): ahead of everything but the save in
        /// flight, and never refused for a full queue; its caller keeps at most one waiting.
        case urgent
        /// A change an admin (root, or polkit) or a passcode attempt asked for: ahead of every
        /// unprivileged change, so that no flood of those can delay or refuse it; its own cap.
        case privileged
        /// A change any uid may ask for (registering its own apps): behind the others, at most
        /// `maxWaitingPerUID` waiting for one uid.
        case unprivileged(uid: UInt32)

        var rank: Int {
            switch self {
            case .urgent: 0
            case .privileged: 1
            case .unprivileged: 2
            }
        }
    }

    private struct Change {
        var compute: () -> Write?
        var dropped: (Refusal) -> Void
        var lane: Lane
        /// Made even when the writer stops before its turn (see ``hold()``).
        var survivesStop: Bool
    }

    private let loop: EventLoop
    private let queue: DispatchQueue
    private let save: @Sendable (State) throws -> Void
    private let maxWaiting: Int
    private let maxWaitingPerUID: Int
    private var waiting: [Change] = []
    /// A change is being computed, saved or finished: the next one waits.
    private var busy = false
    private var isStopping = false
    private var onStopped: (() -> Void)?
    private var stopTimer: EventSource?
    /// Changes still to come that a stop waits for (``hold()``).
    private var holds = 0

    /// `save` runs on `queue`, never on the loop. More than `maxWaiting` privileged changes, or
    /// unprivileged ones, waiting for their turn are refused rather than queued (a stuck disk must
    /// not grow kioskd without bound), and more than `maxWaitingPerUID` of one uid.
    init(
        loop: EventLoop, queue: DispatchQueue, maxWaiting: Int = KioskWire.Limits.waitingChanges,
        maxWaitingPerUID: Int = KioskWire.Limits.waitingChangesPerUID, save: @escaping @Sendable (State) throws -> Void
    ) {
        self.loop = loop
        self.queue = queue
        self.maxWaiting = maxWaiting
        self.maxWaitingPerUID = maxWaitingPerUID
        self.save = save
    }

    /// Queues a change in `lane`. `compute` runs on the loop when every change ahead of it is
    /// done; it returns nil when there is nothing to write (it has answered its caller itself).
    /// `dropped` runs instead of `compute`, at once or later, when the change is not made: the
    /// writer stopped first, or too many changes wait already in its lane. A change that
    /// `survivesStop` (a passcode attempt's outcome, which ``hold()`` announced) is made even
    /// when the writer is stopping, until its stop finishes.
    func submit(
        _ lane: Lane, survivesStop: Bool = false, _ compute: @escaping () -> Write?,
        dropped: @escaping (Refusal) -> Void
    ) {
        guard !isStopping || (survivesStop && onStopped != nil) else {
            dropped(.stopping)
            return
        }
        switch lane {
        case .urgent:
            break
        case .privileged:
            let queued = waiting.count { $0.lane == .privileged }
            guard queued < maxWaiting else { return dropped(.full(waiting: queued)) }
        case .unprivileged:
            let ofUID = waiting.count { $0.lane == lane }
            guard ofUID < maxWaitingPerUID else { return dropped(.full(waiting: ofUID)) }
            let queued = waiting.count { $0.lane.rank == lane.rank }
            guard queued < maxWaiting else { return dropped(.full(waiting: queued)) }
        }
        let change = Change(compute: compute, dropped: dropped, lane: lane, survivesStop: survivesStop)
        waiting.insert(change, at: waiting.firstIndex { $0.lane.rank > lane.rank } ?? waiting.endIndex)
        next()
    }

    /// No change is waiting, being computed or being saved: `state` is what every change sent so
    /// far left on disk.
    var isIdle: Bool { !busy && waiting.isEmpty }

    /// Announces a change that is still being worked out off the loop (a passcode being hashed):
    /// a stop meanwhile waits for it — for its `survivesStop` change to be submitted and saved,
    /// or for ``release()`` without one — within the stop's limit. Fail closed: a wrong passcode
    /// in flight at SIGTERM is counted on disk before kioskd exits, never a free guess.
    func hold() {
        holds += 1
    }

    /// The held work is done: its change, if any, was submitted (`survivesStop`) just before.
    func release() {
        holds -= 1
        if isStopping { next() }
    }

    /// Stops taking changes: those waiting for their turn are dropped (`dropped`) but for those
    /// that survive a stop, the save in flight finishes (its `durable` or `failed` runs), held
    /// work is released and its changes saved, then `then` runs; at most `limit` later even if
    /// that has not finished (the file is written atomically: it holds the old state or the new
    /// one). A second call runs `then` at once.
    func stop(within limit: Duration, then: @escaping () -> Void) {
        guard !isStopping else {
            then()
            return
        }
        isStopping = true
        onStopped = then
        let dropped = waiting.filter { !$0.survivesStop }
        waiting.removeAll { !$0.survivesStop }
        dropped.forEach { $0.dropped(.stopping) }
        guard busy || !waiting.isEmpty || holds > 0 else {
            finishStopping()
            return
        }
        stopTimer = try? loop.addTimer(after: limit) { [unowned self] in finishStopping() }
        if stopTimer == nil { finishStopping() }  // no timer: do not wait unbounded
    }

    private func finishStopping() {
        stopTimer?.cancel()
        stopTimer = nil
        let then = onStopped
        onStopped = nil
        then?()
    }

    /// Starts the next waiting change unless one is in flight. Changes submitted while one is
    /// computed or finished (a reply that starts the next passcode attempt) only queue.
    private func next() {
        if isStopping, onStopped == nil { return }  // stopped: nothing more is saved
        while !busy, !waiting.isEmpty {
            let change = waiting.removeFirst()
            busy = true
            guard let write = change.compute() else {
                busy = false
                continue
            }
            loop.offload(
                to: queue,
                { [save, state = write.state, afterSave = write.afterSave, kept = write.keptIfSaveFails] in
                    Result { try save(state) }.map { afterSave?() }
                        .mapError { SaveFailure(error: $0, afterSave: kept ? afterSave?() : nil) }
                },
                then: { [unowned self] result in
                    switch result {
                    case .success(let done): write.durable(done)
                    case .failure(let failure): write.failed(failure.error, failure.afterSave)
                    }
                    busy = false
                    next()
                })
        }
        if isStopping, !busy, waiting.isEmpty, holds == 0 { finishStopping() }
    }

    /// A failed save, with what `afterSave` returned when the change is kept anyway.
    private struct SaveFailure: Error {
        var error: any Error
        var afterSave: (any Sendable)?
    }
}
