import KioskCore
import Logging
import SystemdKit

/// Apps that lock themselves (issue 16 §2, exam mode; iOS's UIAccessibilityRequestGuidedAccessSession):
/// an app starts a session of a profile made for it and ends it again.
extension ManagerObject {
    /// `RequestSession(s app_id, s profile)`: only the app's owner (the uid that registered it;
    /// root too), only for a profile whose `app` is that app and which says
    /// `[session] app-may-request = true`, under the polkit action `request-session` (default:
    /// allowed for the active local session).
    func requestSession(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 2, let appText = call.arguments[0].string, let name = call.arguments[1].string else {
            throw KioskError(.invalidArgument, "RequestSession takes (s app_id, s profile).")
        }
        let app = try AppID(appText)
        try Profile.validateName(name)
        try state.session.checkCanStart()
        try identify(call) { [unowned self] caller in
            try checkOwner(app, caller: caller, doing: "request a session for it")
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
                    change(call, .privileged) { [unowned self] in
                        var next = state
                        let changes = try next.session.start(
                            profileName: name, profile: loaded.profile, at: clock.now(), registry: &next.registry,
                            requestedBy: app)
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

    /// `ReleaseSession(s app_id)`: the app that requested the active session ends it. Its
    /// owner only; never another app's session, nor one an admin started.
    func releaseSession(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 1, let appText = call.arguments[0].string else {
            throw KioskError(.invalidArgument, "ReleaseSession takes (s app_id).")
        }
        let app = try AppID(appText)
        try state.session.checkActive()
        try identify(call) { [unowned self] caller in
            try checkOwner(app, caller: caller, doing: "release its session")
            applyEndSession(call, caller: caller, .released(by: app))
        }
        return .deferred
    }

    /// The caller registered `app` (or is root).
    private func checkOwner(_ app: AppID, caller: Caller, doing what: String) throws(KioskError) {
        guard let owner = state.registry.owner(of: app) else {
            throw KioskError(.unknownApplication, "No application \(app) is registered.")
        }
        guard caller.uid == 0 || owner == caller.uid else {
            audit(.notice, "Call refused", caller, MessageID.callRefused.metadata.merging(["app.id": "\(app)"]) { $1 })
            throw KioskError(
                .accessDenied, "\(app) belongs to uid \(owner); uid \(caller.uid) may not \(what).")
        }
    }
}
