import KioskAPI

/// What one reading of the web apps' manifest directory found (`/etc/kioskd/apps`,
/// docs/browsers.md § Web apps): kioskd and kioskd-bridge decide every file by this one rule,
/// so that a manifest the daemon refuses never lends its origins to the bridge.
///
/// A file is used when it could be read (a regular file of at most ``WebAppManifest/maxBytes``),
/// is owned by a trusted uid and writable by its owner alone, parses, and does not claim a
/// browser's id (kioskd declares those itself, docs/browsers.md § The browsers as apps).
public struct WebAppDirectoryReading: Sendable, Equatable {
    /// The manifests that may be used, in the order of their file names.
    public var manifests: [WebAppManifest] = []
    /// The app ids (from the file names) of the files that could not be used: their apps keep
    /// the declaration they had.
    public var failed: [AppID] = []
    /// Each refused file's problems, `file:line:column: message` as `kioskctl profile check`
    /// words a profile's, one string a file.
    public var problems: [String] = []

    /// The most files one reading looks at.
    public static let maxFiles = 1024

    /// One manifest file as the reader found it on disk.
    public struct File: Sendable, Equatable {
        /// Its contents.
        public var bytes: [UInt8]
        /// `st_uid`.
        public var owner: UInt32
        /// `st_mode` (type and permission bits).
        public var mode: UInt32

        /// A file with these contents, owner and mode.
        public init(bytes: [UInt8], owner: UInt32, mode: UInt32) {
            self.bytes = bytes
            self.owner = owner
            self.mode = mode
        }
    }

    /// Why a file could not be read, as the reader words it (completes "FILE …").
    public struct Unreadable: Error, Sendable, Equatable {
        /// The reason, e.g. "is not a regular file".
        public var reason: String

        /// The reason `reason`.
        public init(reason: String) { self.reason = reason }
    }

    /// An empty reading.
    public init() {}

    /// Decides each of `names` (the directory's `*.toml` files without the suffix, in order)
    /// in `directory`, reading each through `read`; a manifest is trusted when its owner is
    /// one of `trustedOwners` (root, and the reading process's own uid). `parse` is
    /// ``WebAppManifest/parse(bytes:file:)``, or a cache of it (kioskd's: TOMLKit never frees
    /// a parsed document, and kioskd reads the manifests again at every reload).
    public init(
        directory: String, names: [String], trustedOwners: Set<UInt32>,
        parse: ([UInt8], String) throws(ProfileError) -> WebAppManifest = WebAppManifest.parse(bytes:file:),
        read: (String) -> Result<File, Unreadable>
    ) {
        for name in names.prefix(Self.maxFiles) {
            let path = directory + "/" + name + ".toml"
            let id = try? AppID(name)
            switch Self.decide(path: path, read(path), trustedOwners: trustedOwners, parse: parse) {
            case .success(let manifest): manifests.append(manifest)
            case .failure(let refusal):
                problems.append(refusal.reason)
                if let id { failed.append(id) }
            }
        }
    }

    /// The decision for one file at `path`.
    static func decide(
        path: String, _ read: Result<File, Unreadable>, trustedOwners: Set<UInt32>,
        parse: ([UInt8], String) throws(ProfileError) -> WebAppManifest = WebAppManifest.parse(bytes:file:)
    ) -> Result<WebAppManifest, Unreadable> {
        let file: File
        switch read {
        case .success(let value): file = value
        case .failure(let unreadable): return .failure(Unreadable(reason: "\(path) \(unreadable.reason)"))
        }
        guard trustedOwners.contains(file.owner), file.mode & 0o022 == 0 else {
            return .failure(
                Unreadable(
                    reason:
                        "\(path) is owned by uid \(file.owner) with mode \(String(file.mode & 0o7777, radix: 8)): a manifest must be root's and writable by root alone (0644)"
                ))
        }
        let manifest: WebAppManifest
        do {
            manifest = try parse(file.bytes, path)
        } catch {
            return .failure(Unreadable(reason: error.description))
        }
        if let browser = Browser(app: manifest.app) {
            return .failure(
                Unreadable(
                    reason:
                        "\(path): \(manifest.app) is \(browser.name), a browser kioskd declares itself; a manifest may not claim it"
                ))
        }
        return .success(manifest)
    }
}
