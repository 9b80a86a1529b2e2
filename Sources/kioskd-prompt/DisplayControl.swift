import CGtk
import Glibc
import KioskAPI

/// Turns the kiosk's display off and on as kioskd wants it (`DisplayPower`, `[idle]`
/// blank-after, docs/prompt.md § The dark display): kioskd decides, this process — inside the
/// kiosk session, with the compositor's socket kioskd rightly has not — acts. Under Wayland it
/// runs `wlopm --off '*'` / `wlopm --on '*'` (Debian's wlopm, a client of
/// wlr-output-power-management-v1: labwc and sway have it, cage has not); under X11
/// `xset dpms force off` / `on`; or the admin's `--display-command COMMAND`, run as
/// `COMMAND off` / `COMMAND on`. Each is started with `g_spawn_async` and watched: a command
/// that is missing or fails is said on stderr (the journal), once per kind, and the display
/// stays lit — never a dark screen nobody can wake: kioskd holds input only until the next
/// press, which wakes it. When kioskd goes away the display is turned on.
@MainActor final class DisplayControl {
    /// How the display is driven, chosen once, at the first change.
    enum Method: Equatable {
        case command(String)
        case wlopm(String)
        case xset(String)
        /// Nothing here can turn a display off: why.
        case none(String)
    }

    private let command: String?
    private var method: Method?
    /// What this process last asked for.
    private var isOff = false
    private var reported: Set<String> = []

    init(command: String?) { self.command = command }

    /// Says how the display will be turned off, at the kiosk session's start: the method, or why
    /// there is none (then a profile's `[idle] blank-after` holds input until a touch but leaves
    /// the screen lit). wlopm is run once to list the outputs, which fails on a compositor
    /// without wlr-output-power-management-v1 (cage): that is said too.
    func probe() {
        let method = self.method ?? Self.choose(command: command)
        self.method = method
        switch method {
        case .none(let why):
            reportOnce(why)
        case .command(let path):
            log("The display is turned off and on with \(path).")
        case .xset(let path):
            log("The display is turned off and on with \(path) dpms force (X11).")
        case .wlopm(let path):
            log("The display is turned off and on with \(path) (wlr-output-power-management-v1).")
            run(
                [path],
                failure:
                    "the compositor offers no output power control, so the display is not turned off; kioskd still holds input until the next touch wakes it"
            )
        }
    }

    /// Follows kioskd's wish (`on` when kioskd is gone or no session is active).
    func follow(_ power: DisplayPower) {
        let off = power.isOff
        guard off != isOff else { return }
        isOff = off
        let method = self.method ?? Self.choose(command: command)
        self.method = method
        switch method {
        case .none(let why):
            if off { reportOnce(why) }
        case .command(let path):
            run([path, off ? "off" : "on"])
        case .wlopm(let path):
            run([path, off ? "--off" : "--on", "*"])
        case .xset(let path):
            run([path, "dpms", "force", off ? "off" : "on"])
        }
        log(off ? "Display off, as kioskd wants it." : "Display on.")
    }

    /// The admin's command, else wlopm under Wayland, else xset under X11.
    static func choose(command: String?) -> Method {
        if let command {
            guard let path = Spawn.find(command) else {
                return .none("the --display-command \(command) is not installed: the display is not turned off")
            }
            return .command(path)
        }
        if environment("WAYLAND_DISPLAY") != nil {
            if let path = Spawn.find("wlopm") { return .wlopm(path) }
            return .none(
                "wlopm is not installed (Debian 13: apt install wlopm), so the display is not turned off; kioskd still holds input until the next touch wakes it"
            )
        }
        if environment("DISPLAY") != nil, let path = Spawn.find("xset") { return .xset(path) }
        return .none(
            "this kiosk session has no way to turn the display off (neither wlopm under Wayland nor xset under X11); set --display-command"
        )
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    private func reportOnce(_ line: String) {
        guard reported.insert(line).inserted else { return }
        log(line)
    }

    /// Runs `argv` without waiting for it; its exit is watched, and a failure said (with
    /// `failure`, when given, instead of the generic sentence).
    private func run(_ argv: [String], failure: String? = nil) {
        let pid: GPid
        do {
            pid = try Spawn.start(argv, stderrToNull: false, watch: true)
        } catch {
            reportOnce("Could not run \(argv[0]): \(error.message)")
            return
        }
        let name = strdup(argv.joined(separator: " ") + "\u{1F}" + (failure ?? ""))
        g_child_watch_add(
            pid,
            { pid, status, data in
                g_spawn_close_pid(pid)
                guard let data else { return }
                let parts = String(cString: data.assumingMemoryBound(to: CChar.self)).split(
                    separator: "\u{1F}", omittingEmptySubsequences: false)
                free(data)
                var error: UnsafeMutablePointer<GError>?
                if g_spawn_check_wait_status(status, &error) == 0 {
                    // wlopm says why on stderr (the journal); e.g. a compositor without
                    // wlr-output-power-management-v1, as cage.
                    let why = error.map { String(cString: $0.pointee.message) } ?? "status \(status)"
                    if parts.count > 1, !parts[1].isEmpty {
                        log("\(parts[0]) failed (\(why)): \(parts[1])")
                    } else {
                        log(
                            "\(parts[0]) failed (\(why)): the display may stay lit; kioskd still holds input until the next touch"
                        )
                    }
                    g_error_free(error)
                }
            }, name)
    }
}
