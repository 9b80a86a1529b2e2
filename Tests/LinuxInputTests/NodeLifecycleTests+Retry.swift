import Testing

@testable import LinuxInput

/// What is said once per stretch of failures, and the retry timer's back-off.
extension NodeLifecycleTests {
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
}
