import BusTestSupport
import Foundation
import Glibc
import Synchronization
import SystemdKit
import Testing

@Suite struct EventLoopTests {
    /// Collects what sources saw, from the loop thread.
    final class Log: @unchecked Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ s: String) { lines.withLock { $0.append(s) } }
        var all: [String] { lines.withLock { $0 } }
        func wait(for count: Int, timeout: Duration = .seconds(5)) async throws -> [String] {
            let deadline = ContinuousClock.now + timeout
            while all.count < count {
                if ContinuousClock.now > deadline { throw HarnessError("only \(all) after \(timeout)") }
                try await Task.sleep(for: .milliseconds(5))
            }
            return all
        }
    }

    @Test func timersIOSignalsDeferAndPostRunOnTheLoopThread() async throws {
        let loop = try EventLoop()
        try loop.startThread()
        let log = Log()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        let (readFD, writeFD) = (fds[0], fds[1])
        let thread = UncheckedBox(pthread_t())
        let sources = try await loop.perform {
            let t = UncheckedBox(pthread_self())
            _ = t
            var sources: [EventSource] = []
            sources.append(try loop.addTimer(after: .milliseconds(30)) { log.add("timer \(loop.isOnLoopThread)") })
            var ticks = 0
            sources.append(
                try loop.addTimer(after: .milliseconds(10), repeating: .milliseconds(10)) {
                    ticks += 1
                    if ticks == 3 { log.add("repeated 3") }
                })
            sources.append(
                try loop.addTimer(clock: .realtime, at: loop.now(.realtime) + 20_000) { log.add("realtime") })
            sources.append(
                try loop.addIO(fd: readFD, events: .readable) { events in
                    var byte: UInt8 = 0
                    if read(readFD, &byte, 1) == 1 { log.add("io \(byte) \(events.contains(.readable))") }
                })
            sources.append(try loop.addDefer { log.add("defer") })
            // SIGUSR2 is blocked on the loop thread only and raised at that thread below.
            sources.append(try loop.addSignal(SIGUSR2) { log.add("signal \($0)") })
            return UncheckedBox((sources, pthread_self()))
        }
        _ = thread
        var byte: UInt8 = 7
        #expect(write(writeFD, &byte, 1) == 1)
        #expect(pthread_kill(sources.value.1, SIGUSR2) == 0)
        let lines = try await log.wait(for: 6)
        #expect(
            Set(lines.prefix(6)) == ["defer", "io 7 true", "signal \(SIGUSR2)", "realtime", "timer true", "repeated 3"])

        // post sources run after an iteration in which another source fired.
        let post = try await loop.perform { UncheckedBox(try loop.addPost { log.add("post") }) }
        byte = 8
        #expect(write(writeFD, &byte, 1) == 1)
        let after = try await log.wait(for: 8)
        #expect(after.suffix(2) == ["io 8 true", "post"] || after.suffix(2).contains("post"), "\(after)")

        try await loop.perform {
            sources.value.0.forEach { $0.cancel() }
            post.value.cancel()
        }
        loop.exit()
        close(readFD)
        close(writeFD)
    }

    @Test func anActorOnTheLoopExecutorRunsOnTheLoopThread() async throws {
        let loop = try EventLoop()
        try loop.startThread()
        actor Counter {
            let loop: EventLoop
            var n = 0
            init(loop: EventLoop) { self.loop = loop }
            nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
            func bump() -> Bool {
                n += 1
                return loop.isOnLoopThread
            }
        }
        let counter = Counter(loop: loop)
        #expect(await counter.bump())
        // From a C-style callback on the loop, assumeIsolated works through checkIsolated().
        let n = try await loop.perform { counter.assumeIsolated { $0.n } }
        #expect(n == 1)
        loop.exit()
    }
}

@Suite(.serialized) struct NotifyTests {
    @Test func readyStatusWatchdogAndStoppingReachTheNotifySocket() async throws {
        let socket = try NotifySocket()
        setenv("NOTIFY_SOCKET", socket.path, 1)
        setenv("WATCHDOG_USEC", "200000", 1)
        unsetenv("WATCHDOG_PID")
        defer {
            unsetenv("NOTIFY_SOCKET")
            unsetenv("WATCHDOG_USEC")
        }
        #expect(try Notify.watchdogInterval() == .milliseconds(200))
        #expect(try Notify.ready(status: "serving"))
        #expect(socket.next(timeout: .seconds(2)) == "READY=1\nSTATUS=serving")

        let loop = try EventLoop()
        try loop.startThread()
        let start = ContinuousClock.now
        let watchdog = try await loop.perform { UncheckedBox(try Notify.startWatchdog(on: loop)) }
        #expect(watchdog.value != nil)
        var pings = 0
        while pings < 3, ContinuousClock.now - start < .seconds(6) {
            if socket.next(timeout: .seconds(1)) == "WATCHDOG=1" { pings += 1 }
        }
        #expect(pings == 3)
        // Ping 1 is due at once, each next one half an interval (100 ms) after the loop iteration
        // that sent the previous one, so the third cannot come before 200 ms (10 ms accuracy).
        #expect(ContinuousClock.now - start >= .milliseconds(190), "pings come every half interval, not at once")
        try await loop.perform { watchdog.value?.cancel() }
        loop.exit()

        #expect(try Notify.stopping())
        #expect(try socket.waitFor("STOPPING=1", timeout: .seconds(2)).last == "STOPPING=1")
        unsetenv("NOTIFY_SOCKET")
        #expect(try Notify.status("nobody listens") == false)
        unsetenv("WATCHDOG_USEC")
        #expect(try Notify.watchdogInterval() == nil)
    }
}
