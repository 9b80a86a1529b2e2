import KioskCore
import KioskCrypt
import Logging
import SystemPackage
import SystemdKit

extension ManagerObject {
    // MARK: StartSession

    /// Parse and validate (the name) → identify → authorize → load the
    /// profile (read and parsed off the loop) → apply → persist → commit → signal → reply.
    func startSession(_ call: MethodCall) throws -> MethodReply {
        guard let name = call.arguments.first?.string else {
            throw KioskError(.invalidArgument, "StartSession takes (s profile).")
        }
        return try startSession(call, name: name, trial: nil)
    }

    /// `StartTrialSession(s profile, t seconds)`: a session that ends by itself after `seconds`
    /// (10 s to 1 day) unless `ConfirmSession` comes first, and that a reboot ends: a remote
    /// admin cannot lock themselves out with a profile that turns out wrong.
    func startTrialSession(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 2, let name = call.arguments[0].string, let seconds = call.arguments[1].uint64
        else {
            throw KioskError(.invalidArgument, "StartTrialSession takes (s profile, t seconds).")
        }
        guard (10...86_400).contains(seconds) else {
            throw KioskError(.invalidArgument, "A trial lasts 10 s to 1 day, not \(seconds) s.")
        }
        return try startSession(call, name: name, trial: .seconds(Int64(seconds)))
    }

    private func startSession(_ call: MethodCall, name: String, trial: Duration?) throws -> MethodReply {
        try Profile.validateName(name)
        // Whether a session may start is the state's to say, after authorization (the profile's
        // own read, and session.start, check it in turn with other changes).
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageSession, doing: "start a guided-access session"
            ) { [unowned self] in
                loadProfile(call, name) { [unowned self] loaded in
                    // Fail closed: a browser whose policy kioskd cannot write runs no session.
                    try browserPolicy?.checkReady(for: loaded.profile.app)
                    // The enforcer applies the profile together with the state, once both are on disk.
                    applyToSession(call, caller: caller) { _ in .start(name, loaded, trial: trial) }
                }
            }
        }
        return .deferred
    }

    /// Reads and parses the profile `name` off the loop, then runs `next` with it on the loop;
    /// a profile that cannot be loaded is the call's error reply.
    func loadProfile(
        _ call: any Requester, _ name: String,
        then next: @escaping (SessionMachine.LoadedProfile) throws -> Void
    ) {
        loop.offload(
            to: profileReader,
            { [profiles] in
                Result { () throws(KioskError) in try profiles.loadWithSource(name) }
            },
            then: { [unowned self] loaded in
                attempt(call) { try next(loaded.get()) }
            })
    }

    // MARK: EndSession, ForceEndSession

    func endSession(_ call: MethodCall) throws -> MethodReply {
        guard let passcode = call.arguments.first?.string else {
            throw KioskError(.invalidArgument, "EndSession takes (s passcode).")
        }
        try state.session.checkActive()
        try identify(call) { [unowned self] caller in
            // Each uid meets a throttle count of its own: nobody can make anyone else wait.
            try checkThrottle(.uid(caller.uid), caller)
            // Anyone who knows the passcode may end the session: no polkit check. The machine
            // asks for the check (queued, hashed off the loop); its outcome comes back as
            // `judged` (ManagerObject+Passcodes.swift).
            var copy = machine
            try perform(
                copy.apply(.passcode(passcode), at: clock.now()),
                MachineStep(requester: call, caller: caller, profileName: state.session.profileName))
        }
        return .deferred
    }

    func forceEndSession(_ call: MethodCall) throws -> MethodReply {
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageSession,
                doing: "end a guided-access session without the passcode"
            ) { [unowned self] in
                applyToSession(call, caller: caller) { _ in .end(.forced) }
            }
        }
        return .deferred
    }
}

extension ManagerObject {
    /// `ConfirmSession()`: a trial session stays, as any other.
    func confirmSession(_ call: MethodCall) throws -> MethodReply {
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageSession, doing: "confirm the trial session"
            ) { [unowned self] in
                applyToSession(call, caller: caller, what: "confirmed") { _ in .confirmTrial }
            }
        }
        return .deferred
    }
}

/// Apps that lock themselves (exam mode, docs/dbus-api.md § RequestSession; iOS's
/// UIAccessibilityRequestGuidedAccessSession):
/// an app starts a session of a profile made for it and ends it again.
extension ManagerObject {
    /// `RequestSession(s app_id, s profile)`: only for a profile whose `app` is that app and
    /// which says `[session] app-may-request = true`, by that profile's `app-owner` (or root),
    /// under the polkit action `request-session` (default: allowed for the active local
    /// session). Who registered the id first does not matter: the profile says whose app it is,
    /// so no other uid can squat the id and keep its app from locking the kiosk.
    func requestSession(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 2, let appText = call.arguments[0].string, let name = call.arguments[1].string else {
            throw KioskError(.invalidArgument, "RequestSession takes (s app_id, s profile).")
        }
        let app = try AppID(appText)
        try Profile.validateName(name)
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.requestSession, doing: "lock the kiosk to \(app)"
            ) { [unowned self] in
                loadProfile(call, name) { [unowned self] loaded in
                    guard loaded.profile.app == app, loaded.profile.session.appMayRequest else {
                        throw KioskError(
                            .accessDenied,
                            "The profile \(Text.quoted(name)) may not be requested by \(app): its app must be \(app) and it must say [session] app-may-request = true."
                        )
                    }
                    try checkOwner(loaded.profile, app, caller: caller, doing: "request a session of \(Text.quoted(name))")
                    try browserPolicy?.checkReady(for: loaded.profile.app)
                    applyToSession(call, caller: caller) { _ in
                        .start(name, loaded, requestedBy: app)
                    }
                }
            }
        }
        return .deferred
    }

    /// `ReleaseSession(s app_id)`: the app that requested the active session ends it: the
    /// session's profile's `app-owner` (or root) only; never another app's session, nor one an
    /// admin started.
    func releaseSession(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 1, let appText = call.arguments[0].string else {
            throw KioskError(.invalidArgument, "ReleaseSession takes (s app_id).")
        }
        let app = try AppID(appText)
        try identify(call) { [unowned self] caller in
            if caller.uid != 0 {
                // No session, or one whose profile could not be read back: nothing the app may end.
                guard state.session.isActive, let profile = activeProfile else {
                    throw KioskError(.noSession, "No guided-access session that \(app) requested is active.")
                }
                try checkOwner(profile, app, caller: caller, doing: "release its session")
            }
            applyToSession(call, caller: caller) { _ in .end(.released(by: app)) }
        }
        return .deferred
    }

    /// The caller is root or `profile`'s `app-owner`. The refusal names no other uid.
    private func checkOwner(_ profile: Profile, _ app: AppID, caller: Caller, doing what: String) throws(KioskError) {
        guard profile.mayOwnApp(caller.uid) else {
            audit(.notice, "Call refused", caller, MessageID.callRefused.metadata.merging(["app.id": "\(app)"]) { $1 })
            throw KioskError(
                .accessDenied,
                "Only the profile's app-owner (or root) may \(what); uid \(caller.uid) is not the app-owner of \(app).")
        }
    }
}
