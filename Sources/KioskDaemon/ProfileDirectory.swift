import Glibc
import KioskCore
import KioskFiles
import SystemPackage

/// The directory of installed profiles (`--profile-dir`): a profile name is a plain file name
/// (`[A-Za-z0-9_.-]+`, no path) resolved as `<directory>/<name>.toml`.
struct ProfileDirectory {
    var path: String
    /// Who may own a profile whose passcode hash kioskd uses: root and kioskd's own uid.
    var trustedOwners: [UInt32] = Array(Set([0, geteuid()])).sorted()
    /// The profiles parsed so far, shared by the copies of this directory (``ProfileParseCache``).
    var parsed = ProfileParseCache()

    /// What `ListProfiles` says of each installed profile: its name, its description, whether
    /// it can start a session (it parses, and a hash it holds is in a private file), whether it
    /// holds a passcode hash. Names that are not plain profile names are left out; at most 1024.
    func list() -> [(name: String, description: String, checks: Bool, holdsHash: Bool)] {
        Files.names(in: path, ending: ".toml", limit: 1024).compactMap { name in
            guard (try? Profile.validateName(name)) != nil else { return nil }
            let file = path + "/" + name + ".toml"
            guard let read = try? Self.read(file) else { return nil }
            guard let profile = try? parsed.parse(bytes: read.bytes, file: file) else {
                return (name, "", false, false)
            }
            let usable = (try? checkHashFile(profile, name: name, file: file, mode: read.mode, owner: read.owner)) != nil
            return (name, profile.description, usable, profile.passcodeHash != nil)
        }
    }

    /// The `app-owner` of every installed profile that names `app` (a user name looked up in the
    /// user database), or nil when none names it: then `app` is anyone's to register first.
    /// Profiles that do not parse claim nothing.
    func claims(of app: AppID) -> [Profile.AppOwner?]? {
        var owners: [Profile.AppOwner?] = []
        var claimed = false
        for name in Files.names(in: path, ending: ".toml", limit: 1024) {
            guard (try? Profile.validateName(name)) != nil,
                let read = try? Self.read(path + "/" + name + ".toml"),
                let profile = try? parsed.parse(bytes: read.bytes, file: name + ".toml"),
                profile.app == app
            else { continue }
            claimed = true
            owners.append(Self.resolved(profile).appOwner)
        }
        return claimed ? owners : nil
    }

    /// `profile` with its `app-owner` user name looked up (getpwnam_r) as a uid; a name this
    /// machine does not know stays a name, which no uid is.
    static func resolved(_ profile: Profile) -> Profile {
        guard case .user(let name) = profile.appOwner, let uid = uid(ofUser: name) else { return profile }
        var copy = profile
        copy.appOwner = .uid(uid)
        return copy
    }

    /// The uid of the user `name`, from the user database. The corresponding C call is
    /// `getpwnam_r`.
    static func uid(ofUser name: String) -> UInt32? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let status = getpwnam_r(name, &entry, &buffer, buffer.count, &found)
        guard status == 0, found != nil else { return nil }
        return entry.pw_uid
    }

    /// Reads and parses the profile `name`. A profile with a passcode hash is used only when its
    /// file is private to root or kioskd's uid (``PasscodeFileSafety``); the mode and owner are
    /// those of the file read (`fstat` on the same fd), so a swap between check and read is moot.
    /// - Throws: `InvalidArgs` for a name that is not a plain file name, a profile that does not
    ///   parse (with its `file:line:col` diagnostics) or an unsafe file holding a hash;
    ///   `UnknownProfile` when there is no such file.
    func load(_ name: String) throws(KioskError) -> Profile {
        try loadWithSource(name).profile
    }

    /// ``load(_:)``, with the file's text (kept in the state file if a later reload fails).
    func loadWithSource(_ name: String) throws(KioskError) -> SessionMachine.LoadedProfile {
        try Profile.validateName(name)
        let file = path + "/" + name + ".toml"
        let read: Files.Regular
        do {
            read = try Self.read(file)
        } catch where error.errno == .noSuchFileOrDirectory {
            throw KioskError(.unknownProfile, "There is no profile \(Text.quoted(name)) (no readable file \(file)).")
        } catch {
            throw KioskError(.unknownProfile, "There is no profile \(Text.quoted(name)) (\(file) \(error.reason)).")
        }
        let profile: Profile
        do {
            profile = try parsed.parse(bytes: read.bytes, file: file)
        } catch {
            throw KioskError(.invalidArgument, "The profile \(Text.quoted(name)) is not valid:\n\(error.description)")
        }
        try checkHashFile(profile, name: name, file: file, mode: read.mode, owner: read.owner)
        return SessionMachine.LoadedProfile(profile: Self.resolved(profile), source: String(decoding: read.bytes, as: UTF8.self))
    }

    /// A profile file's bytes, mode and owner, from one open file that must be regular (a FIFO
    /// or device is refused at once, never waited on) and at most ``Profile/maximumFileSize``.
    static func read(_ file: String) throws(FileError) -> Files.Regular {
        try Files.readRegular(file, limit: Profile.maximumFileSize)
    }

    /// A profile with a passcode hash is usable only from a file private to a trusted owner.
    private func checkHashFile(
        _ profile: Profile, name: String, file: String, mode: UInt32, owner: UInt32
    ) throws(KioskError) {
        guard profile.passcodeHash != nil,
            let problem = PasscodeFileSafety.problem(path: file, mode: mode, owner: owner, trustedOwners: trustedOwners)
        else { return }
        throw KioskError(.invalidArgument, "The profile \(Text.quoted(name)) cannot be used: \(problem).")
    }
}
