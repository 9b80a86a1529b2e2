import Glibc

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One OS-level way out of a guided-access session that kioskd cannot close at the evdev layer:
/// the kernel, systemd and logind act on keys and devices before, or without, kioskd.
/// README § "Locking down the kiosk image" says how to close each one.
struct EscapePath: Equatable, Sendable {
    enum Check: String, CaseIterable, Sendable {
        /// Alt+SysRq, handled by the kernel's sysrq input handler on every keyboard kioskd
        /// has not grabbed (e.g. while kioskd restarts).
        case sysrq
        /// Ctrl+Alt+Del: the kernel tells systemd, which starts ctrl-alt-del.target (a reboot).
        case ctrlAltDel = "ctrl-alt-del"
        /// Seven Ctrl+Alt+Del within 2 s: systemd's CtrlAltDelBurstAction, even when the target is masked.
        case ctrlAltDelBurst = "ctrl-alt-del-burst"
        /// logind powers off, reboots or suspends on the power, reboot, suspend and hibernate keys.
        case logindKeys = "logind-keys"
        /// logind told to ignore inhibitors, so kioskd's power-key inhibitor would not hold.
        case logindIgnoreInhibited = "logind-ignore-inhibited"
        /// logind starts a login prompt on a VT the moment someone switches to it.
        case autoVTs = "autovt"
        /// logind keeps one VT with a login prompt always running.
        case reservedVT = "reserve-vt"
        /// Login prompts enabled on VTs other than the kiosk's tty1.
        case gettys = "getty"
        /// Nothing vets USB devices: a "keyboard" on a stick types into the kiosk at once.
        case usbguard
    }

    enum State: String, Sendable {
        case open, closed
        /// The setting could not be read (e.g. no /proc): neither open nor closed is known.
        case unknown
    }

    var check: Check
    var state: State
    /// One sentence: what was found and, when open, how to close it.
    var detail: String
}

/// Which escape paths are still open on a system, read from the files under `root`: the
/// running kernel's `/proc/sys`, systemd's unit links and masks, and the logind and manager
/// configuration with their drop-ins. It changes nothing and needs no daemon; it reads only
/// below `root`, so a test points it at a fake root.
enum EscapePaths {
    static func audit(root: String = "/") -> [EscapePath] {
        let files = RootFiles(root: root)
        let logind = SystemdConfig.settings(file: "logind.conf", section: "Login", files: files)
        let manager = SystemdConfig.settings(file: "system.conf", section: "Manager", files: files)
        return [
            sysrq(files),
            ctrlAltDel(files),
            ctrlAltDelBurst(manager),
            logindKeys(logind),
            logindIgnoreInhibited(logind),
            autoVTs(logind),
            reservedVT(logind),
            gettys(files),
            usbguard(files),
        ]
    }

    /// The report `kioskctl start` prints: a summary line, then one entry per check, its
    /// detail wrapped so that every line fits 80 columns.
    static func report(_ paths: [EscapePath]) -> String {
        let open = paths.filter { $0.state == .open }.count
        let width = paths.map(\.check.rawValue.count).max() ?? 0
        var lines = [
            open == 0
                ? "No escape path is open (\(paths.count) checked)."
                : "\(open) of \(paths.count) escape paths are open (README: \"Locking down the kiosk image\"):"
        ]
        let indent = 2 + 8 + width + 2
        for path in paths {
            let state = path.state.rawValue.padded(to: 8)
            let name = path.check.rawValue.padded(to: width + 2)
            let detail = TextLayout.wrap(path.detail, width: 80 - indent)
            lines.append("  \(state)\(name)\(detail.first ?? "")")
            lines += detail.dropFirst().map { String(repeating: " ", count: indent) + $0 }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: The checks

    /// The functions each bit of kernel.sysrq enables (Documentation/admin-guide/sysrq.rst).
    static let sysrqFunctions: [(bit: Int, name: String)] = [
        (2, "console log level"), (4, "keyboard control"), (8, "debugging dumps"), (16, "sync"),
        (32, "remount read-only"), (64, "signalling processes"), (128, "reboot and power-off"),
        (256, "nicing real-time tasks"),
    ]

    static func sysrq(_ files: RootFiles) -> EscapePath {
        let path = "/proc/sys/kernel/sysrq"
        guard let text = files.contents(path), let value = Int(text.trimmed()) else {
            return EscapePath(check: .sysrq, state: .unknown, detail: "\(path) could not be read.")
        }
        if value == 0 {
            return EscapePath(check: .sysrq, state: .closed, detail: "kernel.sysrq is 0.")
        }
        let enabled =
            value == 1
            ? "every function" : sysrqFunctions.filter { value & $0.bit != 0 }.map(\.name).joined(separator: ", ")
        return EscapePath(
            check: .sysrq, state: .open,
            detail: "kernel.sysrq is \(value) (\(enabled)); set kernel.sysrq = 0 in /etc/sysctl.d/.")
    }

    static func ctrlAltDel(_ files: RootFiles) -> EscapePath {
        if files.isMasked("ctrl-alt-del.target") {
            return EscapePath(check: .ctrlAltDel, state: .closed, detail: "ctrl-alt-del.target is masked.")
        }
        return EscapePath(
            check: .ctrlAltDel, state: .open,
            detail: "ctrl-alt-del.target is not masked: Ctrl+Alt+Del reboots; systemctl mask ctrl-alt-del.target.")
    }

    static func ctrlAltDelBurst(_ manager: [String: String]) -> EscapePath {
        let action = manager["CtrlAltDelBurstAction"] ?? "reboot-force"
        if action == "none" {
            return EscapePath(check: .ctrlAltDelBurst, state: .closed, detail: "CtrlAltDelBurstAction=none.")
        }
        return EscapePath(
            check: .ctrlAltDelBurst, state: .open,
            detail:
                "CtrlAltDelBurstAction=\(action): 7× Ctrl+Alt+Del in 2 s still acts; set it to none in /etc/systemd/system.conf.d/."
        )
    }

    /// logind's key handling and its defaults (logind.conf(5), systemd 252).
    static let logindKeyDefaults: [(key: String, value: String)] = [
        ("HandlePowerKey", "poweroff"), ("HandlePowerKeyLongPress", "ignore"),
        ("HandleRebootKey", "reboot"), ("HandleRebootKeyLongPress", "poweroff"),
        ("HandleSuspendKey", "suspend"), ("HandleSuspendKeyLongPress", "hibernate"),
        ("HandleHibernateKey", "hibernate"), ("HandleHibernateKeyLongPress", "ignore"),
    ]

    static func logindKeys(_ logind: [String: String]) -> EscapePath {
        let acting = logindKeyDefaults.compactMap { key, fallback -> String? in
            let value = logind[key] ?? fallback
            return value == "ignore" ? nil : "\(key)=\(value)"
        }
        if acting.isEmpty {
            return EscapePath(
                check: .logindKeys, state: .closed,
                detail: "logind ignores the power, reboot, suspend and hibernate keys.")
        }
        return EscapePath(
            check: .logindKeys, state: .open,
            detail: "\(acting.joined(separator: ", ")); set them to ignore in /etc/systemd/logind.conf.d/.")
    }

    static func logindIgnoreInhibited(_ logind: [String: String]) -> EscapePath {
        let keys = [
            "PowerKeyIgnoreInhibited", "RebootKeyIgnoreInhibited", "SuspendKeyIgnoreInhibited",
            "HibernateKeyIgnoreInhibited",
        ]
        let ignoring = keys.filter { SystemdConfig.isTrue(logind[$0]) }.map { "\($0)=\(logind[$0] ?? "")" }
        if ignoring.isEmpty {
            return EscapePath(
                check: .logindIgnoreInhibited, state: .closed,
                detail: "logind honours key inhibitors (kioskd's power-key lock).")
        }
        return EscapePath(
            check: .logindIgnoreInhibited, state: .open,
            detail:
                "\(ignoring.joined(separator: ", ")): kioskd's inhibitor cannot hold those keys; remove these settings."
        )
    }

    static func autoVTs(_ logind: [String: String]) -> EscapePath {
        let value = logind["NAutoVTs"] ?? "6"
        if Int(value) == 0 {
            return EscapePath(check: .autoVTs, state: .closed, detail: "NAutoVTs=0.")
        }
        return EscapePath(
            check: .autoVTs, state: .open,
            detail: "NAutoVTs=\(value): switching to a VT starts a login prompt there; set NAutoVTs=0.")
    }

    static func reservedVT(_ logind: [String: String]) -> EscapePath {
        let value = logind["ReserveVT"] ?? "6"
        if Int(value) == 0 {
            return EscapePath(check: .reservedVT, state: .closed, detail: "ReserveVT=0.")
        }
        return EscapePath(
            check: .reservedVT, state: .open,
            detail: "ReserveVT=\(value): a login prompt always waits on tty\(value); set ReserveVT=0.")
    }

    static func gettys(_ files: RootFiles) -> EscapePath {
        if files.isMasked("getty@.service") {
            return EscapePath(check: .gettys, state: .closed, detail: "getty@.service is masked.")
        }
        var ttys: [Int] = []
        for wants in files.entries("/etc/systemd/system") where wants.hasSuffix(".wants") {
            for unit in files.entries("/etc/systemd/system/\(wants)") {
                guard unit.hasPrefix("getty@tty"), unit.hasSuffix(".service"),
                    let number = Int(unit.dropFirst("getty@tty".count).dropLast(".service".count)), number >= 2,
                    !files.isMasked(unit)
                else { continue }
                ttys.append(number)
            }
        }
        if ttys.isEmpty {
            return EscapePath(check: .gettys, state: .closed, detail: "No login prompt is enabled on tty2 or above.")
        }
        let names = Set(ttys).sorted().map { "tty\($0)" }.joined(separator: ", ")
        return EscapePath(
            check: .gettys, state: .open,
            detail: "A login prompt is enabled on \(names); systemctl disable (or mask) getty@ttyN.service.")
    }

    static func usbguard(_ files: RootFiles) -> EscapePath {
        guard files.exists("/usr/sbin/usbguard-daemon") else {
            return EscapePath(
                check: .usbguard, state: .open,
                detail: "usbguard is not installed: any USB device is accepted; apt-get install usbguard.")
        }
        let enabled = files.entries("/etc/systemd/system").contains { wants in
            wants.hasSuffix(".wants") && files.exists("/etc/systemd/system/\(wants)/usbguard.service")
        }
        guard enabled, !files.isMasked("usbguard.service") else {
            return EscapePath(
                check: .usbguard, state: .open,
                detail: "usbguard is installed but usbguard.service is not enabled; systemctl enable --now usbguard.")
        }
        return EscapePath(check: .usbguard, state: .closed, detail: "usbguard.service is enabled.")
    }
}

/// Reads systemd's configuration files the way systemd does: the main file in /etc, then the
/// drop-ins `<file>.d/*.conf` from /usr/lib, /usr/local/lib, /run and /etc (for one file name,
/// the drop-in in the later directory wins), applied in file-name order; the last assignment of
/// a key wins, and an empty assignment resets it to its default.
enum SystemdConfig {
    static let dropInDirectories = ["/usr/lib/systemd", "/usr/local/lib/systemd", "/run/systemd", "/etc/systemd"]

    static func settings(file: String, section: String, files: RootFiles) -> [String: String] {
        var dropIns: [String: String] = [:]  // file name → path; later directories win
        for directory in dropInDirectories {
            for name in files.entries("\(directory)/\(file).d") where name.hasSuffix(".conf") {
                dropIns[name] = "\(directory)/\(file).d/\(name)"
            }
        }
        var settings: [String: String] = [:]
        let paths = ["/etc/systemd/\(file)"] + dropIns.keys.sorted().compactMap { dropIns[$0] }
        for path in paths {
            guard let text = files.contents(path) else { continue }
            apply(text, section: section, to: &settings)
        }
        return settings
    }

    static func apply(_ text: String, section wanted: String, to settings: inout [String: String]) {
        var section = ""
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmed()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            guard section == wanted, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmed()
            let value = line[line.index(after: equals)...].trimmed()
            settings[key] = value.isEmpty ? nil : value
        }
    }

    /// systemd's boolean spelling of "true".
    static func isTrue(_ value: String?) -> Bool {
        guard let value else { return false }
        return ["1", "yes", "y", "true", "t", "on"].contains(value.lowercased())
    }
}

/// Files below a root directory, named by their absolute path on the system being checked.
struct RootFiles {
    let root: String

    func location(_ path: String) -> String {
        root == "/" ? path : root + path
    }

    func contents(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: location(path)) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Whether `path` exists, a dangling link included (a fake root's links point outside it).
    func exists(_ path: String) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: location(path))) != nil
    }

    /// Names in a directory, sorted; none if it is missing.
    func entries(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: location(path))) ?? []).sorted()
    }

    /// Whether systemd sees `unit` as masked: a link to /dev/null, or an empty file, in /etc or /run.
    func isMasked(_ unit: String) -> Bool {
        for directory in ["/etc/systemd/system", "/run/systemd/system"] {
            let path = location("\(directory)/\(unit)")
            if (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == "/dev/null" { return true }
            var stats = stat()
            if lstat(path, &stats) == 0, stats.st_mode & S_IFMT == S_IFREG, stats.st_size == 0 { return true }
        }
        return false
    }
}
