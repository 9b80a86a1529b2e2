import KioskCore
import Logging
import SystemdKit

/// Changing a live session without ending it (issue 16 §1): its time limit, and what profiles
/// there are to start one with.
extension ManagerObject {
    /// The longest a single extension may add or take away.
    static let maximumExtension: Duration = Profile.Session.maximumTimeLimit

    /// `ExtendSession(x seconds)`: moves the end of the time limit by `seconds` (negative
    /// shortens; an end in the past expires the session now), from the current end, or from now
    /// when the session has expired (it is active again). A session without a time limit is
    /// `InvalidArgs` (`SetSessionDeadline` sets one).
    func extendSession(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 1, let seconds = call.arguments[0].int64 else {
            throw KioskError(.invalidArgument, "ExtendSession takes (x seconds).")
        }
        let maximum = Self.maximumExtension.components.seconds
        guard seconds != 0, (-maximum...maximum).contains(seconds) else {
            throw KioskError(
                .invalidArgument,
                "ExtendSession's seconds is \(seconds); give a change of 1 s to \(Self.maximumExtension.kioskText) either way."
            )
        }
        try state.session.checkActive()
        _ = try state.session.extendedDeadline(by: .seconds(seconds), at: clock.now())
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageSession, doing: "change the session's time limit"
            ) { [unowned self] in
                applyDeadline(call, caller: caller, what: "extended by \(seconds) s") { session, now in
                    try session.extendedDeadline(by: .seconds(seconds), at: now)
                }
            }
        }
        return .deferred
    }

    /// `SetSessionDeadline(t usec)`: the time limit ends at `usec` of the wall clock (as
    /// `SessionDeadline` shows it); 0 removes the limit. A time in the past expires the session
    /// now; one more than 7 days ahead is `InvalidArgs`.
    func setSessionDeadline(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 1, let usec = call.arguments[0].uint64, let wall = Int64(exactly: usec) else {
            throw KioskError(.invalidArgument, "SetSessionDeadline takes (t usec), microseconds since the epoch.")
        }
        try state.session.checkActive()
        let deadline = wall == 0 ? nil : kioskTime(ofDisplayed: WallClockTime(microseconds: wall))
        if let deadline, deadline - clock.now() > Profile.Session.maximumTimeLimit {
            throw KioskError(
                .invalidArgument,
                "The new end of the time limit is more than \(Profile.Session.maximumTimeLimit.kioskText) from now.")
        }
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageSession, doing: "change the session's time limit"
            ) { [unowned self] in
                applyDeadline(call, caller: caller, what: deadline == nil ? "removed" : "set") { _, _ in deadline }
            }
        }
        return .deferred
    }

    /// The kiosk-clock time that `displayTime` shows as `displayed` (its inverse: the offset
    /// between the two clocks is the marker's, the same at every time).
    func kioskTime(ofDisplayed displayed: WallClockTime) -> WallClockTime {
        let now = clock.now()
        return displayed + (now - displayTime(now))
    }

    /// Moves the session's deadline to what `compute` makes of the session now, in turn with the
    /// other changes; warnings due and an expiry are signalled once it is on disk.
    private func applyDeadline(
        _ call: MethodCall, caller: Caller, what: String,
        _ compute: @escaping (GuidedSession, WallClockTime) throws -> WallClockTime?
    ) {
        change(call, .privileged) { [unowned self] in
            var next = state
            let now = clock.now()
            let deadline = try compute(next.session, now)
            let warnings = activeProfile?.session.warnings ?? []
            let events = try next.session.setDeadline(deadline, warnings: warnings, at: now)
            return Plan(next) { [unowned self] in
                logger.notice(
                    "Session time limit \(what)",
                    metadata: caller.metadata.merging([
                        "session.profile": "\(state.session.profileName)",
                        "session.deadline": "\(state.session.deadline.map { "\(displayTime($0))" } ?? "none")",
                    ]) { $1 })
                for event in events {
                    if case .warning(let secondsLeft) = event { emit(Member.timeLimitWarning, [.uint64(secondsLeft)]) }
                }
                emitSessionChanged()
                scheduleSessionTimer()
                try call.reply([])
            }
        }
    }

    /// `ListProfiles()`: the installed profiles (name, description, whether each can start a
    /// session, whether it holds a passcode hash), read off the loop; under the same polkit
    /// action as `StartSession`, so that listing re-opens nothing the file modes close.
    func listProfiles(_ call: MethodCall) throws -> MethodReply {
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageSession, doing: "list the profiles"
            ) { [unowned self] in
                loop.offload(
                    to: profileReader, { [profiles] in profiles.list() },
                    then: { [unowned self] list in
                        attempt(call) {
                            try call.reply([
                                .array(
                                    elementSignature: "(ssbb)",
                                    list.map {
                                        .structure([.string($0.name), .string($0.description), .bool($0.checks), .bool($0.holdsHash)])
                                    })
                            ])
                        }
                    })
            }
        }
        return .deferred
    }
}
