import BusTestSupport
import Foundation
import KioskCore
import KioskDaemon
import KioskTestSupport
import Logging
import Synchronization
import SystemdKit

/// `ManagerObject` in the test's own process, on a loop thread of its own, served on a private
/// bus (a dbus-daemon, no kioskd) with the fakes: a `MemoryStore`, a `ScriptedAuthorizer` and a
/// `FixedIdentity`, all noting their steps in one `CallJournal`. Signals the manager emits are
/// noted there too (`signal <member>`), by a listener on a loop of its own.
public final class InProcessManager: @unchecked Sendable {  // `manager` is touched only on `loop`
    public let bus: PrivateBus
    public let journal = CallJournal()
    /// The values `PropertiesChanged` carried for the properties a test watches.
    public let changedProperties = PropertyWatch()
    public let store: MemoryStore
    public let authorizer: ScriptedAuthorizer
    public let identity: FixedIdentity
    public let clock = ManualClock()
    /// Holds the profiles StartSession reads.
    public let profileDirectory: URL
    private let loop: EventLoop
    private let listenerLoop: EventLoop
    private var server: Bus?
    private var manager: ManagerObject?
    private var listener: Bus?
    private var slot: BusSlot?

    /// `uid` is every caller's uid; `authorize` what polkit answers; `enforcer` sees the state and
    /// profile from the restore on, as kioskd's input enforcement does; `logsToJournal` notes
    /// each line the manager logs in ``journal`` (`log <message>`); with `browsers`, the manager
    /// writes the browsers' policy there (temporary directories, never the machine's /etc); with
    /// `appsDirectory`, it reads the web apps' manifests there.
    public init(
        uid: UInt32 = 1000, authorize answer: ScriptedAuthorizer.Answer = .result(.allowed),
        state: KioskState = KioskState(), profiles: [String: String] = [:],
        enforcer: (any SessionEnforcer & Sendable)? = nil, logsToJournal: Bool = false,
        browsers: BrowserPolicyPaths? = nil, appsDirectory: String? = nil
    ) async throws {
        bus = try PrivateBus()
        store = MemoryStore(journal: journal)
        authorizer = ScriptedAuthorizer(answer, journal: journal)
        identity = FixedIdentity(uid: uid, journal: journal)
        profileDirectory = bus.directory.appendingPathComponent("profiles")
        try FileManager.default.createDirectory(at: profileDirectory, withIntermediateDirectories: true)
        for (name, text) in profiles {
            let url = profileDirectory.appendingPathComponent(name + ".toml")
            try Data(text.utf8).write(to: url)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        }
        loop = try EventLoop()
        try loop.startThread()
        listenerLoop = try EventLoop()
        try listenerLoop.startThread()
        try await loop.perform { [self] in
            let server = try Bus.open(address: bus.address)
            try server.attach(to: loop)
            let manager = ManagerObject(
                bus: server, loop: loop, store: store, state: state,
                profileDirectory: profileDirectory.path, clock: clock,
                logger: Logger(label: "test") { [journal] _ in
                    logsToJournal ? JournalLogHandler(journal: journal) as any LogHandler : SwiftLogNoOpLogHandler()
                },
                authorizer: authorizer, identifier: identity)
            manager.enforcer = enforcer
            if let browsers { manager.governBrowsers(browsers) }
            try manager.export()
            manager.restoreSession()
            if let appsDirectory { manager.governWebApps(directory: appsDirectory) }
            try server.requestName(KioskWire.busName)
            self.server = server
            self.manager = manager
        }
        try await listenerLoop.perform { [self] in
            let listener = try Bus.open(address: bus.address)
            try listener.attach(to: listenerLoop)
            slot = try listener.addMatch(rule: "type='signal',sender='\(KioskWire.busName)'") { [journal, changedProperties] message in
                // PromptClosed is noted with its reason: `signal PromptClosed rejected`.
                var entry = "signal \(message.member ?? "")"
                if message.member == KioskWire.Member.promptClosed, let reason = try? message.readAll().first?.string {
                    entry += " \(reason)"
                }
                // TimeLimitWarning with the seconds left: `signal TimeLimitWarning 299`.
                if message.member == KioskWire.Member.timeLimitWarning, let left = try? message.readAll().first?.uint64
                {
                    entry += " \(left)"
                }
                // TimeExtended with its arguments: `signal TimeExtended 120 9`.
                if message.member == KioskWire.Member.timeExtended, let values = try? message.readAll(),
                    values.count == 2, let added = values[0].uint64, let left = values[1].uint64
                {
                    entry += " \(added) \(left)"
                }
                // CleaningStarted with its seconds: `signal CleaningStarted 30`.
                if message.member == KioskWire.Member.cleaningStarted,
                    let seconds = try? message.readAll().first?.uint64
                {
                    entry += " \(seconds)"
                }
                journal.note(entry)
                if message.member == "PropertiesChanged", let values = try? message.readAll(), values.count == 3,
                    let changed = values[1].dictionary
                {
                    changedProperties.note(changed)
                }
            }
            self.listener = listener
        }
        // A round trip from the listener orders its match before any signal.
        _ = try await listener?.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", member: "GetId")
    }

    /// Runs `body` with the manager on its loop (what the input broker's callbacks do).
    public func onLoop(_ body: @escaping @Sendable (ManagerObject) -> Void) async throws {
        try await loop.perform { [self] in
            if let manager { body(manager) }
        }
    }

    /// Returns once every signal the manager sent before this call is in the journal: the sentinel
    /// a test waits on before it says a signal was *not* sent. A round trip from the listener to
    /// the manager (`Peer.Ping`, answered on the manager's loop after whatever it was handling):
    /// the bus hands the listener the manager's messages in the order they were sent, and the
    /// listener handles them in that order, so the signals sent before the reply are noted first.
    public func signalsSent() async throws {
        _ = try await listener?.call(
            destination: KioskWire.busName, path: KioskWire.objectPath, interface: "org.freedesktop.DBus.Peer",
            member: "Ping")
    }

    /// Stops the manager, closes the connections and the bus. The manager is released only once
    /// its loop thread has ended: a save, a passcode hash or a profile read it offloaded may still
    /// be on its way back to the loop, and would find the manager gone (its completions hold it
    /// `unowned`, as kioskd, which keeps its manager until the loop has returned, may).
    public func stop() async {
        _ = try? await listenerLoop.perform { [self] in
            slot = nil
            listener?.close()
            listener = nil
        }
        listenerLoop.exit()
        _ = try? await loop.perform { [self] in
            server?.close()  // no call arrives any more
        }
        loop.exit()
        for _ in 0..<10_000 where loop.isRunning {
            try? await Task.sleep(for: .milliseconds(1))
        }
        // Nothing runs the loop now: its sources and the bus may be released on this thread. A
        // loop still running after 10 s keeps them (leaked rather than freed under it).
        if !loop.isRunning {
            manager = nil
            server = nil
        }
        bus.stop()
    }
}

/// Each `PropertiesChanged` the manager sent, as `name=value` of the changed properties a test
/// watches (``watch(_:)``), sorted by name; a signal with none of them is not noted.
public final class PropertyWatch: Sendable {
    private let names = Mutex<Set<String>>([])
    private let journal = CallJournal()

    public func watch(_ properties: Set<String>) { names.withLock { $0 = properties } }
    public var all: [String] { journal.all }
    public func removeAll() { journal.removeAll() }
    public func waitFor(_ entry: String, timeout: Duration = .seconds(10)) -> Bool {
        journal.waitFor(entry, timeout: timeout)
    }

    func note(_ changed: [String: DBusValue]) {
        let watched = names.withLock { $0 }
        let seen = changed.filter { watched.contains($0.key) }.sorted { $0.key < $1.key }
        if !seen.isEmpty { journal.note(seen.map { "\($0.key)=\($0.value)" }.joined(separator: " ")) }
    }
}
