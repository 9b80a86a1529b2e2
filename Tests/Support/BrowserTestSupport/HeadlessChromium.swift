import BusTestSupport
import Foundation
import Glibc
import KioskTestSupport

/// Debian's `chromium`, headless, driven over the DevTools protocol, with a managed policy the
/// test writes and a web of its own (docs/browsers.md § Chromium policies and when they apply).
///
/// It runs in private mount and network namespaces that a holder process (`unshare --mount --net
/// --propagation private`, then `sleep`) keeps alive, and that Chromium and the test's web server
/// (Tests/Support/chromium-web) join with `nsenter`:
/// - `/etc/chromium` is a temp directory bind-mounted over the machine's (a copy of its
///   `master_preferences` and `policies/managed/`, ``policyDirectory``), so the test writes
///   Chromium's managed policy and never touches the machine's /etc. (The machine has no
///   `/etc/chromium/policies` to mount over: creating it would be touching /etc.)
/// - the network has only `lo`, up, with 127.0.0.1 and ``publicAddress``: fixed ports, nothing
///   from outside, no traffic from Chromium to the internet.
///
/// Chromium runs as root, which it refuses without `--no-sandbox` (CI runs the tests as root), with
/// a fresh `--user-data-dir` and `HOME` in the temp dir (downloads land in ``downloadsDirectory``),
/// and buses that do not exist (it never talks to the machine's D-Bus). The test talks to it over
/// `--remote-debugging-pipe`: fd 3 carries the test's commands, fd 4 Chromium's answers and events,
/// each a JSON object ended by a NUL byte. No port, no WebSocket.
///
/// ``stop()`` (and `deinit`) SIGKILL Chromium's process group, the web server and the holder, and
/// remove the temp dir; ``with(policy:arguments:_:)`` stops it however the body ends.
public final class HeadlessChromium: @unchecked Sendable {
    /// Debian's launcher (it sources /etc/chromium.d and runs /usr/lib/chromium/chromium).
    public static let executable = "/usr/bin/chromium"
    /// The namespace's public address: TEST-NET-3, on `lo`, which Local Network Access calls public.
    public static let publicAddress = "203.0.113.1"
    /// The loopback web site: chromium-web's pages.
    public static let loopbackSite = "http://127.0.0.1:8080"
    /// The same pages from the public address.
    public static let publicSite = "http://203.0.113.1"
    /// chromium-web's Server-Sent Events: the stand-in for a loopback bridge.
    public static let bridgeEvents = "http://127.0.0.1:8765/events"
    /// The policy file's name in ``policyDirectory`` (the name kioskd writes).
    public static let policyFileName = "kioskd.json"

    /// Tests/Support/chromium-web.
    static let webServer = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("chromium-web").path

    /// Whether Debian's chromium is installed (`make deps-browser`).
    public static var isInstalled: Bool { access(executable, X_OK) == 0 }

    /// `chromium --version`'s line (e.g. "Chromium 156.0.8078.108 built on Debian GNU/Linux 12
    /// (bookworm)"), for the test's record.
    public static func version() throws -> String {
        let out = try runTool(executable, ["--version"])
        guard out.status == 0 else { throw HarnessError("chromium --version failed: \(out)") }
        return out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The temp dir everything lives in.
    public let directory: URL
    /// What Chromium sees as `/etc/chromium/policies/managed`.
    public let policyDirectory: URL
    /// Chromium's download directory (`$HOME/Downloads`).
    public let downloadsDirectory: URL
    /// Chromium's stdout and stderr, for diagnosing a failure.
    public let logPath: String
    /// The page target's DevTools session, attached at start unless DevTools is denied then.
    public private(set) var session: String?

    private var holder: ChildProcess?
    private var web: ChildProcess?
    private var browser: ChildProcess?
    private var toBrowser: Int32 = -1
    private var fromBrowser: Int32 = -1
    private var buffer: [UInt8] = []
    private var pending: [[String: Any]] = []
    private var nextID = 0
    private var pageTarget: String?
    private var stopped = false

    /// Starts the namespaces, the web server and Chromium (with `policy` written as
    /// ``policyFileName`` first, when given; with `managedDirectory`, that directory — kioskd's
    /// own `--chromium-policy-dir` — bind-mounted as Chromium's managed policy directory, so
    /// Chromium reads and watches the very files written there; `arguments` added to Chromium's),
    /// then attaches to its page. A policy that denies DevTools leaves ``session`` nil: the
    /// attach is refused.
    public init(
        policy: [String: Any]? = nil, managedDirectory: URL? = nil, arguments: [String] = [],
        timeout: Duration = .seconds(30)
    ) throws {
        guard getuid() == 0 else {
            throw HarnessError("HeadlessChromium needs root (mount and network namespaces); uid is \(getuid()).")
        }
        guard Self.isInstalled else {
            throw HarnessError("\(Self.executable) is missing: install Debian's chromium (make deps-browser).")
        }
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("chromium-\(UUID().uuidString.prefix(8))")
        let etc = directory.appendingPathComponent("etc-chromium")
        policyDirectory = managedDirectory ?? etc.appendingPathComponent("policies/managed")
        let home = directory.appendingPathComponent("home")
        downloadsDirectory = home.appendingPathComponent("Downloads")
        logPath = directory.appendingPathComponent("chromium.log").path
        do {
            try start(
                etc: etc, home: home, policy: policy, bindsManagedDirectory: managedDirectory != nil, arguments: arguments,
                timeout: timeout)
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Runs `body` with a started Chromium and stops it after, whether `body` returns or throws.
    public static func with(
        policy: [String: Any]? = nil, managedDirectory: URL? = nil, arguments: [String] = [],
        _ body: (HeadlessChromium) async throws -> Void
    ) async throws {
        let chromium = try HeadlessChromium(policy: policy, managedDirectory: managedDirectory, arguments: arguments)
        defer { chromium.stop() }
        try await body(chromium)
    }

    private func start(
        etc: URL, home: URL, policy: [String: Any]?, bindsManagedDirectory: Bool, arguments: [String],
        timeout: Duration
    ) throws {
        // The managed directory's mount point is there whichever directory is mounted on it.
        for dir in [directory, etc, etc.appendingPathComponent("policies/managed"), policyDirectory, home] {
            try FileManager.default.createDirectory(
                at: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        let preferences = "/etc/chromium/master_preferences"
        if FileManager.default.fileExists(atPath: preferences) {
            try FileManager.default.copyItem(atPath: preferences, toPath: etc.appendingPathComponent("master_preferences").path)
        }
        if let policy { try writePolicy(policy) }
        // chrome://local-state is one of the "internal debugging pages", off unless Local State says so.
        let profile = directory.appendingPathComponent("profile")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        try Data(#"{"internal_only_uis_enabled": true}"#.utf8).write(to: profile.appendingPathComponent("Local State"))

        // The namespaces, kept by a holder that says "ready" once they are set up.
        let holderLog = directory.appendingPathComponent("holder.log").path
        let script = """
            set -e
            mount --bind "$1" /etc/chromium
            if [ -n "$2" ]; then mount --bind "$2" /etc/chromium/policies/managed; fi
            ip link set lo up
            ip addr add \(Self.publicAddress)/32 dev lo
            echo ready
            exec sleep infinity
            """
        holder = try Self.spawnLogged(
            "/usr/bin/unshare",
            [
                "--mount", "--net", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh", etc.path,
                bindsManagedDirectory ? policyDirectory.path : "",
            ],
            log: holderLog)
        try waitForReady(holderLog, "the namespaces' holder", holder!, timeout: timeout)

        let webLog = directory.appendingPathComponent("web.log").path
        web = try Self.spawnLogged("/usr/bin/nsenter", nsenter + ["/usr/bin/python3", Self.webServer], log: webLog)
        try waitForReady(webLog, "chromium-web", web!, timeout: timeout)

        // The DevTools pipe: the test writes to fd 3, reads fd 4. High fd numbers, so that the
        // child's dup2 to 3 and 4 never clobbers one another.
        var commands: [Int32] = [0, 0]
        var answers: [Int32] = [0, 0]
        guard pipe(&commands) == 0, pipe(&answers) == 0 else {
            throw HarnessError("pipe for the DevTools pipe failed: \(String(cString: strerror(errno))).")
        }
        for fd in [commands[1], answers[0]] { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let childReads = fcntl(commands[0], F_DUPFD_CLOEXEC, 100)
        let childWrites = fcntl(answers[1], F_DUPFD_CLOEXEC, 100)
        close(commands[0])
        close(answers[1])
        toBrowser = commands[1]
        fromBrowser = answers[0]
        defer {
            close(childReads)
            close(childWrites)
        }
        let log = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(log) }
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = home.path
        env["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        env["XDG_CACHE_HOME"] = home.appendingPathComponent(".cache").path
        env["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(directory.path)/no-system-bus"
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(directory.path)/no-session-bus"
        env.removeValue(forKey: "DISPLAY")
        env.removeValue(forKey: "WAYLAND_DISPLAY")
        let flags = [
            // Root cannot run Chromium's sandbox: CI runs the tests as root.
            "--headless", "--no-sandbox", "--remote-debugging-pipe",
            "--user-data-dir=\(directory.appendingPathComponent("profile").path)",
            "--no-first-run", "--disable-gpu", "--disable-background-networking",
        ]
        browser = try ChildProcess.spawn(
            "/usr/bin/nsenter", nsenter + [Self.executable] + flags + arguments + ["about:blank"],
            environment: env, stdout: log, stderr: log, extraFiles: [3: childReads, 4: childWrites],
            processGroup: true)
        try attachToPage()
    }

    /// `nsenter`'s arguments that join the holder's namespaces.
    private var nsenter: [String] {
        guard let pid = holder?.pid else { return [] }
        return ["--mount=/proc/\(pid)/ns/mnt", "--net=/proc/\(pid)/ns/net", "--"]
    }

    private static func spawnLogged(_ path: String, _ arguments: [String], log: String) throws -> ChildProcess {
        let fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(fd) }
        return try ChildProcess.spawn(path, arguments, stdout: fd, stderr: fd)
    }

    private func waitForReady(_ log: String, _ what: String, _ process: ChildProcess, timeout: Duration) throws {
        let text = { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        guard eventually(timeout: timeout, every: .milliseconds(10), { text().contains("ready") || !process.isRunning }),
            text().contains("ready")
        else { throw HarnessError("\(what) did not start; its output: \(text())") }
    }

    /// Attaches to the page Chromium opened (``session``). When DevTools are denied, the attach
    /// fails with ``DevToolsError`` "Not allowed" and ``session`` stays nil.
    private func attachToPage() throws {
        let targets = try send("Target.getTargets")["targetInfos"] as? [[String: Any]] ?? []
        guard let page = targets.first(where: { $0["type"] as? String == "page" })?["targetId"] as? String else {
            throw HarnessError("Chromium has no page target: \(targets)")
        }
        pageTarget = page
        do {
            try attach()
        } catch let error as DevToolsError where error.message == "Not allowed" {
            session = nil
        }
    }

    /// Attaches a new session to the page target (after a detach); throws ``DevToolsError``
    /// "Not allowed" when DevTools are denied.
    @discardableResult
    public func attach() throws -> String {
        guard let pageTarget else { throw HarnessError("Chromium has no page target to attach to.") }
        let result = try send("Target.attachToTarget", ["targetId": pageTarget, "flatten": true])
        guard let id = result["sessionId"] as? String else { throw HarnessError("attachToTarget gave no session: \(result)") }
        session = id
        _ = try send("Page.enable", session: id)
        return id
    }

    // MARK: The DevTools protocol

    /// Sends `method` with `params` (to the browser, or to `session`) and returns its result;
    /// a protocol error throws ``DevToolsError``. Events read meanwhile are kept for ``event(_:timeout:where:)``.
    @discardableResult
    public func send(
        _ method: String, _ params: [String: Any] = [:], session: String? = nil, timeout: Duration = .seconds(30)
    ) throws -> [String: Any] {
        nextID += 1
        let id = nextID
        var message: [String: Any] = ["id": id, "method": method, "params": params]
        if let session { message["sessionId"] = session }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(toBrowser, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw HarnessError("writing \(method) to Chromium's pipe failed: \(String(cString: strerror(errno))); \(logTail)") }
            offset += n
        }
        let answer = try read(until: timeout, what: method) { $0["id"] as? Int == id }
        if let error = answer["error"] as? [String: Any] {
            throw DevToolsError(method: method, code: error["code"] as? Int ?? 0, message: error["message"] as? String ?? "\(error)")
        }
        return answer["result"] as? [String: Any] ?? [:]
    }

    /// Waits for an event named `method` (and matching `condition`) and returns its params;
    /// events that came before it and do not match stay for later calls.
    @discardableResult
    public func event(
        _ method: String, timeout: Duration = .seconds(30), where condition: ([String: Any]) -> Bool = { _ in true }
    ) throws -> [String: Any] {
        let message = try read(until: timeout, what: "the event \(method)") {
            $0["method"] as? String == method && condition($0["params"] as? [String: Any] ?? [:])
        }
        return message["params"] as? [String: Any] ?? [:]
    }

    /// Forgets the events read so far (before an action whose events a test will wait for).
    public func discardEvents() { pending.removeAll() }

    private func read(until timeout: Duration, what: String, _ matches: ([String: Any]) -> Bool) throws -> [String: Any] {
        if let index = pending.firstIndex(where: matches) { return pending.remove(at: index) }
        let deadline = ContinuousClock.now + timeout
        while true {
            while let end = buffer.firstIndex(of: 0) {
                let line = Data(buffer[..<end])
                buffer.removeSubrange(...end)
                guard let message = try JSONSerialization.jsonObject(with: line) as? [String: Any] else { continue }
                if matches(message) { return message }
                pending.append(message)
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw HarnessError("Chromium did not send \(what) in time; \(logTail)") }
            var fds = pollfd(fd: fromBrowser, events: Int16(POLLIN), revents: 0)
            let ms = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&fds, 1, min(ms, 1000))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fromBrowser, $0.baseAddress, $0.count) }
            guard n > 0 else { throw HarnessError("Chromium closed its DevTools pipe while the test waited for \(what); \(logTail)") }
            buffer.append(contentsOf: chunk[..<n])
        }
    }

    /// The last lines Chromium logged.
    public var logTail: String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return "its log ends: " + text.split(separator: "\n").suffix(8).joined(separator: "\n")
    }

    // MARK: What a test asks

    /// The browser's product and version (`Browser.getVersion`), e.g. "Chrome/156.0.8078.108":
    /// a browser-level command, answered even when DevTools are denied to pages.
    public func product() throws -> String {
        try send("Browser.getVersion")["product"] as? String ?? ""
    }

    /// Navigates the page to `url`, waiting for its load event when it loads.
    public func navigate(_ url: String, timeout: Duration = .seconds(30)) throws -> NavigationOutcome {
        let session = try requireSession()
        discardEvents()
        let result = try send("Page.navigate", ["url": url], session: session, timeout: timeout)
        if let error = result["errorText"] as? String {
            return result["isDownload"] as? Bool == true ? .download(error) : .failed(error)
        }
        try event("Page.loadEventFired", timeout: timeout)
        return .loaded
    }

    /// Evaluates `expression` in the page (awaiting a promise) and returns its value as JSON gives
    /// it (strings, numbers, booleans, arrays, dictionaries, or nil); a thrown exception throws.
    public func evaluate(_ expression: String, timeout: Duration = .seconds(30)) throws -> Any? {
        let result = try send(
            "Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true],
            session: try requireSession(), timeout: timeout)
        if let exception = result["exceptionDetails"] as? [String: Any] {
            throw HarnessError("the page's script threw: \(exception)")
        }
        return (result["result"] as? [String: Any])?["value"]
    }

    private func requireSession() throws -> String {
        guard let session else { throw HarnessError("no DevTools session: Chromium refused the attach (DevTools denied?)") }
        return session
    }

    // MARK: Policy

    /// Writes `policy` as ``policyFileName`` in ``policyDirectory`` (written to a temp name and
    /// renamed, as a daemon replaces it), where Chromium's directory watcher finds it.
    public func writePolicy(_ policy: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: policy, options: [.sortedKeys, .prettyPrinted])
        let temp = policyDirectory.appendingPathComponent(".\(Self.policyFileName).new")
        try data.write(to: temp)
        chmod(temp.path, 0o644)
        guard rename(temp.path, policyDirectory.appendingPathComponent(Self.policyFileName).path) == 0 else {
            throw HarnessError("renaming the policy file failed: \(String(cString: strerror(errno))).")
        }
    }

    /// The policies Chromium reports as set, read from its own `chrome://policy` page (the rows of
    /// its policy tables whose source is set: name, value as the page shows it, source, status and
    /// error text). It navigates the page there.
    public func policies(timeout: Duration = .seconds(15)) throws -> [ReportedPolicy] {
        if try evaluate("location.href") as? String != "chrome://policy/" {
            guard case .loaded = try navigate("chrome://policy") else {
                throw HarnessError("chrome://policy did not load.")
            }
        }
        // The tables fill in once the page has the browser's answer; every known policy gets a
        // row (most "Not set."), so an empty list means "not yet".
        let rows = try eventually(timeout: timeout, every: .milliseconds(50), { try self.policyRows() }, until: { !$0.isEmpty })
        return rows.filter { !$0.source.isEmpty }
    }

    /// The policies Chromium reports, once `condition` holds for them (or the last read, after `timeout`).
    public func policies(
        timeout: Duration = .seconds(30), until condition: ([ReportedPolicy]) -> Bool
    ) throws -> [ReportedPolicy] {
        try eventually(timeout: timeout, every: .milliseconds(100), { try self.policies() }, until: condition)
    }

    /// Waits until Chromium's directory watcher is on: a file written into ``policyDirectory`` in
    /// Chromium's first 2–3 seconds is never seen (the watcher starts with the tasks Chromium
    /// defers until after its start-up; the next periodic reload is 15 minutes later). It writes a
    /// probe file (`DefaultBrowserSettingEnabled`, which a headless browser never uses), rewritten
    /// every 8 s until chrome://policy shows it (not more often: the watcher reads the directory
    /// only once nothing in it changed for 5 s), then removes it and waits until that is seen too:
    /// after this, a change to the directory is picked up after the watcher's settle delay.
    public func waitUntilWatchingPolicies(timeout: Duration = .seconds(60)) throws {
        let probe = policyDirectory.appendingPathComponent("00-watch-probe.json")
        let deadline = ContinuousClock.now + timeout
        var seen = false
        while !seen, ContinuousClock.now < deadline {
            try Data(#"{"DefaultBrowserSettingEnabled": false}"#.utf8).write(to: probe)
            seen = try policies(timeout: .seconds(8)) { $0.contains { $0.name == "DefaultBrowserSettingEnabled" } }
                .contains { $0.name == "DefaultBrowserSettingEnabled" }
        }
        guard seen else { throw HarnessError("Chromium never picked up a policy file written while it runs.") }
        try FileManager.default.removeItem(at: probe)
        let gone = try policies(timeout: deadline - ContinuousClock.now) { !$0.contains { $0.name == "DefaultBrowserSettingEnabled" } }
        guard !gone.contains(where: { $0.name == "DefaultBrowserSettingEnabled" }) else {
            throw HarnessError("Chromium did not see its watch probe removed: \(gone)")
        }
    }

    /// Presses chrome://policy's "Reload policies" button: Chromium reads its policy files now
    /// rather than when its directory watcher's settle delay is over.
    public func reloadPolicies() throws {
        _ = try policies()
        let clicked = try evaluate(
            Self.withDeep("(() => { const b = deep(document).find(e => e.id === 'reload-policies'); if (!b) return false; b.click(); return true; })()"))
        guard clicked as? Bool == true else { throw HarnessError("chrome://policy has no Reload policies button.") }
    }

    private func policyRows() throws -> [ReportedPolicy] {
        let json = try evaluate(Self.withDeep(Self.rowsScript)) as? String ?? "[]"
        let rows = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: String]] ?? []
        return rows.map {
            ReportedPolicy(
                name: $0["name"] ?? "", value: $0["value"] ?? "", source: $0["source"] ?? "",
                status: $0["status"] ?? "", errors: $0["errors"] ?? "", warnings: $0["warnings"] ?? "")
        }
    }

    /// `expression` with `deep(root)` in scope: every element under `root`, through shadow roots
    /// (chrome://policy is built of custom elements).
    private static func withDeep(_ expression: String) -> String {
        """
        ((deep) => (\(expression)))((root) => { const all = []; const walk = (r) => {
          for (const e of r.querySelectorAll('*')) { all.push(e); if (e.shadowRoot) walk(e.shadowRoot); } };
          walk(root); return all; })
        """
    }
    private static let rowsScript = """
        (() => { const text = (r, s) => { const e = r.querySelector(s); return e ? e.textContent.trim() : ''; };
          return JSON.stringify(deep(document).filter(e => e.tagName === 'POLICY-ROW').map(e => {
            const r = e.shadowRoot || e;
            return { name: text(r, '.policy.row .name'), value: text(r, '.value.row .value'),
              source: text(r, '.policy.row .source'), status: text(r, '.policy.row .messages'),
              errors: text(r, '.errors.row .value'), warnings: text(r, '.warnings.row .value') }; })); })()
        """

    /// The profile preference `path` (dotted, e.g. `download_restrictions`) as chrome://prefs-internals
    /// shows it: its value and where it comes from (`managed` when a policy sets it, `default`, …).
    /// It navigates the page there.
    public func preference(_ path: String) throws -> Preference? {
        try storedPreference(path, page: "chrome://prefs-internals")
    }

    /// The browser-wide ("local state") preference `path`, as chrome://local-state shows it.
    public func localStatePreference(_ path: String) throws -> Preference? {
        try storedPreference(path, page: "chrome://local-state")
    }

    private func storedPreference(_ path: String, page: String) throws -> Preference? {
        let outcome = try navigate(page)
        guard outcome == .loaded else { throw HarnessError("\(page) did not load: \(outcome).") }
        let text = try evaluate("document.body.innerText") as? String ?? ""
        guard var node: Any? = try? JSONSerialization.jsonObject(with: Data(text.utf8)) else {
            throw HarnessError("\(page) shows no JSON: \(text.prefix(300))")
        }
        for key in path.split(separator: ".") { node = (node as? [String: Any])?[String(key)] }
        guard let leaf = node as? [String: Any], leaf.keys.contains("value") else { return nil }
        return Preference(value: leaf["value"], metadata: leaf["metadata"] as? [String] ?? [])
    }

    // MARK: Processes

    /// Starts `path` with `arguments` in the browser's namespaces (its /etc/chromium, its network).
    public func spawnInNamespaces(_ path: String, _ arguments: [String], log: String) throws -> ChildProcess {
        try Self.spawnLogged("/usr/bin/nsenter", nsenter + [path] + arguments, log: log)
    }

    /// Kills Chromium's process group, the web server and the holder, and removes the temp dir.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        if let browser {
            kill(-browser.pid, SIGKILL)
            browser.wait(timeout: .seconds(5))
        }
        for process in [web, holder].compactMap({ $0 }) {
            process.signal(SIGKILL)
            process.wait(timeout: .seconds(5))
        }
        if toBrowser >= 0 { close(toBrowser) }
        if fromBrowser >= 0 { close(fromBrowser) }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// How a navigation ended.
public enum NavigationOutcome: Equatable, Sendable, CustomStringConvertible {
    /// The page loaded (its load event fired).
    case loaded
    /// It failed with this net error (e.g. "net::ERR_BLOCKED_BY_ADMINISTRATOR").
    case failed(String)
    /// The response was a download, which ends the navigation (net::ERR_ABORTED) and starts it.
    case download(String)

    public var description: String {
        switch self {
        case .loaded: "loaded"
        case .failed(let error): "failed: \(error)"
        case .download(let error): "a download (\(error))"
        }
    }
}

/// A policy as chrome://policy shows it.
public struct ReportedPolicy: Equatable, Sendable, CustomStringConvertible {
    /// The policy's name (e.g. `URLBlocklist`).
    public var name: String
    /// Its value as the page prints it (JSON, pretty-printed for lists).
    public var value: String
    /// Where it comes from: "Platform" for /etc/chromium/policies; empty when not set.
    public var source: String
    /// "OK", "Error", "Warning", …
    public var status: String
    /// The error text ("Unknown policy.", "Expected integer value.", …), empty when none.
    public var errors: String
    /// The warning text, empty when none.
    public var warnings: String

    /// The value parsed as JSON (nil when it is not JSON).
    public var json: Any? { try? JSONSerialization.jsonObject(with: Data(value.utf8), options: .fragmentsAllowed) }

    public var description: String { "\(name)=\(value) [\(source), \(status)\(errors.isEmpty ? "" : ": " + errors)]" }
}

/// A preference as chrome://prefs-internals or chrome://local-state shows it.
public struct Preference: @unchecked Sendable, CustomStringConvertible {
    /// Its value (JSON's types).
    public var value: Any?
    /// Where it comes from and who may change it: "managed" when a policy sets it, "default", ….
    public var metadata: [String]
    /// Whether a policy sets it.
    public var isManaged: Bool { metadata.contains("managed") }
    public var description: String { "\(value.map { "\($0)" } ?? "null") \(metadata)" }
}

/// A DevTools protocol error answer.
public struct DevToolsError: Error, CustomStringConvertible {
    /// The method that got it.
    public var method: String
    /// The protocol's error code (-32000 for a server error).
    public var code: Int
    /// Its message ("Not allowed" when DevTools are denied).
    public var message: String
    public var description: String { "Chromium answered \(method) with error \(code): \(message)" }
}
