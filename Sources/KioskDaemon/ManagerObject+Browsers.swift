import KioskCore
import Logging
import SystemPackage
import SystemdKit

extension ManagerObject {
    // MARK: The browsers' policy (docs/browsers.md)

    /// Has kioskd write the browsers' policy at `paths` from now on. Call before
    /// ``restoreSession()``: the restore's commit writes what the persisted state says, before
    /// anything is reported.
    public func governBrowsers(_ paths: BrowserPolicyPaths) {
        browserPolicy = BrowserPolicyWriter(paths: paths, logger: logger)
    }

    /// The policies the state puts in force: the browser restrictions' states, the active
    /// session's allowed URLs, the web apps' origins.
    var browserPolicies: [BrowserPolicy] { browserPolicies(of: machine) }

    /// The policies `machine`'s state and profile put in force.
    func browserPolicies(of machine: SessionMachine) -> [BrowserPolicy] {
        BrowserPolicy.derive(
            BrowserPolicyInputs(
                state: machine.state, profile: machine.profile, manifests: webApps))
    }

    /// The writing of `machine`'s policies into the browsers' files, for the state writer to run
    /// on its queue right after the state's save (``StateWriter/Write/afterSave``), so that the
    /// fsyncs never hold the loop; nil when the files hold them already. Its result goes to
    /// ``commit(_:browserFiles:)``.
    func browserWrite(for machine: SessionMachine) -> (@Sendable () -> any Sendable)? {
        guard let job = browserPolicy?.job(for: browserPolicies(of: machine)) else { return nil }
        return { job.run() }
    }

    /// Brings the browsers' files to the state just committed, here and now (kioskd's start, and
    /// a change kept although its save failed), then tells of `BrowserPolicies` when they changed.
    func writeBrowserPolicies() {
        guard let browserPolicy else { return }
        browserPoliciesWritten(browserPolicy.job(for: browserPolicies)?.run())
    }

    /// Takes what a write of the browsers' files did (nil: nothing was written), before the
    /// change's signals and reply go out: a session's denials are in the files before it is
    /// reported active. Tells of `BrowserPolicies` and `SessionProblem` when they changed.
    func browserPoliciesWritten(_ outcome: BrowserPolicyWriter.Job.Outcome?) {
        guard let browserPolicy, let outcome else { return }
        let wasProblem = browserPolicy.problem
        if browserPolicy.finish(outcome) { emitPropertiesChanged([Member.browserPolicies]) }
        if browserPolicy.problem != wasProblem { emitSessionProblemChanged() }
    }

    /// `BrowserPolicies` (`a(ssss)`): the policies in the browsers' files, and why.
    var browserProperties: [BusProperty] {
        [
            BusProperty(Member.browserPolicies, "a(ssss)") { [unowned self] in
                Self.browserPoliciesValue(browserPolicy?.inForce ?? [])
            }
        ]
    }

    /// The wire form of `policies`.
    static func browserPoliciesValue(_ policies: [BrowserPolicy]) -> DBusValue {
        .array(
            elementSignature: "(ssss)",
            policies.map {
                .structure([
                    .string($0.browser.rawValue), .string($0.name), .string($0.value.description), .string($0.cause),
                ])
            })
    }

    // MARK: The web apps' manifests (docs/browsers.md § Web apps)

    /// Reads the web apps' manifests in `directory` and declares each app as root's, saved
    /// before the bus name is taken: kioskd's start. Call after ``restoreSession()`` (the
    /// session's profile is in place for the commit). A file that cannot be used is logged with
    /// its problems and declares nothing.
    public func governWebApps(directory: String) {
        let webAppDirectory = WebAppDirectory(path: directory)
        self.webAppDirectory = webAppDirectory
        let reading = webAppDirectory.read()
        logProblems(reading)
        var next = state
        let declared = declare(reading.manifests, into: &next)
        if next != state {
            do {
                try store.save(checkpointed(next))
            } catch {
                logger.error(
                    "Could not save the web apps' declarations",
                    metadata: ["store.path": "\(store.path)", "error": "\(Errno.reason(of: error))"])
                return
            }
            var machine = self.machine
            machine.state = next
            adopt(declared)
            commit(machine)
        } else {
            adopt(declared)
            writeBrowserPolicies()
        }
    }

    /// Reads the manifests again (`ReloadProfiles`, SIGHUP), in turn with the other changes:
    /// new and changed ones declared, a file that cannot be used logged and its app left with
    /// the declaration it had; then runs `next` (the reload's own step).
    func reloadWebApps(then next: @escaping () -> Void) {
        guard let webAppDirectory else { return next() }
        loop.offload(
            to: profileReader, { webAppDirectory.read() },
            then: { [unowned self] reading in
                logProblems(reading)
                let kept = reading.failed.compactMap { id in webApps.first { $0.app == id } }
                change(LogRequester(), .privileged, finally: next) { [unowned self] in
                    var next = state
                    let declared = declare(reading.manifests, into: &next) + kept
                    adopt(declared)
                    guard next != state else {
                        writeBrowserPolicies()  // the origins may have changed
                        return nil
                    }
                    return Plan(next) { [unowned self] in
                        logger.notice("Web apps declared", metadata: ["app.count": "\(declared.count)"])
                    }
                }
            })
    }

    /// The web bridge's unit (docs/browsers.md § The bridge).
    static let bridgeUnit = "kioskd-bridge.service"

    /// After a reload has declared the manifests: systemd reloads kioskd-bridge if it runs (its
    /// `ExecReload=` sends SIGHUP, and the bridge reads the manifests again), so both serve the
    /// same origins. A bridge that is not running reads them when it starts; one that is not
    /// installed (or no systemd, as on a test's private bus) is no failure.
    func reloadBridge() {
        guard webAppDirectory != nil else { return }
        askSystemd("ReloadOrTryRestartUnit", unit: Self.bridgeUnit) { [weak self] error in
            guard let self else { return }
            guard let error else {
                return logger.info(
                    "The web bridge was asked to read the manifests again", metadata: ["unit": "\(Self.bridgeUnit)"])
            }
            let absent = ["org.freedesktop.systemd1.NoSuchUnit", "org.freedesktop.DBus.Error.ServiceUnknown"]
            if let busError = error as? BusError, absent.contains(busError.name) {
                logger.debug(
                    "No web bridge to reload", metadata: ["unit": "\(Self.bridgeUnit)", "error": "\(busError)"])
            } else {
                logger.warning(
                    "Could not have the web bridge read the manifests again; restart it",
                    metadata: ["unit": "\(Self.bridgeUnit)", "error": "\(Errno.reason(of: error))"])
            }
        }
    }

    /// Declares each manifest's app into `state` as root's; returns those declared (one that
    /// the registry refuses, past its caps, is logged and left out).
    private func declare(_ manifests: [WebAppManifest], into state: inout KioskState) -> [WebAppManifest] {
        manifests.filter { manifest in
            do {
                try state.declare(
                    manifest.app, restrictions: manifest.restrictions, uid: 0, isAdmin: true, takeOwnership: true)
                return true
            } catch {
                logger.error(
                    "Could not declare a web app", metadata: ["app.id": "\(manifest.app)", "error": "\(error)"])
                return false
            }
        }
    }

    /// Makes `manifests` the web apps in use: their ids reserved, their origins in the policy.
    private func adopt(_ manifests: [WebAppManifest]) {
        webApps = manifests.sorted { $0.app < $1.app }
        reservedApps.manifests = Set(webApps.map(\.app))
    }

    private func logProblems(_ reading: WebAppDirectoryReading) {
        for problem in reading.problems {
            logger.error(
                "A web app's manifest cannot be used; its app keeps what it had", metadata: ["error": "\(problem)"])
        }
    }
}
