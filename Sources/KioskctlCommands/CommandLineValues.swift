import ArgumentParser
import Glibc
import KioskCore

/// Ids and profile names from the command line, checked before anything is sent to kioskd:
/// a malformed one is a usage error (exit 64, with kioskd's own message for it), and the bus is
/// never touched.
enum CommandLineValues {
    static func validateApp(_ value: String) throws(ValidationError) {
        try validate(value, as: AppID.self)
    }

    static func validateRestriction(_ value: String) throws(ValidationError) {
        try validate(value, as: RestrictionID.self)
    }

    /// KioskCore's reverse-DNS rule. An argument that is not UTF-8 is checked as the bytes it
    /// was, so the message says so instead of naming the U+FFFD it was decoded to.
    private static func validate<Kind>(_ value: String, as _: ReverseDNSIdentifier<Kind>.Type) throws(ValidationError) {
        do {
            if let bytes = RawArguments.invalidUTF8(decodingTo: value) {
                _ = try ReverseDNSIdentifier<Kind>(utf8: bytes)
            } else {
                _ = try ReverseDNSIdentifier<Kind>(value)
            }
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// KioskCore's profile-name rule (a plain file name), the one kioskd applies to StartSession.
    static func validateProfileName(_ value: String) throws(ValidationError) {
        do {
            if let bytes = RawArguments.invalidUTF8(decodingTo: value) {
                _ = try Text.decode(bytes, what: "profile name")
            }
            try Profile.validateName(value)
        } catch {
            throw ValidationError(error.message)
        }
    }
}

/// The process's argv as the bytes it was: Swift's `CommandLine.arguments`, which ArgumentParser
/// parses, decodes each argument as UTF-8 and repairs invalid bytes into U+FFFD.
enum RawArguments {
    /// The bytes of the argument that was decoded to `value`, if they are not valid UTF-8.
    static func invalidUTF8(decodingTo value: String) -> [UInt8]? {
        guard value.unicodeScalars.contains("\u{FFFD}") else { return nil }
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let bytes = Array(UnsafeBufferPointer(start: argument, count: strlen(argument))).map {
                UInt8(bitPattern: $0)
            }
            if String(validating: bytes, as: UTF8.self) == nil, String(decoding: bytes, as: UTF8.self) == value {
                return bytes
            }
        }
        return nil
    }
}
