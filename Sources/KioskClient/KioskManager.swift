import KioskAPI
import Synchronization
import SystemPackage
import SystemdKit

/// A typed proxy of kioskd's `org.kioskd.GuidedAccess1.Manager`: one async method per D-Bus
/// method of the v1 API, the properties, and a stream of everything the manager announces.
/// `kioskctl` is built on it; apps use `GuidedAccessClient`.
///
/// Errors: kioskd's refusals are `KioskError`s with the daemon's own message (the code comes
/// from the D-Bus error name); not reaching kioskd is a `KioskClientError` (`.notRunning` when
/// nothing owns the name).
///
/// The connection runs on its own loop thread; every method may be called from any task.
public final class KioskManager: Sendable {
    public let target: BusTarget
    private let loop: EventLoop
    /// The connection; nil once closed. sd-bus reference counts are not atomic, so the last
    /// reference is dropped on the loop thread (see `close()`).
    private let connection: Mutex<Bus?>

    private init(target: BusTarget, loop: EventLoop, bus: Bus) {
        self.target = target
        self.loop = loop
        connection = Mutex(bus)
    }

    private var bus: Bus {
        get throws(KioskClientError) {
            guard let bus = connection.withLock({ $0 }) else {
                throw KioskClientError(.busUnavailable, "The connection to \(target) was closed.")
            }
            return bus
        }
    }

    /// Connects to the bus kioskd is on (kioskd itself need not run yet).
    public static func connect(to target: BusTarget = .system) throws(KioskClientError) -> KioskManager {
        do {
            let loop = try EventLoop()
            let bus = try target.open()
            try bus.attach(to: loop)
            try loop.startThread()  // the bus is used only on the loop thread from here on
            return KioskManager(target: target, loop: loop, bus: bus)
        } catch let error as KioskClientError {
            throw error
        } catch {
            throw KioskClientError(.busUnavailable, "Could not connect to \(target): \(Errno.reason(of: error)).")
        }
    }

    /// Closes the connection and stops its thread; later calls throw. Close it when no call is
    /// in flight (one may never complete). Releasing the manager closes it too.
    public func close() {
        // Move the reference out (one retain, no strong local), so that the loop thread drops it.
        let taken = connection.withLock { bus -> Unmanaged<Bus>? in
            defer { bus = nil }
            return bus.map { Unmanaged.passRetained($0) }
        }
        guard let taken else { return }
        let loop = loop  // not self: close() runs in deinit too
        loop.execute {
            taken.takeRetainedValue().close()
            loop.exit()
        }
    }

    deinit { close() }

    // MARK: methods

    /// `RegisterApplication`: declares `appID`'s restrictions in presentation order.
    public func registerApplication(_ appID: String, restrictions: [RestrictionDeclaration]) async throws {
        try await call(KioskWire.Member.registerApplication, [.string(appID), ManagerWire.declarations(restrictions)])
    }

    /// `ListApplications`: every registered app id.
    public func listApplications() async throws -> [String] {
        guard let ids = try await call(KioskWire.Member.listApplications).first?.strings else {
            throw KioskClientError.unexpected("ListApplications did not return as")
        }
        return ids
    }

    /// `UnregisterApplication` (admin): forgets an app, its id and every restriction with its state.
    public func unregisterApplication(_ appID: String) async throws {
        try await call(KioskWire.Member.unregisterApplication, [.string(appID)])
    }

    /// `ListRestrictions`: an app's restrictions in presentation order.
    public func listRestrictions(of appID: String) async throws -> [RestrictionInfo] {
        try ManagerWire.restrictions(fromList: try await call(KioskWire.Member.listRestrictions, [.string(appID)]))
    }

    /// `GetRestrictionState`.
    public func restrictionState(of restrictionID: String, in appID: String) async throws -> RestrictionState {
        guard
            let text = try await call(KioskWire.Member.getRestrictionState, [.string(appID), .string(restrictionID)])
                .first?.string
        else {
            throw KioskClientError.unexpected("GetRestrictionState did not return s")
        }
        return try ManagerWire.restrictionState(text)
    }

    /// `SetRestrictionState` (admin).
    public func setRestrictionState(_ state: RestrictionState, of restrictionID: String, in appID: String) async throws
    {
        try await call(
            KioskWire.Member.setRestrictionState, [.string(appID), .string(restrictionID), .string(state.rawValue)])
    }

    /// `StartSession` (admin): `profile` is a name in kioskd's profile directory.
    public func startSession(profile: String) async throws {
        try await call(KioskWire.Member.startSession, [.string(profile)])
    }

    /// `ExtendSession` (admin): moves the end of the session's time limit by `seconds` (negative
    /// shortens), from now when the session has expired.
    public func extendSession(bySeconds seconds: Int64) async throws {
        try await call(KioskWire.Member.extendSession, [.int64(seconds)])
    }

    /// `StartCleaning` (the polkit action `clean`): every touch, pointer and key at the kiosk is
    /// held for `seconds` (5 to 300) but what assistive technology needs, so that the screen can
    /// be wiped (docs/dbus-api.md § Cleaning the screen).
    public func startCleaning(seconds: UInt64) async throws {
        try await call(KioskWire.Member.startCleaning, [.uint64(seconds)])
    }

    /// `StopCleaning` (the polkit action `clean`): ends the cleaning now, if one runs.
    public func stopCleaning() async throws {
        try await call(KioskWire.Member.stopCleaning)
    }

    /// A region as `DrawRegions` answers it: one of the profile's own (`kept`, its index) or a
    /// drawn one; `numbers` a rect's x, y, width, height or an outline's x, y pairs.
    public struct DrawnRegion: Sendable, Equatable {
        public var kept: Int?
        public var name: String
        public var numbers: [Double]
    }

    /// `DrawRegions` (admin, `manage-session`): staff draw `profile`'s locked regions at the
    /// kiosk; returns when they press Done (docs/dbus-api.md § Drawing the regions), after
    /// `timeout` at most (kioskd itself gives up after 3 minutes without a touch).
    public func drawRegions(profile: String, timeout: Duration = .seconds(3600)) async throws -> [DrawnRegion] {
        let values = try await call(KioskWire.Member.drawRegions, [.string(profile)], timeout: timeout)
        guard let list = values.first?.array else { throw KioskClientError.unexpected("DrawRegions did not return a(isad)") }
        return try list.map { value in
            guard case .structure(let fields) = value, fields.count == 3, let kept = fields[0].int64,
                let name = fields[1].string, let numbers = fields[2].array?.compactMap(\.double),
                numbers.count == 4 || (numbers.count >= 6 && numbers.count % 2 == 0)
            else { throw KioskClientError.unexpected("DrawRegions returned a region that is not (isad)") }
            return DrawnRegion(kept: kept >= 0 ? Int(kept) : nil, name: name, numbers: numbers)
        }
    }

    /// `SetSessionDeadline` (admin): the time limit ends at `deadline` (wall clock); nil removes it.
    public func setSessionDeadline(_ deadline: Timestamp?) async throws {
        try await call(KioskWire.Member.setSessionDeadline, [.uint64(UInt64(max(0, deadline?.microseconds ?? 0)))])
    }

    /// `ReloadProfiles` (admin): the active session takes its edited profile file; throws with
    /// the reason when the file does not load (the last good profile stays in force).
    public func reloadProfiles() async throws {
        try await call(KioskWire.Member.reloadProfiles)
    }

    /// One installed profile, as `ListProfiles` describes it.
    public struct ProfileInfo: Hashable, Sendable {
        public var name: String
        public var description: String
        /// It parses, and a passcode hash it holds is in a private file: it can start a session.
        public var checks: Bool
        public var holdsHash: Bool
    }

    /// `ListProfiles` (admin, as StartSession).
    public func listProfiles() async throws -> [ProfileInfo] {
        let reply = try await call(KioskWire.Member.listProfiles)
        guard let entries = reply.first?.array else {
            throw KioskClientError.unexpected("ListProfiles replied \(reply)")
        }
        return try entries.map { entry in
            guard let f = entry.fields, f.count == 4, let name = f[0].string, let description = f[1].string,
                let checks = f[2].bool, let holdsHash = f[3].bool
            else { throw KioskClientError.unexpected("ListProfiles replied \(entry)") }
            return ProfileInfo(name: name, description: description, checks: checks, holdsHash: holdsHash)
        }
    }

    /// `StartTrialSession` (admin): a session that ends by itself after `seconds` unless
    /// confirmed (``confirmSession()``), and at a reboot.
    public func startTrialSession(profile: String, seconds: UInt64) async throws {
        try await call(KioskWire.Member.startTrialSession, [.string(profile), .uint64(seconds)])
    }

    /// `RequestSession` (exam mode): the app `appID`, registered by this uid, locks the kiosk to
    /// itself with `profile`, a profile made for it that allows it (`app-may-request`).
    public func requestSession(appID: String, profile: String) async throws {
        try await call(KioskWire.Member.requestSession, [.string(appID), .string(profile)])
    }

    /// `ReleaseSession`: the app that requested the active session ends it.
    public func releaseSession(appID: String) async throws {
        try await call(KioskWire.Member.releaseSession, [.string(appID)])
    }

    /// `Wake` (admin, `display-power`): the display kioskd holds dark (`[idle]`) is wanted on.
    public func wake() async throws {
        try await call(KioskWire.Member.wake)
    }

    /// `Blank` (admin, `display-power`): the display went dark by other means; the next key or
    /// touch only wakes it.
    public func blank() async throws {
        try await call(KioskWire.Member.blank)
    }

    /// `ConfirmSession` (admin): the trial session stays.
    public func confirmSession() async throws {
        try await call(KioskWire.Member.confirmSession)
    }

    /// `EndSession`: anyone who knows the passcode (wrong attempts are throttled).
    public func endSession(passcode: String) async throws {
        try await call(KioskWire.Member.endSession, [.string(passcode)])
    }

    /// `ForceEndSession` (admin): ends the session without the passcode; kioskd journals it.
    public func forceEndSession() async throws {
        try await call(KioskWire.Member.forceEndSession)
    }

    /// `ResetPasscodeThrottle` (admin): clears the wrong-passcode count of `source` — `"kiosk"`,
    /// `"uid N"` — or of every source (`"all"`).
    public func resetPasscodeThrottle(source: String) async throws {
        try await call(KioskWire.Member.resetPasscodeThrottle, [.string(source)])
    }

    /// `SetPasscode` (admin). `current` is ignored while no passcode is set.
    public func setPasscode(current: String, new: String) async throws {
        try await call(KioskWire.Member.setPasscode, [.string(current), .string(new)])
    }

    // MARK: properties and events

    /// The properties, read with one `GetAll` (properties this client does not know are ignored).
    public func status() async throws -> KioskStatus {
        try ManagerWire.status(
            fromGetAll: try await call(
                "GetAll", [.string(KioskWire.managerInterface)],
                interface: ManagerWire.properties))
    }

    /// `PromptPad`: the PIN pad's keys, where kioskd reads touches while its prompt is open
    /// (the same on every kiosk, so one read is enough while kioskd runs).
    public func promptPad() async throws -> [KioskPrompt.Key] {
        try ManagerWire.promptPad(try await property(KioskWire.Member.promptPad))
    }

    /// `DrawingBar`: the drawing's buttons and where kioskd reads their taps (a constant of
    /// the daemon, read once).
    public func drawingBar() async throws -> [KioskDrawing.Button] {
        try ManagerWire.drawingBar(try await property(KioskWire.Member.drawingBar))
    }

    /// One property of the manager (`Get`).
    private func property(_ name: String) async throws -> DBusValue {
        let values = try await call(
            "Get", [.string(KioskWire.managerInterface), .string(name)], interface: ManagerWire.properties)
        guard let value = values.first else { throw KioskClientError.unexpected("Get did not return v") }
        return value
    }

    /// Everything the manager announces from now on: every app's restriction changes, status
    /// changes, `ExitRequested`, `TimeLimitWarning`, `TimeExtended`, `PromptClosed`, kioskd
    /// stopping and starting.
    ///
    /// Returns once subscribed. The stream starts with the current status (`.statusChanged`),
    /// or `.daemonStopped` when kioskd is not running; after a restart it reports the status
    /// again if it differs. It ends after `.disconnected`, or when the consumer stops.
    public func events() async -> AsyncStream<ManagerEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ManagerEvent.self)
        guard let bus = try? bus else {
            continuation.yield(.disconnected)
            continuation.finish()
            return stream
        }
        let holder = MirrorHolder()
        let loop = loop
        await withCheckedContinuation { (subscribed: CheckedContinuation<Void, Never>) in
            loop.execute {
                let mirror = ManagerMirror(bus: bus, restrictions: .allApps)
                mirror.onEvent = { event in
                    continuation.yield(event)
                    if event == .disconnected { continuation.finish() }
                }
                holder.mirror = mirror
                do {
                    try mirror.start()
                    mirror.sync { _ in subscribed.resume() }
                } catch {
                    continuation.yield(.disconnected)
                    continuation.finish()
                    subscribed.resume()
                }
            }
        }
        continuation.onTermination = { [self] _ in
            // The stream keeps its manager (and so the loop) alive; the matches are released
            // on the loop thread.
            withExtendedLifetime(self) { loop.execute { holder.mirror = nil } }
        }
        return stream
    }

    // MARK: calls

    @discardableResult
    private func call(
        _ member: String, _ arguments: [DBusValue] = [],
        interface: String = KioskWire.managerInterface, timeout: Duration? = nil
    ) async throws -> [DBusValue] {
        let bus = try bus
        do {
            return try await bus.call(
                destination: KioskWire.busName, path: KioskWire.objectPath, interface: interface,
                member: member, arguments: arguments, timeout: timeout)
        } catch {
            let mapped = ErrorMapping.map(error)
            // sd-bus fails the calls of a connection that closed with NoReply, like a daemon
            // that died: tell them apart (an SSH transport that could not connect, for one).
            if (mapped as? KioskClientError)?.code == .noReply, await isOpen(bus) == false {
                throw KioskClientError(.busUnavailable, "The connection to \(target) closed.")
            }
            throw mapped
        }
    }

    private func isOpen(_ bus: Bus) async -> Bool? {
        try? await loop.perform { bus.isOpen }
    }
}

/// Keeps a mirror alive for a stream; touched only on the loop thread.
private final class MirrorHolder: @unchecked Sendable {
    var mirror: ManagerMirror?
}
