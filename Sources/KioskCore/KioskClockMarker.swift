import KioskAPI

/// The kiosk clock (docs/dbus-api.md § Time): the time every wait and limit is measured on.
///
/// While kioskd runs it is `CLOCK_BOOTTIME` plus an offset: it counts suspend, and setting the
/// wall clock (by hand or NTP, in either direction) changes nothing. Across a reboot it resumes
/// from the last time saved with the state (``KioskState/clockCheckpoint``), so time powered
/// off does not count: a session's time limit goes on where it stopped. A throttle wait is the
/// exception: after a reboot it restarts in full, so pulling the plug never shortens it.
///
/// Its values are `Timestamp`s (microseconds) on its own timeline. On the first start (and
/// with a state file from before this clock) the timeline is set to the wall clock of then, so
/// the values of an older state file keep their meaning. What is shown as wall-clock time
/// (`SessionDeadline`) is kiosk time plus ``KioskClockMarker/displayOffset``.
///
/// Pure: the daemon reads the clocks and the marker and passes them in.
public struct KioskClockMarker: Hashable, Sendable {
    /// Kiosk time minus `CLOCK_BOOTTIME`, in microseconds.
    public var offset: Int64
    /// Wall-clock time minus kiosk time, in microseconds: what `SessionDeadline` adds.
    public var displayOffset: Int64
    /// The state file the timeline belongs to.
    public var statePath: String

    public init(offset: Int64, displayOffset: Int64, statePath: String) {
        self.offset = offset
        self.displayOffset = displayOffset
        self.statePath = statePath
    }

    /// `offset displayOffset statePath`, one line: what kioskd keeps in its runtime directory,
    /// which is empty after every boot.
    public var text: String { "\(offset) \(displayOffset) \(statePath)\n" }

    public init?(text: String) {
        let parts = text.split(separator: " ", maxSplits: 2)
        guard parts.count == 3, let offset = Int64(parts[0]), let display = Int64(parts[1]) else { return nil }
        var path = String(parts[2])
        if path.hasSuffix("\n") { path.removeLast() }
        self.init(offset: offset, displayOffset: display, statePath: path)
    }

    /// Where the kiosk clock stands at start: `marker` is what this boot's runtime directory
    /// holds (nil after a reboot, or on the first start), `boottime` and `realtime` the clocks
    /// now. A new boot resumes from `state`'s checkpoint and restarts every throttle wait in
    /// full (`state` is changed accordingly).
    /// - Returns: the marker to keep for the rest of this boot, and whether this is a new boot.
    public static func start(
        state: inout KioskState, statePath: String, marker: KioskClockMarker?, boottime: Duration,
        realtime: Timestamp
    ) -> (marker: KioskClockMarker, newBoot: Bool) {
        if let marker, marker.statePath == statePath {
            return (marker, false)
        }
        let boot = boottime.microseconds
        // A new boot: go on from the last time saved; with none (a first start, or a state file
        // from before the kiosk clock) from the wall clock of now.
        let resumeAt = state.clockCheckpoint?.microseconds ?? realtime.microseconds
        let offset = resumeAt &- boot
        let now = Timestamp(microseconds: resumeAt)
        state.throttles.restartWaits(at: now)
        // An unconfirmed trial session does not survive a reboot: whoever started it could not
        // confirm it from a kiosk that went down.
        if state.session.trialEnd != nil { _ = try? state.endSession(.unconfirmedTrial) }
        return (
            KioskClockMarker(offset: offset, displayOffset: realtime.microseconds &- resumeAt, statePath: statePath),
            true
        )
    }

    /// Moves kiosk time forward to `time` if it is earlier at `boottime` (never back); what is
    /// shown as wall-clock time stays the wall clock. For time known to have passed that no save
    /// recorded (``StateStorage/failClosedAfterReboot(_:marker:boottime:newBoot:writable:)``).
    public mutating func advance(to time: Timestamp, boottime: Duration) {
        let now = kioskTime(boottime: boottime)
        guard now < time else { return }
        let delta = time.microseconds &- now.microseconds
        offset = offset &+ delta
        displayOffset = displayOffset &- delta
    }

    /// Kiosk time at `boottime`.
    public func kioskTime(boottime: Duration) -> Timestamp {
        Timestamp(microseconds: boottime.microseconds &+ offset)
    }

    /// The wall-clock time to show for kiosk time `time`.
    public func display(_ time: Timestamp) -> Timestamp {
        Timestamp(microseconds: time.microseconds &+ displayOffset)
    }
}
