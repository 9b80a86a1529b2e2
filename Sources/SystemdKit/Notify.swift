import SystemPackage

/// Talks to the service manager through `$NOTIFY_SOCKET` (`sd_notify`). Every call is a no-op
/// returning false when the process was not started with a notify socket.
public enum Notify {
    /// Sends `state` lines (`KEY=value`, newline-separated). Returns whether it was sent.
    /// The corresponding C call is `sd_notify`.
    @discardableResult
    public static func send(_ state: String) throws(Errno) -> Bool {
        try CDaemon.notify(state)
    }

    /// `READY=1`, with an optional `STATUS=`.
    @discardableResult
    public static func ready(status: String? = nil) throws(Errno) -> Bool {
        try send("READY=1" + (status.map { "\nSTATUS=\($0)" } ?? ""))
    }

    /// `STATUS=…`: one line shown by `systemctl status`.
    @discardableResult
    public static func status(_ text: String) throws(Errno) -> Bool { try send("STATUS=\(text)") }

    /// `STOPPING=1`.
    @discardableResult
    public static func stopping() throws(Errno) -> Bool { try send("STOPPING=1") }

    /// `WATCHDOG=1`.
    @discardableResult
    public static func watchdog() throws(Errno) -> Bool { try send("WATCHDOG=1") }

    /// The watchdog interval the service manager expects pings within (`$WATCHDOG_USEC`, for this
    /// pid), or nil when there is no watchdog. The corresponding C call is `sd_watchdog_enabled`.
    public static func watchdogInterval() throws(Errno) -> Duration? {
        try CDaemon.watchdogMicroseconds().map { .microseconds(Int64($0)) }
    }

    /// Pings `WATCHDOG=1` from `loop` now and every half interval, so a wedged loop stops the
    /// pings and the service manager restarts the service. Returns nil when there is no watchdog;
    /// keep the source otherwise. Call on the loop thread (or before it runs).
    public static func startWatchdog(on loop: EventLoop) throws(Errno) -> EventSource? {
        guard let interval = try watchdogInterval() else { return nil }
        let half = interval / 2
        return try loop.addTimer(after: .zero, accuracy: half / 10, repeating: half) {
            _ = try? Notify.watchdog()
        }
    }
}
