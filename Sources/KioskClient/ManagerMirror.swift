import KioskAPI
import SystemPackage
import SystemdKit

/// kioskd's state as seen over one bus connection: the status, and the restriction states of
/// one tracked app, kept current from signals and from snapshots, with every change reported
/// once.
///
/// The order of steps is what makes "each change exactly once" hold:
/// 1. Subscribe first: the match rules are sent before any snapshot call. The bus driver
///    handles a connection's messages in order, so by the time kioskd sees a snapshot call, the
///    matches are in place and every later change reaches this connection as a signal.
/// 2. Read the snapshot (RegisterApplication, then ListRestrictions, then GetAll) when the
///    connection starts, whenever kioskd's name gets a new owner (a restart), and when asked.
/// 3. Apply replies and signals in the order they arrive, synchronously in their sd-bus
///    callbacks (never after a hop to another task), comparing each with the cached state: a
///    change seen both as a signal and in a snapshot is reported only the first time, and a
///    change made while kioskd was down shows up as a difference in the next snapshot.
///
/// It believes only kioskd (docs/client.md, "Believe only kioskd"): a manager signal counts only
/// when its sender is the unique name that owns kioskd's bus name, which the mirror follows
/// with `GetNameOwner` and then the bus driver's `NameOwnerChanged`. dbus-daemon delivers a
/// signal sent *to* this connection whatever its match rules say, so the rules' `sender=`
/// keeps out only broadcasts; the sender field, which the bus sets, is what cannot be forged.
///
/// Lives on its bus's loop thread, like the bus: create, use and release it there.
final class ManagerMirror {
    /// Which `RestrictionStateChanged` signals to follow.
    enum Restrictions {
        /// None until `track(app:registration:)`.
        case none
        /// Every app's, reported as they come (no snapshot, no comparison): for `kioskctl monitor`.
        case allApps
    }

    let bus: Bus
    private let scope: Restrictions
    /// The app whose restrictions are followed and compared, with what it declares.
    private(set) var app: String?
    private var registration: [RestrictionDeclaration]?

    /// The tracked app's restrictions in presentation order, as last seen.
    private(set) var restrictions: [RestrictionInfo] = []
    private(set) var states: [String: RestrictionState] = [:]
    private(set) var status: KioskStatus?
    /// Whether kioskd owns its name; nil until the first snapshot or owner change says.
    private(set) var daemonRunning: Bool?
    /// The unique name (`:1.42`) that owns kioskd's bus name, as the bus driver last said; nil
    /// while nobody owns it or before the driver answered. Only its signals are believed.
    private(set) var owner: String?

    /// Called for each change, in order, after the cached state was updated.
    var onEvent: (ManagerEvent) -> Void = { _ in }
    /// Called whenever the cached states or status change, reported or not (an initial
    /// snapshot is not a change), before `onEvent`.
    var onUpdate: () -> Void = {}

    private var slots: [BusSlot] = []
    /// The match on the tracked app's signals (also in `slots`).
    private var appSlot: BusSlot?
    private var generation = 0
    private var waiting: [(Result<Void, any Error>) -> Void] = []

    /// A mirror on `bus`, starting from what `previous` (an earlier connection's mirror) knew,
    /// so that a reconnect reports only what changed meanwhile.
    init(bus: Bus, restrictions scope: Restrictions, carrying previous: ManagerMirror? = nil) {
        self.bus = bus
        self.scope = scope
        if let previous {
            app = previous.app
            registration = previous.registration
            restrictions = previous.restrictions
            states = previous.states
            status = previous.status
        }
    }

    deinit { stop() }

    // MARK: subscribing

    /// Adds the match rules (the bus answers them asynchronously, in order before any later call).
    /// The corresponding C call is `sd_bus_add_match_async`.
    func start() throws(Errno) {
        try match(ManagerWire.disconnectedRule)
        try match(ManagerWire.ownerRule)
        try askOwner()  // after the owner match: every later change of owner comes as a signal
        try match(ManagerWire.propertiesRule)
        try match(ManagerWire.exitRequestedRule)
        try match(ManagerWire.timeLimitWarningRule)
        try match(ManagerWire.timeExtendedRule)
        try match(ManagerWire.idleResetRule)
        try match(ManagerWire.promptClosedRule)
        try match(ManagerWire.cleaningStartedRule)
        try match(ManagerWire.cleaningEndedRule)
        switch scope {
        case .allApps: try match(ManagerWire.restrictionRule(app: nil))
        case .none: if let app { appSlot = try match(ManagerWire.restrictionRule(app: app)) }
        }
    }

    /// Follows `app`'s restrictions from now on (a match on `arg0`), and registers them on
    /// every snapshot. Call `sync` next.
    func track(app newApp: String, registration declarations: [RestrictionDeclaration]?) throws(Errno) {
        registration = declarations
        guard app != newApp else { return }
        app = newApp
        restrictions = []
        states = [:]
        appSlot = try match(ManagerWire.restrictionRule(app: newApp))
    }

    /// Follows no app again: its first registration was refused, and the client may register
    /// another id.
    func untrack() {
        appSlot?.cancel()
        appSlot = nil
        app = nil
        registration = nil
        restrictions = []
        states = [:]
    }

    /// Removes the matches and fails whatever waits for a snapshot.
    func stop() {
        slots.forEach { $0.cancel() }
        slots.removeAll()
        generation += 1
        finishWaiting(.failure(KioskClientError(.busUnavailable, "The connection to kioskd was closed.")))
    }

    @discardableResult
    private func match(_ rule: String) throws(Errno) -> BusSlot {
        let slot = try bus.addMatch(rule: rule) { [weak self] message in
            guard let self, let signal = ManagerWire.signal(message), believes(signal, from: message.sender) else {
                return
            }
            handle(signal)
        }
        slots.append(slot)
        return slot
    }

    /// Asks the bus driver who owns kioskd's name. The driver answers in order with the
    /// `NameOwnerChanged` signals it sends this connection, so applying both in arrival order
    /// leaves `owner` current. The corresponding call is `org.freedesktop.DBus.GetNameOwner`.
    private func askOwner() throws(Errno) {
        let message = try bus.makeMethodCall(
            destination: ManagerWire.driver, path: ManagerWire.driverPath, interface: ManagerWire.driver,
            member: "GetNameOwner")
        try message.append([.string(KioskWire.busName)])
        try bus.callAsync(message) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let reply) where reply.sender == ManagerWire.driver:
                owner = (try? reply.readAll())?.first?.string.flatMap { $0.isEmpty ? nil : $0 }
            case .success:
                return
            case .failure:
                owner = nil  // NameHasNoOwner, or the connection is gone
            }
        }
    }

    /// Whether `signal` comes from whom it must: the manager's from the unique name that owns
    /// kioskd's name (none while nobody does), `NameOwnerChanged` from the bus driver,
    /// `Disconnected` from sd-bus itself. The bus sets every message's sender to the sending
    /// connection's unique name, or to `org.freedesktop.DBus` for the driver's own.
    private func believes(_ signal: ManagerWire.Signal, from sender: String?) -> Bool {
        guard let sender else { return false }
        switch signal {
        case .owner: return sender == ManagerWire.driver
        case .disconnected: return sender == ManagerWire.local
        case .restriction, .properties, .exitRequested, .timeLimitWarning, .timeExtended, .idleReset, .promptClosed,
            .cleaningStarted, .cleaningEnded:
            return sender == owner
        }
    }

    // MARK: signals

    private func handle(_ signal: ManagerWire.Signal) {
        switch signal {
        case .restriction(let signalApp, let id, let state):
            if scope == .allApps {
                return onEvent(.restrictionStateChanged(app: signalApp, restriction: id, state: state))
            }
            guard signalApp == app else { return }
            note(id, state)
        case .properties(let changed, let invalidated):
            guard var next = status, invalidated.isEmpty else { return refreshStatus() }
            do {
                try ManagerWire.merge(changed, into: &next)
                apply(next)
            } catch {
                refreshStatus()
            }
        case .exitRequested:
            onEvent(.exitRequested)
        case .timeLimitWarning(let seconds):
            onEvent(.timeLimitWarning(secondsLeft: seconds))
        case .timeExtended(let seconds, let left):
            onEvent(.timeExtended(secondsAdded: seconds, extensionsLeft: left))
        case .idleReset:
            onEvent(.idleReset)
        case .promptClosed(let reason):
            onEvent(.promptClosed(reason))
        case .cleaningStarted(let seconds):
            onEvent(.cleaningStarted(seconds: seconds))
        case .cleaningEnded:
            onEvent(.cleaningEnded)
        case .owner(let owner):
            self.owner = owner.isEmpty ? nil : owner
            if owner.isEmpty {
                noteRunning(false)
            } else {
                daemonRunning = true
                onEvent(.daemonStarted)
                sync()  // a (re)started kioskd: register again and read what it has
            }
        case .disconnected:
            // The slots stay until the owner drops this mirror (not from inside their callback).
            generation += 1
            finishWaiting(.failure(KioskClientError(.busUnavailable, "The bus connection was lost.")))
            onEvent(.disconnected)
        }
    }

    /// Records a restriction's state; reports it when it differs from a known one. A state
    /// for an id not seen in a snapshot yet is its initial state, not a change. Signals and
    /// snapshots both come through here, so a change seen by both is reported once.
    private func note(_ id: String, _ state: RestrictionState) {
        let before = states[id]
        guard before != state else { return }
        states[id] = state
        if let index = restrictions.firstIndex(where: { $0.id == id }) { restrictions[index].state = state }
        onUpdate()
        if before != nil, let app { onEvent(.restrictionStateChanged(app: app, restriction: id, state: state)) }
    }

    private func apply(_ next: KioskStatus) {
        guard next != status else { return }
        status = next
        onUpdate()
        onEvent(.statusChanged(next))
    }

    private func noteRunning(_ running: Bool) {
        guard daemonRunning != running else { return }
        daemonRunning = running
        if !running { onEvent(.daemonStopped) }
    }

    // MARK: snapshots

    /// Reads a snapshot (registering first when an app is tracked) and reports what differs;
    /// `completion` gets the first error, or success. A newer sync supersedes an older one,
    /// whose replies are then ignored and whose waiters get the newer result.
    func sync(_ completion: ((Result<Void, any Error>) -> Void)? = nil) {
        generation += 1
        if let completion { waiting.append(completion) }
        register(generation)
    }

    private func register(_ g: Int) {
        guard let app, let registration else { return list(g, error: nil) }
        call(KioskWire.Member.registerApplication, [.string(app), ManagerWire.declarations(registration)]) {
            [weak self] result in
            guard let self, g == generation else { return }
            switch result {
            case .success: list(g, error: nil)
            case .failure(let error) where Self.isNotRunning(error): finish(g, error)
            case .failure(let error): list(g, error: error)  // refused: still read what kioskd has
            }
        }
    }

    private func list(_ g: Int, error: (any Error)?) {
        guard let app else { return readStatus(g, error: error) }
        call(KioskWire.Member.listRestrictions, [.string(app)]) { [weak self] result in
            guard let self, g == generation else { return }
            switch result {
            case .success(let values):
                do {
                    applySnapshot(try ManagerWire.restrictions(fromList: values))
                    readStatus(g, error: error)
                } catch let decoding {
                    readStatus(g, error: error ?? decoding)
                }
            case .failure(let failure) where Self.isNotRunning(failure): finish(g, failure)
            case .failure(let failure): readStatus(g, error: error ?? failure)
            }
        }
    }

    private func readStatus(_ g: Int, error: (any Error)?) {
        getAll { [weak self] result in
            guard let self, g == generation else { return }
            switch result {
            case .success(let next): apply(next)
            case .failure(let failure): return finish(g, error ?? failure)
            }
            finish(g, error)
        }
    }

    /// Reads the properties again (after an invalidation, or a change this mirror cannot merge).
    private func refreshStatus() {
        getAll { [weak self] result in
            if case .success(let next) = result { self?.apply(next) }
        }
    }

    private func getAll(_ completion: @escaping (Result<KioskStatus, any Error>) -> Void) {
        call("GetAll", [.string(KioskWire.managerInterface)], interface: ManagerWire.properties) { result in
            completion(result.flatMap { values in Result { try ManagerWire.status(fromGetAll: values) } })
        }
    }

    private func applySnapshot(_ list: [RestrictionInfo]) {
        for info in list { note(info.id, info.state) }
        restrictions = list
        states = Dictionary(list.map { ($0.id, $0.state) }, uniquingKeysWith: { $1 })
        onUpdate()
    }

    private func finish(_ g: Int, _ error: (any Error)?) {
        guard g == generation else { return }
        if let error, Self.isNotRunning(error) { noteRunning(false) } else { daemonRunning = true }
        finishWaiting(error.map { .failure($0) } ?? .success(()))
    }

    private func finishWaiting(_ result: Result<Void, any Error>) {
        let waiters = waiting
        waiting = []
        for waiter in waiters { waiter(result) }
    }

    private static func isNotRunning(_ error: any Error) -> Bool {
        (error as? KioskClientError)?.code == .notRunning
    }

    // MARK: calls

    /// Calls a method of kioskd; `completion` runs on the loop, in reply order, with the reply's
    /// values or the mapped error. The corresponding C call is `sd_bus_call_async`. Completions
    /// hold the mirror weakly: a stream of `KioskManager.events()` that ends drops its mirror
    /// while the manager's bus stays open, and the reply to a call in flight still comes.
    private func call(
        _ member: String, _ arguments: [DBusValue], interface: String = KioskWire.managerInterface,
        _ completion: @escaping (Result<[DBusValue], any Error>) -> Void
    ) {
        do {
            let message = try bus.makeMethodCall(
                destination: KioskWire.busName, path: KioskWire.objectPath,
                interface: interface, member: member)
            try message.append(arguments)
            try bus.callAsync(message) { result in
                completion(result.flatMap { reply in Result { try reply.readAll() } }.mapError(ErrorMapping.map))
            }
        } catch {
            completion(.failure(ErrorMapping.map(error)))
        }
    }
}
