import CGtk

/// Speaks time-limit warnings, as iOS can: `espeak-ng SENTENCE` (Debian's espeak-ng, which
/// the package recommends), started with `g_spawn_async` so that the display never waits for
/// it. GLib reaps the child itself (no G_SPAWN_DO_NOT_REAP_CHILD). When the command is not
/// installed the warning is not spoken, and that is said once on stderr (the journal).
@MainActor final class Speaker {
    let command: String
    private var missingReported = false

    init(command: String) { self.command = command }

    /// Speaks `sentence` in `language`'s voice ("de"; nil: the command's default): espeak-ng's
    /// `-v` and spd-say's `-l`; another command gets the sentence alone.
    func say(_ sentence: String, language: String? = nil) {
        guard let found = g_find_program_in_path(command) else {
            if !missingReported { log("\(command) is not installed: time-limit warnings are not spoken.") }
            missingReported = true
            return
        }
        let path = String(cString: found)
        g_free(found)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let voice: [String] =
            switch (name, language) {
            case ("espeak-ng", let language?): ["-v", language]
            case ("spd-say", let language?): ["-l", language]
            default: []
            }
        var argv: [UnsafeMutablePointer<gchar>?] = ([path] + voice + [sentence]).map { g_strdup($0) } + [nil]
        defer { argv.forEach { g_free($0) } }
        var error: UnsafeMutablePointer<GError>?
        let flags = GSpawnFlags(rawValue: G_SPAWN_STDOUT_TO_DEV_NULL.rawValue | G_SPAWN_STDERR_TO_DEV_NULL.rawValue)
        if g_spawn_async(nil, &argv, nil, flags, nil, nil, nil, &error) == 0 {
            log("Could not run \(path): \(error.map { String(cString: $0.pointee.message) } ?? "unknown error").")
            g_error_free(error)
        }
    }
}
