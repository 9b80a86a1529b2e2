import KioskCore
import Logging
import SystemdKit

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
                    change(call, .privileged) { [unowned self] in
                        var next = state
                        let changes = try next.startSession(
                            profileName: name, profile: loaded.profile, at: clock.now(), requestedBy: app)
                        return Plan(next, profile: .set(loaded.profile)) { [unowned self] in
                            activeProfileSource = loaded.source
                            reloadWarning = ""
                            logger.notice(
                                "Session requested by its app",
                                metadata: caller.metadata.merging(MessageID.sessionStarted.metadata) { $1 }.merging([
                                    "session.profile": "\(name)", "app.id": "\(app)",
                                ]) { $1 })
                            emitRestrictionChanged(changes)
                            emitSessionChanged()
                            scheduleSessionTimer()
                            try call.reply([])
                        }
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
            applyEndSession(call, caller: caller, .released(by: app))
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
