import KioskCore
import Logging
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
    var browserPolicies: [BrowserPolicy] {
        BrowserPolicy.derive(
            BrowserPolicyInputs(
                state: state, profile: activeProfile, manifests: browserPolicy?.manifests ?? []))
    }

    /// Brings the browsers' files to the state just committed (before its signals and reply go
    /// out: a session's denials are in the files before it is reported active), then tells of
    /// `BrowserPolicies` when they changed.
    func writeBrowserPolicies() {
        guard let browserPolicy else { return }
        let wasProblem = browserPolicy.problem
        if browserPolicy.apply(browserPolicies) { emitPropertiesChanged([Member.browserPolicies]) }
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
                .structure([.string($0.browser.rawValue), .string($0.name), .string($0.value.description), .string($0.cause)])
            })
    }
}
