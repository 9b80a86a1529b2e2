import BusTestSupport
import Foundation
import Glibc
import KioskClient
import KioskCore
import KioskTestSupport
import KioskdProcessTestSupport
import Testing

@testable import KioskctlCommands

/// What kioskctl refuses and how it says so: help text, malformed values (with kioskd's own
/// messages), usage errors (exit 64), a host that cannot be reached, kioskd not running.
extension KioskctlBusTests {
    /// `allow` and `deny` are one command type; their help stays what it was when they were two.
    @Test(arguments: [("allow", "Allow"), ("deny", "Deny")])
    func allowAndDenyHelp(_ verb: String, _ abstract: String) throws {
        let result = try runTool(BuildProducts.path(of: "kioskctl"), [verb, "--help"])
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                OVERVIEW: \(abstract) a restriction of an app (admin).

                USAGE: kioskctl \(verb) [--json] [--host <user@host>] <app> <id>

                ARGUMENTS:
                  <app>                   The app id.
                  <id>                    The restriction id.

                OPTIONS:
                  --json                  Print JSON with stable keys instead of text.
                  -H, --host <user@host>  Operate on the system bus of a remote host over SSH,
                                          as systemctl -H does.
                  --version               Show the version.
                  -h, --help              Show help information.


                """, "\(result)")
    }

    /// Malformed ids and profile names, with kioskd's own message for each: the arguments, the
    /// usage line of the verb, the message. Non-UTF-8 arguments are passed as raw argv bytes
    /// through the shell's printf (`\377`).
    static let malformedValues: [(arguments: [String], usage: String, message: String)] = [
        (
            ["allow", "Bad Id", controls], "allow [--json] [--host <user@host>] <app> <id>",
            "The application id \"Bad Id\" contains ' ' (a space); labels may use only A-Z, a-z, 0-9, '_' and '-'."
        ),
        (
            ["deny", app, ""], "deny [--json] [--host <user@host>] <app> <id>",
            "The restriction id is empty; it must be reverse-DNS like org.example.App."
        ),
        (
            ["deny", app, app + "." + String(repeating: "x", count: 234)],
            "deny [--json] [--host <user@host>] <app> <id>",
            "The restriction id \"org.example.MuseumMap.\(String(repeating: "x", count: 58))…\" is 256 bytes long; at most 255 are allowed."
        ),
        (
            ["deny", app, "org.example.1st"], "deny [--json] [--host <user@host>] <app> <id>",
            "The restriction id \"org.example.1st\" has label 3 starting with a digit, which reverse-DNS forbids."
        ),
        (
            ["restrictions", "org..example"], "restrictions [--json] [--host <user@host>] [--full] <app>",
            "The application id \"org..example\" has an empty label (label 2)."
        ),
        (
            ["start", "../museum"], "start [--json] [--host <user@host>] <profile> [--trial <duration>]",
            "The profile name \"../museum\" is not a plain file name; it must be 1 to 250 characters of A-Z, a-z, 0-9, '_', '.' and '-'."
        ),
        (
            ["start", ""], "start [--json] [--host <user@host>] <profile> [--trial <duration>]",
            "The profile name \"\" is not a plain file name; it must be 1 to 250 characters of A-Z, a-z, 0-9, '_', '.' and '-'."
        ),
        (
            ["start", String(repeating: "p", count: 251)], "start [--json] [--host <user@host>] <profile> [--trial <duration>]",
            "The profile name \"\(String(repeating: "p", count: 80))…\" is not a plain file name; it must be 1 to 250 characters of A-Z, a-z, 0-9, '_', '.' and '-'."
        ),
        (
            ["allow", "org.example.\\377Map", controls], "allow [--json] [--host <user@host>] <app> <id>",
            "The application id is not valid UTF-8 (bad byte sequence near byte 12)."
        ),
        (
            ["deny", app, "org.example.MuseumMap.zo\\303om"], "deny [--json] [--host <user@host>] <app> <id>",
            "The restriction id is not valid UTF-8 (bad byte sequence near byte 24)."
        ),
        (
            ["start", "mus\\377eum"], "start [--json] [--host <user@host>] <profile> [--trial <duration>]",
            "The profile name is not valid UTF-8 (bad byte sequence near byte 3)."
        ),
    ]

    /// `sh -c rawArgv sh BINARY ARG…` runs BINARY with each ARG passed through printf, so that
    /// `\377` in an ARG reaches it as the byte 0xFF.
    static let rawArgv = """
        bin=$1; shift; n=$#
        for a in "$@"; do v=$(printf "${a}x"); set -- "$@" "${v%x}"; done
        shift "$n"
        exec "$bin" "$@"
        """

    /// The messages kioskctl prints are kioskd's: the same values sent over the bus (the valid
    /// UTF-8 ones; D-Bus carries nothing else) come back with the same text.
    @Test func kioskdRefusesMalformedValuesWithTheSameMessages() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        for (arguments, _, message) in Self.malformedValues where !arguments.joined().contains("\\") {
            do {
                switch arguments[0] {
                case "allow", "deny": try await f.manager.setRestrictionState(.deny, of: arguments[2], in: arguments[1])
                case "restrictions": _ = try await f.manager.listRestrictions(of: arguments[1])
                default: try await f.manager.startSession(profile: arguments[1])
                }
                Issue.record("kioskd accepted \(arguments)")
            } catch let error as KioskError {
                #expect(error.code == .invalidArgument)
                #expect(error.message == message)
            }
        }
    }

    /// kioskctl checks ids and profile names itself: a malformed one exits 64 with kioskd's
    /// message and never reaches the bus (here there is none: the address leads nowhere, so a
    /// connection attempt would fail with exit 1).
    @Test(arguments: malformedValues)
    func malformedValuesAreUsageErrors(_ arguments: [String], _ usage: String, _ message: String) throws {
        let result = try runTool(
            "/bin/sh", ["-c", Self.rawArgv, "sh", BuildProducts.path(of: "kioskctl")] + arguments,
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/kioskctl-test-bus"])
        #expect(result.status == 64, "\(result)")
        #expect(result.stdout == "")
        #expect(
            result.stderr
                == "Error: \(message)\nUsage: kioskctl \(usage)\n  See 'kioskctl \(arguments[0]) --help' for more information.\n",
            "\(result)")
    }

    @Test func kioskdNotRunning() async throws {
        let f = try await Fixture(register: false, start: false)
        defer { f.stop() }
        for (verb, what) in [
            (["status"], "read the status"), (["apps"], "list the apps"),
            (["deny", Self.app, Self.controls], "deny \(Self.controls)"), (["start", "museum"], "start the session"),
        ] {
            let result = try runTool(
                "/usr/bin/setsid", ["-w", BuildProducts.path(of: "kioskctl")] + verb, environment: f.bus.environment)
            #expect(result.status == 1)
            #expect(result.stdout == "")
            #expect(result.stderr == "Failed to \(what): kioskd is not running.\n")
        }
    }

    @Test func remoteHostThatCannotBeReachedFails() throws {
        let result = try runTool(BuildProducts.path(of: "kioskctl"), ["-H", "root@nonexistent.invalid", "status"])
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(
            result.stderr.hasSuffix(
                "Failed to read the status: The connection to the system bus of root@nonexistent.invalid closed.\n"),
            "\(result)")
    }

    @Test(arguments: [
        ["allow", "org.example.MuseumMap"], ["deny"], ["start"], ["end", "extra"], ["frobnicate"],
        ["status", "--passcode-stdin"], ["restrictions"], ["passcode", "set", "now"], ["-H"],
    ])
    func usageErrorsExit64(_ arguments: [String]) throws {
        let result = try runTool(BuildProducts.path(of: "kioskctl"), arguments)
        #expect(result.status == 64, "\(result)")
        #expect(result.stdout == "")
        #expect(result.stderr.hasPrefix("Error: "), "\(result)")
    }

    @Test func endHelpStatesThePasscodeRules() throws {
        let result = try runTool(BuildProducts.path(of: "kioskctl"), ["end", "--help"])
        #expect(result.status == 0)
        #expect(
            result.stdout == """
                OVERVIEW: End the session with its passcode.

                The passcode is read from the terminal without echo, or with --passcode-stdin
                from the first line of stdin; never from the command line. Wrong passcodes are
                throttled by kioskd. An admin who does not know the passcode uses force-end.

                USAGE: kioskctl end [--json] [--host <user@host>] [--passcode-stdin]

                OPTIONS:
                  --json                  Print JSON with stable keys instead of text.
                  -H, --host <user@host>  Operate on the system bus of a remote host over SSH,
                                          as systemctl -H does.
                  --passcode-stdin        Read the passcode from the first line of stdin
                                          instead of the terminal.
                  --version               Show the version.
                  -h, --help              Show help information.


                """)
    }
}
