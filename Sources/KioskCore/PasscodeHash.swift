/// Checks that a string is a crypt(3) hash of a strong scheme, never a plain passcode.
public enum PasscodeHash {
    /// The crypt(3) prefixes kioskd accepts: yescrypt (what `mkpasswd -m yescrypt` and
    /// Debian's /etc/shadow use), gost-yescrypt, scrypt, bcrypt, SHA-512 and SHA-256 crypt.
    /// MD5 crypt and DES are refused as too weak for a passcode that guards a kiosk.
    public static let acceptedPrefixes = ["$y$", "$gy$", "$7$", "$2b$", "$2y$", "$2a$", "$6$", "$5$"]

    /// What is wrong with `hash` as a sentence fragment ("is …"), or `nil` if it is usable.
    public static func problem(with hash: String) -> String? {
        guard hash.hasPrefix("$") else {
            return
                "does not look like a crypt(3) hash; it must never be a plain passcode. Make one with `mkpasswd -m yescrypt` or set it with `kioskctl passcode set`"
        }
        guard let prefix = acceptedPrefixes.first(where: { hash.hasPrefix($0) }) else {
            return "uses a crypt(3) scheme kioskd does not accept; use yescrypt ($y$, from `mkpasswd -m yescrypt`)"
        }
        let allowed = Set("./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz$=,".unicodeScalars)
        guard hash.unicodeScalars.allSatisfy(allowed.contains) else {
            return "contains characters a crypt(3) hash never has"
        }
        let fields = hash.dropFirst(prefix.count).split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count >= 2, fields.allSatisfy({ !$0.isEmpty }), (fields.last?.count ?? 0) >= 20 else {
            return "is not a complete crypt(3) hash (\(prefix)…: parameters, salt and hash separated by '$')"
        }
        return nil
    }
}
