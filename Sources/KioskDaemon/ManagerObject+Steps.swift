import KioskCore
import KioskStore
import Logging
import SystemPackage
import SystemdKit

extension ManagerObject {
    // MARK: Steps shared by the methods

    /// Looks the caller's uid up with the bus driver (without blocking), then runs `next`;
    /// whatever `next` throws becomes the call's error reply.
    func identify(_ call: MethodCall, then next: @escaping (Caller) throws -> Void) throws {
        guard let sender = call.sender else { throw KioskError(.accessDenied, "The call has no sender.") }
        // Every call that may change the state comes through here: it is underway until answered.
        changesUnderway += 1
        call.whenAnswered { [weak self] in self?.changesUnderway -= 1 }
        try identifier.unixUser(ofName: sender) { [unowned self] result in
            attempt(call) {
                guard case .success(let uid) = result else {
                    throw KioskError(.accessDenied, "Could not find the uid of \(sender).")
                }
                try next(Caller(busName: sender, uid: uid))
            }
        }
    }

    /// Root is always allowed; anyone else needs polkit's `allowed` for `action`; with no
    /// polkit on the bus, only root. With `when: false` nothing is asked.
    func authorize(
        _ call: MethodCall, caller: Caller, action: String, when needed: Bool = true,
        doing what: String, then next: @escaping () throws -> Void
    ) throws {
        if !needed || caller.uid == 0 {
            try next()
            return
        }
        try authorizer.authorize(action: action, busName: caller.busName) { [unowned self] result in
            attempt(call) {
                switch result {
                case .success(.allowed):
                    try next()
                case .success(.unavailable):
                    throw KioskError(
                        .accessDenied, "uid \(caller.uid) may not \(what): polkit is not running, so only root may.")
                case .success(.denied), .success(.challenge):
                    throw KioskError(.accessDenied, "uid \(caller.uid) may not \(what) (polkit action \(action)).")
                case .failure(let error):
                    logger.warning(
                        "polkit check failed",
                        metadata: caller.metadata.merging(["error": "\(Errno.reason(of: error))"]) { $1 })
                    throw KioskError(.accessDenied, "uid \(caller.uid) may not \(what): polkit could not be asked.")
                }
            }
        }
    }

    /// What a change writes once its turn comes, and what follows once it is on disk.
    struct Plan {
        var state: KioskState
        /// The active profile to take together with `state` (the enforcer sees both at once).
        var profile: ProfileChange
        /// Log, emit and reply; what it throws is the call's error reply.
        var then: () throws -> Void
        /// A save that fails still makes `state` the state (logged), and `then` runs: for a change
        /// that only tightens, like a wrong passcode counted by the throttle (fail closed: a disk
        /// that refuses writes must not give unlimited guesses). The next save persists it.
        var keepIfSaveFails: Bool

        init(
            _ state: KioskState, profile: ProfileChange = .unchanged, keepIfSaveFails: Bool = false,
            then: @escaping () throws -> Void
        ) {
            self.state = state
            self.profile = profile
            self.keepIfSaveFails = keepIfSaveFails
            self.then = then
        }
    }

    /// Queues a change of the state for `call`. When its turn comes (every earlier change is on
    /// disk or failed), `compute` makes the next state from `state`, or answers `call` itself and
    /// returns nil. The plan's state is saved off the loop; then it becomes `state` and the plan's
    /// `then` runs: a reply or a signal never promises what is not on disk. A save that fails
    /// changes nothing and answers `call` with the error. `finally` runs after all of that, on
    /// every path.
    func change(_ call: MethodCall, finally: (() -> Void)? = nil, _ compute: @escaping () throws -> Plan?) {
        writer.submit(
            { [unowned self] in
                let plan: Plan?
                do {
                    plan = try compute()
                } catch {
                    try? call.replyError(Self.busError(error))
                    plan = nil
                }
                guard let plan else {
                    finally?()
                    return nil
                }
                return StateWriter.Write(
                    state: plan.state,
                    durable: { [unowned self] in
                        commit(plan.state, profile: plan.profile)
                        attempt(call, plan.then)
                        finally?()
                    },
                    failed: { [unowned self] error in
                        logger.error(
                            "Could not save the state",
                            metadata: ["store.path": "\(store.path)", "error": "\(Errno.reason(of: error))"])
                        if plan.keepIfSaveFails {
                            commit(plan.state, profile: plan.profile)
                            attempt(call, plan.then)
                        } else {
                            try? call.replyError(Self.busError(error))
                        }
                        finally?()
                    })
            },
            dropped: { refusal in
                switch refusal {
                case .stopping:
                    try? call.replyError(
                        BusError(name: BusError.failed, message: "kioskd is stopping; the change was not made."))
                case .full(let waiting):
                    try? call.replyError(
                        BusError(
                            name: BusError.failed,
                            message: "\(waiting) changes are already waiting to be saved; the change was not made."))
                }
                finally?()
            })
    }

    /// Stops taking changes (those waiting are answered with an error), lets the save in flight
    /// finish and its reply go out, then runs `then`; at most `stopTimeout` later.
    public func stop(then: @escaping () -> Void) {
        writer.stop(within: Self.stopTimeout, then: then)
    }

    func attempt(_ call: MethodCall, _ step: () throws -> Void) {
        do {
            try step()
        } catch {
            try? call.replyError(Self.busError(error))
        }
    }

    static func busError(_ error: any Error) -> BusError {
        switch error {
        case let error as KioskError: BusError(name: error.code.dbusName, message: error.message)
        case let error as BusError: error
        case let error as StoreError:
            BusError(name: BusError.failed, message: "The change was not made: \(error.message)")
        default: BusError(name: BusError.failed, message: Errno.reason(of: error))
        }
    }

    func emitRestrictionChanged(_ changes: [GuidedSession.Change]) {
        for change in changes {
            emit(
                Member.restrictionStateChanged,
                [.string(change.app.rawValue), .string(change.restriction.rawValue), .string(change.state.rawValue)])
        }
    }

    func emitSessionChanged() {
        do {
            try bus.emitPropertiesChanged(
                path: KioskWire.objectPath, interface: KioskWire.managerInterface,
                properties: [
                    Member.sessionState, Member.activeProfile, Member.sessionDeadline,
                    Member.sessionProblem,
                ])
        } catch {
            logger.error("Could not emit PropertiesChanged", metadata: ["error": "\(Errno.reason(of: error))"])
        }
    }

    func emit(_ member: String, _ arguments: [DBusValue]) {
        do {
            try bus.emitSignal(
                path: KioskWire.objectPath, interface: KioskWire.managerInterface, member: member, arguments: arguments)
        } catch {
            logger.error(
                "Could not emit a signal", metadata: ["signal": "\(member)", "error": "\(Errno.reason(of: error))"])
        }
    }
}
