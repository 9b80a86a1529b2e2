import CSystemd
import Glibc

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

    /// Reads the next complete value, or nil at the end of the current container.
    static func readNext(_ m: OpaquePointer) throws(Errno) -> DBusValue? {
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
            return p.map { String(cString: $0) } ?? ""
        }
        func container(_ c: Unicode.Scalar) throws(Errno) -> [DBusValue] {
            try Errno.check(sd_bus_message_enter_container(m, type(c), contents))
            let items = try readAll(m)
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

    static func readAll(_ m: OpaquePointer) throws(Errno) -> [DBusValue] {
        var out: [DBusValue] = []
        while let v = try readNext(m) { out.append(v) }
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
