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
        guard let path = Spawn.find(command) else {
            if !missingReported { log("\(command) is not installed: time-limit warnings are not spoken.") }
            missingReported = true
            return
        }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let voice: [String] =
            switch (name, language) {
            case ("espeak-ng", let language?): ["-v", language]
            case ("spd-say", let language?): ["-l", language]
            default: []
            }
        do {
            try Spawn.start([path] + voice + [sentence], stderrToNull: true, watch: false)
        } catch {
            log("Could not run \(path): \(error.message).")
        }
    }
}
