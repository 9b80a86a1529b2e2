import Glibc

/// Waits until `condition` holds, asking it every `interval`, at most `timeout`; returns whether
/// it holds (asked once more at the end). The one polling helper of the tests: a test that waits
/// for something to happen calls this, never a loop of its own.
///
/// It proves that something happened, never that something did not: a test that says nothing
/// happened waits with it for a sentinel (a later event, a reply, a log line written after the
/// moment in question) and only then looks for the absence.
@discardableResult
public func eventually(
    timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(5), _ condition: () throws -> Bool
) rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        usleep(interval.microsecondsForSleep)
    }
    return try condition()
}

/// ``eventually(timeout:every:_:)`` for async code: it sleeps between the questions rather than
/// blocking its thread.
@discardableResult
public func eventually(
    timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(5),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}

/// Waits until `probe`'s value satisfies `condition` (at most `timeout`, asking every
/// `interval`); returns the last value it gave, so that a failed wait can say what it saw.
public func eventually<T>(
    timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(5), _ probe: () async throws -> T,
    until condition: (T) -> Bool
) async rethrows -> T {
    let deadline = ContinuousClock.now + timeout
    var value = try await probe()
    while !condition(value), ContinuousClock.now < deadline {
        try? await Task.sleep(for: interval)
        value = try await probe()
    }
    return value
}

/// The synchronous ``eventually(timeout:every:_:until:)``.
public func eventually<T>(
    timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(5), _ probe: () throws -> T,
    until condition: (T) -> Bool
) rethrows -> T {
    let deadline = ContinuousClock.now + timeout
    var value = try probe()
    while !condition(value), ContinuousClock.now < deadline {
        usleep(interval.microsecondsForSleep)
        value = try probe()
    }
    return value
}

extension Duration {
    fileprivate var microsecondsForSleep: UInt32 {
        UInt32(clamping: components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000)
    }
}
