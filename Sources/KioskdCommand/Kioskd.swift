import ArgumentParser
import KioskDaemon
import Logging
import SystemdKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `kioskd`: parses the flags of kioskd(8) (packaging/man/kioskd.8) and runs `KioskService`.
struct Kioskd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kioskd",
        abstract: "Guided access for Linux kiosks: serves org.kioskd.GuidedAccess1 on the system bus."
    )

    @Option(
        name: .customLong("state-dir"),
        help: "Where the state file lives (default: $STATE_DIRECTORY, else /var/lib/kioskd).")
    var stateDirectory: String?

    @Option(name: .customLong("profile-dir"), help: "Where installed profiles live.")
    var profileDirectory: String = "/etc/kioskd/profiles"

    @Flag(name: .customLong("no-input"), help: "Registry and bus only: broker no input devices.")
    var noInput = false

    @Option(
        name: .customLong("runtime-dir"),
        help: "A directory emptied at every boot (default: $RUNTIME_DIRECTORY, else /run/kioskd).")
    var runtimeDirectory: String?

    @Option(
        name: .customLong("chromium-policy-dir"),
        help: "Chromium's managed policy directory, where kioskd writes its kioskd.json.")
    var chromiumPolicyDirectory: String = "/etc/chromium/policies/managed"

    @Option(
        name: .customLong("firefox-policy-dir"),
        help: "Firefox's policy directory, whose policies.json takes kioskd's keys.")
    var firefoxPolicyDirectory: String = "/etc/firefox/policies"

    @Option(name: .customLong("apps-dir"), help: "Where the web apps' manifests live.")
    var appsDirectory: String = "/etc/kioskd/apps"

    func run() throws {
        LoggingSystem.bootstrap { JournalLogHandler(label: $0, identifier: "kioskd") }
        let environment = ProcessInfo.processInfo.environment["STATE_DIRECTORY"]
        // $STATE_DIRECTORY may list several directories separated by ':'; the first is ours.
        let fromEnvironment = environment?.split(separator: ":").first.map(String.init)
        let runtime = ProcessInfo.processInfo.environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first
        let options = KioskService.Options(
            stateDirectory: stateDirectory ?? fromEnvironment ?? "/var/lib/kioskd",
            profileDirectory: profileDirectory,
            brokerInput: !noInput,
            runtimeDirectory: runtimeDirectory ?? runtime.map(String.init) ?? "/run/kioskd",
            chromiumPolicyDirectory: chromiumPolicyDirectory, firefoxPolicyDirectory: firefoxPolicyDirectory,
            appsDirectory: appsDirectory)
        let code = KioskService.run(options, logger: Logger(label: "kioskd"))
        if code != 0 { throw ExitCode(code) }
    }
}

/// kioskd's entry point, for the `kioskd` executable and for the multi-call binary the package
/// installs as /usr/sbin/kioskd.
public enum KioskdProgram {
    public static func main() {
        Kioskd.main()
    }
}
