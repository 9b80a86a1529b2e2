import Glibc
import KioskCore
import KioskFiles

/// The web apps' manifests (`--apps-dir`, `/etc/kioskd/apps`; docs/browsers.md § Web apps):
/// `ID.toml` each, a regular file of at most 1 MiB, owned by root (or kioskd's uid) and writable
/// by its owner alone.
struct WebAppDirectory {
    var path: String
    /// Who may own a manifest: root, and kioskd's own uid.
    var trustedOwners: [UInt32] = Array(Set([0, geteuid()])).sorted()

    /// What one reading of the directory found.
    struct Reading {
        /// The manifests that parse and may be used, in the order of their file names.
        var manifests: [WebAppManifest] = []
        /// The app ids (from the file names) of the files that could not be used: their apps
        /// keep the declaration they had.
        var failed: [AppID] = []
        /// Each refused file's problems, `file:line:column: message` as `kioskctl profile check`
        /// words a profile's, one string a file.
        var problems: [String] = []
    }

    /// Reads every `*.toml` (at most 1024), refusing each file that cannot be used, saying why.
    func read() -> Reading {
        var reading = Reading()
        for name in Files.names(in: path, ending: ".toml", limit: 1024) {
            let file = path + "/" + name + ".toml"
            let id = try? AppID(name)
            func refuse(_ problem: String) {
                reading.problems.append(problem)
                if let id { reading.failed.append(id) }
            }
            let read: Files.Regular
            switch Result(catching: { () throws(FileError) in
                try Files.readRegular(file, limit: WebAppManifest.maxBytes)
            }) {
            case .success(let value): read = value
            case .failure(let error):
                refuse("\(file) \(error.reason)")
                continue
            }
            guard trustedOwners.contains(read.owner), read.mode & 0o022 == 0 else {
                refuse(
                    "\(file) is owned by uid \(read.owner) with mode \(String(read.mode & 0o7777, radix: 8)): a manifest must be root's and writable by root alone (0644)"
                )
                continue
            }
            let manifest: WebAppManifest
            do {
                manifest = try WebAppManifest.parse(bytes: read.bytes, file: file)
            } catch {
                refuse(error.description)
                continue
            }
            if let browser = Browser(app: manifest.app) {
                refuse(
                    "\(file): \(manifest.app) is \(browser.name), a browser kioskd declares itself; a manifest may not claim it"
                )
                continue
            }
            reading.manifests.append(manifest)
        }
        return reading
    }
}
