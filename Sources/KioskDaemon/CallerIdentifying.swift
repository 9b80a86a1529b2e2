import SystemdKit

/// Finds the uid behind a caller's unique bus name: the bus driver in kioskd
/// (`GetConnectionUnixUser`), a fake in tests.
public protocol CallerIdentifying {
    /// `completion` runs on the loop (perhaps before this returns).
    func unixUser(ofName name: String, completion: @escaping (Result<UInt32, any Error>) -> Void) throws
}

extension Bus: CallerIdentifying {}
