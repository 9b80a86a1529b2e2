import ArgumentParser
import KioskCore
import KioskFiles

/// `kioskctl web-app check FILE…`: a web app's manifest checked as kioskd reads it
/// (docs/browsers.md § Web apps), offline.
struct WebAppCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web-app",
        abstract: "Check web apps' manifests (offline).",
        subcommands: [Check.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate web apps' manifests; print file:line:col: message for each error.",
            discussion:
                "A manifest (/etc/kioskd/apps/ID.toml) declares a web app's restrictions and the origins whose pages may read their states. Exits 1 if any file has an error."
        )

        @OptionGroup var options: JSONOption
        @OptionGroup(visibility: .hidden) var remote: HostOption

        @Argument(help: "The manifest files to check.")
        var files: [String]

        func validate() throws {
            try remote.refuse(for: "web-app check")
        }

        func run() throws {
            var failed = false
            var checks: [FileCheck] = []
            for file in files {
                do {
                    let read: Files.Regular
                    do {
                        read = try Files.readRegular(file, limit: WebAppManifest.maxBytes)
                    } catch {
                        throw UnreadableFile(path: file, reason: error.reason)
                    }
                    let manifest = try WebAppManifest.parse(bytes: read.bytes, file: file)
                    let count = manifest.restrictions.count
                    checks.append(.passed(file))
                    if !options.json {
                        print(
                            "\(file): ok (\(manifest.app): \(count) restriction\(count == 1 ? "" : "s"), read by \(manifest.origins.map(\.text).joined(separator: ", ")))"
                        )
                    }
                } catch {
                    failed = true
                    checks.append(.failed(file, error))
                    if !options.json { printError("\(error)") }
                }
            }
            if options.json { Output.json(checks) }
            if failed { throw ExitCode.failure }
        }
    }
}
