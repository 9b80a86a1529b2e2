import Glibc
import KioskCore
import KioskFiles

/// The web apps' manifests, `/etc/kioskd/apps/*.toml` (docs/browsers.md § Web apps), decided by
/// ``WebAppDirectoryReading`` as kioskd decides them: a manifest kioskd refuses serves no origin.
enum ManifestDirectory {
    /// The directory the package reads.
    static let path = "/etc/kioskd/apps"

    /// Every manifest in `directory` that may be used, in the order of their names; each file
    /// that cannot be used is left out and reported, so that one bad file takes away only its
    /// own app (fail closed). A missing directory holds none.
    static func load(_ directory: String) -> WebAppDirectoryReading {
        WebAppDirectoryReading(
            directory: directory,
            names: Files.names(in: directory, ending: ".toml", limit: WebAppDirectoryReading.maxFiles),
            trustedOwners: [0, geteuid()]
        ) { file in
            Result { () throws(FileError) in try Files.readRegular(file, limit: WebAppManifest.maxBytes) }
                .map { WebAppDirectoryReading.File(bytes: $0.bytes, owner: $0.owner, mode: $0.mode) }
                .mapError { WebAppDirectoryReading.Unreadable(reason: $0.reason) }
        }
    }
}
