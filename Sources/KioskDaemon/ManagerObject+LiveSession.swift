import KioskCore
import Logging
import SystemPackage
import SystemdKit

/// Changing a live session without ending it (docs/dbus-api.md § Changing a live session): its time limit, and what profiles
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
        // The session's state is looked at only once the caller may change it (docs/dbus-api.md
        // § Errors: the shape of the arguments, then authorization, then the state).
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageSession, doing: "change the session's time limit"
            ) { [unowned self] in
                applyToSession(call, caller: caller, what: "extended by \(seconds) s") { _ in
                    .extend(by: .seconds(seconds))
                }
            }
        }
        return .deferred
    }

    /// `SetSessionDeadline(t usec)`: the time limit ends at `usec` of the wall clock (as
    /// `SessionDeadline` shows it); 0 removes the limit. A time in the past expires the session
    /// now; one more than 7 days ahead is `InvalidArgs`.
    func setSessionDeadline(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 1, let usec = call.arguments[0].uint64 else {
            throw KioskError(.invalidArgument, "SetSessionDeadline takes (t usec), microseconds since the epoch.")
        }
        guard usec == 0 || Int64(exactly: usec).map(Timestamp.isRepresentable) == true else {
            throw KioskError(
                .invalidArgument,
                "SetSessionDeadline's usec is \(usec); give 0 or a time between 1970 and the end of 9999.")
        }
        let wall = Int64(usec)
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageSession, doing: "change the session's time limit"
            ) { [unowned self] in
                applyToSession(call, caller: caller, what: wall == 0 ? "removed" : "set") { [unowned self] now in
                    // How far ahead an end may be is the session's own rule (GuidedSession.setDeadline).
                    guard wall != 0 else { return .deadline(nil) }
                    return .deadline(kioskTime(ofDisplayed: Timestamp(microseconds: wall), at: now))
                }
            }
        }
        return .deferred
    }

    /// The kiosk-clock time that `displayTime` shows as `displayed` (its inverse: the offset
    /// between the two clocks is the marker's, the same at every time), saturating: `displayed`
    /// is a caller's, and the wall clock may be years behind or ahead of the kiosk clock.
    func kioskTime(ofDisplayed displayed: Timestamp, at now: Timestamp) -> Timestamp {
        displayed + (now - displayTime(now))
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
                                        .structure([
                                            .string($0.name), .string($0.description), .bool($0.checks),
                                            .bool($0.holdsHash),
                                        ])
                                    })
                            ])
                        }
                    })
            }
        }
        return .deferred
    }
}

extension ManagerObject {
    /// `ReloadProfiles()` (`kioskctl reload`, `systemctl reload kioskd`, SIGHUP): the active
    /// session takes its edited profile file at once, whatever it changed (an admin made the
    /// edit), with its time limit counted from the session's start. A file that no longer loads
    /// leaves the last good profile in force, persisted so that a restart keeps it too; the call
    /// fails with the reason, which `SessionWarnings` also shows until a reload succeeds.
    /// Without a session there is nothing to reload: success.
    func reloadProfiles(_ call: MethodCall) throws -> MethodReply {
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageSession, doing: "reload the session's profile"
            ) { [unowned self] in
                reload(call, caller: caller)
            }
        }
        return .deferred
    }

    /// Reloads for `requester` (a call, or SIGHUP's ``LogRequester``): the file is read off the
    /// loop, then the machine's reload rule decides (``SessionMachine/Change/reload(_:readFor:)``),
    /// in turn with the other changes.
    func reload(_ requester: any Requester, caller: Caller) {
        // The web apps' manifests first: the reply comes once they are declared, and the bridge
        // is asked to read them too.
        reloadWebApps { [unowned self] in
            reloadBridge()
            reloadProfile(requester, caller: caller)
        }
    }

    /// The session's profile read again and applied by the machine's reload rule.
    private func reloadProfile(_ requester: any Requester, caller: Caller) {
        guard state.session.isActive else {
            logger.info("Reload: no session is active; nothing to reload", metadata: caller.metadata)
            return attempt(requester) { try requester.reply([]) }
        }
        let name = state.session.profileName
        let session = state.session.identity
        loop.offload(
            to: profileReader,
            { [profiles] in Result { () throws(KioskError) in try profiles.loadWithSource(name) } },
            then: { [unowned self] loaded in
                applyToSession(requester, caller: caller) { _ in .reload(loaded, readFor: session) }
            })
    }
}

/// SIGHUP's reload has no caller to answer: its outcome is logged (the steps log it already).
final class LogRequester: Requester {
    func reply(_ values: [DBusValue]) throws(Errno) {}
    func replyError(_ error: BusError) throws(Errno) {}
}
