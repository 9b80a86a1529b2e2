import Glibc
import KioskCore
import KioskFiles
import Logging
import SystemPackage

/// Where the browsers read kioskd's policy, and where kioskd keeps what it holds
/// (docs/browsers.md § What kioskd writes where and when; kioskd(8)'s flags set each).
public struct BrowserPolicyPaths: Sendable, Hashable {
    /// Chromium's managed policy directory, `/etc/chromium/policies/managed`: kioskd writes its
    /// one file there, ``chromiumFile``, and touches nothing else.
    public var chromiumDirectory: String
    /// Firefox's policy directory, `/etc/firefox/policies`: kioskd merges its keys into the
    /// `policies.json` there.
    public var firefoxDirectory: String
    /// Which keys kioskd holds in Firefox's file (and the admin's values they replaced),
    /// `/var/lib/kioskd/firefox-policy-keys.json`.
    public var firefoxHeldFile: String

    public init(chromiumDirectory: String, firefoxDirectory: String, firefoxHeldFile: String) {
        self.chromiumDirectory = chromiumDirectory
        self.firefoxDirectory = firefoxDirectory
        self.firefoxHeldFile = firefoxHeldFile
    }

    /// The name of kioskd's file in ``chromiumDirectory``.
    public static let chromiumFileName = "kioskd.json"

    /// The file kioskd writes for Chromium, `/etc/chromium/policies/managed/kioskd.json`: in the
    /// directory Chromium watches, so that replacing it is a change Chromium sees while it runs
    /// (a file elsewhere, linked from there, is read at Chromium's start only).
    public var chromiumFile: String { chromiumDirectory + "/" + Self.chromiumFileName }

    /// Firefox's file in ``firefoxDirectory``.
    public var firefoxFile: String { firefoxDirectory + "/policies.json" }
}

/// Writes the browsers' policy derived from the state (``BrowserPolicy``) on every commit
/// that changes it: Chromium's whole file, Firefox's keys merged into the admin's file. Decides
/// on the loop; the writing itself (each file fsynced and renamed into place: milliseconds,
/// seconds on a slow card) is a ``Job`` that runs on the state writer's queue right after the
/// state's save, before the change is reported, so input and reads go on meanwhile.
final class BrowserPolicyWriter {
    let paths: BrowserPolicyPaths
    let logger: Logger
    /// The policies last written, nil before the first write (kioskd's start writes whatever
    /// the persisted state says, so a file left by a crash is brought up to date).
    private(set) var written: [BrowserPolicy]?
    /// Those of ``written`` that are in a browser's file: without Firefox's policy directory
    /// (no Firefox here) or after a failed write, that browser's are left out. What
    /// `BrowserPolicies` publishes.
    private(set) var inForce: [BrowserPolicy] = []
    /// Why the last write failed ("" when it did not): part of `SessionProblem`.
    private(set) var problem = ""
    /// Who may own a policy directory: root, and kioskd's own uid.
    var trustedOwners: [UInt32] = Array(Set([0, geteuid()])).sorted()
    /// Runs first in every job, on the thread that writes: a test holds a write here to see
    /// the loop serve meanwhile. nil in kioskd.
    var beforeWrite: (@Sendable () -> Void)?

    init(paths: BrowserPolicyPaths, logger: Logger) {
        self.paths = paths
        self.logger = logger
    }

    /// The writing of `policies`, or nil when they are what was written last (and that write
    /// worked): nothing to do.
    func job(for policies: [BrowserPolicy]) -> Job? {
        guard policies != written || !problem.isEmpty else { return nil }
        return Job(paths: paths, policies: policies, beforeWrite: beforeWrite)
    }

    /// Takes what a job did: the policies written, those in force, why a write failed (logged).
    /// Returns whether ``inForce`` changed.
    @discardableResult
    func finish(_ outcome: Job.Outcome) -> Bool {
        problem = outcome.problems.joined(separator: "; ")
        if !problem.isEmpty {
            logger.error("Could not write the browsers' policy", metadata: ["error": "\(problem)"])
        }
        written = outcome.policies
        let now = outcome.policies.filter { !outcome.missing.contains($0.browser) }
        defer { inForce = now }
        return now != inForce
    }

    /// Brings the files to `policies` here and now, on the calling thread (kioskd's start, and a
    /// change kept although its save failed). Returns whether ``inForce`` changed.
    @discardableResult
    func apply(_ policies: [BrowserPolicy]) -> Bool {
        guard let job = job(for: policies) else { return false }
        return finish(job.run())
    }

    /// Writing one set of policies into the browsers' files: no state of the writer's, so it
    /// runs on any thread.
    struct Job: Sendable {
        let paths: BrowserPolicyPaths
        let policies: [BrowserPolicy]
        let beforeWrite: (@Sendable () -> Void)?

        /// What the job did.
        struct Outcome: Sendable {
            /// The policies it wrote.
            var policies: [BrowserPolicy]
            /// The browsers whose file does not hold them: no policy directory (that browser is
            /// not here), or a write that failed.
            var missing: Set<Browser> = []
            /// Why writes failed, one sentence a browser.
            var problems: [String] = []
        }

        /// Writes Chromium's file and Firefox's keys.
        func run() -> Outcome {
            beforeWrite?()
            var outcome = Outcome(policies: policies)
            do {
                if try !writeChromium() { outcome.missing.insert(.chromium) }
            } catch {
                outcome.problems.append("Chromium's policy could not be written: \(error)")
                outcome.missing.insert(.chromium)
            }
            do {
                if try !writeFirefox() { outcome.missing.insert(.firefox) }
            } catch {
                outcome.problems.append("Firefox's policy could not be written: \(error)")
                outcome.missing.insert(.firefox)
            }
            return outcome
        }

        // MARK: Chromium

        /// Returns false when there is no Chromium here (no policy directory): nothing to write.
        /// (A session of Chromium is refused before, by ``BrowserPolicyWriter/checkReady(for:)``.)
        private func writeChromium() throws -> Bool {
            var directoryStatus = stat()
            guard stat(paths.chromiumDirectory, &directoryStatus) == 0 else { return false }
            try BrowserPolicyWriter.replaceReadable(
                paths.chromiumFile, BrowserPolicy.chromiumDocument(policies), durable: true)
            return true
        }

        // MARK: Firefox

        /// Returns false when there is no Firefox here (no policy directory): nothing to write,
        /// and nothing kioskd held can be there. (A session of Firefox is refused before, by
        /// ``BrowserPolicyWriter/checkReady(for:)``.)
        private func writeFirefox() throws -> Bool {
            let keys = BrowserPolicy.firefoxKeys(policies)
            var merge = readHeld()
            var directoryStatus = stat()
            guard stat(paths.firefoxDirectory, &directoryStatus) == 0 else { return false }
            if keys.isEmpty && merge.held.isEmpty { return true }
            let document = try BrowserPolicyWriter.readFirefoxDocument(paths.firefoxFile)
            let next: JSONValue
            do {
                next = try merge.merge(into: document, keys: keys)
            } catch {
                throw Failure(description: "\(paths.firefoxFile): \(error.description); kioskd leaves it as it is")
            }
            // What kioskd holds first: a crash between the two writes leaves it knowing every key
            // that may be its own.
            try Files.replace(paths.firefoxHeldFile, with: Array(merge.json.pretty.utf8), durable: true)
            try BrowserPolicyWriter.replaceReadable(paths.firefoxFile, next, durable: true)
            return true
        }

        private func readHeld() -> FirefoxPolicyMerge {
            guard let read = try? Files.readRegular(paths.firefoxHeldFile, limit: 1 << 20),
                let json = try? JSONValue.parse(read.bytes), let merge = FirefoxPolicyMerge(json: json)
            else { return FirefoxPolicyMerge() }
            return merge
        }
    }

    private struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Replaces `path` with `document`, mode 0644 whatever the umask: the browser runs as
    /// another user, and a policy file it cannot read is one it ignores. It holds no secret.
    static func replaceReadable(_ path: String, _ document: JSONValue, durable: Bool) throws {
        let mode: FilePermissions = [.ownerReadWrite, .groupRead, .otherRead]
        try Files.replace(path, permissions: mode, durable: durable) { writer in
            try writer.setPermissions(mode)
            try writer.write(Array(document.pretty.utf8))
        }
    }

    /// The admin's `policies.json`, nil when there is none.
    static func readFirefoxDocument(_ path: String) throws -> JSONValue? {
        let bytes: [UInt8]
        switch Result(catching: { () throws(FileError) in try Files.readRegular(path, limit: 1 << 20) }) {
        case .success(let read): bytes = read.bytes
        case .failure(let error) where error.errno == .noSuchFileOrDirectory: return nil
        case .failure(let error): throw error
        }
        guard let document = try? JSONValue.parse(bytes) else {
            throw Failure(description: "\(path) is not JSON; kioskd leaves it as it is")
        }
        return document
    }

    // MARK: Checks before a session

    /// Refuses a session of `app`'s browser whose policy cannot be put in force: its policy
    /// directory missing, not root's or not writable by kioskd; Firefox's file not a policies
    /// document.
    func checkReady(for app: AppID?) throws(KioskError) {
        guard let app, let browser = Browser(app: app) else { return }
        let directory = browser == .chromium ? paths.chromiumDirectory : paths.firefoxDirectory
        var status = stat()
        guard stat(directory, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw KioskError(
                .failed,
                "\(browser.name)'s policy directory \(directory) does not exist, so kioskd cannot put the session's browser restrictions in force; kioskd's package makes it: create it (mkdir -p -m 0755 \(directory)) and restart kioskd, whose sandbox takes only directories that exist when it starts."
            )
        }
        guard trustedOwners.contains(status.st_uid), status.st_mode & 0o022 == 0 else {
            throw KioskError(
                .failed,
                "\(browser.name)'s policy directory \(directory) is owned by uid \(status.st_uid) or writable by others: anyone who can write there can undo the session's browser restrictions. Make it root's, mode 0755."
            )
        }
        // Where kioskd writes must take its writes (a read-only file system, a sandbox without the
        // path, a file where a directory belongs): found now, not once the session is active.
        guard access(directory, W_OK) == 0 else {
            throw KioskError(
                .failed,
                "kioskd cannot write \(browser.name)'s policy in \(directory) (\(Errno(rawValue: Glibc.errno))), so the session's browser restrictions would not be in force."
            )
        }
        switch browser {
        case .chromium:
            break
        case .firefox:
            do {
                var trial = FirefoxPolicyMerge()
                _ = try trial.merge(into: Self.readFirefoxDocument(paths.firefoxFile), keys: [])
            } catch {
                throw KioskError(.failed, "Firefox's policy file cannot take kioskd's keys: \(error)")
            }
        }
    }
}
