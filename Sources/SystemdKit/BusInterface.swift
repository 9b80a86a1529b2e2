import CSystemd
import SystemPackage

/// An interface to export: its methods, signals and properties, described in Swift and turned
/// into an `sd_bus_vtable` by `Bus.export(_:at:)`. sd-bus then provides Introspect (with argument
/// names), Properties.Get/GetAll, PropertiesChanged and the signature check of every call.
public struct BusInterface {
    public var name: String
    public var methods: [BusMethod]
    public var signals: [BusSignal]
    public var properties: [BusProperty]

    public init(_ name: String, methods: [BusMethod] = [], signals: [BusSignal] = [], properties: [BusProperty] = []) {
        self.name = name
        self.methods = methods
        self.signals = signals
        self.properties = properties
    }
}

/// Flags of a vtable entry (`SD_BUS_VTABLE_*`).
public struct BusMemberFlags: OptionSet, Sendable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Anyone may call it. Without it, sd-bus itself rejects callers lacking CAP_SYS_ADMIN.
    public static let unprivileged = BusMemberFlags(rawValue: csd_vtable_flag_unprivileged())
    public static let deprecated = BusMemberFlags(rawValue: csd_vtable_flag_deprecated())
    public static let hidden = BusMemberFlags(rawValue: csd_vtable_flag_hidden())
    public static let noReply = BusMemberFlags(rawValue: csd_vtable_flag_no_reply())
    /// The property's changes are announced with `PropertiesChanged` carrying the value.
    public static let emitsChange = BusMemberFlags(rawValue: csd_vtable_flag_emits_change())
    /// The property's changes are announced with `PropertiesChanged` listing it as invalidated.
    public static let emitsInvalidation = BusMemberFlags(rawValue: csd_vtable_flag_emits_invalidation())
    /// The property never changes.
    public static let const = BusMemberFlags(rawValue: csd_vtable_flag_const())
}

/// What a method handler did with the call.
public enum MethodReply {
    /// Reply now with these values (matching the method's out-signature).
    case values([DBusValue])
    /// The handler kept the `MethodCall` and will call `reply(_:)` or `replyError(_:)` later,
    /// on the loop (e.g. after an asynchronous polkit check).
    case deferred

    /// Reply now with no values.
    public static var empty: MethodReply { .values([]) }
}

/// How much of a call's arguments is read into values: past these, the call is answered
/// `InvalidArgs` before anything is made of the rest (a 32 MiB call costs no more than its bytes).
public struct ReadLimits: Sendable, Equatable {
    /// Items in any one array.
    public var arrayItems: Int
    /// Bytes in any one string, object path or signature.
    public var stringBytes: Int

    public init(arrayItems: Int, stringBytes: Int) {
        self.arrayItems = arrayItems
        self.stringBytes = stringBytes
    }

    public static let none = ReadLimits(arrayItems: .max, stringBytes: .max)
}

/// A method: name, in/out signatures with argument names, and the handler. The handler runs on
/// the loop; throwing a `BusError` replies with that error.
public struct BusMethod {
    public var name: String
    public var inSignature: String
    public var inNames: [String]
    public var outSignature: String
    public var outNames: [String]
    public var flags: BusMemberFlags
    /// How much of a call's arguments is read (``ReadLimits``).
    public var limits: ReadLimits
    public var handler: (MethodCall) throws -> MethodReply

    /// `in`/`out` pair a signature with each argument's name, e.g. `[("s", "app_id"), ("a(sss)", "restrictions")]`.
    public init(
        _ name: String, in inArgs: [(String, String)] = [], out outArgs: [(String, String)] = [],
        flags: BusMemberFlags = [.unprivileged], limits: ReadLimits = .none,
        handler: @escaping (MethodCall) throws -> MethodReply
    ) {
        self.limits = limits
        self.name = name
        inSignature = inArgs.map(\.0).joined()
        inNames = inArgs.map(\.1)
        outSignature = outArgs.map(\.0).joined()
        outNames = outArgs.map(\.1)
        self.flags = flags
        self.handler = handler
    }
}

/// A signal with its argument names.
public struct BusSignal {
    public var name: String
    public var signature: String
    public var names: [String]
    public var flags: BusMemberFlags

    public init(_ name: String, arguments: [(String, String)] = [], flags: BusMemberFlags = []) {
        self.name = name
        signature = arguments.map(\.0).joined()
        names = arguments.map(\.1)
        self.flags = flags
    }
}

/// A read-only property: its getter runs on the loop and must return a value of `signature`.
public struct BusProperty {
    public var name: String
    public var signature: String
    public var flags: BusMemberFlags
    public var get: () throws -> DBusValue

    public init(
        _ name: String, _ signature: String, flags: BusMemberFlags = [.emitsChange],
        get: @escaping () throws -> DBusValue
    ) {
        self.name = name
        self.signature = signature
        self.flags = flags
        self.get = get
    }
}

/// One incoming method call, handed to a `BusMethod` handler. Keep it to reply later.
public final class MethodCall {
    /// The call message.
    public let message: Message
    /// The arguments, already checked by sd-bus against the method's in-signature.
    public let arguments: [DBusValue]
    private var replied = false
    private var onAnswered: [() -> Void] = []

    init(message: Message, arguments: [DBusValue]) {
        self.message = message
        self.arguments = arguments
    }

    /// A call dropped without an answer is over too (sd-bus answers nothing for it).
    deinit {
        if !replied { answered() }
    }

    /// Runs `body` once the call is answered (`reply` or `replyError`, sent or not), or dropped
    /// without an answer: for a service that must know which deferred calls are still open.
    public func whenAnswered(_ body: @escaping () -> Void) {
        onAnswered.append(body)
    }

    private func answered() {
        let bodies = onAnswered
        onAnswered = []
        bodies.forEach { $0() }
    }

    /// The caller's unique bus name.
    public var sender: String? { message.sender }

    /// Replies with `values`. The corresponding C calls are `sd_bus_message_new_method_return`
    /// and `sd_bus_send`.
    public func reply(_ values: [DBusValue]) throws(Errno) {
        guard !replied else { return }
        replied = true
        defer { answered() }
        let reply = Message(adopting: try CBus.newMethodReturn(message.handle))
        try reply.append(values)
        try CBus.send(nil, reply.handle)
    }

    /// Replies with a D-Bus error. The corresponding C call is `sd_bus_reply_method_error`.
    public func replyError(_ error: BusError) throws(Errno) {
        guard !replied else { return }
        replied = true
        defer { answered() }
        try CBus.replyError(message.handle, name: error.name, message: error.message)
    }
}
