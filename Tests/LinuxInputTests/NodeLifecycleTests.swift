import Testing

@testable import LinuxInput

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
}
