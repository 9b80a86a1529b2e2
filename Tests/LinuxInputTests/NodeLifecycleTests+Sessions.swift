import Testing

@testable import LinuxInput

/// Nodes held silent across sessions, retried once the locks lift, and stopping.
extension NodeLifecycleTests {
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
