import KioskAPI

extension Profile {
    /// The longest profile name, in bytes.
    public static let maxNameLength = 250

    /// Checks that `name` can name a profile: a plain file name (kioskd resolves it as
    /// `<profile-dir>/<name>.toml`), 1 to ``maxNameLength`` bytes of `A-Z a-z 0-9 _ . -`.
    /// kioskd applies it to `StartSession`, kioskctl to its arguments, with the same message.
    public static func validateName(_ name: String) throws(KioskError) {
        let plain = name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                true
            default: false
            }
        }
        guard !name.isEmpty, name.utf8.count <= maxNameLength, plain else {
            throw KioskError(
                .invalidArgument,
                "The profile name \(Text.quoted(name)) is not a plain file name; it must be 1 to \(maxNameLength) characters of A-Z, a-z, 0-9, '_', '.' and '-'."
            )
        }
    }
}
