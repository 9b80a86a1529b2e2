import CCrypt
import Glibc
import KioskCore

/// Passcode hashing and verification with libcrypt (crypt(3), yescrypt `$y$`), the format of
/// `/etc/shadow` and `mkpasswd -m yescrypt`. Passcodes are never stored, logged or put in errors.
/// A module of its own so that kioskd and `kioskctl-replay` (which checks a passcode typed in a
/// recording against a profile's hash) share it.
public enum Passcode {
    /// libcrypt could not do its part (no memory, a setting it does not support): not the
    /// caller's mistake, so answered `Failed`, not `InvalidArgs` or `WrongPasscode`.
    public struct CryptError: Error, Hashable, Sendable, CustomStringConvertible {
        /// A full sentence; never the passcode, nor the hash beyond its scheme prefix.
        public var description: String
    }

    /// A fresh yescrypt hash of `passcode`. The corresponding C calls are `crypt_gensalt_rn("$y$")`
    /// and `crypt_r`.
    public static func hash(_ passcode: String) throws(CryptError) -> String {
        var salt = [CChar](repeating: 0, count: 192)  // CRYPT_GENSALT_OUTPUT_SIZE
        guard crypt_gensalt_rn("$y$", 0, nil, 0, &salt, Int32(salt.count)) != nil else {
            throw CryptError(description: "libcrypt could not make a yescrypt salt: \(Self.reason(errno)).")
        }
        let setting = String(decoding: salt.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return try crypt(passcode, setting: setting)
    }

    /// Whether `passcode` hashes to `hash`, compared in constant time. A passcode longer than
    /// `PasscodeCheck.maxBytes` is wrong without hashing. Throws when libcrypt cannot hash with
    /// `hash`'s setting at all. The corresponding C call is `crypt_r`.
    public static func verify(_ passcode: String, against hash: String) throws(CryptError) -> Bool {
        guard passcode.utf8.count <= PasscodeCheck.maxBytes else { return false }
        let computed = try crypt(passcode, setting: hash)
        return constantTimeEqual(Array(computed.utf8), Array(hash.utf8))
    }

    private static func crypt(_ phrase: String, setting: String) throws(CryptError) -> String {
        let data = UnsafeMutableRawPointer(calloc(1, MemoryLayout<crypt_data>.size)!).assumingMemoryBound(
            to: crypt_data.self)
        defer {
            memset(data, 0, MemoryLayout<crypt_data>.size)  // the phrase's traces
            free(data)
        }
        errno = 0
        let out = crypt_r(phrase, setting, data)
        let error = errno
        // libcrypt's failure tokens start with '*' ("*0", "*1").
        guard let out, out.pointee != CChar(UInt8(ascii: "*")) else {
            throw CryptError(
                description:
                    "libcrypt could not hash with the setting \(scheme(of: setting))…: \(error == 0 ? "unsupported" : "\(Self.reason(error))")."
            )
        }
        return String(cString: out)
    }

    /// The scheme prefix of a crypt(3) setting (`$y$`, `$2b$`), or "?" without one.
    public static func scheme(of setting: String) -> String {
        guard setting.hasPrefix("$"), let end = setting.dropFirst().firstIndex(of: "$") else { return "?" }
        return String(setting[...end])
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }

    /// strerror's text and the number, as kioskd's other messages give an errno: "(errno N)".
    static func reason(_ code: Int32) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }
}
