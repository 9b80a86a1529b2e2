import Foundation
import Testing

@testable import KioskctlCommands

/// A fake root directory in /tmp holding only what a test writes.
final class FakeRoot {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("escape-paths-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ file: String, _ text: String) throws {
        let url = URL(fileURLWithPath: path + file)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    func link(_ file: String, to target: String) throws {
        let location = path + file
        try FileManager.default.createDirectory(
            atPath: (location as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: location, withDestinationPath: target)
    }

    /// A fresh Debian 12 install: kernel.sysrq 438, nothing masked, logind and systemd defaults,
    /// a getty on tty1 only, no usbguard.
    static func debianDefaults() throws -> FakeRoot {
        let root = try FakeRoot()
        try root.write("/proc/sys/kernel/sysrq", "438\n")
        try root.write("/etc/systemd/logind.conf", "[Login]\n#NAutoVTs=6\n#ReserveVT=6\n#HandlePowerKey=poweroff\n")
        try root.write("/etc/systemd/system.conf", "[Manager]\n#CtrlAltDelBurstAction=reboot-force\n")
        try root.link(
            "/etc/systemd/system/getty.target.wants/getty@tty1.service", to: "/lib/systemd/system/getty@.service")
        return root
    }

    /// What README § "Locking down the kiosk image" leads to.
    static func lockedDown() throws -> FakeRoot {
        let root = try debianDefaults()
        try root.write("/proc/sys/kernel/sysrq", "0\n")
        try root.link("/etc/systemd/system/ctrl-alt-del.target", to: "/dev/null")
        try root.write("/etc/systemd/system.conf.d/kiosk.conf", "[Manager]\nCtrlAltDelBurstAction=none\n")
        try root.write(
            "/etc/systemd/logind.conf.d/10-kiosk.conf",
            """
            [Login]
            NAutoVTs=0
            ReserveVT=0
            HandlePowerKey=ignore
            HandleRebootKey=ignore
            HandleRebootKeyLongPress=ignore
            HandleSuspendKey=ignore
            HandleSuspendKeyLongPress=ignore
            HandleHibernateKey=ignore

            """)
        try root.write("/usr/sbin/usbguard-daemon", "")
        try root.link(
            "/etc/systemd/system/multi-user.target.wants/usbguard.service", to: "/lib/systemd/system/usbguard.service")
        return root
    }

    func audit() -> [EscapePath.Check: EscapePath] {
        Dictionary(uniqueKeysWithValues: EscapePaths.audit(root: path).map { ($0.check, $0) })
    }
}

@Suite struct EscapePathsTests {
    @Test func aFreshDebianInstallLeavesEveryPathButTheGettysOpen() throws {
        let root = try FakeRoot.debianDefaults()
        let paths = EscapePaths.audit(root: root.path)
        #expect(paths.map(\.check) == EscapePath.Check.allCases)
        let open = Set(paths.filter { $0.state == .open }.map(\.check))
        #expect(open == [.sysrq, .ctrlAltDel, .ctrlAltDelBurst, .logindKeys, .autoVTs, .reservedVT, .usbguard])
        let byCheck = root.audit()
        #expect(
            byCheck[.sysrq]?.detail
                == "kernel.sysrq is 438 (console log level, keyboard control, sync, remount read-only, reboot and power-off, nicing real-time tasks); set kernel.sysrq = 0 in /etc/sysctl.d/."
        )
        #expect(
            byCheck[.logindKeys]?.detail
                == "HandlePowerKey=poweroff, HandleRebootKey=reboot, HandleRebootKeyLongPress=poweroff, HandleSuspendKey=suspend, HandleSuspendKeyLongPress=hibernate, HandleHibernateKey=hibernate; set them to ignore in /etc/systemd/logind.conf.d/."
        )
        #expect(byCheck[.gettys]?.state == .closed)
        #expect(byCheck[.logindIgnoreInhibited]?.state == .closed)
    }

    @Test func theLockedDownImageClosesEveryPath() throws {
        let root = try FakeRoot.lockedDown()
        let paths = EscapePaths.audit(root: root.path)
        #expect(paths.filter { $0.state != .closed } == [])
    }

    @Test func theReportListsEveryCheckWithItsState() throws {
        let root = try FakeRoot.lockedDown()
        try root.write("/proc/sys/kernel/sysrq", "1\n")
        try root.link(
            "/etc/systemd/system/getty.target.wants/getty@tty2.service", to: "/lib/systemd/system/getty@.service")
        #expect(
            EscapePaths.report(EscapePaths.audit(root: root.path)) == """
                2 of 9 escape paths are open (README: "Locking down the kiosk image"):
                  open    sysrq                    kernel.sysrq is 1 (every function); set
                                                   kernel.sysrq = 0 in /etc/sysctl.d/.
                  closed  ctrl-alt-del             ctrl-alt-del.target is masked.
                  closed  ctrl-alt-del-burst       CtrlAltDelBurstAction=none.
                  closed  logind-keys              logind ignores the power, reboot, suspend and
                                                   hibernate keys.
                  closed  logind-ignore-inhibited  logind honours key inhibitors (kioskd's
                                                   power-key lock).
                  closed  autovt                   NAutoVTs=0.
                  closed  reserve-vt               ReserveVT=0.
                  open    getty                    A login prompt is enabled on tty2; systemctl
                                                   disable (or mask) getty@ttyN.service.
                  closed  usbguard                 usbguard.service is enabled.

                """)
        let closed = try FakeRoot.lockedDown()
        #expect(
            EscapePaths.report(EscapePaths.audit(root: closed.path)).hasPrefix("No escape path is open (9 checked).\n"))
    }

    @Test func anUnreadableSysrqIsUnknownNotClosed() throws {
        let root = try FakeRoot.lockedDown()
        try FileManager.default.removeItem(atPath: root.path + "/proc/sys/kernel/sysrq")
        #expect(root.audit()[.sysrq]?.state == .unknown)
        try root.write("/proc/sys/kernel/sysrq", "not a number\n")
        #expect(root.audit()[.sysrq]?.state == .unknown)
    }

    @Test(arguments: [
        // A mask is a link to /dev/null or an empty file, in /etc or in /run.
        ("/etc/systemd/system/ctrl-alt-del.target", "link", EscapePath.State.closed),
        ("/run/systemd/system/ctrl-alt-del.target", "link", .closed),
        ("/etc/systemd/system/ctrl-alt-del.target", "empty", .closed),
        // A copy of the unit, or a link elsewhere, is no mask.
        ("/etc/systemd/system/ctrl-alt-del.target", "[Unit]\nDescription=copy\n", .open),
        ("/etc/systemd/system/ctrl-alt-del.target", "elsewhere", .open),
    ])
    func ctrlAltDelIsClosedOnlyWhenMasked(path: String, how: String, expected: EscapePath.State) throws {
        let root = try FakeRoot.debianDefaults()
        switch how {
        case "link": try root.link(path, to: "/dev/null")
        case "elsewhere": try root.link(path, to: "/lib/systemd/system/reboot.target")
        case "empty": try root.write(path, "")
        default: try root.write(path, how)
        }
        #expect(root.audit()[.ctrlAltDel]?.state == expected)
    }

    @Test func logindDropInsApplyInFileNameOrderAndEtcShadowsUsrLib() throws {
        let root = try FakeRoot.lockedDown()
        // The main file and 10-kiosk.conf say ignore, 50-vendor.conf (later by name, though in
        // /usr/lib) says poweroff: it wins.
        try root.write("/etc/systemd/logind.conf", "[Login]\nHandlePowerKey=ignore\n")
        try root.write("/usr/lib/systemd/logind.conf.d/50-vendor.conf", "[Login]\nHandlePowerKey=poweroff\n")
        #expect(
            root.audit()[.logindKeys]?.detail
                == "HandlePowerKey=poweroff; set them to ignore in /etc/systemd/logind.conf.d/.")
        // A drop-in of the same name in /etc replaces the vendor's.
        try root.write("/etc/systemd/logind.conf.d/50-vendor.conf", "[Login]\n")
        #expect(root.audit()[.logindKeys]?.state == .closed)
        // A later file name overrides an earlier one, wherever it lives; an empty value resets to the default.
        try root.write("/run/systemd/logind.conf.d/90-late.conf", "[Login]\nNAutoVTs=2\nReserveVT=\n")
        #expect(
            root.audit()[.autoVTs]?.detail
                == "NAutoVTs=2: switching to a VT starts a login prompt there; set NAutoVTs=0.")
        #expect(
            root.audit()[.reservedVT]?.detail == "ReserveVT=6: a login prompt always waits on tty6; set ReserveVT=0.")
    }

    @Test func commentsOtherSectionsAndSpacesAreReadAsSystemdDoes() throws {
        let root = try FakeRoot.lockedDown()
        try root.write(
            "/etc/systemd/logind.conf.d/10-kiosk.conf",
            """
            [Login]
            # HandlePowerKey=ignore
            ; ReserveVT=0
            NAutoVTs = 0
            [Other]
            HandleSuspendKey=ignore

            """)
        let paths = root.audit()
        #expect(paths[.autoVTs]?.state == .closed)
        #expect(paths[.reservedVT]?.state == .open)
        #expect(
            paths[.logindKeys]?.detail
                == "HandlePowerKey=poweroff, HandleRebootKey=reboot, HandleRebootKeyLongPress=poweroff, HandleSuspendKey=suspend, HandleSuspendKeyLongPress=hibernate, HandleHibernateKey=hibernate; set them to ignore in /etc/systemd/logind.conf.d/."
        )
    }

    @Test func ignoringInhibitorsIsOpen() throws {
        let root = try FakeRoot.lockedDown()
        try root.write(
            "/etc/systemd/logind.conf.d/zz.conf", "[Login]\nPowerKeyIgnoreInhibited=yes\nSuspendKeyIgnoreInhibited=no\n"
        )
        #expect(
            root.audit()[.logindIgnoreInhibited]?.detail
                == "PowerKeyIgnoreInhibited=yes: kioskd's inhibitor cannot hold those keys; remove these settings.")
    }

    @Test func gettysOnOtherVTsAreOpenUnlessMasked() throws {
        let root = try FakeRoot.lockedDown()
        try root.link(
            "/etc/systemd/system/multi-user.target.wants/getty@tty12.service", to: "/lib/systemd/system/getty@.service")
        try root.link(
            "/etc/systemd/system/getty.target.wants/getty@tty3.service", to: "/lib/systemd/system/getty@.service")
        try root.link(
            "/etc/systemd/system/getty.target.wants/serial-getty@ttyS0.service",
            to: "/lib/systemd/system/serial-getty@.service")
        #expect(
            root.audit()[.gettys]?.detail
                == "A login prompt is enabled on tty3, tty12; systemctl disable (or mask) getty@ttyN.service.")
        try root.link("/etc/systemd/system/getty@tty3.service", to: "/dev/null")
        #expect(
            root.audit()[.gettys]?.detail
                == "A login prompt is enabled on tty12; systemctl disable (or mask) getty@ttyN.service.")
        try root.link("/etc/systemd/system/getty@.service", to: "/dev/null")
        #expect(root.audit()[.gettys]?.state == .closed)
    }

    @Test func usbguardMustBeInstalledAndEnabled() throws {
        let root = try FakeRoot.lockedDown()
        try FileManager.default.removeItem(
            atPath: root.path + "/etc/systemd/system/multi-user.target.wants/usbguard.service")
        #expect(
            root.audit()[.usbguard]?.detail
                == "usbguard is installed but usbguard.service is not enabled; systemctl enable --now usbguard.")
        try FileManager.default.removeItem(atPath: root.path + "/usr/sbin/usbguard-daemon")
        #expect(
            root.audit()[.usbguard]?.detail
                == "usbguard is not installed: any USB device is accepted; apt-get install usbguard.")
    }
}
