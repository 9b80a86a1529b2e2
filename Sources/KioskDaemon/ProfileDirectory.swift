import KioskCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The directory of installed profiles (`--profile-dir`): a profile name is a plain file name
/// (`[A-Za-z0-9_.-]+`, no path) resolved as `<directory>/<name>.toml`.
struct ProfileDirectory {
    var path: String

    /// Reads and parses the profile `name`.
    /// - Throws: `InvalidArgs` for a name that is not a plain file name or a profile that does
    ///   not parse (with its `file:line:col` diagnostics); `UnknownProfile` when there is no such file.
    func load(_ name: String) throws(KioskError) -> Profile {
        try Profile.validateName(name)
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
}
