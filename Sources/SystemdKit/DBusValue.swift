/// One D-Bus value, typed by its signature. Arrays carry their element signature so that an empty
/// array still has a type.
public indirect enum DBusValue: Sendable, Hashable, CustomStringConvertible {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case array(elementSignature: String, [DBusValue])
    case structure([DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case variant(DBusValue)

    /// The value's D-Bus signature, e.g. `a{sv}`.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .array(let element, _): "a" + element
        case .structure(let items): "(" + items.map(\.signature).joined() + ")"
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .variant: "v"
        }
    }

    public var description: String {
        switch self {
        case .string(let s), .objectPath(let s), .signature(let s): "\"\(s)\""
        case .bool(let v): "\(v)"
        case .byte(let v): "\(v)"
        case .int16(let v): "\(v)"
        case .uint16(let v): "\(v)"
        case .int32(let v): "\(v)"
        case .uint32(let v): "\(v)"
        case .int64(let v): "\(v)"
        case .uint64(let v): "\(v)"
        case .double(let v): "\(v)"
        case .array(_, let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .structure(let items): "(" + items.map(\.description).joined(separator: ", ") + ")"
        case .dictEntry(let key, let value): "\(key): \(value)"
        case .variant(let inner): "<\(inner)>"
        }
    }
}

// MARK: Building

extension DBusValue {
    /// An `as` array.
    public static func strings(_ items: [String]) -> DBusValue {
        .array(elementSignature: "s", items.map(DBusValue.string))
    }

    /// An `a{sv}` dictionary, in the given order.
    public static func vardict(_ entries: [(String, DBusValue)]) -> DBusValue {
        .array(elementSignature: "{sv}", entries.map { .dictEntry(.string($0.0), .variant($0.1)) })
    }
}

// MARK: Reading (nil when the value has another type; variants are looked through)

extension DBusValue {
    private var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// The text of an `s`, `o` or `g` value.
    public var string: String? {
        switch unwrapped {
        case .string(let s), .objectPath(let s), .signature(let s): s
        default: nil
        }
    }

    public var bool: Bool? {
        if case .bool(let v) = unwrapped { return v }
        return nil
    }

    /// Any integer type, widened, when it fits.
    public var int64: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    /// Any unsigned integer type, widened.
    public var uint64: UInt64? {
        switch unwrapped {
        case .byte(let v): UInt64(v)
        case .uint16(let v): UInt64(v)
        case .uint32(let v): UInt64(v)
        case .uint64(let v): v
        default: nil
        }
    }

    public var double: Double? {
        if case .double(let v) = unwrapped { return v }
        return nil
    }

    /// The items of an array.
    public var array: [DBusValue]? {
        if case .array(_, let items) = unwrapped { return items }
        return nil
    }

    /// The fields of a struct.
    public var fields: [DBusValue]? {
        if case .structure(let items) = unwrapped { return items }
        return nil
    }

    /// An `as` array as Swift strings.
    public var strings: [String]? {
        guard let items = array else { return nil }
        var out: [String] = []
        for item in items {
            guard let s = item.string else { return nil }
            out.append(s)
        }
        return out
    }

    /// An `a{s…}` dictionary; later duplicate keys win. Variant values stay variants.
    public var dictionary: [String: DBusValue]? {
        guard let items = array else { return nil }
        var out: [String: DBusValue] = [:]
        for item in items {
            guard case .dictEntry(let key, let value) = item, let k = key.string else { return nil }
            out[k] = value
        }
        return out
    }
}
