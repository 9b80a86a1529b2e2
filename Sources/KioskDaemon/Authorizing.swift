import SystemdKit

/// Who decides whether a caller that is not root may do a polkit action: polkit in kioskd, a
/// fake that answers what a test says in tests.
public protocol Authorizing {
    /// Asks whether the process owning `busName` may do `action`. `completion` runs on the loop
    /// (perhaps before this returns); `.unavailable` means no polkit is on the bus.
    func authorize(
        action: String, busName: String,
        completion: @escaping (Swift.Result<PolkitAuthority.Result, any Error>) -> Void) throws
}

extension PolkitAuthority: Authorizing {
    public func authorize(
        action: String, busName: String,
        completion: @escaping (Swift.Result<PolkitAuthority.Result, any Error>) -> Void
    ) throws {
        try checkAuthorization(action: action, busName: busName, completion: completion)
    }
}
