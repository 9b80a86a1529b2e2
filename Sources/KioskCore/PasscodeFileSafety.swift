/// Whether a passcode hash may be taken from a file, judged as sshd's `StrictModes` judges
/// `authorized_keys`: a hash anyone can read can be guessed offline with no throttle (a
/// 4-digit PIN in minutes on one core), and one anyone can write can be replaced.
///
/// Pure: the caller passes in what `fstat(2)` said of the file it read.
public enum PasscodeFileSafety {
    /// Why the hash in `path` must not be used, as a sentence naming the file, its mode or owner
    /// and the fix; nil when it is safe: no permission for group or others, and owned by one of
    /// `trustedOwners` (root, and the uid kioskd runs as).
    public static func problem(path: String, mode: UInt32, owner: UInt32, trustedOwners: [UInt32]) -> String? {
        let permissions = mode & 0o7777
        if permissions & 0o077 != 0 {
            return
                "\(path) holds a passcode hash but is mode \(octal(permissions)), so group or others may read or change it: anyone on the machine could copy the hash and guess the passcode offline. Make it private to its owner: chmod 600 \(path)"
        }
        if !trustedOwners.contains(owner) {
            let who = trustedOwners.filter { $0 != 0 }.map { " or uid \($0)" }.joined()
            return
                "\(path) holds a passcode hash but is owned by uid \(owner), who could read or replace it; only root\(who) may own it: chown root \(path)"
        }
        return nil
    }

    /// `0644`, as chmod writes it.
    static func octal(_ value: UInt32) -> String {
        var digits = String(value, radix: 8)
        while digits.count < 4 { digits = "0" + digits }
        return digits
    }
}
