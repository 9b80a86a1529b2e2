import KioskctlCommands
import KioskdCommand

// kioskd and kioskctl as one executable, installed as /usr/sbin/kioskd with /usr/bin/kioskctl
// a link to it: the name it was run by picks the program. Each static binary carries its own
// copy of the Swift runtime and FoundationEssentials (~14 MB); one binary carries one.
if CommandLine.arguments.first?.split(separator: "/").last == "kioskctl" {
    await KioskctlProgram.main()
} else {
    KioskdProgram.main()
}
