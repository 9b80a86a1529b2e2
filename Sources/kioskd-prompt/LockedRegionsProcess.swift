import CGtk
import Glibc
import KioskClient

/// The process that shades the locked regions (``LockedRegionsLayer``): started by
/// kioskd-prompt as `kioskd-prompt --locked-regions`; under Wayland with gtk4-layer-shell in
/// `LD_PRELOAD` (it must be loaded before libwayland-client; kioskd-prompt is built on Debian 12,
/// which has no gtk4-layer-shell to link, and Debian 13 has it: docs/packaging.md), under X11
/// as it is.
enum LockedRegionsProcess {
    /// Starts the layer's process when this session can have one; says in the journal, once,
    /// why not otherwise.
    @MainActor static func start() {
        var setting: [String: String] = [:]
        switch String(cString: kp_display_type_name()) {
        case "GdkWaylandDisplay":
            guard let library = layerShellLibrary() else {
                log(
                    "gtk4-layer-shell is not installed (libgtk4-layer-shell0, Debian 13 and later): locked regions are not shaded."
                )
                return
            }
            setting["LD_PRELOAD"] = getenv("LD_PRELOAD").map { library + ":" + String(cString: $0) } ?? library
        case "GdkX11Display":
            break  // GTK's own X11 backend: nothing to preload
        default:
            return
        }
        let pid: GPid
        do {
            setting["KIOSKD_PROMPT_PARENT"] = String(getpid())
            // Nothing for a screen reader: the shade is drawn for the eye, and an accessible
            // window of the same app id beside the prompt's would be read in its place.
            setting["GTK_A11Y"] = "none"
            pid = try Spawn.start([ownPath(), "--locked-regions"], stderrToNull: false, watch: true, setting: setting)
        } catch {
            log("Could not start the locked regions' layer: \(error.message)")
            return
        }
        g_child_watch_add(
            pid,
            { pid, status, _ in
                g_spawn_close_pid(pid)
                var error: UnsafeMutablePointer<GError>?
                if g_spawn_check_wait_status(status, &error) == 0 {
                    let why = error.map { String(cString: $0.pointee.message) } ?? "status \(status)"
                    log("The locked regions' layer ended (\(why)): locked regions are no longer shaded.")
                    g_error_free(error)
                }
            }, nil)
    }

    /// The layer's process: follows kioskd and shades the regions; never returns. Exits 0 at
    /// once, having said why, where the layer cannot be drawn (cage).
    @MainActor static func run() -> Never {
        // It ends with the kioskd-prompt that started it, which a restarted one replaces with its
        // own: never two layers, never one left behind without a prompt.
        if let parent = getenv("KIOSKD_PROMPT_PARENT").flatMap({ pid_t(String(cString: $0)) }),
            kp_end_with_parent(parent) == 0
        {
            exit(0)
        }
        if let why = LockedRegionsLayer.unavailable() {
            log(why)
            exit(0)
        }
        let layer = LockedRegionsLayer()
        let bridge = BusBridge()
        Task.detached {
            await bridge.run { event in
                switch event {
                case .statusChanged(let status): layer.show(status)
                case .daemonStopped, .disconnected: layer.show(nil)  // no kioskd, no shade
                default: break
                }
            }
        }
        g_main_loop_run(g_main_loop_new(nil, 0))
        exit(0)
    }

    /// gtk4-layer-shell's library where Debian installs it (`/usr/lib/<triplet>/`), or under
    /// /usr/local; nil when it is not installed.
    static func layerShellLibrary() -> String? {
        for pattern in ["/usr/lib/*/libgtk4-layer-shell.so.0", "/usr/lib/libgtk4-layer-shell.so.0", "/usr/local/lib/*/libgtk4-layer-shell.so.0", "/usr/local/lib/libgtk4-layer-shell.so.0"] {
            var found = glob_t()
            defer { globfree(&found) }
            if glob(pattern, 0, nil, &found) == 0, found.gl_pathc > 0, let first = found.gl_pathv[0] {
                return String(cString: first)
            }
        }
        return nil
    }

    /// This binary's path (`/proc/self/exe`).
    static func ownPath() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
