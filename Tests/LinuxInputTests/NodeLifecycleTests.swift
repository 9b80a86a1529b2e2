import Testing

@testable import LinuxInput

/// A udev record as the lifecycle sees one; `seen` tells two records of one node apart.
struct TestNode: NodeRecord, Equatable, CustomStringConvertible {
    var syspath: String
    var seen = 0
    var description: String { "\(syspath)#\(seen)" }
}

typealias Lifecycle = NodeLifecycle<TestNode>

/// The broker's side of the lifecycle, with outcomes scripted per node instead of devices:
/// carries out every action as `InputBroker` does (reporting each attempt's outcome in the
/// broker's order, the verdict of each change, the timer's settling) and records what it did.
struct Driver {
    enum Outcome {
        case brokered, busy, openFails, cloneFails, watchFails, gone, notForBroker
    }

    var lifecycle: Lifecycle
    var now: Duration = .seconds(1000)
    /// What an attempt of a node comes to (brokered unless said otherwise).
    var outcomes: [String: Outcome] = [:]
    /// What a `change` of a brokered node is judged to be (keep unless said otherwise).
    var verdicts: [String: BrokerChange] = [:]
    var recloneFails = false
    /// Every action carried out, in order.
    private(set) var done: [Lifecycle.Action] = []
    /// Each attempt: the node and when.
    private(set) var attempts: [(node: String, at: Duration)] = []
    /// The retry timer as the actions left it.
    private(set) var timer: Duration?
    /// The nodes open and grabbed (brokered, held, or being taken).
    private(set) var grabbed: Set<String> = []

    init(locksOn: Bool = false) {
        lifecycle = Lifecycle(locksOn: locksOn)
    }

    var notices: [Lifecycle.Notice] {
        done.compactMap { if case .log(let notice) = $0 { notice } else { nil } }
    }

    /// Runs an event's actions; returns them (not those they led to).
    @discardableResult
    mutating func run(_ actions: [Lifecycle.Action]) -> [Lifecycle.Action] {
        for action in actions {
            done.append(action)
            switch action {
            case .attempt(let node): attempt(node)
            case .rejudge(let node): run(lifecycle.judged(node, verdicts[node.syspath] ?? .keep))
            case .reclone(let node):
                run(recloneFails ? lifecycle.failed(node.syspath, at: now) : lifecycle.brokered(node))
            case .release(let syspath): grabbed.remove(syspath)
            case .armRetryTimer(let due): timer = due
            case .disarmRetryTimer: timer = nil
            case .settleRetryTimer: run(lifecycle.settleRetryTimer(at: now))
            case .resync, .holdSilent, .log: break
            }
        }
        return actions
    }

    private mutating func attempt(_ node: TestNode) {
        let syspath = node.syspath
        attempts.append((syspath, now))
        switch outcomes[syspath] ?? .brokered {
        case .gone: run(lifecycle.vanished(syspath))
        case .notForBroker: run(lifecycle.notForBroker(syspath))
        case .openFails: run(lifecycle.attemptFailed(syspath, .failed, at: now))
        case .busy: run(lifecycle.attemptFailed(syspath, .busy, at: now))
        case .cloneFails, .watchFails, .brokered:
            run(lifecycle.grabbed(syspath))
            grabbed.insert(syspath)
            switch outcomes[syspath] ?? .brokered {
            case .cloneFails: run(lifecycle.cloneFailed(syspath, at: now))
            case .watchFails: run(lifecycle.failed(syspath, at: now))
            default: run(lifecycle.brokered(node))
            }
        }
    }

    mutating func add(_ syspath: String, seen: Int = 0) { run(lifecycle.added(TestNode(syspath: syspath, seen: seen))) }
    mutating func change(_ syspath: String, seen: Int = 0) {
        run(lifecycle.changed(TestNode(syspath: syspath, seen: seen)))
    }
    mutating func remove(_ syspath: String) { run(lifecycle.removed(syspath)) }
    mutating func session(_ locksOn: Bool) { run(lifecycle.policyChanged(locksOn: locksOn, at: now)) }
    mutating func relist(_ syspaths: [String]) {
        run(lifecycle.relisted(syspaths.map { TestNode(syspath: $0) }, at: now))
    }

    /// Moves time on to the armed retry timer and fires it.
    mutating func fireTimer() {
        guard let due = timer else {
            Issue.record("no retry timer armed")
            return
        }
        now = due
        timer = nil
        run(lifecycle.retryTimerFired(at: now))
    }

    /// Forgets what was done so far (to look at what comes next).
    mutating func clear() {
        done.removeAll()
        attempts.removeAll()
    }

    func state(_ syspath: String) -> Lifecycle.State? { lifecycle.state(of: syspath) }
}

private let a = "/sys/devices/virtual/input/input1/event1"
private let b = "/sys/devices/virtual/input/input2/event2"
private let c = "/sys/devices/virtual/input/input3/event3"
private let t0 = Duration.seconds(1000)

@Suite("The broker's node lifecycle: events in, actions out, time passed in (pure, runs anywhere)")
struct NodeLifecycleTests {
    // MARK: udev events

    @Test("an added node is attempted once: not again while brokered, not for the broker, or held silent")
    func addedIsAttemptedOnce() {
        var machine = Lifecycle(locksOn: false)
        let node = TestNode(syspath: a)
        #expect(machine.added(node) == [.attempt(node)])
        #expect(machine.state(of: a) == .attempting(previous: nil))
        #expect(machine.added(node) == [])
        #expect(machine.brokered(node) == [])
        #expect(machine.state(of: a) == .brokered)
        #expect(machine.added(node) == [])
        #expect(machine.notForBroker(a) == [])
        #expect(machine.added(node) == [])
        var held = Driver(locksOn: true)
        held.outcomes[a] = .cloneFails
        held.add(a)
        #expect(held.state(a) == .heldSilent)
        #expect(held.lifecycle.added(node) == [])
    }

    @Test("an added node that is to retry is attempted at once, with the latest record, in the same stretch")
    func addedRetryingNode() {
        var driver = Driver()
        driver.outcomes[a] = .busy
        driver.add(a)
        driver.clear()
        let actions = driver.run(driver.lifecycle.added(TestNode(syspath: a, seen: 1)))
        #expect(actions == [.attempt(TestNode(syspath: a, seen: 1))])
        #expect(driver.notices == [.stillNotBrokered(.busy)])
        // The record kept to retry is the latest one.
        driver.clear()
        driver.fireTimer()
        #expect(driver.done.first == .attempt(TestNode(syspath: a, seen: 1)))
    }

    @Test(
        "a change: a brokered node is judged again with the new record; a held one is left; any other is attempted as if added"
    )
    func changed() {
        var driver = Driver(locksOn: true)
        driver.outcomes = [a: .brokered, b: .cloneFails, c: .notForBroker]
        for node in [a, b, c] { driver.add(node) }
        #expect(driver.lifecycle.changed(TestNode(syspath: a, seen: 1)) == [.rejudge(TestNode(syspath: a, seen: 1))])
        #expect(driver.lifecycle.changed(TestNode(syspath: b, seen: 1)) == [])
        #expect(driver.state(b) == .heldSilent)
        #expect(driver.lifecycle.changed(TestNode(syspath: c, seen: 1)) == [.attempt(TestNode(syspath: c, seen: 1))])
        #expect(driver.state(c) == .attempting(previous: nil))
        var fresh = Lifecycle(locksOn: false)
        #expect(fresh.changed(TestNode(syspath: a)) == [.attempt(TestNode(syspath: a))])
        // A node to retry is tried at once, in its stretch.
        var retrying = Driver()
        retrying.outcomes[a] = .openFails
        retrying.add(a)
        let retry = Lifecycle.Retry(reason: .failed, logged: true)
        #expect(retrying.state(a) == .retrying(retry))
        #expect(retrying.lifecycle.changed(TestNode(syspath: a, seen: 2)) == [.attempt(TestNode(syspath: a, seen: 2))])
        #expect(retrying.state(a) == .attempting(previous: retry))
    }

    @Test(
        "a removed node is forgotten: a brokered one is released and said removed, a held one closed, the others dropped without touching the timer"
    )
    func removed() {
        var driver = Driver(locksOn: true)
        driver.outcomes = [a: .brokered, b: .cloneFails, c: .busy]
        for node in [a, b, c] { driver.add(node) }
        let timer = driver.timer
        #expect(timer == t0 + .seconds(1))
        #expect(driver.lifecycle.removed(a) == [.release(a), .log(.removed)])
        #expect(driver.lifecycle.removed(b) == [.release(b)])
        #expect(driver.lifecycle.removed(c) == [])
        #expect(driver.lifecycle.retryDue == timer)
        for node in [a, b, c] { #expect(driver.state(node) == nil) }
        // Not for the broker: forgotten, so that a new node at the same syspath is attempted.
        driver.outcomes[a] = .notForBroker
        driver.add(a)
        #expect(driver.lifecycle.removed(a) == [])
        #expect(driver.lifecycle.added(TestNode(syspath: a)) == [.attempt(TestNode(syspath: a))])
    }

    @Test(
        "after a monitor overflow: nodes not for the broker and nodes to retry that are not listed are forgotten, every listed node is judged as if it changed, then the timer settles"
    )
    func relisted() {
        var driver = Driver(locksOn: true)
        let (d, e, f) = ("/sys/d/event4", "/sys/e/event5", "/sys/f/event6")
        driver.outcomes = [a: .notForBroker, b: .busy, c: .brokered, d: .cloneFails, e: .notForBroker, f: .busy]
        for node in [a, b, c, d, e, f] { driver.add(node) }
        driver.outcomes = [e: .brokered, f: .busy]
        driver.clear()
        let actions = driver.run(driver.lifecycle.relisted([c, d, e, f].map { TestNode(syspath: $0) }, at: driver.now))
        #expect(
            actions == [
                .rejudge(TestNode(syspath: c)), .attempt(TestNode(syspath: e)), .attempt(TestNode(syspath: f)),
                .settleRetryTimer,
            ])
        #expect(driver.state(a) == nil)
        #expect(driver.state(b) == nil)
        #expect(driver.state(c) == .brokered)
        #expect(driver.state(d) == .heldSilent)
        #expect(driver.state(e) == .brokered)
        #expect(driver.state(f) == .retrying(.init(reason: .busy, logged: true, loggedAsError: true)))
        // Brokered and held nodes are not forgotten for not being listed (a brokered one reads ENODEV).
        driver.relist([])
        #expect(driver.state(c) == .brokered)
        #expect(driver.state(d) == .heldSilent)
        #expect(driver.state(f) == nil)
        #expect(driver.timer == nil)
    }

    // MARK: What an attempt comes to

    @Test("an attempt's outcomes: not for the broker, vanished (forgotten, no timer), open or grab failed (retried)")
    func attemptOutcomes() {
        var machine = Lifecycle(locksOn: false)
        _ = machine.added(TestNode(syspath: a))
        #expect(machine.notForBroker(a) == [])
        #expect(machine.state(of: a) == .notForBroker)
        _ = machine.added(TestNode(syspath: b))
        #expect(machine.vanished(b) == [])
        #expect(machine.state(of: b) == nil)
        #expect(machine.retryDue == nil)
        _ = machine.added(TestNode(syspath: c))
        #expect(
            machine.attemptFailed(c, .failed, at: t0) == [
                .log(.notBrokered(.failed)), .armRetryTimer(at: t0 + .seconds(1)),
            ])
        #expect(machine.state(of: c) == .retrying(.init(reason: .failed, logged: true)))
        #expect(machine.retryDue == t0 + .seconds(1))
    }

    @Test("a vanished node that was to retry ends its stretch and is not tried again")
    func vanishedRetryingNode() {
        var driver = Driver()
        driver.outcomes[a] = .busy
        driver.add(a)
        driver.outcomes[a] = .gone
        driver.fireTimer()
        #expect(driver.state(a) == nil)
        #expect(driver.timer == nil)
        driver.clear()
        driver.session(true)
        #expect(driver.attempts.isEmpty)
    }

    @Test("taking a grab another process had held is said; taking one after any other failure, or at once, is not")
    func tookGrab() {
        var driver = Driver()
        driver.outcomes = [a: .busy, b: .openFails]
        driver.add(a)
        driver.add(b)
        driver.add(c)
        #expect(!driver.notices.contains(.tookGrab))
        driver.outcomes = [:]
        driver.clear()
        driver.fireTimer()
        #expect(driver.notices == [.tookGrab])
        #expect(driver.state(a) == .brokered)
        #expect(driver.state(b) == .brokered)
    }

    @Test(
        "a clone that fails during a session holds the node silent (no timer); outside one it is released and retried")
    func cloneFailed() {
        var machine = Lifecycle(locksOn: true)
        _ = machine.added(TestNode(syspath: a))
        #expect(machine.cloneFailed(a, at: t0) == [.holdSilent(a), .log(.heldSilent)])
        #expect(machine.state(of: a) == .heldSilent)
        #expect(machine.retryDue == nil)
        var outside = Lifecycle(locksOn: false)
        _ = outside.added(TestNode(syspath: a))
        #expect(
            outside.cloneFailed(a, at: t0) == [
                .release(a), .log(.notBrokered(.failed)), .armRetryTimer(at: t0 + .seconds(1)),
            ])
        #expect(outside.state(of: a) == .retrying(.init(reason: .failed, logged: true)))
    }

    @Test(
        "a grabbed node that fails (watch, read, re-read, new clone) is held silent during a session, released and retried outside one"
    )
    func failedAfterGrab() {
        var driver = Driver(locksOn: true)
        driver.outcomes[a] = .watchFails
        driver.add(a)
        #expect(driver.done.suffix(2) == [.holdSilent(a), .log(.heldSilent)])
        #expect(driver.state(a) == .heldSilent)
        #expect(driver.grabbed == [a])
        #expect(driver.timer == nil)

        var outside = Driver()
        outside.add(a)
        #expect(outside.state(a) == .brokered)
        let actions = outside.run(outside.lifecycle.failed(a, at: t0))
        #expect(actions == [.release(a), .log(.releasedToRetry), .armRetryTimer(at: t0 + .seconds(1))])
        #expect(outside.state(a) == .retrying(.init(reason: .failed, logged: true)))
        #expect(outside.grabbed.isEmpty)
    }

    @Test(
        "a change judged: kept resyncs the filter, released makes it not for the broker, re-cloned gets a new clone from the new record"
    )
    func judged() {
        var driver = Driver()
        for node in [a, b, c] { driver.add(node) }
        driver.verdicts = [a: .keep, b: .release, c: .reclone]
        #expect(driver.lifecycle.judged(TestNode(syspath: a, seen: 1), .keep) == [.resync(a)])
        #expect(
            driver.lifecycle.judged(TestNode(syspath: b, seen: 1), .release) == [
                .release(b), .log(.releasedNothingToLock),
            ])
        #expect(driver.state(b) == .notForBroker)
        #expect(
            driver.lifecycle.judged(TestNode(syspath: c, seen: 1), .reclone) == [
                .reclone(TestNode(syspath: c, seen: 1))
            ])
        // Only a brokered node is judged.
        #expect(driver.lifecycle.judged(TestNode(syspath: b, seen: 2), .reclone) == [])
    }

    @Test(
        "after a new clone the node is known by the new record: a later failure retries with it; a failed new clone keeps the old one"
    )
    func recloneKeepsTheRecordItWasClonedFor() {
        var driver = Driver()
        driver.verdicts[a] = .reclone
        driver.add(a, seen: 0)
        driver.change(a, seen: 1)
        #expect(driver.state(a) == .brokered)
        driver.run(driver.lifecycle.failed(a, at: driver.now))
        driver.clear()
        driver.fireTimer()
        #expect(driver.done.first == .attempt(TestNode(syspath: a, seen: 1)))

        var failing = Driver()
        failing.verdicts[a] = .reclone
        failing.recloneFails = true
        failing.add(a, seen: 0)
        failing.change(a, seen: 1)
        #expect(failing.done.suffix(3) == [.release(a), .log(.releasedToRetry), .armRetryTimer(at: t0 + .seconds(1))])
        failing.clear()
        failing.fireTimer()
        #expect(failing.done.first == .attempt(TestNode(syspath: a, seen: 0)))
    }

    // MARK: Said once per stretch

    @Test(
        "a busy node is said once per stretch: warning outside a session, error once when one starts, debug otherwise; a new reason, a removal or a success starts a new stretch"
    )
    func saidOncePerStretch() {
        var driver = Driver()
        driver.outcomes[a] = .busy
        driver.add(a)
        #expect(driver.notices == [.notBrokered(.busy)])
        driver.clear()
        driver.fireTimer()
        #expect(driver.notices == [.stillNotBrokered(.busy)])
        driver.clear()
        driver.session(true)
        #expect(driver.notices == [.escapingLocks(.busy)])
        driver.clear()
        driver.fireTimer()
        driver.session(true)
        driver.session(false)
        driver.fireTimer()
        #expect(driver.notices == Array(repeating: .stillNotBrokered(.busy), count: 4))
        // Another reason: a new stretch.
        driver.outcomes[a] = .openFails
        driver.clear()
        driver.fireTimer()
        #expect(driver.notices == [.notBrokered(.failed)])
        driver.outcomes[a] = .busy
        driver.clear()
        driver.fireTimer()
        #expect(driver.notices == [.notBrokered(.busy)])
        // Removed and plugged in again: a new stretch.
        driver.remove(a)
        driver.clear()
        driver.add(a)
        #expect(driver.notices == [.notBrokered(.busy)])
        // Taken, then busy again: a new stretch.
        driver.outcomes[a] = .brokered
        driver.fireTimer()
        driver.run(driver.lifecycle.failed(a, at: driver.now))
        driver.outcomes[a] = .busy
        driver.clear()
        driver.fireTimer()
        #expect(driver.notices == [.notBrokered(.busy)])
    }

    @Test("a node first busy during a session is said at error level once, and not again when the session ends")
    func busyFirstDuringASession() {
        var driver = Driver(locksOn: true)
        driver.outcomes[a] = .busy
        driver.add(a)
        driver.fireTimer()
        driver.session(false)
        driver.session(true)
        #expect(driver.notices == [.escapingLocks(.busy)] + Array(repeating: .stillNotBrokered(.busy), count: 3))
    }

    // MARK: The retry timer

    @Test("the back-off: 1 s, doubling after each firing, at most 30 s; every attempt on time")
    func backOffSchedule() {
        var driver = Driver()
        driver.outcomes[a] = .busy
        driver.add(a)
        var expected: [Duration] = [t0]
        var at = t0
        for step in [1, 2, 4, 8, 16, 30, 30, 30] as [Int64] {
            #expect(driver.timer == at + .seconds(step), "the step after \(expected.count) attempts")
            #expect(driver.lifecycle.retryDue == driver.timer)
            at += .seconds(step)
            expected.append(at)
            driver.fireTimer()
        }
        #expect(driver.attempts.map(\.at) == expected)
        #expect(driver.lifecycle.backOff == .seconds(30))
    }

    @Test("every policy change tries the nodes to retry at once and starts the back-off again")
    func policyChangeResetsTheBackOff() {
        var driver = Driver()
        driver.outcomes[a] = .busy
        driver.add(a)
        for _ in 0..<4 { driver.fireTimer() }  // steps 1, 2, 4, 8: the next is 16 s
        #expect(driver.timer == driver.now + .seconds(16))
        driver.now += .seconds(3)
        driver.clear()
        driver.session(true)
        #expect(driver.attempts.map(\.at) == [driver.now])
        #expect(driver.timer == driver.now + .seconds(1))
        driver.fireTimer()
        #expect(driver.timer == driver.now + .seconds(2))
        // Another policy during the session (a restriction changed): the same.
        driver.now += .milliseconds(500)
        driver.session(true)
        #expect(driver.timer == driver.now + .seconds(1))
    }

    @Test("a failure arms the timer one step from now (moving it), at the step reached, not the first")
    func aFailureMovesTheTimer() {
        var driver = Driver()
        driver.outcomes = [a: .busy, b: .openFails]
        driver.add(a)
        driver.fireTimer()
        driver.fireTimer()  // steps 1, 2: the next is 4 s
        let due = driver.now + .seconds(4)
        #expect(driver.timer == due)
        driver.now += .seconds(1)
        driver.add(b)
        #expect(driver.timer == driver.now + .seconds(4))
        #expect(driver.timer! > due)
    }

    @Test("once nothing is left to retry the timer is disarmed and the back-off starts again from 1 s")
    func nothingLeftDisarms() {
        var driver = Driver()
        driver.outcomes[a] = .busy
        driver.add(a)
        for _ in 0..<3 { driver.fireTimer() }  // the next step is 8 s
        driver.outcomes[a] = .brokered
        driver.fireTimer()
        #expect(driver.state(a) == .brokered)
        #expect(driver.timer == nil)
        #expect(driver.lifecycle.backOff == .seconds(1))
        driver.outcomes[b] = .busy
        driver.add(b)
        #expect(driver.timer == driver.now + .seconds(1))
    }

    @Test(
        "a removal or a successful add leaves the timer armed; its firing finds nothing, disarms it, and the back-off starts again"
    )
    func removalLeavesTheTimer() {
        var driver = Driver()
        driver.outcomes = [a: .busy, b: .busy]
        driver.add(a)
        driver.add(b)
        driver.fireTimer()
        driver.fireTimer()  // the next step is 4 s
        let due = driver.timer
        driver.remove(a)
        driver.outcomes[b] = .brokered
        driver.add(b)  // a second add, taken now
        #expect(driver.state(b) == .brokered)
        #expect(driver.timer == due)
        #expect(driver.lifecycle.backOff == .seconds(4))
        driver.clear()
        driver.fireTimer()
        #expect(driver.attempts.isEmpty)
        #expect(driver.done == [.settleRetryTimer, .disarmRetryTimer])
        #expect(driver.lifecycle.backOff == .seconds(1))
    }

    @Test("a policy change with nothing to retry settles the timer: disarmed")
    func policyChangeWithNothingToRetry() {
        var driver = Driver()
        driver.add(a)
        let actions = driver.run(driver.lifecycle.policyChanged(locksOn: true, at: t0))
        #expect(actions == [.settleRetryTimer])
        #expect(driver.done == [.attempt(TestNode(syspath: a)), .settleRetryTimer, .disarmRetryTimer])
        #expect(driver.lifecycle.locksOn)
    }

    // MARK: Sessions

    @Test(
        "locks lifted: the nodes held silent are let go, said once, and retried at once; locks staying on keep them held"
    )
    func heldNodesAcrossSessions() {
        var driver = Driver(locksOn: true)
        driver.outcomes = [a: .cloneFails, b: .watchFails, c: .busy]
        for node in [a, b, c] { driver.add(node) }
        #expect(driver.lifecycle.nodes(in: .heldSilent) == [a, b])
        #expect(driver.grabbed == [a, b])
        // Another policy with locks on: held as they are.
        driver.clear()
        driver.session(true)
        #expect(driver.attempts.map(\.node) == [c])
        #expect(driver.lifecycle.nodes(in: .heldSilent) == [a, b])
        #expect(driver.grabbed == [a, b])
        // Locks lifted.
        driver.clear()
        let actions = driver.run(driver.lifecycle.policyChanged(locksOn: false, at: driver.now))
        #expect(
            actions == [
                .release(a), .release(b), .log(.releasedHeld(count: 2, retried: true)),
                .attempt(TestNode(syspath: a)), .attempt(TestNode(syspath: b)), .attempt(TestNode(syspath: c)),
                .settleRetryTimer,
            ])
        // Outside a session a failed clone is let go; it was said when it was held.
        #expect(driver.grabbed.isEmpty)
        #expect(
            driver.notices.filter { $0 != .releasedHeld(count: 2, retried: true) }
                == [.stillNotBrokered(.failed), .releasedToRetry, .stillNotBrokered(.busy)])
        #expect(driver.state(a) == .retrying(.init(reason: .failed, logged: true)))
        #expect(driver.timer == driver.now + .seconds(1))
        // The next session finds them clonable: all brokered.
        driver.outcomes = [:]
        driver.session(true)
        for node in [a, b, c] { #expect(driver.state(node) == .brokered) }
        #expect(driver.timer == nil)
    }

    @Test(
        "a node plugged in during a session whose clone fails is held; when the session ends and its clone still fails, it is retried without a new warning"
    )
    func heldThenRetried() {
        var driver = Driver()
        driver.outcomes[a] = .cloneFails
        driver.session(true)
        driver.add(a)
        #expect(driver.state(a) == .heldSilent)
        driver.clear()
        driver.session(false)
        #expect(
            driver.done == [
                .release(a), .log(.releasedHeld(count: 1, retried: true)), .attempt(TestNode(syspath: a)),
                .release(a), .log(.stillNotBrokered(.failed)), .armRetryTimer(at: driver.now + .seconds(1)),
                .settleRetryTimer, .armRetryTimer(at: driver.now + .seconds(1)),
            ])
    }

    @Test(
        "stopping releases every brokered and held node, forgets the nodes to retry, keeps those not for the broker, and disarms the timer"
    )
    func stop() {
        var driver = Driver(locksOn: true)
        driver.outcomes = [a: .brokered, b: .cloneFails, c: .busy]
        let d = "/sys/d/event4"
        driver.outcomes[d] = .notForBroker
        for node in [a, b, c, d] { driver.add(node) }
        let actions = driver.run(driver.lifecycle.stop())
        #expect(
            actions == [.disarmRetryTimer, .release(a), .release(b), .log(.releasedHeld(count: 1, retried: false))])
        #expect(driver.grabbed.isEmpty)
        for node in [a, b, c] { #expect(driver.state(node) == nil) }
        #expect(driver.state(d) == .notForBroker)
        #expect(driver.lifecycle.retryDue == nil)
        #expect(driver.lifecycle.stop() == [.disarmRetryTimer])
    }
}
