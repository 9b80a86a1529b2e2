import Foundation
import KioskCore

/// The directory of installed profiles (`--profile-dir`): a profile name is a plain file name
/// (`[A-Za-z0-9_.-]+`, no path) resolved as `<directory>/<name>.toml`.
struct ProfileDirectory {
    var path: String

    /// Reads and parses the profile `name`.
    /// - Throws: `InvalidArgs` for a name that is not a plain file name or a profile that does
    ///   not parse (with its `file:line:col` diagnostics); `UnknownProfile` when there is no such file.
    func load(_ name: String) throws(KioskError) -> Profile {
        try Self.validate(name)
        let file = path + "/" + name + ".toml"
        guard let data = FileManager.default.contents(atPath: file) else {
            throw KioskError(.unknownProfile, "There is no profile \(Text.quoted(name)) (no readable file \(file)).")
        }
        do {
            return try ProfileParser.parse(bytes: data, file: file)
        } catch {
            throw KioskError(.invalidArgument, "The profile \(Text.quoted(name)) is not valid:\n\(error.description)")
        }
    }

    static func validate(_ name: String) throws(KioskError) {
        guard !name.isEmpty, name.utf8.count <= 250,
              name.utf8.allSatisfy({ b in
                  (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                      || b == UInt8(ascii: "_") || b == UInt8(ascii: ".") || b == UInt8(ascii: "-")
              }) else {
            throw KioskError(.invalidArgument, "The profile name \(Text.quoted(name)) is not a plain file name; it must be 1 to 250 characters of A-Z, a-z, 0-9, '_', '.' and '-'.")
        }
    }
}
