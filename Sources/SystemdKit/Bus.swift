import CSystemd
import Glibc

/// A D-Bus connection (`sd_bus`).
///
/// Use it on its loop thread once attached (sd-bus is not thread-safe); the `async` calls may be
/// awaited from anywhere and hop to the loop themselves.
public final class Bus: @unchecked Sendable {
    let handle: OpaquePointer
    /// The loop this bus is attached to, if any.
    public private(set) var loop: EventLoop?

    private init(handle: OpaquePointer) { self.handle = handle }

    deinit { sd_bus_flush_close_unref(handle) }

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
        try Errno.check(sd_bus_attach_event(handle, loop.handle, 0))
        self.loop = loop
    }

    /// This connection's unique name (`:1.42`). `sd_bus_get_unique_name`.
    public func uniqueName() throws(Errno) -> String { try CBus.uniqueName(handle) }

    /// Takes a well-known name, synchronously (one round trip; do it before the loop serves).
    /// The corresponding C call is `sd_bus_request_name`.
    public func requestName(_ name: String, replaceExisting: Bool = false) throws(Errno) {
        let flags: UInt64 = replaceExisting ? UInt64(SD_BUS_NAME_REPLACE_EXISTING) : 0
        try Errno.check(sd_bus_request_name(handle, name, flags))
    }

    /// Writes out every queued message, blocking. `sd_bus_flush`.
    public func flush() throws(Errno) { try Errno.check(sd_bus_flush(handle)) }

    /// Flushes and closes the connection; the object stays valid but is disconnected.
    /// The corresponding C calls are `sd_bus_flush` and `sd_bus_close`.
    public func close() {
        _ = sd_bus_flush(handle)
        sd_bus_close(handle)
    }

    /// Whether the connection is still open. `sd_bus_is_open`.
    public var isOpen: Bool { sd_bus_is_open(handle) > 0 }

    // MARK: messages

    /// A method call to fill and send. `sd_bus_message_new_method_call`.
    public func makeMethodCall(
        destination: String?, path: String, interface: String?, member: String
    ) throws(Errno) -> Message {
        var m: OpaquePointer?
        try Errno.check(sd_bus_message_new_method_call(handle, &m, destination, path, interface, member))
        return Message(adopting: m!)
    }

    /// A signal to fill and send. `sd_bus_message_new_signal`.
    public func makeSignal(path: String, interface: String, member: String) throws(Errno) -> Message {
        var m: OpaquePointer?
        try Errno.check(sd_bus_message_new_signal(handle, &m, path, interface, member))
        return Message(adopting: m!)
    }

    /// Queues `message` for sending. `sd_bus_send`.
    public func send(_ message: Message) throws(Errno) {
        try Errno.check(sd_bus_send(handle, message.handle, nil))
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
        let r = CBus.withStrv(properties) { sd_bus_emit_properties_changed_strv(handle, path, interface, $0) }
        try Errno.check(r)
    }

    // MARK: calls

    /// Sends `call` and calls `completion` on the loop with the reply, or the error (a `BusError`
    /// for an error reply, an `Errno` when the call could not be made or timed out).
    /// The corresponding C call is `sd_bus_call_async`; the slot floats, owned by the bus.
    public func callAsync(
        _ call: Message, timeout: Duration? = nil,
        completion: @escaping (Result<Message, any Error>) -> Void
    ) throws(Errno) {
        let box = Unmanaged.passRetained(CallBox(completion)).toOpaque()
        var slot: OpaquePointer?
        let r = sd_bus_call_async(
            handle, &slot, call.handle,
            { m, userdata, _ in
                let box = Unmanaged<CallBox>.fromOpaque(userdata!).takeUnretainedValue()
                let reply = Message(retaining: m!)
                if let error = reply.error {
                    // A local timeout/disconnect arrives as a synthesized error reply.
                    box.completion(.failure(error))
                } else {
                    box.completion(.success(reply))
                }
                return 1
            }, box, timeout?.microseconds ?? 0)
        guard r >= 0, let slot else {
            Unmanaged<CallBox>.fromOpaque(box).release()
            throw Errno(rawValue: -r)
        }
        sd_bus_slot_set_destroy_callback(slot) { userdata in
            Unmanaged<CallBox>.fromOpaque(userdata!).release()
        }
        sd_bus_slot_set_floating(slot, 1)
        sd_bus_slot_unref(slot)
    }

    /// Calls a method and returns the reply's values. Callable from any task: builds, sends and
    /// decodes on the loop thread. Throws `BusError` for an error reply.
    /// The corresponding C call is `sd_bus_call_async`.
    public func call(
        destination: String?, path: String, interface: String?, member: String,
        arguments: [DBusValue] = [], timeout: Duration? = nil
    ) async throws -> [DBusValue] {
        guard let loop else { throw Errno.notConnected }
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
        var error = csd_bus_error_null()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let r = sd_bus_call(handle, call.handle, timeout?.microseconds ?? 0, &error, &reply)
        if r < 0 {
            if sd_bus_error_is_set(&error) != 0 { throw BusError(&error) }
            throw Errno(rawValue: -r)
        }
        return Message(adopting: reply!)
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
        let box = Unmanaged.passRetained(MatchBox(handler, installed: installed)).toOpaque()
        var slot: OpaquePointer?
        let r = sd_bus_match_signal_async(
            handle, &slot, sender, path, interface, member,
            { m, userdata, _ in
                Unmanaged<MatchBox>.fromOpaque(userdata!).takeUnretainedValue().handler(Message(retaining: m!))
                return 0
            },
            { m, userdata, _ in
                let box = Unmanaged<MatchBox>.fromOpaque(userdata!).takeUnretainedValue()
                let reply = Message(retaining: m!)
                box.installed?(reply.error.map { .failure($0) } ?? .success(()))
                return 0
            }, box)
        return try Self.matchSlot(r, slot, box: box)
    }

    /// Adds a match with a full match rule string, installed asynchronously.
    /// The corresponding C call is `sd_bus_add_match_async`.
    public func addMatch(rule: String, _ handler: @escaping (Message) -> Void) throws(Errno) -> BusSlot {
        let box = Unmanaged.passRetained(MatchBox(handler, installed: nil)).toOpaque()
        var slot: OpaquePointer?
        let r = sd_bus_add_match_async(
            handle, &slot, rule,
            { m, userdata, _ in
                Unmanaged<MatchBox>.fromOpaque(userdata!).takeUnretainedValue().handler(Message(retaining: m!))
                return 0
            }, nil, box)
        return try Self.matchSlot(r, slot, box: box)
    }

    /// The slot of a match just added with `box` as its userdata: the box lives as long as the
    /// slot (released by the slot's destroy callback), or is released now if adding failed.
    private static func matchSlot(
        _ r: Int32, _ slot: OpaquePointer?, box: UnsafeMutableRawPointer
    ) throws(Errno) -> BusSlot {
        guard r >= 0, let slot else {
            Unmanaged<MatchBox>.fromOpaque(box).release()
            throw Errno(rawValue: -r)
        }
        sd_bus_slot_set_destroy_callback(slot) { userdata in
            Unmanaged<MatchBox>.fromOpaque(userdata!).release()
        }
        return BusSlot(slot)
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
                            throw BusError.invalidArgs("GetConnectionUnixUser returned no uid.")
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
        sd_bus_slot_unref(h)
    }
}

private final class CallBox {
    let completion: (Result<Message, any Error>) -> Void
    init(_ completion: @escaping (Result<Message, any Error>) -> Void) { self.completion = completion }
}

private final class MatchBox {
    let handler: (Message) -> Void
    let installed: ((Result<Void, BusError>) -> Void)?
    init(_ handler: @escaping (Message) -> Void, installed: ((Result<Void, BusError>) -> Void)?) {
        self.handler = handler
        self.installed = installed
    }
}

extension Message {
    /// The effective uid of the sender, from its credentials; on dbus-daemon sd-bus asks the bus
    /// driver, which blocks the loop for one round trip (prefer `Bus.unixUser(ofName:)`).
    /// The corresponding C calls are `sd_bus_query_sender_creds(SD_BUS_CREDS_EUID|SD_BUS_CREDS_AUGMENT)`
    /// and `sd_bus_creds_get_euid`.
    public func senderEUID() throws(Errno) -> UInt32 {
        var creds: OpaquePointer?
        try Errno.check(sd_bus_query_sender_creds(handle, csd_creds_euid_augment(), &creds))
        defer { sd_bus_creds_unref(creds) }
        var uid: uid_t = 0
        try Errno.check(sd_bus_creds_get_euid(creds, &uid))
        return uid
    }
}
