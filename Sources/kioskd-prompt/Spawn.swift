import CGtk

/// Starting the commands kioskd-prompt runs (the speech command, the display's), with GLib:
/// found on `PATH`, started with `g_spawn_async` so that the display never waits for one.
enum Spawn {
    /// `program`'s path on `PATH` (or `program` itself when it is a path to an executable); nil
    /// when there is none.
    static func find(_ program: String) -> String? {
        guard let found = g_find_program_in_path(program) else { return nil }
        defer { g_free(found) }
        return String(cString: found)
    }

    /// Starts `argv` (its first element a path), its stdout and `stderr` (false: kept) to
    /// /dev/null. `watch`: the child is not reaped by GLib, and its pid is returned for a child
    /// watch; otherwise GLib reaps it. `setting`: variables set in the child's environment (the
    /// rest is this process's). Throws GLib's message when it cannot be started.
    @discardableResult
    static func start(
        _ argv: [String], stderrToNull: Bool, watch: Bool, setting: [String: String] = [:]
    ) throws(SpawnError) -> GPid {
        var args: [UnsafeMutablePointer<gchar>?] = argv.map { g_strdup($0) } + [nil]
        defer { args.forEach { g_free($0) } }
        var environment: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>? = nil
        if !setting.isEmpty {
            environment = g_get_environ()
            for (name, value) in setting { environment = g_environ_setenv(environment, name, value, 1) }
        }
        defer { g_strfreev(environment) }
        var flags = G_SPAWN_STDOUT_TO_DEV_NULL.rawValue
        if stderrToNull { flags |= G_SPAWN_STDERR_TO_DEV_NULL.rawValue }
        if watch { flags |= G_SPAWN_DO_NOT_REAP_CHILD.rawValue }
        var pid: GPid = 0
        var error: UnsafeMutablePointer<GError>?
        guard g_spawn_async(nil, &args, environment, GSpawnFlags(rawValue: flags), nil, nil, &pid, &error) != 0 else {
            defer { g_error_free(error) }
            throw SpawnError(message: error.map { String(cString: $0.pointee.message) } ?? "unknown error")
        }
        return pid
    }
}

/// Why a command could not be started (GLib's message).
struct SpawnError: Error {
    var message: String
}
