import KioskCore
import KioskCrypt
import Logging
import SystemdKit

extension ManagerObject {
    /// `PasscodeSet` (`b`): whether a passcode set with `SetPasscode` is stored.
    var passcodeProperties: [BusProperty] {
        [BusProperty(Member.passcodeSet, "b") { [unowned self] in .bool(state.passcodeHash != nil) }]
    }

    // MARK: SetPasscode

    func setPasscode(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 2, let current = call.arguments[0].string, let new = call.arguments[1].string
        else {
            throw KioskError(.invalidArgument, "SetPasscode takes (s current, s new).")
        }
        try PasscodeCheck.validateNew(new)
        try identify(call) { [unowned self] caller in
            try authorize(call, caller: caller, action: KioskWire.Action.setPasscode, doing: "set the passcode") {
                [unowned self] in
                try enqueue(
                    PasscodeAttempt(call: call, caller: caller, passcode: current, purpose: .setPasscode(new: new)))
            }
        }
        return .deferred
    }

    // MARK: ResetPasscodeThrottle

    /// `ResetPasscodeThrottle(s source)`: an admin clears the wrong-passcode count of `source`
    /// (`kiosk`, `uid N`) or of every source (`all`), so that staff locked out by a visitor's
    /// guesses at the kiosk can try again at once (docs/threat-model.md § What a visitor can do to
    /// staff). Validate → identify → authorize (manage-session) → apply → persist → reply.
    func resetPasscodeThrottle(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 1, let text = call.arguments[0].string else {
            throw KioskError(.invalidArgument, "ResetPasscodeThrottle takes (s source).")
        }
        let source: PasscodeSource?
        if text == "all" {
            source = nil
        } else if let parsed = PasscodeSource(key: text) {
            source = parsed
        } else {
            throw KioskError(
                .invalidArgument,
                "\(Text.quoted(text)) is not a passcode source; give \"kiosk\", \"uid N\" or \"all\".")
        }
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageSession, doing: "reset the passcode throttle"
            ) { [unowned self] in
                change(call, .privileged) { [unowned self] in
                    var next = state
                    guard next.throttles.reset(source) else {
                        try call.reply([])  // nothing counted: nothing to write
                        return nil
                    }
                    return Plan(next) { [unowned self] in
                        logger.notice(
                            "Passcode throttle reset",
                            metadata: caller.metadata.merging(MessageID.passcodeThrottleReset.metadata) { $1 }.merging([
                                "passcode.source": "\(source.map { "\($0)" } ?? "all")"
                            ]) { $1 })
                        if source == nil || source == .kiosk { emitPromptChanged() }
                        try call.reply([])
                    }
                }
            }
        }
        return .deferred
    }

    // MARK: Passcode attempts, one at a time, hashed off the loop

    /// An EndSession or SetPasscode call waiting for its passcode to be checked.
    struct PasscodeAttempt {
        enum Purpose {
            case endSession
            case setPasscode(new: String)

            var check: PasscodeCheck.Purpose {
                switch self {
                case .endSession: .endSession
                case .setPasscode: .setPasscode
                }
            }
        }

        var call: any Requester
        var caller: Caller
        var passcode: String
        var purpose: Purpose
        /// Whose throttle count the attempt meets: the calling uid's, or the kiosk's for the
        /// passcode typed at the kiosk.
        var source: PasscodeSource

        init(call: any Requester, caller: Caller, passcode: String, purpose: Purpose, source: PasscodeSource? = nil) {
            self.call = call
            self.caller = caller
            self.passcode = passcode
            self.purpose = purpose
            self.source = source ?? .uid(caller.uid)
        }
    }

    /// What the worker found: whether the passcode matched, and for SetPasscode the new hash; or
    /// that libcrypt could not check it at all (`failure`).
    struct PasscodeVerdict: Sendable {
        var matches: Bool
        var newHash: Result<String, Passcode.CryptError>?
        var failure: Passcode.CryptError?
    }

    /// Queues `attempt`. Attempts run one at a time, in order: each checks the throttle on the loop
    /// after the previous one's failure is recorded, so parallel guesses get no free tries, and
    /// its yescrypt work (tens of ms) runs on `passcodeWorker` while the loop serves other callers.
    /// Past `KioskWire.Limits.waitingPasscodeAttempts` waiting, or
    /// `waitingPasscodeAttemptsPerUID` of the caller's uid, an attempt is refused (`Throttled`);
    /// root's never are, so no other uid can keep root from ending a session.
    func enqueue(_ attempt: PasscodeAttempt) throws(KioskError) {
        guard !isStopping else { throw KioskError(.failed, "kioskd is stopping; the passcode was not checked.") }
        if attempt.caller.uid != 0 {
            let ofUID = waitingPasscodeAttempts.count { $0.caller.uid == attempt.caller.uid }
            let others = waitingPasscodeAttempts.count { $0.caller.uid != 0 }
            guard ofUID < KioskWire.Limits.waitingPasscodeAttemptsPerUID,
                others < KioskWire.Limits.waitingPasscodeAttempts
            else {
                throw KioskError(
                    .throttled,
                    "\(max(ofUID, others)) passcode attempts are already waiting to be checked; try again in 1 s.")
            }
        }
        waitingPasscodeAttempts.append(attempt)
        startNextPasscodeAttempt()
    }

    /// Starts the next waiting attempt unless one is being hashed: checks the throttle and the
    /// session now, takes the hash to compare with, and hands the hashing to the worker. The state
    /// writer is held meanwhile: a stop waits for the outcome to be saved (a guess is never free).
    func startNextPasscodeAttempt() {
        while passcodeAttemptInFlight == nil, !isStopping, !waitingPasscodeAttempts.isEmpty {
            let waiting = waitingPasscodeAttempts.removeFirst()
            attempt(waiting.call) {
                try checkThrottle(waiting.source, waiting.caller)
                let check = try PasscodeCheck(waiting.purpose.check, in: state, activeProfile: activeProfile)
                let session = state.session.identity
                passcodeAttemptInFlight = waiting.call
                writer.hold()
                loop.offload(
                    to: passcodeWorker,
                    { [passcode = waiting.passcode, purpose = waiting.purpose] in
                        Self.judge(passcode, with: check, purpose: purpose)
                    },
                    then: { [unowned self] verdict in
                        // The next attempt meets the throttle only once this one's outcome is on disk.
                        finish(waiting, verdict: verdict, check: check, session: session) { [unowned self] in
                            passcodeAttemptInFlight = nil
                            startNextPasscodeAttempt()
                        }
                        // Its change, if any, is submitted (surviving a stop): the writer may stop now.
                        writer.release()
                    })
            }
        }
    }

    /// The attempt's source may try now; a refusal (`Throttled`, not an attempt: nothing is
    /// hashed or counted) is an audit entry of its own, summarised when one uid repeats it.
    func checkThrottle(_ source: PasscodeSource, _ caller: Caller) throws(KioskError) {
        do {
            try state.throttles.check(source, at: clock.now())
        } catch {
            audit(
                .notice, "Passcode attempt refused by the throttle", caller,
                MessageID.passcodeThrottled.metadata.merging(["passcode.source": "\(source)"]) { $1 })
            throw error
        }
    }

    /// On the worker: the slow part (what a missing hash means is the check's rule).
    static func judge(
        _ passcode: String, with check: PasscodeCheck,
        purpose: PasscodeAttempt.Purpose
    ) -> PasscodeVerdict {
        let accepted: Bool
        do {
            accepted = try check.accepts(passcode, verify: Passcode.verify)
        } catch {
            return PasscodeVerdict(matches: false, failure: error)
        }
        guard accepted else { return PasscodeVerdict(matches: false) }
        switch purpose {
        case .endSession:
            return PasscodeVerdict(matches: true)
        case .setPasscode(let new):
            return PasscodeVerdict(
                matches: true, newHash: Result { () throws(Passcode.CryptError) in try Passcode.hash(new) })
        }
    }

    /// Back on the loop: a passcode libcrypt could not check is answered `Failed` and not
    /// counted; a wrong passcode is recorded in the throttle (persisted) and answered
    /// `WrongPasscode`; a right one does what the call asked, if it still applies: the session
    /// it was checked for may have ended (or another started) meanwhile. `done` runs once the
    /// outcome is on disk (or could not be written, or there was nothing to write).
    func finish(
        _ attempt: PasscodeAttempt, verdict: PasscodeVerdict, check: PasscodeCheck,
        session: GuidedSession.Identity?, done: @escaping () -> Void
    ) {
        if let failure = verdict.failure {
            logger.error(
                "Could not check a passcode",
                metadata: attempt.caller.metadata.merging(["error": "\(failure)"]) { $1 })
            self.attempt(attempt.call) { throw failure }
            done()
            return
        }
        if attempt.source == .kiosk {
            // The kiosk's outcome is the session machine's (docs/architecture.md § The session machine).
            return judgedAtKiosk(verdict.matches ? .right : .wrong, checkedFor: session, done: done)
        }
        // A wrong passcode counts whatever it was for; a right one ends the session it was
        // checked for: the machine's `judged`, as the kiosk's.
        guard verdict.matches, case .setPasscode = attempt.purpose else {
            change(attempt.call, .privileged, survivesStop: true, finally: done) { [unowned self] in
                var next = machine
                let effects = next.handle(
                    .judged(verdict.matches ? .right : .wrong, checkedFor: session, from: attempt.source),
                    at: clock.now())
                return try plan(
                    next, effects,
                    MachineStep(
                        requester: attempt.call, caller: attempt.caller, profileName: state.session.profileName,
                        wrongPasscode: check.wrongPasscode))
            }
            return
        }
        change(attempt.call, .privileged, survivesStop: true, finally: done) { [unowned self] in
            var next = state
            let wasSet = state.passcodeHash != nil
            next.setPasscode(hash: try verdict.newHash!.get(), from: attempt.source)
            return Plan(next) { [unowned self] in
                logger.notice(
                    "Passcode set", metadata: attempt.caller.metadata.merging(MessageID.passcodeSet.metadata) { $1 })
                try attempt.call.reply([])
                if !wasSet { emitPropertiesChanged([Member.passcodeSet]) }
            }
        }
    }
}
