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

    /// kioskd's rule for a profile name, with its message: a plain file name (kioskd resolves it
    /// as `<profile-dir>/<name>.toml`). The rule lives in KioskDaemon's `ProfileDirectory`, not in
    /// KioskCore; `KioskctlBusTests.malformedValuesAreUsageErrors` checks that both messages agree.
    static func validateProfileName(_ value: String) throws(ValidationError) {
        if let bytes = RawArguments.invalidUTF8(decodingTo: value) {
            do {
                _ = try Text.decode(bytes, what: "profile name")
            } catch {
                throw ValidationError(error.message)
            }
        }
        let plain = value.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"): true
            default: false
            }
        }
        guard !value.isEmpty, value.utf8.count <= 250, plain else {
            throw ValidationError("The profile name \(Text.quoted(value)) is not a plain file name; it must be 1 to 250 characters of A-Z, a-z, 0-9, '_', '.' and '-'.")
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
            let bytes = Array(UnsafeBufferPointer(start: argument, count: strlen(argument))).map { UInt8(bitPattern: $0) }
            if String(validating: bytes, as: UTF8.self) == nil, String(decoding: bytes, as: UTF8.self) == value {
                return bytes
            }
        }
        return nil
    }
}
