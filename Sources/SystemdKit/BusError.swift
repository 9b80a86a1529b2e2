import CSystemd
import SystemPackage

/// A D-Bus error: a name such as `org.freedesktop.DBus.Error.InvalidArgs` and a message.
///
/// Thrown by method handlers to reply with an error, and thrown by calls whose reply is an error.
public struct BusError: Error, Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }

    public static let failed = "org.freedesktop.DBus.Error.Failed"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"

    /// `org.freedesktop.DBus.Error.InvalidArgs` with `message`.
    public static func invalidArgs(_ message: String) -> BusError {
        BusError(name: invalidArgs, message: message)
    }

    /// `org.freedesktop.DBus.Error.AccessDenied` with `message`.
    public static func accessDenied(_ message: String) -> BusError {
        BusError(name: accessDenied, message: message)
    }
}

extension BusError {
    /// Copies a C `sd_bus_error` (which stays owned by the caller).
    init(_ error: UnsafePointer<sd_bus_error>, fallback: Errno? = nil) {
        let name = error.pointee.name.map { String(cString: $0) }
        let message = error.pointee.message.map { String(cString: $0) }
        self.init(
            name: name ?? BusError.failed,
            message: message ?? fallback?.reason ?? "")
    }

    /// Writes this error into the `sd_bus_error` sd-bus hands a handler, and returns the
    /// negative errno the handler must return. The corresponding C call is `sd_bus_error_set`.
    func set(_ target: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
        CBus.setError(target, name: name, message: message)
    }
}
