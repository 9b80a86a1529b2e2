import KioskAPI

/// Whether the state reaches the disk, and what waits to reach it (docs/state-store.md § When
/// the disk fails): the `StateStorage` property, the journal's two lines, and the retries.
///
/// Pure: the daemon reports each save's outcome and reads back what to say and when to retry.
public struct StateStorage: Hashable, Sendable {
    /// When saves began to fail (wall-clock time, for `StateStorage`); nil while they work.
    public private(set) var failingSince: Timestamp?
    /// The last failed save's error, a full sentence; "" while saves work.
    public private(set) var problem = ""
    /// The state in memory holds changes that are not on disk: those that only tighten (a wrong
    /// passcode, a session's time running out), kept although their save failed.
    public private(set) var hasUnsaved = false
    /// Why the unsaved changes could not be kept in the runtime directory either; "" otherwise.
    public private(set) var shadowProblem = ""
    /// Failed retries since saves began to fail: how long the next retry waits.
    public private(set) var retries = 0

    public init() {}

    /// How saves stand changed: the journal says so once each way.
    public enum Transition: Hashable, Sendable {
        /// Saves began to fail.
        case broke
        /// Saves work again.
        case recovered
    }

    /// The first retry waits this long, each later one twice the one before, at most
    /// ``longestRetryDelay``.
    public static let firstRetryDelay: Duration = .seconds(1)
    public static let longestRetryDelay: Duration = .seconds(60)

    /// How long to wait before saving again: nil while saves work and nothing waits.
    public var retryDelay: Duration? {
        guard failingSince != nil || hasUnsaved else { return nil }
        var delay = Self.firstRetryDelay
        for _ in 0..<min(retries, 16) where delay < Self.longestRetryDelay { delay = delay * 2 }
        return min(delay, Self.longestRetryDelay)
    }

    /// Saves are failing: the `StateStorage` property is not empty.
    public var isFailing: Bool { failingSince != nil }

    /// A save succeeded: everything the state in memory holds is on disk.
    public mutating func saved() -> Transition? {
        let was = failingSince != nil
        failingSince = nil
        problem = ""
        hasUnsaved = false
        shadowProblem = ""
        retries = 0
        return was ? .recovered : nil
    }

    /// A save failed with `error` at wall-clock time `now`; `retry` says it was a retry.
    public mutating func failed(_ error: String, at now: Timestamp, retry: Bool = false) -> Transition? {
        problem = error
        if retry { retries += 1 }
        guard failingSince == nil else { return nil }
        failingSince = now
        return .broke
    }

    /// A change whose save failed was kept in memory (it only tightens); `shadowError` says why
    /// it could not be kept in the runtime directory either, nil when it was.
    public mutating func keptUnsaved(shadowError: String?) {
        hasUnsaved = true
        shadowProblem = shadowError ?? ""
    }

    /// What `StateStorage` says: "" while saves work, else a sentence with the error and what
    /// waits to be saved.
    public var description: String {
        guard failingSince != nil else { return "" }
        var text = "The state cannot be saved: \(problem)"
        if hasUnsaved {
            text += " Changes that only tighten (wrong passcodes, a session's time) are kept"
            text +=
                shadowProblem.isEmpty
                ? " in the runtime directory until they are saved."
                : " in memory only (\(shadowProblem)) until they are saved."
        }
        return text
    }

    // MARK: What a start restores

    /// The state to start from: `disk` (the state file), or `pending` (what the runtime
    /// directory kept of a state whose save failed during this boot), whichever was saved last
    /// by the kiosk clock. `pending` is `disk` plus changes that only tighten, so it never
    /// loosens anything the disk holds; a `pending` older than the disk (its save succeeded, and
    /// kioskd stopped before it removed it) is ignored.
    public static func restore(disk: KioskState, pending: KioskState?) -> (state: KioskState, fromPending: Bool) {
        guard let pending else { return (disk, false) }
        let diskTime = disk.clockCheckpoint?.microseconds ?? .min
        let pendingTime = pending.clockCheckpoint?.microseconds ?? .min
        return pendingTime >= diskTime ? (pending, true) : (disk, false)
    }

    /// Whether a session restored at start must come back expired (fail closed): after a
    /// reboot, with the state directory not writable, an active session with a time limit. Its
    /// time resumes from the last save, and how long it ran after that — saves may have failed
    /// for hours before the power went — is unknown; and time it runs now could not be saved
    /// either. A restart within one boot keeps it (the runtime directory holds its progress).
    public static func mustExpireRestoredSession(_ session: GuidedSession, newBoot: Bool, writable: Bool) -> Bool {
        newBoot && !writable && session.state == .active && session.deadline != nil
    }

    /// What a start after a reboot does when the state directory is not writable (fail closed).
    /// The kiosk clock resumed from the last save, which may be long before the power went:
    /// an active session with a time limit is taken to have run out, so the clock moves on to
    /// its deadline (`marker`, never back) and what `SessionDeadline` shows is past; throttle
    /// waits restart at that time. The wrong passcodes counted after the last save went with
    /// the runtime directory, so every source's free attempts are taken as used
    /// (``PasscodeThrottles/spendFreeAttempts(at:)``): a power cut gives no fresh guesses;
    /// counts above that are kept. The session itself then expires through the session machine
    /// (``mustExpireRestoredSession(_:newBoot:writable:)``).
    /// - Returns: whether `state` changed.
    public static func failClosedAfterReboot(
        _ state: inout KioskState, marker: inout KioskClockMarker, boottime: Duration, newBoot: Bool, writable: Bool
    ) -> Bool {
        guard newBoot, !writable else { return false }
        if mustExpireRestoredSession(state.session, newBoot: newBoot, writable: writable),
            let deadline = state.session.deadline
        {
            marker.advance(to: deadline, boottime: boottime)
        }
        let now = marker.kioskTime(boottime: boottime)
        let before = state.throttles
        state.throttles.restartWaits(at: now)
        state.throttles.spendFreeAttempts(at: now)
        return state.throttles != before
    }
}
