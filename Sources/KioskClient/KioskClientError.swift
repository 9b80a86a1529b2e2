import KioskAPI
import SystemPackage
import SystemdKit

/// A failure to reach kioskd, as opposed to kioskd refusing a call (that is a `KioskError`,
/// with the daemon's own message).
public struct KioskClientError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Storage: Hashable, Sendable { case busUnavailable, notRunning, noReply, unexpectedReply, busError }
        private let storage: Storage
        private init(_ storage: Storage) { self.storage = storage }

        /// The bus could not be connected to (no socket, SSH failed, …), or the connection dropped.
        public static let busUnavailable = Code(.busUnavailable)
        /// Nothing owns `org.kioskd.GuidedAccess1` on the bus.
        public static let notRunning = Code(.notRunning)
        /// kioskd went away, or did not answer in time, before it replied.
        public static let noReply = Code(.noReply)
        /// kioskd replied with something this client does not understand (a newer or broken daemon).
        public static let unexpectedReply = Code(.unexpectedReply)
        /// Another D-Bus error (the bus policy refused the call, an unknown method, …).
        public static let busError = Code(.busError)

        public var description: String {
            switch storage {
            case .busUnavailable: "busUnavailable"
            case .notRunning: "notRunning"
            case .noReply: "noReply"
            case .unexpectedReply: "unexpectedReply"
            case .busError: "busError"
            }
        }
    }

    public let code: Code
    /// A full sentence saying what went wrong.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    static let notRunning = KioskClientError(.notRunning, "kioskd is not running.")

    static func unexpected(_ what: String) -> KioskClientError {
        KioskClientError(.unexpectedReply, "kioskd sent an unexpected reply: \(what).")
    }
}

/// Turns what a bus call throws into the errors the client promises: `KioskError` for the
/// daemon's documented errors (with its message), `KioskClientError` for everything else.
enum ErrorMapping {
    static func map(_ error: any Error) -> any Error {
        switch error {
        case let error as BusError:
            if let code = KioskError.Code(dbusName: error.name) { return KioskError(code, error.message) }
            switch error.name {
            case BusError.serviceUnknown, BusError.nameHasNoOwner:
                return KioskClientError.notRunning
            case BusError.noReply:
                return KioskClientError(.noReply, "kioskd did not reply (\(error.message)).")
            case BusError.disconnected:
                return KioskClientError(.busUnavailable, "The bus connection was lost (\(error.message)).")
            default:
                return KioskClientError(.busError, "\(error.name): \(error.message)")
            }
        case let error as Errno:
            return KioskClientError(.busUnavailable, "The bus connection failed: \(error.reason).")
        default:
            return error
        }
    }
}
