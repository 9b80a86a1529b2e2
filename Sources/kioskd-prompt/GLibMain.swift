import CGtk

/// How work reaches GTK's thread. GTK may be used from one thread only, the one running its
/// GLib main loop (here the process's main thread); the bus runs on KioskClient's own sd-event
/// loop thread, and its events come out of an `AsyncStream` on Swift's executors. `post` hands
/// each event over with `g_idle_add_full`, which GLib documents as safe from any thread.
///
/// Why not drive sd-bus from a GLib source instead (`g_unix_fd_add` on `sd_bus_get_fd`): the
/// client library already owns the connection, its reconnects and its ordering guarantees on
/// its loop thread (ManagerMirror); a second way to pump the same sd-bus would duplicate that
/// for a display that gets a few events a second at most. Why not `Task { @MainActor in }`:
/// on Linux the main actor's queue is drained by Dispatch's main queue, which GLib's loop never
/// runs. GTK code is `@MainActor` all the same, and GLib calls back on the main thread, where
/// `MainActor.assumeIsolated` holds.
enum GLibMain {
    private final class Work {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Runs `work` on GTK's thread, at the next turn of its main loop.
    static func post(_ work: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Work(work)).toOpaque()
        g_idle_add_full(
            G_PRIORITY_DEFAULT,
            { data in
                Unmanaged<Work>.fromOpaque(data!).takeRetainedValue().run()
                return 0  // G_SOURCE_REMOVE
            }, box, nil)
    }
}

/// A repeating timer on GTK's thread (`g_timeout_add_full`); stops when released or cancelled.
@MainActor final class Ticker {
    private var source: guint = 0
    private let tick: @MainActor () -> Void

    init(every milliseconds: guint, _ tick: @escaping @MainActor () -> Void) {
        self.tick = tick
        source = g_timeout_add_full(
            G_PRIORITY_DEFAULT, milliseconds,
            { data in
                let ticker = Unmanaged<Ticker>.fromOpaque(data!).takeUnretainedValue()
                MainActor.assumeIsolated { ticker.tick() }
                return 1  // G_SOURCE_CONTINUE
            }, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    /// Removes the GLib source (the source holds this ticker unretained: cancel before release).
    func cancel() {
        if source != 0 { g_source_remove(source) }
        source = 0
    }
}
