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
    /// Whether an early grab (on the kernel's uevent) fails (another process holds the node, …).
    var earlyGrabFails = false
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
            case .grabEarly(let uevent):
                if earlyGrabFails {
                    run(lifecycle.earlyGrabFailed(uevent.syspath))
                } else {
                    grabbed.insert(uevent.syspath)
                }
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

/// Three nodes' syspaths and a starting time, shared by the lifecycle tests.
let a = "/sys/devices/virtual/input/input1/event1"
let b = "/sys/devices/virtual/input/input2/event2"
let c = "/sys/devices/virtual/input/input3/event3"
let t0 = Duration.seconds(1000)
