import KioskAPI
import KioskInput

/// Cleaning the screen (docs/profiles.md § Cleaning the screen): for a while every touch,
/// pointer and key is held but what assistive technology needs, so that staff can wipe the
/// glass. It starts by the profile's cleaning gesture or an admin's `StartCleaning`, and ends by
/// time (on the kiosk clock, which a wall-clock jump does not move), by `StopCleaning`, or when
/// the passcode prompt opens. In memory only, like the prompt: a restart comes back with the
/// session's locks and no cleaning. It needs no session: without one nothing is exempt.
public struct CleaningPhase: Sendable, Equatable {
    /// When it ends, in µs of the kiosk clock (or of the recording's, in a replay).
    public var until: Int64
    /// How long it was asked for.
    public var length: Duration

    public init(until: Int64, length: Duration) {
        self.until = until
        self.length = length
    }
}

extension SessionMachine {
    /// Starts cleaning for `length` at `now` (again, from now, while it runs). Refused, changing
    /// nothing, for a length outside 5 s to 5 min, and while the passcode prompt is open.
    mutating func startCleaning(for length: Duration, at now: Timestamp) throws(KioskError) -> [Effect] {
        let range = Profile.Session.cleaningTimeRange
        guard range.contains(length) else {
            throw KioskError(
                .invalidArgument,
                "Cleaning takes \(range.lowerBound.kioskText) to \(range.upperBound.kioskText), not \(length.kioskText); nothing changed."
            )
        }
        guard prompt.state == .closed else {
            throw KioskError(
                .failed, "The passcode prompt is open at the kiosk; cleaning can start once it closes.")
        }
        guard drawing == nil else {
            throw KioskError(.failed, "Regions are being drawn at the kiosk; cleaning can start once the drawing ends.")
        }
        cleaning = CleaningPhase(until: now.microseconds + length.microseconds, length: length)
        return [.cleaningStarted(length)]
    }

    /// Ends cleaning now; nothing when none runs.
    mutating func stopCleaning() -> [Effect] {
        guard cleaning != nil else { return [] }
        cleaning = nil
        return [.cleaningEnded]
    }

    /// The profile's cleaning gesture: cleaning for its `cleaning-time`, on an active or expired
    /// session whose profile has the gesture, unless it runs already or the prompt is open.
    mutating func cleaningGesture(at now: Timestamp) -> [Effect] {
        guard state.session.isActive, cleaning == nil, let session = profile?.session,
            session.cleaningGesture != nil || session.touchCleaningGesture != nil
        else { return [] }
        return (try? startCleaning(for: session.cleaningTime, at: now)) ?? []
    }

    /// Whether cleaning runs and its time is up at `now` (``Event/clock`` ends it).
    public func cleaningIsOver(at now: Timestamp) -> Bool {
        cleaning.map { now.microseconds >= $0.until } ?? false
    }
}
