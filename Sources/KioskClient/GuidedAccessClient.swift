import KioskAPI
import Synchronization
import SystemPackage
import SystemdKit

/// An app's connection to kioskd: declare restrictions, read their states at any time, and
/// hear when they or the session change — through a delegate (`GuidedAccessRestrictionDelegate`)
/// or `AsyncSequence`s.
///
/// ```swift
/// let client = try await GuidedAccessClient.connect()
/// try await client.register(appID: "org.example.MuseumMap", delegate: mapDelegate)
/// if client.state(for: "org.example.MuseumMap.controls") == .deny { hideControls() }
/// for await state in client.sessionStates() { print("session", state) }
/// ```
///
/// It survives kioskd restarts and bus reconnects by itself: on every (re)connect it subscribes
/// first, registers again, then reads a snapshot, so a change made while it was away reaches the
/// app once, and a change that races with the snapshot is not reported twice (see
/// `ManagerMirror`). States read while kioskd is away are the last ones it reported.
///
/// The bus lives on the client's own loop thread, which is also this actor's executor.
public actor GuidedAccessClient {
    public nonisolated let target: BusTarget
    private nonisolated let loop: EventLoop
    private nonisolated let shared = Mutex(Shared())

    private var mirror: ManagerMirror?
    private var reconnectTimer: EventSource?
    private var reconnectDelay = GuidedAccessClient.firstReconnectDelay
    private var delegate: (any GuidedAccessRestrictionDelegate)?
    /// What the app declared, sent again on every reconnect.
    private var registration: [RestrictionDeclaration]?
    private var closed = false

    static let firstReconnectDelay = Duration.milliseconds(100)
    static let maxReconnectDelay = Duration.seconds(5)

    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    private init(target: BusTarget, loop: EventLoop) {
        self.target = target
        self.loop = loop
    }

    /// Connects to the bus kioskd is on. kioskd need not run yet: the client registers when
    /// it appears. Throws `KioskClientError.busUnavailable` when the bus cannot be reached.
    public static func connect(to target: BusTarget = .system) async throws -> GuidedAccessClient {
        let loop: EventLoop
        do {
            loop = try EventLoop()
            try loop.startThread()
        } catch {
            throw KioskClientError(
                .busUnavailable, "Could not start the client's loop thread: \(Errno.reason(of: error)).")
        }
        let client = GuidedAccessClient(target: target, loop: loop)
        do {
            try await client.open()
        } catch {
            await client.close()
            throw error
        }
        return client
    }

    // MARK: registering

    /// Declares the app's restrictions, in presentation order, and reads their states. The
    /// registration stands for the client's life: it is sent again on every reconnect.
    ///
    /// Throws `KioskError` when kioskd refuses it (the message says why), and
    /// `KioskClientError.notRunning` when kioskd is not running — the client then registers
    /// as soon as kioskd starts.
    public func register(appID: String, restrictions: [RestrictionDeclaration]) async throws {
        let app = try AppID(appID).rawValue
        guard !closed else { throw KioskClientError(.busUnavailable, "The client was closed.") }
        if let current = mirror?.app ?? shared.withLock({ $0.app }), current != app {
            throw KioskError(.invalidArgument, "This client registered \(current); use another client for \(app).")
        }
        shared.withLock { $0.app = app }
        let previous = registration
        registration = restrictions
        guard let mirror else {
            throw KioskClientError(
                .busUnavailable, "The bus connection is being re-established; the registration is sent then.")
        }
        do {
            try mirror.track(app: app, registration: restrictions)
        } catch {
            throw KioskClientError(
                .busUnavailable, "Could not subscribe to \(app)'s changes: \(Errno.reason(of: error)).")
        }
        do {
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                mirror.sync { done.resume(with: $0) }
            }
        } catch let refusal as KioskError {
            // kioskd refused these declarations: reconnects send the last accepted ones, not these;
            // a refused first registration leaves no app, so another id may be registered.
            registration = previous
            if previous == nil {
                shared.withLock { $0.app = nil }
                mirror.untrack()
            } else {
                try? mirror.track(app: app, registration: previous)
            }
            throw refusal
        }
    }

    /// Declares the restrictions `delegate` names (with its titles and detail texts) and tells
    /// it of every later change. The client keeps the delegate for its life.
    public func register(appID: String, delegate: some GuidedAccessRestrictionDelegate) async throws {
        var declarations: [RestrictionDeclaration] = []
        for id in delegate.guidedAccessRestrictionIdentifiers ?? [] {
            declarations.append(
                try RestrictionDeclaration(
                    id: id,
                    title: delegate.textForGuidedAccessRestriction(withIdentifier: id) ?? id,
                    detail: delegate.detailTextForGuidedAccessRestriction(withIdentifier: id) ?? ""))
        }
        let previous = self.delegate
        self.delegate = delegate  // before the snapshot, so that no change after it is missed
        do {
            try await register(appID: appID, restrictions: declarations)
        } catch let refusal as KioskError {
            self.delegate = previous  // kioskd refused: the client stays as it was
            throw refusal
        }
    }

    // MARK: reading

    /// The state of one of the app's restrictions, as kioskd last reported it; nil for an id
    /// kioskd has not reported (not declared, or before the first registration finished).
    public nonisolated func state(for restrictionID: String) -> RestrictionState? {
        shared.withLock { $0.states[restrictionID] }
    }

    /// The app's restrictions in presentation order, with their states.
    public nonisolated var restrictions: [RestrictionInfo] { shared.withLock { $0.restrictions } }

    /// The session and daemon status as last reported; nil before kioskd was reached.
    public nonisolated var status: KioskStatus? { shared.withLock { $0.status } }

    /// Whether a session is active for this app (its profile names the app this client
    /// registered): an exam app tells its own session from another one (`ActiveApp`).
    public nonisolated var sessionIsForThisApp: Bool {
        shared.withLock { shared in
            guard let app = shared.app, let status = shared.status else { return false }
            return status.sessionState != .inactive && status.activeApp == app
        }
    }

    /// Each change of one of the app's restrictions, once, in order.
    public nonisolated func restrictionChanges() -> AsyncStream<RestrictionChange> {
        subscribe { .restriction($0) }
    }

    /// The session's state: the current one first (when known), then each change.
    public nonisolated func sessionStates() -> AsyncStream<SessionState> {
        subscribe(
            { .session($0) },
            initial: { shared, id, continuation in
                guard let state = shared.status?.sessionState else { return }
                shared.lastSessionState[id] = state
                continuation.yield(state)
            })
    }

    /// Everything the client hears: the app's restriction changes, status changes,
    /// `ExitRequested` (kioskd opens its passcode prompt), `TimeLimitWarning`, `TimeExtended` (the
    /// person at the kiosk took the offer of more time), `IdleReset`, `PromptClosed`, kioskd stopping and
    /// starting, and `.disconnected` when the bus connection drops (the client reconnects).
    public nonisolated func events() -> AsyncStream<ManagerEvent> {
        subscribe { .event($0) }
    }

    /// Disconnects for good: the streams end; later calls throw. The loop thread stops when the
    /// client is released.
    public func close() {
        closed = true
        reconnectTimer = nil
        mirror?.stop()
        mirror = nil
        let subscribers = shared.withLock { shared in
            defer { shared.subscribers.removeAll() }
            return shared.subscribers.values
        }
        subscribers.forEach { $0.finish() }
    }

    isolated deinit {
        mirror?.stop()
        mirror = nil
        reconnectTimer = nil
        loop.exit()
    }

    // MARK: the connection

    private func open() throws {
        let bus = try target.open()
        do {
            try bus.attach(to: loop)
        } catch {
            throw KioskClientError(.busUnavailable, "Could not attach to \(target): \(Errno.reason(of: error)).")
        }
        let next = ManagerMirror(bus: bus, restrictions: .none, carrying: mirror)
        // The mirror calls back on the loop thread, which is this actor's executor: the callbacks
        // enter the actor with `assumeIsolated`. They hold the client weakly rather than as an
        // `[unowned self]` capture of the isolated actor, which Swift 6.2's compiler crashes on
        // (docs/packaging.md § Toolchains); the mirror is stopped before the client goes away
        // (`close()`, `deinit`), so neither finds it gone.
        next.onUpdate = { [weak self] in self?.assumeIsolated { $0.publish() } }
        next.onEvent = { [weak self] event in self?.assumeIsolated { $0.deliver(event) } }
        do {
            try next.start()
            if let app = shared.withLock({ $0.app }), let registration {
                try next.track(app: app, registration: registration)
            }
        } catch {
            throw KioskClientError(.busUnavailable, "Could not subscribe on \(target): \(Errno.reason(of: error)).")
        }
        mirror = next
        next.sync()
    }

    private func scheduleReconnect() {
        guard !closed, reconnectTimer == nil else { return }
        reconnectTimer = try? loop.addTimer(after: reconnectDelay, accuracy: .milliseconds(10)) { [weak self] in
            self?.assumeIsolated { $0.reconnect() }  // on the loop thread, as in `open()`
        }
    }

    private func reconnect() {
        reconnectTimer = nil
        guard !closed else { return }
        do {
            try open()  // carries the old mirror's states over, then drops it (not inside its own callback)
            reconnectDelay = Self.firstReconnectDelay
        } catch {
            reconnectDelay = min(reconnectDelay * 2, Self.maxReconnectDelay)
            scheduleReconnect()
        }
    }

    // MARK: delivering

    /// Makes the mirror's current states readable from any thread (`state(for:)`).
    private func publish() {
        guard let mirror else { return }
        shared.withLock { shared in
            shared.states = mirror.states
            shared.restrictions = mirror.restrictions
            shared.status = mirror.status
        }
    }

    /// Tells the delegate, then the streams (the new state is already published). Runs on the
    /// loop thread inside the mirror's callback, so changes go out in the order they came.
    private func deliver(_ event: ManagerEvent) {
        if case .restrictionStateChanged(_, let id, let state) = event {
            delegate?.guidedAccessRestriction(withIdentifier: id, didChange: state)
        }
        if event == .idleReset { delegate?.guidedAccessIdleReset() }
        shared.withLock { shared in
            // Yield under the lock, so a stream that subscribes meanwhile gets its first
            // element before any later one.
            for (key, subscriber) in shared.subscribers.sorted(by: { $0.key < $1.key }) {
                switch (subscriber, event) {
                case (.restriction(let c), .restrictionStateChanged(_, let id, let state)):
                    c.yield(RestrictionChange(id: id, state: state))
                case (.session(let c), .statusChanged(let status))
                where shared.lastSessionState[key] != status.sessionState:
                    shared.lastSessionState[key] = status.sessionState
                    c.yield(status.sessionState)
                case (.event(let c), _):
                    c.yield(event)
                default:
                    break
                }
            }
        }
        if event == .disconnected { scheduleReconnect() }
    }

    private nonisolated func subscribe<Element: Sendable>(
        _ wrap: (AsyncStream<Element>.Continuation) -> Subscriber,
        initial: (inout Shared, Int, AsyncStream<Element>.Continuation) -> Void = { _, _, _ in }
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        let id = shared.withLock { shared in
            shared.nextID += 1
            shared.subscribers[shared.nextID] = wrap(continuation)
            initial(&shared, shared.nextID, continuation)
            return shared.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.shared.withLock { shared in
                shared.subscribers[id] = nil
                shared.lastSessionState[id] = nil
            }
        }
        return stream
    }
}

/// A consumer of one of the client's streams.
enum Subscriber: Sendable {
    case restriction(AsyncStream<RestrictionChange>.Continuation)
    case session(AsyncStream<SessionState>.Continuation)
    case event(AsyncStream<ManagerEvent>.Continuation)

    func finish() {
        switch self {
        case .restriction(let c): c.finish()
        case .session(let c): c.finish()
        case .event(let c): c.finish()
        }
    }
}

/// What every thread may read: the published states and the subscribers.
struct Shared: Sendable {
    var app: String?
    var states: [String: RestrictionState] = [:]
    var restrictions: [RestrictionInfo] = []
    var status: KioskStatus?
    var nextID = 0
    var subscribers: [Int: Subscriber] = [:]
    /// The session state each `sessionStates()` stream last got.
    var lastSessionState: [Int: SessionState] = [:]
}
