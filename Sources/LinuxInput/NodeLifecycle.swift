// The broker's decisions about each input node, as a pure state machine: no fd, no C, no clock,
// no logger. `InputBroker` finds nodes, pumps their events and carries out the actions; this file
// decides what happens to a node, and when. LinuxInputTests drives it with explicit times.

/// What the lifecycle needs of a node's udev record: the key it is known by. The broker's records
/// are SystemdKit `Device`s; the lifecycle keeps the last one of each node to try it again.
protocol NodeRecord {
    /// `/sys/devices/…/input/input7/event3`: unique while the node exists.
    var syspath: String { get }
}

/// The life of every input node the broker has seen: brokered (grabbed, cloned, filtered), not
/// for the broker, being retried with a back-off, or held silent through a session.
///
/// Events come in as calls (udev's `add`, `change` and `remove`, what an attempt to take a node
/// came to, a policy change, the retry timer, a relist after the udev monitor overflowed), each
/// with the time now where a timer may be armed; actions come out, in the order to carry them
/// out. ``Action/attempt(_:)`` and ``Action/rejudge(_:)`` ask the broker to do I/O and report what
/// came of it with the matching calls; ``Action/settleRetryTimer`` asks it to report
/// ``settleRetryTimer(at:)`` once the actions before it are done.
///
/// The rules (README § Input enforcement):
/// - A node is tried (opened, grabbed, cloned) when added, when it changes and it is not
///   brokered, and while it is to retry: on every policy change and when the retry timer fires.
/// - A node the kernel announces (its own uevent, before udev runs its rules) is grabbed at once
///   (``Action/grabEarly(_:)``) and held, not forwarded, until udev's record of it arrives: then it
///   is tried as on udev's `add`, on the fd already grabbed. An early grab that fails (another
///   process holds it, a clone, nothing to lock, gone) is forgotten: udev's `add` decides.
/// - Another process holding its grab (`EBUSY`), or failing to open or grab it, puts it in a
///   stretch of retries, said once per stretch: at error level during a session (its events
///   escape the locks), at warning level outside one, and once more at error level when a session
///   starts; other tries say so at debug level. A stretch ends when kioskd takes the node, it
///   fails for another reason, or it is removed.
/// - A node that fails after its grab (no clone, no watch, a read error, no re-read or new clone
///   after a change) is held silent while locks are on (fail closed), released and retried
///   otherwise. Lifting the locks releases the held nodes and retries them.
/// - One retry timer for all nodes: 1 s, doubled after each firing up to 30 s, back to 1 s on
///   every policy change and whenever it finds nothing left to retry. Every failure that leaves a
///   node to retry arms it that step from now.
/// - A brokered node that changes is judged again (``BrokerChange``): kept (the filter resynced),
///   re-cloned, or released as not for the broker. A node held silent ignores changes.
/// - After a monitor overflow the devices are listed again: nodes not for the broker and nodes to
///   retry that are no longer listed are forgotten; every listed node is judged as if it changed.
struct NodeLifecycle<Record: NodeRecord> {
    /// Where a node is in its life.
    enum State: Equatable {
        /// Being taken: between ``Action/attempt(_:)`` and what came of it. `previous`: the
        /// stretch of retries it was in.
        case attempting(previous: Retry?)
        /// Grabbed, cloned and under the filter.
        case brokered
        /// One of kioskd's clones (this one's or another's), or a node with nothing a profile
        /// locks: looked at again on its next `change` or a relist.
        case notForBroker
        /// Not brokered; tried again on every policy change and by the retry timer.
        case retrying(Retry)
        /// Failed after its grab while locks were on: kept open and grabbed, so that its events
        /// reach no one, until the locks are lifted (then it is retried) or it is removed.
        case heldSilent
    }

    /// A stretch of retries of one node.
    struct Retry: Equatable {
        enum Reason: String, Equatable {
            /// Another process holds its grab (`EBUSY`).
            case busy
            /// Opening, grabbing, cloning, watching or reading it failed.
            case failed
        }

        var reason: Reason
        /// Whether the stretch was said, and whether at error level (during a session).
        var logged = false
        var loggedAsError = false
    }

    enum Action {
        /// Open the node the kernel just announced and take its grab now, before udev's record;
        /// keep it grabbed and silent until ``added(_:)``; report ``earlyGrabFailed(_:)`` if not.
        case grabEarly(KernelUevent)
        /// Open the node, take its grab, clone it and put it under the filter; report what came
        /// of it: ``notForBroker(_:)``, ``vanished(_:)``, ``attemptFailed(_:_:at:)``,
        /// ``grabbed(_:)``, ``cloneFailed(_:at:)``, ``failed(_:at:)`` or ``brokered(_:)``.
        case attempt(Record)
        /// udev changed a brokered node: drain it, read it again on its fd (keeping its grab) and
        /// report ``judged(_:_:)`` (or ``failed(_:at:)``, ``removed(_:)``).
        case rejudge(Record)
        /// Its clone still matches: bring the filter to the state just read.
        case resync(String)
        /// Give it a new clone, made from what was just read; report ``brokered(_:)`` or
        /// ``failed(_:at:)``.
        case reclone(Record)
        /// Stop filtering it, destroy its clone and close it (its grab goes); whatever of this it has.
        case release(String)
        /// Stop filtering it and destroy its clone, but keep it open and grabbed.
        case holdSilent(String)
        /// Arm the retry timer for this time (moving it if armed); report ``retryTimerFired(at:)``.
        case armRetryTimer(at: Duration)
        /// Disarm the retry timer.
        case disarmRetryTimer
        /// Once the actions before this one are done, report ``settleRetryTimer(at:)``.
        case settleRetryTimer
        /// Say so, once.
        case log(Notice)
    }

    /// What the broker says, and at which level; it words each for the step that failed.
    enum Notice: Equatable {
        /// Not brokered during a session: its events escape the locks (error).
        case escapingLocks(Retry.Reason)
        /// Not brokered outside a session; tried again later (warning).
        case notBrokered(Retry.Reason)
        /// Tried again and still not brokered, as already said (debug).
        case stillNotBrokered(Retry.Reason)
        /// Took the grab another process had held (info).
        case tookGrab
        /// Failed after its grab during a session: held silent until the session ends (error).
        case heldSilent
        /// Failed after its grab outside a session: released and tried again later (error).
        case releasedToRetry
        /// A brokered node was removed (info).
        case removed
        /// A brokered node changed and has nothing a profile locks: released (info).
        case releasedNothingToLock
        /// The nodes held silent were let go (warning); `retried`: they are tried again.
        case releasedHeld(count: Int, retried: Bool)
    }

    static var firstRetry: Duration { .seconds(1) }
    static var lastRetry: Duration { .seconds(30) }

    private struct Entry {
        var record: Record
        var state: State
    }

    private var entries: [String: Entry] = [:]  // by syspath
    /// Nodes grabbed on the kernel's uevent, waiting for udev's record (fail closed: grabbed, not
    /// forwarded), by syspath.
    private(set) var awaitingUdev: Set<String> = []
    /// Whether a session's locks are on (the policy is not pass-through): a node that fails after
    /// its grab is then held silent rather than let go.
    private(set) var locksOn: Bool
    /// The step the retry timer is armed with next.
    private(set) var backOff = NodeLifecycle.firstRetry
    /// When the retry timer fires, or nil while it is disarmed.
    private(set) var retryDue: Duration?

    init(locksOn: Bool) {
        self.locksOn = locksOn
    }

    /// Where the node is, or nil for a node not known (never seen, removed, or forgotten).
    func state(of syspath: String) -> State? { entries[syspath]?.state }

    /// The nodes in `state`, sorted.
    func nodes(in state: State) -> [String] { entries.filter { $0.value.state == state }.keys.sorted() }

    // MARK: The kernel

    /// The kernel's `add` of an evdev node: grab it now, unless it is known already.
    mutating func kernelAdded(_ uevent: KernelUevent) -> [Action] {
        let syspath = uevent.syspath
        guard entries[syspath] == nil, !awaitingUdev.contains(syspath) else { return [] }
        awaitingUdev.insert(syspath)
        return [.grabEarly(uevent)]
    }

    /// The early grab came to nothing (and holds nothing): udev's `add` decides as ever.
    mutating func earlyGrabFailed(_ syspath: String) -> [Action] {
        awaitingUdev.remove(syspath)
        return []
    }

    // MARK: udev

    /// udev's `add`, or the node listed at start.
    mutating func added(_ record: Record) -> [Action] {
        awaitingUdev.remove(record.syspath)
        switch entries[record.syspath]?.state {
        case nil: return attempt(record, previous: nil)
        case .retrying(let retry)?: return attempt(record, previous: retry)
        case .attempting?, .brokered?, .notForBroker?, .heldSilent?: return []
        }
    }

    /// udev's `change` (`udevadm trigger`, new rules or hwdb entries): the node is judged again
    /// as if it were new, a brokered one on its own fd.
    mutating func changed(_ record: Record) -> [Action] {
        awaitingUdev.remove(record.syspath)
        switch entries[record.syspath]?.state {
        case .brokered?: return [.rejudge(record)]
        case .attempting?, .heldSilent?: return []
        case .notForBroker?, nil: return attempt(record, previous: nil)
        case .retrying(let retry)?: return attempt(record, previous: retry)
        }
    }

    /// udev's `remove`, or a brokered node read as gone (`ENODEV`): forgotten.
    mutating func removed(_ syspath: String) -> [Action] {
        if awaitingUdev.remove(syspath) != nil { return [.release(syspath)] }
        switch entries.removeValue(forKey: syspath)?.state {
        case .brokered?: return [.release(syspath), .log(.removed)]
        case .heldSilent?, .attempting?: return [.release(syspath)]
        case .notForBroker?, .retrying?, nil: return []
        }
    }

    /// The udev monitor dropped uevents and the devices were listed again (`listed`).
    mutating func relisted(_ listed: [Record], at now: Duration) -> [Action] {
        let present = Set(listed.map(\.syspath))
        entries = entries.filter { syspath, entry in
            switch entry.state {
            case .notForBroker, .retrying: present.contains(syspath)
            case .attempting, .brokered, .heldSilent: true
            }
        }
        return listed.flatMap { changed($0) } + [.settleRetryTimer]
    }

    // MARK: What an attempt came to

    /// One of kioskd's clones, or nothing a profile locks.
    mutating func notForBroker(_ syspath: String) -> [Action] {
        entries[syspath]?.state = .notForBroker
        return []
    }

    /// Gone before it could be opened, or its path names another device now (that one has an
    /// `add` of its own): forgotten.
    mutating func vanished(_ syspath: String) -> [Action] {
        entries[syspath] = nil
        return []
    }

    /// Opening or grabbing it failed (`busy`: another process holds the grab).
    mutating func attemptFailed(_ syspath: String, _ reason: Retry.Reason, at now: Duration) -> [Action] {
        retryLater(syspath, reason, at: now)
    }

    /// Its grab is kioskd's.
    mutating func grabbed(_ syspath: String) -> [Action] {
        guard case .attempting(let previous)? = entries[syspath]?.state, previous?.reason == .busy else { return [] }
        return [.log(.tookGrab)]
    }

    /// Grabbed, but its clone could not be made.
    mutating func cloneFailed(_ syspath: String, at now: Duration) -> [Action] {
        guard entries[syspath] != nil else { return [] }
        if locksOn {
            entries[syspath]?.state = .heldSilent
            return [.holdSilent(syspath), .log(.heldSilent)]
        }
        return [.release(syspath)] + retryLater(syspath, .failed, at: now)
    }

    /// A node kioskd grabbed failed: it could not be watched or read, or re-read or cloned again
    /// after a change.
    mutating func failed(_ syspath: String, at now: Duration) -> [Action] {
        guard entries[syspath] != nil else { return [] }
        if locksOn {
            entries[syspath]?.state = .heldSilent
            return [.holdSilent(syspath), .log(.heldSilent)]
        }
        entries[syspath]?.state = .retrying(Retry(reason: .failed, logged: true))
        return [.release(syspath), .log(.releasedToRetry)] + armRetryTimer(at: now)
    }

    /// Grabbed, cloned, under the filter and watched, as `record` describes it (its add, or the
    /// change it was cloned again for).
    mutating func brokered(_ record: Record) -> [Action] {
        entries[record.syspath] = Entry(record: record, state: .brokered)
        return []
    }

    /// What a `change` of a brokered node calls for, read again from its fd.
    mutating func judged(_ record: Record, _ change: BrokerChange) -> [Action] {
        guard entries[record.syspath]?.state == .brokered else { return [] }
        switch change {
        case .keep:
            return [.resync(record.syspath)]
        case .release:
            entries[record.syspath]?.state = .notForBroker
            return [.release(record.syspath), .log(.releasedNothingToLock)]
        case .reclone:
            return [.reclone(record)]
        }
    }

    // MARK: Policy and time

    /// A new policy is in force (`locksOn`: it is not pass-through). With the locks lifted the
    /// nodes held silent are let go and retried; either way every node to retry is tried at once,
    /// and the back-off starts again from its first step.
    mutating func policyChanged(locksOn: Bool, at now: Duration) -> [Action] {
        self.locksOn = locksOn
        var actions: [Action] = []
        if !locksOn {
            let held = nodes(in: .heldSilent)
            for syspath in held {
                entries[syspath]?.state = .retrying(Retry(reason: .failed, logged: true))
                actions.append(.release(syspath))
            }
            if !held.isEmpty { actions.append(.log(.releasedHeld(count: held.count, retried: true))) }
        }
        backOff = Self.firstRetry
        return actions + retryAll()
    }

    /// The retry timer fired: the next step is twice this one (at most ``lastRetry``), and every
    /// node to retry is tried.
    mutating func retryTimerFired(at now: Duration) -> [Action] {
        retryDue = nil
        backOff = min(backOff * 2, Self.lastRetry)
        return retryAll()
    }

    /// The attempts of a policy change, a timer or a relist are done: the timer is armed one step
    /// from now for the nodes left to retry, or disarmed (and the back-off starts again) if none is.
    mutating func settleRetryTimer(at now: Duration) -> [Action] {
        armRetryTimer(at: now)
    }

    /// The broker stops: every node it holds is released; the nodes to retry are forgotten, the
    /// nodes not for the broker are not.
    mutating func stop() -> [Action] {
        var actions: [Action] = [.disarmRetryTimer]
        retryDue = nil
        for syspath in awaitingUdev.sorted() { actions.append(.release(syspath)) }
        awaitingUdev = []
        for syspath in nodes(in: .brokered) {
            entries[syspath] = nil
            actions.append(.release(syspath))
        }
        let held = nodes(in: .heldSilent)
        for syspath in held {
            entries[syspath] = nil
            actions.append(.release(syspath))
        }
        if !held.isEmpty { actions.append(.log(.releasedHeld(count: held.count, retried: false))) }
        entries = entries.filter { if case .retrying = $0.value.state { false } else { true } }
        return actions
    }

    // MARK: Helpers

    private mutating func attempt(_ record: Record, previous: Retry?) -> [Action] {
        entries[record.syspath] = Entry(record: record, state: .attempting(previous: previous))
        return [.attempt(record)]
    }

    private mutating func retryAll() -> [Action] {
        var actions: [Action] = []
        for (syspath, entry) in entries.sorted(by: { $0.key < $1.key }) {
            guard case .retrying(let retry) = entry.state else { continue }
            actions += attempt(entries[syspath]!.record, previous: retry)
        }
        return actions + [.settleRetryTimer]
    }

    /// Puts the node (back) in a stretch of retries and says so once per stretch.
    private mutating func retryLater(_ syspath: String, _ reason: Retry.Reason, at now: Duration) -> [Action] {
        guard let state = entries[syspath]?.state else { return [] }
        var previous: Retry?
        switch state {
        case .attempting(let retry): previous = retry
        case .retrying(let retry): previous = retry
        case .brokered, .notForBroker, .heldSilent: previous = nil
        }
        var retry = previous?.reason == reason ? previous! : Retry(reason: reason)
        let notice: Notice
        if !retry.logged || (locksOn && !retry.loggedAsError) {
            notice = locksOn ? .escapingLocks(reason) : .notBrokered(reason)
            retry.logged = true
            retry.loggedAsError = retry.loggedAsError || locksOn
        } else {
            notice = .stillNotBrokered(reason)
        }
        entries[syspath]?.state = .retrying(retry)
        return [.log(notice)] + armRetryTimer(at: now)
    }

    /// Arms the retry timer one step from now while any node is to retry; otherwise disarms it
    /// and starts the back-off again.
    private mutating func armRetryTimer(at now: Duration) -> [Action] {
        let anyToRetry = entries.values.contains { if case .retrying = $0.state { true } else { false } }
        guard anyToRetry else {
            backOff = Self.firstRetry
            retryDue = nil
            return [.disarmRetryTimer]
        }
        retryDue = now + backOff
        return [.armRetryTimer(at: now + backOff)]
    }
}

extension NodeLifecycle.Action: Equatable where Record: Equatable {}
