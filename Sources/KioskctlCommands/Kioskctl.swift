import ArgumentParser
import KioskCore

struct Kioskctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kioskctl",
        abstract: "Control kioskd, guided access for Linux kiosks.",
        discussion: """
            Every verb but `profile` and `replay` talks to kioskd over D-Bus (the system bus, or the one \
            $DBUS_SYSTEM_BUS_ADDRESS names; -H user@host reaches another machine over SSH). \
            --json prints JSON with stable keys.
            Exit status: 0 ok, 1 the operation failed (stderr names the cause), 64 usage error.
            """,
        version: KioskWire.version,
        subcommands: [
            // Over D-Bus, through KioskClient:
            StatusCommand.self,
            AppsCommand.self,
            RestrictionsCommand.self,
            AllowCommand.self,
            DenyCommand.self,
            ForgetCommand.self,
            StartCommand.self,
            EndCommand.self,
            ForceEndCommand.self,
            ExtendCommand.self,
            DeadlineCommand.self,
            CleanCommand.self,
            RegionsCommand.self,
            ProfilesCommand.self,
            ReloadCommand.self,
            ConfirmCommand.self,
            WakeCommand.self,
            BlankCommand.self,
            PasscodeCommand.self,
            MonitorCommand.self,
            // Offline, no daemon:
            ProfileCommand.self,
            WebAppCommand.self,
            ReplayCommand.self,
        ]
    )

    @OptionGroup var options: GlobalOptions
}

/// kioskctl's entry point, for the `kioskctl` executable and for the multi-call binary the
/// package installs as /usr/sbin/kioskd, whose /usr/bin/kioskctl link runs this.
public enum KioskctlProgram {
    public static func main() async {
        await Kioskctl.main()
    }
}
