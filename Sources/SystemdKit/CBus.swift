import CSystemd
import Glibc
import SystemPackage

/// The sd-bus C calls SystemdKit uses, each turning `-errno` into a thrown `Errno`.
/// Nothing here is public: the typed API is `Bus`, `Message`, `ExportedObject`.
enum CBus {
    @inline(__always) static func type(_ c: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: c)) }

    // MARK: connections

    static func openSystem() throws(Errno) -> OpaquePointer {
        var bus: OpaquePointer?
        try Errno.check(sd_bus_open_system(&bus))
        return bus!
    }

    static func openSystemRemote(host: String) throws(Errno) -> OpaquePointer {
        var bus: OpaquePointer?
        try Errno.check(sd_bus_open_system_remote(&bus, host))
        return bus!
    }

    /// `sd_bus_new` + `sd_bus_set_address` + `sd_bus_set_bus_client` + `sd_bus_start`.
    static func open(address: String) throws(Errno) -> OpaquePointer {
        var bus: OpaquePointer?
        try Errno.check(sd_bus_new(&bus))
        do {
            try Errno.check(sd_bus_set_address(bus, address))
            try Errno.check(sd_bus_set_bus_client(bus, 1))
            try Errno.check(sd_bus_start(bus))
        } catch {
            sd_bus_unref(bus)
            throw error
        }
        return bus!
    }

    static func uniqueName(_ bus: OpaquePointer) throws(Errno) -> String {
        var name: UnsafePointer<CChar>?
        try Errno.check(sd_bus_get_unique_name(bus, &name))
        return String(cString: name!)
    }

    static func flushCloseUnref(_ bus: OpaquePointer) { sd_bus_flush_close_unref(bus) }

    static func attach(_ bus: OpaquePointer, to event: OpaquePointer) throws(Errno) {
        try Errno.check(sd_bus_attach_event(bus, event, 0))
    }

    static func requestName(_ bus: OpaquePointer, _ name: String, replaceExisting: Bool) throws(Errno) {
        let flags: UInt64 = replaceExisting ? UInt64(SD_BUS_NAME_REPLACE_EXISTING) : 0
        try Errno.check(sd_bus_request_name(bus, name, flags))
    }

    static func flush(_ bus: OpaquePointer) throws(Errno) { try Errno.check(sd_bus_flush(bus)) }

    /// `sd_bus_flush` (its failure ignored: the connection closes anyway) and `sd_bus_close`.
    static func close(_ bus: OpaquePointer) {
        _ = sd_bus_flush(bus)
        sd_bus_close(bus)
    }

    static func isOpen(_ bus: OpaquePointer) -> Bool { sd_bus_is_open(bus) > 0 }

    static func emitPropertiesChanged(
        _ bus: OpaquePointer, path: String, interface: String, properties: [String]
    ) throws(Errno) {
        try Errno.check(withStrv(properties) { sd_bus_emit_properties_changed_strv(bus, path, interface, $0) })
    }

    // MARK: calls and matches

    /// The Swift side of a C callback: the slot's userdata, released by the slot's destroy callback.
    private final class HandlerBox {
        let handler: (OpaquePointer) -> Void
        let installed: ((OpaquePointer) -> Void)?
        init(_ handler: @escaping (OpaquePointer) -> Void, installed: ((OpaquePointer) -> Void)?) {
            self.handler = handler
            self.installed = installed
        }
    }

    private static func box(
        _ handler: @escaping (OpaquePointer) -> Void, installed: ((OpaquePointer) -> Void)? = nil
    ) -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(HandlerBox(handler, installed: installed)).toOpaque()
    }

    private static func releaseBox(_ userdata: UnsafeMutableRawPointer?) {
        Unmanaged<HandlerBox>.fromOpaque(userdata!).release()
    }

    private static let callHandler: sd_bus_message_handler_t = { m, userdata, _ in
        Unmanaged<HandlerBox>.fromOpaque(userdata!).takeUnretainedValue().handler(m!)
        return 1
    }

    private static let matchHandler: sd_bus_message_handler_t = { m, userdata, _ in
        Unmanaged<HandlerBox>.fromOpaque(userdata!).takeUnretainedValue().handler(m!)
        return 0
    }

    private static let installHandler: sd_bus_message_handler_t = { m, userdata, _ in
        Unmanaged<HandlerBox>.fromOpaque(userdata!).takeUnretainedValue().installed?(m!)
        return 0
    }

    /// `sd_bus_call_async`: `reply` gets the reply (or the synthesized error reply of a local
    /// timeout or disconnect) on the loop. The slot floats, owned by the bus.
    static func callAsync(
        _ bus: OpaquePointer, _ call: OpaquePointer, timeoutMicroseconds: UInt64,
        reply: @escaping (OpaquePointer) -> Void
    ) throws(Errno) {
        let userdata = box(reply)
        var slot: OpaquePointer?
        let r = sd_bus_call_async(bus, &slot, call, callHandler, userdata, timeoutMicroseconds)
        guard r >= 0, let slot else {
            releaseBox(userdata)
            throw Errno(rawValue: -r)
        }
        sd_bus_slot_set_destroy_callback(slot) { Unmanaged<HandlerBox>.fromOpaque($0!).release() }
        sd_bus_slot_set_floating(slot, 1)
        sd_bus_slot_unref(slot)
    }

    /// `sd_bus_call`: the reply, or the error reply as a `BusError`, or an `Errno`.
    static func call(_ bus: OpaquePointer, _ call: OpaquePointer, timeoutMicroseconds: UInt64) throws -> OpaquePointer {
        var error = csd_bus_error_null()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let r = sd_bus_call(bus, call, timeoutMicroseconds, &error, &reply)
        if r < 0 {
            if sd_bus_error_is_set(&error) != 0 { throw BusError(&error) }
            throw Errno(rawValue: -r)
        }
        return reply!
    }

    /// `sd_bus_match_signal_async`: the slot of the match, which calls `handler` for each signal
    /// and `installed` with the bus's reply to the AddMatch.
    static func matchSignal(
        _ bus: OpaquePointer, sender: String?, path: String?, interface: String?, member: String?,
        installed: ((OpaquePointer) -> Void)?, handler: @escaping (OpaquePointer) -> Void
    ) throws(Errno) -> OpaquePointer {
        let userdata = box(handler, installed: installed)
        var slot: OpaquePointer?
        let r = sd_bus_match_signal_async(
            bus, &slot, sender, path, interface, member, matchHandler, installHandler, userdata)
        return try matchSlot(r, slot, userdata)
    }

    /// `sd_bus_add_match_async` with a full match rule.
    static func addMatch(
        _ bus: OpaquePointer, rule: String, handler: @escaping (OpaquePointer) -> Void
    ) throws(Errno) -> OpaquePointer {
        let userdata = box(handler)
        var slot: OpaquePointer?
        let r = sd_bus_add_match_async(bus, &slot, rule, matchHandler, nil, userdata)
        return try matchSlot(r, slot, userdata)
    }

    /// The slot of a match just added: the box lives as long as the slot, or is released now if
    /// adding failed.
    private static func matchSlot(
        _ r: Int32, _ slot: OpaquePointer?, _ userdata: UnsafeMutableRawPointer
    ) throws(Errno) -> OpaquePointer {
        guard r >= 0, let slot else {
            releaseBox(userdata)
            throw Errno(rawValue: -r)
        }
        sd_bus_slot_set_destroy_callback(slot) { Unmanaged<HandlerBox>.fromOpaque($0!).release() }
        return slot
    }

    static func unref(slot: OpaquePointer) { sd_bus_slot_unref(slot) }

    /// `sd_bus_add_object_vtable`; `vtable` must outlive the returned slot.
    static func addObjectVtable(
        _ bus: OpaquePointer, path: String, interface: String, _ vtable: UnsafePointer<sd_bus_vtable>
    ) throws(Errno) -> OpaquePointer {
        var slot: OpaquePointer?
        try Errno.check(sd_bus_add_object_vtable(bus, &slot, path, interface, vtable, nil))
        return slot!
    }

    /// Writes `name` and `message` into the `sd_bus_error` sd-bus hands a handler, and returns
    /// the negative errno the handler must return (`sd_bus_error_set`).
    static func setError(_ target: UnsafeMutablePointer<sd_bus_error>?, name: String, message: String) -> Int32 {
        let r = sd_bus_error_set(target, name, message)
        return r < 0 ? r : -EIO
    }

    // MARK: messages

    static func newMethodCall(
        _ bus: OpaquePointer, destination: String?, path: String, interface: String?, member: String
    ) throws(Errno) -> OpaquePointer {
        var m: OpaquePointer?
        try Errno.check(sd_bus_message_new_method_call(bus, &m, destination, path, interface, member))
        return m!
    }

    static func newSignal(
        _ bus: OpaquePointer, path: String, interface: String, member: String
    ) throws(Errno)
        -> OpaquePointer
    {
        var m: OpaquePointer?
        try Errno.check(sd_bus_message_new_signal(bus, &m, path, interface, member))
        return m!
    }

    /// `sd_bus_send`; a nil bus means the message's own.
    static func send(_ bus: OpaquePointer?, _ m: OpaquePointer) throws(Errno) {
        try Errno.check(sd_bus_send(bus, m, nil))
    }

    static func newMethodReturn(_ call: OpaquePointer) throws(Errno) -> OpaquePointer {
        var r: OpaquePointer?
        try Errno.check(sd_bus_message_new_method_return(call, &r))
        return r!
    }

    /// `sd_bus_error_set` + `sd_bus_reply_method_error`.
    static func replyError(_ call: OpaquePointer, name: String, message: String) throws(Errno) {
        var e = csd_bus_error_null()
        defer { sd_bus_error_free(&e) }
        _ = sd_bus_error_set(&e, name, message)
        try Errno.check(sd_bus_reply_method_error(call, &e))
    }

    static func ref(message m: OpaquePointer) -> OpaquePointer { sd_bus_message_ref(m)! }
    static func unref(message m: OpaquePointer) { sd_bus_message_unref(m) }

    static func sender(_ m: OpaquePointer) -> String? { sd_bus_message_get_sender(m).map { String(cString: $0) } }
    static func destination(_ m: OpaquePointer) -> String? {
        sd_bus_message_get_destination(m).map { String(cString: $0) }
    }
    static func path(_ m: OpaquePointer) -> String? { sd_bus_message_get_path(m).map { String(cString: $0) } }
    static func interface(_ m: OpaquePointer) -> String? {
        sd_bus_message_get_interface(m).map { String(cString: $0) }
    }
    static func member(_ m: OpaquePointer) -> String? { sd_bus_message_get_member(m).map { String(cString: $0) } }
    static func signature(_ m: OpaquePointer) -> String {
        sd_bus_message_get_signature(m, 1).map { String(cString: $0) } ?? ""
    }

    static func hasSignature(_ m: OpaquePointer, _ signature: String) -> Bool {
        sd_bus_message_has_signature(m, signature) > 0
    }

    /// The error of a method error reply, nil for any other message.
    static func error(_ m: OpaquePointer) -> BusError? {
        guard let e = sd_bus_message_get_error(m), sd_bus_error_is_set(e) != 0 else { return nil }
        return BusError(e)
    }

    /// Reads a unix fd (`h`); it stays owned by the message.
    static func readUnixFD(_ m: OpaquePointer) throws(Errno) -> Int32 {
        var fd: Int32 = -1
        try Errno.check(sd_bus_message_read_basic(m, type("h"), &fd))
        return fd
    }

    // MARK: credentials

    /// `sd_bus_query_sender_creds(SD_BUS_CREDS_EUID|SD_BUS_CREDS_AUGMENT)` + `sd_bus_creds_get_euid`.
    static func senderEUID(_ m: OpaquePointer) throws(Errno) -> UInt32 {
        var creds: OpaquePointer?
        try Errno.check(sd_bus_query_sender_creds(m, csd_creds_euid_augment(), &creds))
        defer { sd_bus_creds_unref(creds) }
        var uid: uid_t = 0
        try Errno.check(sd_bus_creds_get_euid(creds, &uid))
        return uid
    }

    // MARK: messages

    static func append(_ m: OpaquePointer, _ value: DBusValue) throws(Errno) {
        func basic<T>(_ t: Unicode.Scalar, _ v: T) throws(Errno) {
            var v = v
            let r = withUnsafePointer(to: &v) { sd_bus_message_append_basic(m, type(t), $0) }
            try Errno.check(r)
        }
        func text(_ t: Unicode.Scalar, _ s: String) throws(Errno) {
            // 's', 'o', 'g' take the char* itself (not a char**), so a NUL inside would cut the
            // string short: D-Bus strings cannot hold one, refuse it instead of sending less.
            guard !s.utf8.contains(0) else { throw Errno(rawValue: EINVAL) }
            try Errno.check(s.withCString { sd_bus_message_append_basic(m, type(t), $0) })
        }
        func container(_ t: Unicode.Scalar, _ contents: String, _ items: [DBusValue]) throws(Errno) {
            try Errno.check(sd_bus_message_open_container(m, type(t), contents))
            for item in items { try append(m, item) }
            try Errno.check(sd_bus_message_close_container(m))
        }
        switch value {
        case .byte(let v): try basic("y", v)
        case .bool(let v): try basic("b", Int32(v ? 1 : 0))  // 'b' is a 32-bit int
        case .int16(let v): try basic("n", v)
        case .uint16(let v): try basic("q", v)
        case .int32(let v): try basic("i", v)
        case .uint32(let v): try basic("u", v)
        case .int64(let v): try basic("x", v)
        case .uint64(let v): try basic("t", v)
        case .double(let v): try basic("d", v)
        case .string(let s): try text("s", s)
        case .objectPath(let s): try text("o", s)
        case .signature(let s): try text("g", s)
        case .array(let element, let items):
            // sd-bus checks each item against the element signature, so a wrong item fails here.
            try container("a", element, items)
        case .structure(let items): try container("r", items.map(\.signature).joined(), items)
        case .dictEntry(let k, let v): try container("e", k.signature + v.signature, [k, v])
        case .variant(let inner): try container("v", inner.signature, [inner])
        }
    }

    static func rewind(_ m: OpaquePointer) throws(Errno) {
        try Errno.check(sd_bus_message_rewind(m, 1))
    }

    /// Reads the next complete value, or nil at the end of the current container. Past
    /// `limits` (an array's items, a string's bytes) it stops reading and throws `E2BIG`, so a
    /// huge argument is never made into values.
    static func readNext(_ m: OpaquePointer, _ limits: ReadLimits = .none) throws(Errno) -> DBusValue? {
        var t: CChar = 0
        var contentsPointer: UnsafePointer<CChar>?
        guard try Errno.check(sd_bus_message_peek_type(m, &t, &contentsPointer)) > 0 else { return nil }
        let contents = contentsPointer.map { String(cString: $0) } ?? ""

        func basic<T>(_ initial: T) throws(Errno) -> T {
            var v = initial
            try Errno.check(withUnsafeMutablePointer(to: &v) { sd_bus_message_read_basic(m, t, $0) })
            return v
        }
        func text() throws(Errno) -> String {
            var p: UnsafePointer<CChar>?  // points into the message: copy it
            try Errno.check(sd_bus_message_read_basic(m, t, &p))
            guard let p else { return "" }
            let most = limits.stringBytes
            guard most == .max || strnlen(p, most + 1) <= most else { throw Errno(rawValue: E2BIG) }
            return String(cString: p)
        }
        func container(_ c: Unicode.Scalar) throws(Errno) -> [DBusValue] {
            try Errno.check(sd_bus_message_enter_container(m, type(c), contents))
            let items = try readAll(m, limits, items: c == "a" ? limits.arrayItems : .max)
            try Errno.check(sd_bus_message_exit_container(m))
            return items
        }

        switch UInt8(bitPattern: t) {
        case UInt8(ascii: "y"): return .byte(try basic(UInt8(0)))
        case UInt8(ascii: "b"): return .bool(try basic(Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int16(try basic(Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try basic(UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try basic(Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try basic(UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try basic(Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try basic(UInt64(0)))
        case UInt8(ascii: "d"): return .double(try basic(Double(0)))
        case UInt8(ascii: "s"): return .string(try text())
        case UInt8(ascii: "o"): return .objectPath(try text())
        case UInt8(ascii: "g"): return .signature(try text())
        case UInt8(ascii: "a"): return .array(elementSignature: contents, try container("a"))
        case UInt8(ascii: "r"): return .structure(try container("r"))
        case UInt8(ascii: "e"):
            let kv = try container("e")
            guard kv.count == 2 else { throw Errno(rawValue: EBADMSG) }
            return .dictEntry(kv[0], kv[1])
        case UInt8(ascii: "v"):
            guard let inner = try container("v").first else { throw Errno(rawValue: EBADMSG) }
            return .variant(inner)
        default:
            // 'h' (unix fds) and anything newer: not supported by this layer.
            throw Errno(rawValue: EOPNOTSUPP)
        }
    }

    static func readAll(
        _ m: OpaquePointer, _ limits: ReadLimits = .none, items: Int = .max
    ) throws(Errno) -> [DBusValue] {
        var out: [DBusValue] = []
        while let v = try readNext(m, limits) {
            guard out.count < items else { throw Errno(rawValue: E2BIG) }
            out.append(v)
        }
        return out
    }

    // MARK: helpers

    /// A NULL-terminated `char **` valid for the duration of `body`.
    static func withStrv<R>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R
    {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
    }
}
