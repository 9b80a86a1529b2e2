import SystemPackage

/// An sd-bus message: a method call, a reply, an error or a signal.
///
/// Like every sd-bus object it belongs to its bus's loop thread (its reference count is not
/// atomic): use it there, and do not hand it to other threads. Decode it into `DBusValue`s,
/// which are `Sendable`, to pass data on.
public final class Message {
    let handle: OpaquePointer

    /// Takes over one reference.
    init(adopting handle: OpaquePointer) { self.handle = handle }

    /// Adds a reference. The corresponding C call is `sd_bus_message_ref`.
    init(retaining handle: OpaquePointer) { self.handle = CBus.ref(message: handle) }

    deinit { CBus.unref(message: handle) }

    /// The unique bus name of the sender (`:1.42`). `sd_bus_message_get_sender`.
    public var sender: String? { CBus.sender(handle) }
    /// `sd_bus_message_get_destination`.
    public var destination: String? { CBus.destination(handle) }
    /// `sd_bus_message_get_path`.
    public var path: String? { CBus.path(handle) }
    /// `sd_bus_message_get_interface`.
    public var interface: String? { CBus.interface(handle) }
    /// `sd_bus_message_get_member`.
    public var member: String? { CBus.member(handle) }
    /// The body signature, e.g. `ss`. `sd_bus_message_get_signature`.
    public var signature: String { CBus.signature(handle) }

    /// The error carried by a method error reply, nil for any other message.
    /// The corresponding C call is `sd_bus_message_get_error`.
    public var error: BusError? { CBus.error(handle) }

    // MARK: Writing

    /// Appends values in order. The corresponding C calls are `sd_bus_message_append_basic`,
    /// `sd_bus_message_open_container` and `sd_bus_message_close_container`.
    public func append(_ values: [DBusValue]) throws(Errno) {
        for value in values { try CBus.append(handle, value) }
    }

    /// Appends values in order.
    public func append(_ values: DBusValue...) throws(Errno) { try append(values) }

    // MARK: Reading

    /// Reads every remaining value of the body. `sd_bus_message_read_basic`, `…_enter_container`.
    public func readAll() throws(Errno) -> [DBusValue] { try CBus.readAll(handle) }

    /// Reads every remaining value of the body, within `limits`: past them it throws `E2BIG`.
    public func readAll(within limits: ReadLimits) throws(Errno) -> [DBusValue] { try CBus.readAll(handle, limits) }

    /// Reads the whole body after checking that its signature is exactly `signature`; a mismatch
    /// throws `InvalidArgs` naming both signatures, so a caller's mistake becomes an error reply.
    /// The corresponding C call is `sd_bus_message_has_signature`.
    public func read(signature expected: String) throws(BusError) -> [DBusValue] {
        guard CBus.hasSignature(handle, expected) else {
            throw BusError.invalidArgs("Expected arguments of signature '\(expected)', got '\(signature)'.")
        }
        do {
            try CBus.rewind(handle)
            return try CBus.readAll(handle)
        } catch {
            throw BusError.invalidArgs(
                "Malformed message body of signature '\(signature)': \(Errno.reason(of: error)).")
        }
    }
}
