import KioskCore
import KioskStore

/// Where the daemon's state is saved: `StateStore` in kioskd, an in-memory fake in tests.
///
/// `save` runs off the loop (on `StateWriter`'s queue), one call at a time; when it returns the
/// state must be durable.
public protocol StateSaving: Sendable {
    /// Where the state goes, for logs.
    var path: String { get }
    func save(_ state: KioskState) throws
}

extension StateStore: StateSaving {}
