import Glibc
import KioskCore
import KioskFiles

/// The web apps' manifests (`--apps-dir`, `/etc/kioskd/apps`; docs/browsers.md § Web apps),
/// decided by ``WebAppDirectoryReading`` as kioskd-bridge decides them.
struct WebAppDirectory {
    var path: String
    /// Who may own a manifest: root, and kioskd's own uid.
    var trustedOwners: Set<UInt32> = [0, geteuid()]
    /// The manifests parsed so far: each contents is parsed once (``TOMLParseCache``).
    var parsed = TOMLParseCache<WebAppManifest>()

    /// Reads every `*.toml`, refusing each file that cannot be used, saying why.
    func read() -> WebAppDirectoryReading {
        WebAppDirectoryReading(
            directory: path, names: Files.names(in: path, ending: ".toml", limit: WebAppDirectoryReading.maxFiles),
            trustedOwners: trustedOwners, parse: parsed.parse(bytes:file:)
        ) { file in
            Result { () throws(FileError) in try Files.readRegular(file, limit: WebAppManifest.maxBytes) }
                .map { WebAppDirectoryReading.File(bytes: $0.bytes, owner: $0.owner, mode: $0.mode) }
                .mapError { WebAppDirectoryReading.Unreadable(reason: $0.reason) }
        }
    }
}
