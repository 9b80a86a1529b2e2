/// When a snapshot read of an app's states may be believed. The bridge hears signals and reads
/// snapshots over one connection, but their answers reach it on different paths, so a snapshot
/// taken before a change may arrive after that change's signal. A read during which a signal of
/// the same app arrived is therefore read again rather than applied (a later read sees the
/// change), up to `maxAttempts` reads; then it is applied, and the next signal corrects it.
public struct SnapshotReads: Sendable, Equatable {
    /// Reads of one app made in a row before a disturbed one is applied anyway.
    public static let maxAttempts = 4

    private var inFlight: [String: Int] = [:]
    private var disturbed: Set<String> = []
    private var wanted: Set<String> = []

    public init() {}

    /// Whether to start a read of `app` now (false: one is running, and it will be read again).
    public mutating func begin(_ app: String) -> Bool {
        if inFlight[app] != nil {
            wanted.insert(app)
            return false
        }
        inFlight[app] = 1
        return true
    }

    /// A signal of `app` arrived.
    public mutating func signal(_ app: String) {
        if inFlight[app] != nil { disturbed.insert(app) }
    }

    /// What to do with a read of `app` that just finished.
    public enum Outcome: Sendable, Equatable {
        /// Apply it; read again after when `again` (a read was asked for meanwhile).
        case apply(again: Bool)
        /// Throw it away and read again.
        case retry
    }

    /// A read of `app` finished.
    public mutating func finish(_ app: String) -> Outcome {
        let attempts = inFlight[app] ?? 1
        let wasDisturbed = disturbed.remove(app) != nil
        if wasDisturbed && attempts < Self.maxAttempts {
            inFlight[app] = attempts + 1
            return .retry
        }
        inFlight[app] = nil
        let again = wanted.remove(app) != nil
        return .apply(again: again)
    }
}
