import BusTestSupport
import Foundation
import Glibc
import Synchronization
import SystemPackage
import SystemdKit
import Testing

/// The loop's direct io sources (`EventLoop.addDirectIO`): polled on the loop's own epoll while
/// sd-event waits armed, so each check here is about the two living side by side.
@Suite struct DirectSourceTests {
    typealias Log = EventLoopTests.Log

    /// A non-blocking pipe: (read end, write end).
    static func pipePair() -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        return (fds[0], fds[1])
    }

    static func send(_ fd: Int32, _ byte: UInt8) {
        var b = byte
        precondition(write(fd, &b, 1) == 1)
    }

    static func take(_ fd: Int32) -> UInt8? {
        var b: UInt8 = 0
        return read(fd, &b, 1) == 1 ? b : nil
    }

    @Test func directAndSdEventSourcesBothRun() async throws {
        let loop = try EventLoop()
        try loop.startThread()
        let log = Log()
        let (directRead, directWrite) = Self.pipePair()
        let (sdRead, sdWrite) = Self.pipePair()
        let sources = try await loop.perform {
            UncheckedBox([
                try loop.addDirectIO(fd: directRead) {
                    while let b = Self.take(directRead) { log.add("direct \(b) \(loop.isOnLoopThread)") }
                },
                try loop.addIO(fd: sdRead, events: .readable) { _ in
                    while let b = Self.take(sdRead) { log.add("sd \(b)") }
                },
            ])
        }
        Self.send(directWrite, 1)
        #expect(try await log.wait(for: 1) == ["direct 1 true"])
        // A direct source has no sd-event side to switch or re-time: refused, still watched.
        try await loop.perform {
            #expect(throws: Errno.invalidArgument) { try sources.value[0].setEnabled(.off) }
            #expect(throws: Errno.invalidArgument) { try sources.value[0].setTime(after: .seconds(1)) }
        }
        Self.send(directWrite, 2)
        #expect(try await log.wait(for: 2).last == "direct 2 true")
        Self.send(sdWrite, 3)
        #expect(try await log.wait(for: 3).last == "sd 3")
        // A timer fires while the direct fd keeps the loop busy.
        let timer = try await loop.perform {
            UncheckedBox(try loop.addTimer(after: .milliseconds(20)) { log.add("timer") })
        }
        let deadline = ContinuousClock.now + .seconds(5)
        var byte: UInt8 = 10
        while !log.all.contains("timer") || byte < 15, ContinuousClock.now < deadline {
            Self.send(directWrite, byte)
            byte &+= 1
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(log.all.contains("timer"))
        #expect(try await waitUntil { log.all.filter { $0.hasPrefix("direct") }.count > 1 })
        try await loop.perform {
            sources.value.forEach { $0.cancel() }
            timer.value.cancel()
        }
        loop.exit()
        [directRead, directWrite, sdRead, sdWrite].forEach { close($0) }
    }

    /// sd-event is armed while a direct handler runs: a timer it adds is armed only when
    /// sd-event takes a turn, which adding a source asks for. Nothing else wakes the loop here.
    @Test func aTimerAddedByADirectHandlerFires() async throws {
        let loop = try EventLoop()
        try loop.startThread()
        let log = Log()
        let (r, w) = Self.pipePair()
        final class Timers: @unchecked Sendable { var all: [EventSource] = [] }  // the loop thread's
        let timers = Timers()
        let source = try await loop.perform {
            UncheckedBox(
                try loop.addDirectIO(fd: r) {
                    _ = Self.take(r)
                    let timer = try? loop.addTimer(after: .milliseconds(5)) { log.add("timer") }
                    if let timer { timers.all.append(timer) }
                })
        }
        Self.send(w, 1)
        #expect(try await log.wait(for: 1) == ["timer"])
        try await loop.perform {
            source.value.cancel()
            timers.all.forEach { $0.cancel() }
        }
        loop.exit()
        close(r)
        close(w)
    }

    /// Two direct fds ready in one wake-up; the first handler to run cancels the other's source,
    /// whose handler then never runs (its event is still in the batch), nor does the handler
    /// that took its place. A third fd, written
    /// after, is the event the negative check waits on: the cancelled fd stays readable, so were
    /// it still watched, its handler would run before or with the third's.
    @Test func aSourceCancelledInTheSameWakeUpDoesNotRun() async throws {
        let loop = try EventLoop()
        try loop.startThread()
        let log = Log()
        let (aRead, aWrite) = Self.pipePair()
        let (bRead, bWrite) = Self.pipePair()
        let (cRead, cWrite) = Self.pipePair()
        let (dRead, dWrite) = Self.pipePair()
        final class Sources: @unchecked Sendable {
            var a: EventSource?, b: EventSource?, c: EventSource?, d: EventSource?
        }
        let sources = Sources()
        // The handler that runs first cancels the other's source and watches a fourth, silent
        // fd in its place (the same slot of the loop's table): the stale event must not reach it.
        let replace: @Sendable (EventSource?) -> Void = { other in
            other?.cancel()
            sources.d = try? loop.addDirectIO(fd: dRead) { log.add("d") }
        }
        try await loop.perform {
            sources.a = try loop.addDirectIO(fd: aRead) {
                _ = Self.take(aRead)
                log.add("a")
                replace(sources.b)
            }
            sources.b = try loop.addDirectIO(fd: bRead) {
                _ = Self.take(bRead)
                log.add("b")
                replace(sources.a)
            }
            sources.c = try loop.addDirectIO(fd: cRead) {
                _ = Self.take(cRead)
                log.add("c")
            }
            // Both written on the loop thread, so both are ready when it next polls.
            Self.send(aWrite, 1)
            Self.send(bWrite, 2)
        }
        let first = try await log.wait(for: 1)
        Self.send(cWrite, 3)
        let lines = try await log.wait(for: 2)
        #expect(lines == [first[0], "c"], "\(lines)")
        // The cancelled one's byte is still unread: nothing took it.
        let cancelledRead = first[0] == "a" ? bRead : aRead
        #expect(Self.take(cancelledRead) != nil)
        try await loop.perform {
            sources.a?.cancel()
            sources.b?.cancel()
            sources.c?.cancel()
            sources.d?.cancel()
        }
        #expect(sources.d != nil)
        loop.exit()
        [aRead, aWrite, bRead, bWrite, cRead, cWrite, dRead, dWrite].forEach { close($0) }
    }

    /// A defer source that re-arms itself keeps sd-event pending on every iteration, so that
    /// sd-event never polls (its own io sources wait for the defer to stop); the direct fd is
    /// still served, and its handler is what stops the defer.
    @Test func aBusySdEventDoesNotStarveDirectSources() async throws {
        let loop = try EventLoop()
        try loop.startThread()
        let log = Log()
        let (r, w) = Self.pipePair()
        final class Busy: @unchecked Sendable { var source: EventSource?; let turns = Atomic<Int>(0) }
        let busy = Busy()
        let direct = try await loop.perform {
            busy.source = try loop.addDefer {
                busy.turns.add(1, ordering: .relaxed)
                try? busy.source?.setEnabled(.oneshot)
            }
            return UncheckedBox(
                try loop.addDirectIO(fd: r) {
                    if let b = Self.take(r) {
                        log.add("direct \(b) after \(busy.turns.load(ordering: .relaxed) > 100)")
                    }
                    busy.source?.cancel()
                })
        }
        #expect(try await waitUntil { busy.turns.load(ordering: .relaxed) > 100 })
        Self.send(w, 9)
        #expect(try await log.wait(for: 1) == ["direct 9 after true"])
        try await loop.perform { direct.value.cancel() }
        loop.exit()
        close(r)
        close(w)
    }

    /// The loop's cached time is sd-event's last wake-up; a direct handler, which runs while
    /// sd-event sleeps, gets the clock's own.
    @Test func nowInADirectHandlerIsTheClocksTime() async throws {
        let loop = try EventLoop()
        try loop.startThread()
        let seen = Mutex<[(UInt64, UInt64)]>([])
        let (r, w) = Self.pipePair()
        let source = try await loop.perform {
            UncheckedBox(
                try loop.addDirectIO(fd: r) {
                    _ = Self.take(r)
                    var ts = timespec()
                    clock_gettime(CLOCK_MONOTONIC, &ts)
                    let clock = UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
                    let now = loop.now()
                    seen.withLock { $0.append((now, clock)) }
                })
        }
        // sd-event's cached time is now at least this old when the handler runs.
        try await Task.sleep(for: .milliseconds(200))
        Self.send(w, 1)
        #expect(try await waitUntil { seen.withLock { !$0.isEmpty } })
        let (now, clock) = seen.withLock { $0[0] }
        #expect(now >= clock && now - clock < 50_000, "loop.now \(now) µs, the clock \(clock) µs")
        try await loop.perform { source.value.cancel() }
        loop.exit()
        close(r)
        close(w)
    }

    /// `exit` from a direct handler ends `run()` with its code.
    @Test func exitFromADirectHandlerEndsTheLoop() async throws {
        let loop = try EventLoop()
        let (r, w) = Self.pipePair()
        let source = UncheckedBox(try loop.addDirectIO(fd: r) { loop.exit(code: 7) })
        let result = Mutex<Int32?>(nil)
        let done = Atomic<Bool>(false)
        Thread.detachNewThread {
            let code = try? loop.run()
            result.withLock { $0 = code }
            done.store(true, ordering: .sequentiallyConsistent)
        }
        Self.send(w, 1)
        #expect(try await waitUntil { done.load(ordering: .sequentiallyConsistent) })
        #expect(result.withLock { $0 } == 7)
        source.value.cancel()  // the loop no longer runs: this thread may release it
        close(r)
        close(w)
    }

    /// Polls `condition` every 5 ms for up to 5 s; whether it became true.
    func waitUntil(_ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            try await Task.sleep(for: .milliseconds(5))
        }
        return true
    }
}
