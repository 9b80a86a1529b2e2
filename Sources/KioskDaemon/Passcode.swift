import CCrypt
import Glibc
import KioskCore

/// Passcode hashing and verification with libcrypt (crypt(3), yescrypt `$y$`), the format of
/// `/etc/shadow` and `mkpasswd -m yescrypt`. Passcodes are never stored, logged or put in errors.
enum Passcode {
    /// A fresh yescrypt hash of `passcode`. The corresponding C calls are `crypt_gensalt_rn("$y$")`
    /// and `crypt_r`.
    static func hash(_ passcode: String) throws(KioskError) -> String {
        var salt = [CChar](repeating: 0, count: 192)  // CRYPT_GENSALT_OUTPUT_SIZE
        guard crypt_gensalt_rn("$y$", 0, nil, 0, &salt, Int32(salt.count)) != nil else {
            throw KioskError(.invalidArgument, "libcrypt could not make a yescrypt salt (errno \(errno)).")
        }
        let setting = String(decoding: salt.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let hashed = crypt(passcode, setting: setting) else {
            throw KioskError(.invalidArgument, "libcrypt could not hash the passcode with yescrypt.")
        }
        return hashed
    }

    /// Whether `passcode` hashes to `hash`, compared in constant time. The corresponding C call is `crypt_r`.
    static func verify(_ passcode: String, against hash: String) -> Bool {
        guard passcode.utf8.count <= PasscodeCheck.maxBytes, let computed = crypt(passcode, setting: hash) else {
            return false
        }
        return constantTimeEqual(Array(computed.utf8), Array(hash.utf8))
    }

    private static func crypt(_ phrase: String, setting: String) -> String? {
        let data = UnsafeMutableRawPointer(calloc(1, MemoryLayout<crypt_data>.size)!).assumingMemoryBound(
            to: crypt_data.self)
        defer {
            memset(data, 0, MemoryLayout<crypt_data>.size)  // the phrase's traces
            free(data)
        }
        guard let out = crypt_r(phrase, setting, data) else { return nil }
        let result = String(cString: out)
        // libcrypt's failure tokens start with '*' ("*0", "*1").
        return result.hasPrefix("*") ? nil : result
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }
}
