import Glibc
import KioskCore
import KioskFiles

/// The web apps' manifests, `/etc/kioskd/apps/*.toml` (docs/browsers.md § Web apps).
enum ManifestDirectory {
    /// The directory the package reads.
    static let path = "/etc/kioskd/apps"

    /// Every manifest in `directory` that parses, in the order of their names; a file that does
    /// not parse, is not root's or is writable by others is left out and reported, so that one
    /// bad file takes away only its own app (fail closed). A missing directory holds none.
    static func load(_ directory: String) -> (manifests: [WebAppManifest], problems: [String]) {
        guard let dir = opendir(directory) else { return ([], errno == ENOENT ? [] : ["Could not open \(directory)."]) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".toml"), !name.hasPrefix(".") { names.append(name) }
        }
        var manifests: [WebAppManifest] = []
        var problems: [String] = []
        for name in names.sorted() {
            let file = "\(directory)/\(name)"
            do {
                let regular = try Files.readRegular(file, limit: WebAppManifest.maxBytes)
                guard regular.owner == 0, regular.mode & 0o022 == 0 else {
                    problems.append("\(file) is left out: it must be root's and writable by root alone.")
                    continue
                }
                manifests.append(try WebAppManifest.parse(bytes: regular.bytes, file: file))
            } catch {
                problems.append("\(error)")
            }
        }
        return (manifests, problems)
    }
}
