import KioskCore
import Synchronization

/// The TOML files parsed so far, by file and exact bytes: a profile file read again unchanged
/// (every `ListProfiles`, `StartSession` and `ReloadProfiles`, and every `RegisterApplication`,
/// which reads each profile's `app` and `app-owner`), or a web app's manifest read again at a
/// reload, is not parsed again.
///
/// TOMLKit 0.6.0, the TOML parser, never frees a parsed document (`TOMLTable` has no `deinit`,
/// and CTOML no function that deletes a `toml::table`): every parse kept some kilobytes for
/// good (4.5 KiB for a 15-line profile), so kioskd grew by a few MiB an hour under `make soak`.
/// With the cache, a parse happens once per distinct file contents, which an admin's edits bound.
/// At most ``capacity`` entries, holding at most ``byteCapacity`` bytes of file contents, are
/// kept; when either is reached, the oldest go.
final class TOMLParseCache<Value: Sendable>: Sendable {
    /// The most file contents remembered (a profile directory holds at most 1024 profiles that
    /// `ListProfiles` lists; a kiosk has a handful).
    static var capacity: Int { 256 }
    /// The most bytes of file contents remembered (the keys hold them): four profiles of
    /// ``Profile/maximumFileSize``, or thousands of a kiosk's kilobyte-sized ones. Without it, 256
    /// large profiles would keep 256 MiB.
    static var byteCapacity: Int { 4 * Profile.maximumFileSize }

    private struct Key: Hashable {
        var file: String
        var bytes: [UInt8]
    }

    private struct Entries {
        var results: [Key: Result<Value, ProfileError>] = [:]
        var order: [Key] = []
        var bytes = 0
        var parses = 0
    }

    private let entries = Mutex(Entries())
    private let parser: @Sendable ([UInt8], String) throws(ProfileError) -> Value

    /// A cache over `parser`, which parses a file's bytes (its name is for messages).
    init(parser: @escaping @Sendable ([UInt8], String) throws(ProfileError) -> Value) {
        self.parser = parser
    }

    /// How many times the parser ran.
    var parses: Int { entries.withLock { $0.parses } }

    /// How many bytes of file contents are remembered.
    var rememberedBytes: Int { entries.withLock { $0.bytes } }

    /// What the parser returns or throws for `bytes` read from `file`, parsed only if these bytes
    /// of this file were not seen before.
    func parse(bytes: [UInt8], file: String) throws(ProfileError) -> Value {
        let key = Key(file: file, bytes: bytes)
        if let known = entries.withLock({ $0.results[key] }) { return try known.get() }
        let result: Result<Value, ProfileError>
        do throws(ProfileError) {
            result = .success(try parser(bytes, file))
        } catch {
            result = .failure(error)
        }
        entries.withLock { entries in
            entries.parses += 1
            guard entries.results[key] == nil, key.bytes.count <= Self.byteCapacity else { return }
            while entries.order.count >= Self.capacity || entries.bytes + key.bytes.count > Self.byteCapacity {
                let oldest = entries.order.removeFirst()
                entries.results[oldest] = nil
                entries.bytes -= oldest.bytes.count
            }
            entries.results[key] = result
            entries.order.append(key)
            entries.bytes += key.bytes.count
        }
        return try result.get()
    }
}

/// The profiles' cache (``ProfileParser/parse(bytes:file:)``).
typealias ProfileParseCache = TOMLParseCache<Profile>

extension TOMLParseCache where Value == Profile {
    /// A cache over ``ProfileParser/parse(bytes:file:)``.
    convenience init() {
        self.init(parser: { bytes, file throws(ProfileError) in try ProfileParser.parse(bytes: bytes, file: file) })
    }
}

extension TOMLParseCache where Value == WebAppManifest {
    /// A cache over ``WebAppManifest/parse(bytes:file:)``.
    convenience init() {
        self.init(parser: { bytes, file throws(ProfileError) in try WebAppManifest.parse(bytes: bytes, file: file) })
    }
}
