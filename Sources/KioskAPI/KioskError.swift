/// An error of kioskd's domain: what was wrong, with which value, as a full sentence.
///
/// Each code maps to one D-Bus error name (``Code/dbusName``), so the daemon replies
/// with the documented error and clients map it back.
public struct KioskError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New codes can be added without breaking clients.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Storage: Hashable, Sendable {
            case invalidArgument, accessDenied, unknownApplication, unknownRestriction,
                unknownProfile, wrongPasscode, throttled, sessionActive, noSession, failed
        }
        private let storage: Storage
        private init(_ storage: Storage) { self.storage = storage }

        /// Malformed input: the message names the value and the rule it breaks.
        public static let invalidArgument = Code(.invalidArgument)
        /// The caller may not do this.
        public static let accessDenied = Code(.accessDenied)
        public static let unknownApplication = Code(.unknownApplication)
        public static let unknownRestriction = Code(.unknownRestriction)
        public static let unknownProfile = Code(.unknownProfile)
        public static let wrongPasscode = Code(.wrongPasscode)
        /// Too many wrong passcodes: wait before the next attempt.
        public static let throttled = Code(.throttled)
        public static let sessionActive = Code(.sessionActive)
        public static let noSession = Code(.noSession)
        /// kioskd could not do what was asked, through no fault of the caller: the change could
        /// not be saved, kioskd is stopping, too many changes are waiting, or libcrypt failed.
        /// Nothing changed; the call may be tried again.
        public static let failed = Code(.failed)

        public static let all: [Code] = [
            .invalidArgument, .accessDenied, .unknownApplication, .unknownRestriction,
            .unknownProfile, .wrongPasscode, .throttled, .sessionActive, .noSession, .failed,
        ]

        /// The D-Bus error name of this code.
        public var dbusName: String {
            switch storage {
            case .invalidArgument: "org.freedesktop.DBus.Error.InvalidArgs"
            case .accessDenied: "org.freedesktop.DBus.Error.AccessDenied"
            case .unknownApplication: "\(KioskWire.errorPrefix).UnknownApplication"
            case .unknownRestriction: "\(KioskWire.errorPrefix).UnknownRestriction"
            case .unknownProfile: "\(KioskWire.errorPrefix).UnknownProfile"
            case .wrongPasscode: "\(KioskWire.errorPrefix).WrongPasscode"
            case .throttled: "\(KioskWire.errorPrefix).Throttled"
            case .sessionActive: "\(KioskWire.errorPrefix).SessionActive"
            case .noSession: "\(KioskWire.errorPrefix).NoSession"
            case .failed: "org.freedesktop.DBus.Error.Failed"
            }
        }

        /// The code for a D-Bus error name, or `nil` for names kioskd does not send.
        public init?(dbusName: String) {
            guard let code = Code.all.first(where: { $0.dbusName == dbusName }) else { return nil }
            self = code
        }

        public var description: String { dbusName }
    }

    public let code: Code
    /// A full sentence saying what was wrong and with which value.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    package static func invalid(_ message: String) -> KioskError { KioskError(.invalidArgument, message) }
}
