import SystemPackage

/// A D-Bus connection (`sd_bus`).
///
/// Use it on its loop thread once attached (sd-bus is not thread-safe); the `async` calls may be
/// awaited from anywhere and hop to the loop themselves.
public final class Bus: @unchecked Sendable {
    let handle: OpaquePointer
    /// The loop this bus is attached to, if any.
    public private(set) var loop: EventLoop?

    private init(handle: OpaquePointer) { self.handle = handle }

    deinit { CBus.flushCloseUnref(handle) }

    /// The system bus, or the one `$DBUS_SYSTEM_BUS_ADDRESS` names.
    /// The corresponding C call is `sd_bus_open_system`.
    public static func openSystem() throws(Errno) -> Bus { Bus(handle: try CBus.openSystem()) }

    /// The system bus of `host` (`user@host`) over SSH, as `systemctl -H` does.
    /// The corresponding C call is `sd_bus_open_system_remote`.
    public static func openSystem(remoteHost host: String) throws(Errno) -> Bus {
        Bus(handle: try CBus.openSystemRemote(host: host))
    }

    /// A bus client connection to `address` (e.g. `unix:path=/tmp/x/bus`).
    /// The corresponding C calls are `sd_bus_new`, `sd_bus_set_address`, `sd_bus_start`.
    public static func open(address: String) throws(Errno) -> Bus { Bus(handle: try CBus.open(address: address)) }

    /// Lets `loop` drive this bus (io, timeouts, the read queue). `sd_bus_attach_event`.
    public func attach(to loop: EventLoop) throws(Errno) {
        try CBus.attach(handle, to: loop.handle)
        self.loop = loop
    }

    /// This connection's unique name (`:1.42`). `sd_bus_get_unique_name`.
    public func uniqueName() throws(Errno) -> String { try CBus.uniqueName(handle) }

    /// Takes a well-known name, synchronously (one round trip; do it before the loop serves).
    /// The corresponding C call is `sd_bus_request_name`.
    public func requestName(_ name: String, replaceExisting: Bool = false) throws(Errno) {
        try CBus.requestName(handle, name, replaceExisting: replaceExisting)
    }

    /// Writes out every queued message, blocking. `sd_bus_flush`.
    public func flush() throws(Errno) { try CBus.flush(handle) }

    /// Flushes and closes the connection; the object stays valid but is disconnected.
    /// The corresponding C calls are `sd_bus_flush` and `sd_bus_close`.
    public func close() {
        CBus.close(handle)
    }

    /// Whether the connection is still open. `sd_bus_is_open`.
    public var isOpen: Bool { CBus.isOpen(handle) }

    // MARK: messages

    /// A method call to fill and send. `sd_bus_message_new_method_call`.
    public func makeMethodCall(
        destination: String?, path: String, interface: String?, member: String
    ) throws(Errno) -> Message {
        Message(
            adopting: try CBus.newMethodCall(
                handle, destination: destination, path: path, interface: interface, member: member))
    }

    /// A signal to fill and send. `sd_bus_message_new_signal`.
    public func makeSignal(path: String, interface: String, member: String) throws(Errno) -> Message {
        Message(adopting: try CBus.newSignal(handle, path: path, interface: interface, member: member))
    }

    /// Queues `message` for sending. `sd_bus_send`.
    public func send(_ message: Message) throws(Errno) {
        try CBus.send(handle, message.handle)
    }

    /// Sends the signal `member` with `arguments`. The corresponding C calls are
    /// `sd_bus_message_new_signal` and `sd_bus_send` (`sd_bus_emit_signal` is variadic).
    public func emitSignal(path: String, interface: String, member: String, arguments: [DBusValue]) throws(Errno) {
        let m = try makeSignal(path: path, interface: interface, member: member)
        try m.append(arguments)
        try send(m)
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` for `properties` of an exported
    /// interface, with values read from their getters. `sd_bus_emit_properties_changed_strv`.
    public func emitPropertiesChanged(path: String, interface: String, properties: [String]) throws(Errno) {
        try CBus.emitPropertiesChanged(handle, path: path, interface: interface, properties: properties)
    }

    // MARK: calls

    /// Sends `call` and calls `completion` on the loop with the reply, or the error (a `BusError`
    /// for an error reply, an `Errno` when the call could not be made or timed out).
    /// The corresponding C call is `sd_bus_call_async`; the slot floats, owned by the bus.
    public func callAsync(
        _ call: Message, timeout: Duration? = nil,
        completion: @escaping (Result<Message, any Error>) -> Void
    ) throws(Errno) {
        try CBus.callAsync(handle, call.handle, timeoutMicroseconds: timeout?.microseconds ?? 0) { m in
            let reply = Message(retaining: m)
            if let error = reply.error {
                // A local timeout/disconnect arrives as a synthesized error reply.
                completion(.failure(error))
            } else {
                completion(.success(reply))
            }
        }
    }

    /// Calls a method and returns the reply's values. Callable from any task: builds, sends and
    /// decodes on the loop thread. Throws `BusError` for an error reply.
    /// The corresponding C call is `sd_bus_call_async`.
    public func call(
        destination: String?, path: String, interface: String?, member: String,
        arguments: [DBusValue] = [], timeout: Duration? = nil
    ) async throws -> [DBusValue] {
        guard let loop else { throw Errno.socketNotConnected }
        return try await withCheckedThrowingContinuation { continuation in
            loop.execute { [self] in
                do {
                    let m = try makeMethodCall(
                        destination: destination, path: path, interface: interface, member: member)
                    try m.append(arguments)
                    try callAsync(m, timeout: timeout) { result in
                        continuation.resume(
                            with: result.flatMap { reply in
                                Result { try reply.readAll() }
                            })
                    }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Calls a method and waits, blocking the thread (for tools; never on a daemon's loop).
    /// The corresponding C call is `sd_bus_call`.
    public func callBlocking(_ call: Message, timeout: Duration? = nil) throws -> Message {
        Message(adopting: try CBus.call(handle, call.handle, timeoutMicroseconds: timeout?.microseconds ?? 0))
    }

    // MARK: signal matches

    /// Calls `handler` for every matching signal, until the returned slot is cancelled or
    /// released. `installed` is called on the loop once the bus has the match (no signal after it
    /// is missed), or with the error. nil fields match anything.
    /// The corresponding C call is `sd_bus_match_signal_async`.
    public func matchSignal(
        sender: String? = nil, path: String? = nil, interface: String? = nil, member: String? = nil,
        installed: ((Result<Void, BusError>) -> Void)? = nil,
        _ handler: @escaping (Message) -> Void
    ) throws(Errno) -> BusSlot {
        let slot = try CBus.matchSignal(
            handle, sender: sender, path: path, interface: interface, member: member,
            installed: installed.map { installed in
                { m in installed(Message(retaining: m).error.map { .failure($0) } ?? .success(())) }
            },
            handler: { m in handler(Message(retaining: m)) })
        return BusSlot(slot)
    }

    /// Adds a match with a full match rule string, installed asynchronously.
    /// The corresponding C call is `sd_bus_add_match_async`.
    public func addMatch(rule: String, _ handler: @escaping (Message) -> Void) throws(Errno) -> BusSlot {
        BusSlot(try CBus.addMatch(handle, rule: rule) { m in handler(Message(retaining: m)) })
    }

    /// Runs `handler` on the loop when the connection to the bus is lost (the bus daemon went
    /// away or dropped this connection). sd-bus reports it as the local
    /// `org.freedesktop.DBus.Local.Disconnected` signal, which is matched locally, never sent to
    /// the bus. The corresponding C call is `sd_bus_add_match_async` with that rule.
    public func onDisconnect(_ handler: @escaping () -> Void) throws(Errno) -> BusSlot {
        try addMatch(
            rule:
                "type='signal',sender='org.freedesktop.DBus.Local',path='/org/freedesktop/DBus/Local',"
                + "interface='org.freedesktop.DBus.Local',member='Disconnected'"
        ) { _ in handler() }
    }

    // MARK: credentials

    /// The effective uid of the process that owns bus name `name` (e.g. a caller's unique name),
    /// asked of the bus driver without blocking. `completion` runs on the loop.
    /// The corresponding call is `org.freedesktop.DBus.GetConnectionUnixUser` via `sd_bus_call_async`.
    public func unixUser(ofName name: String, completion: @escaping (Result<UInt32, any Error>) -> Void) throws(Errno) {
        let m = try makeMethodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", member: "GetConnectionUnixUser")
        try m.append(.string(name))
        try callAsync(m) { result in
            completion(
                result.flatMap { reply in
                    Result {
                        guard let uid = try reply.read(signature: "u").first, case .uint32(let v) = uid else {
                            throw BusError(name: BusError.failed, message: "GetConnectionUnixUser returned no uid.")
                        }
                        return v
                    }
                })
        }
    }
}

/// A registration on a bus (match, exported object): cancelling or releasing it (on the loop
/// thread) undoes it. The corresponding C call is `sd_bus_slot_unref`.
public final class BusSlot {
    private var handle: OpaquePointer?
    init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { cancel() }

    public func cancel() {
        guard let h = handle else { return }
        handle = nil
        CBus.unref(slot: h)
    }
}

extension Message {
    /// The effective uid of the sender, from its credentials; on dbus-daemon sd-bus asks the bus
    /// driver, which blocks the loop for one round trip (prefer `Bus.unixUser(ofName:)`).
    /// The corresponding C calls are `sd_bus_query_sender_creds(SD_BUS_CREDS_EUID|SD_BUS_CREDS_AUGMENT)`
    /// and `sd_bus_creds_get_euid`.
    public func senderEUID() throws(Errno) -> UInt32 {
        try CBus.senderEUID(handle)
    }
}
