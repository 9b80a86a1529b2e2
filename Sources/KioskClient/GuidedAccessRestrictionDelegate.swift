import KioskAPI

/// What an app tells kioskd about its restrictions, and how it hears of changes: iOS's
/// `UIGuidedAccessRestrictionDelegate` in Swift spelling.
///
/// `GuidedAccessClient.register(appID:delegate:)` reads the identifiers, titles and detail
/// texts once, and again on every reconnect. `guidedAccessRestriction(withIdentifier:didChange:)`
/// is called on the client's own thread, one call at a time, in the order kioskd made the
/// changes, exactly once per change; hop to your UI thread yourself and return quickly.
public protocol GuidedAccessRestrictionDelegate: Sendable {
    /// The restriction ids, reverse-DNS and starting with the app id, in presentation order.
    var guidedAccessRestrictionIdentifiers: [String]? { get }

    /// A restriction's title (one line): what the admin sees in `kioskctl restrictions`.
    func textForGuidedAccessRestriction(withIdentifier restrictionIdentifier: String) -> String?

    /// A restriction's detail text (optional, may span lines).
    func detailTextForGuidedAccessRestriction(withIdentifier restrictionIdentifier: String) -> String?

    /// A restriction's state changed (an admin, a session starting or ending, or a change
    /// made while this app was not connected).
    func guidedAccessRestriction(
        withIdentifier restrictionIdentifier: String, didChange newRestrictionState: RestrictionState)

    /// Nobody used the kiosk for the session profile's `[idle] reset-after` (`IdleReset`): go
    /// back to the start page and forget the last visitor's input. Once per idle period, on the
    /// client's thread as the other calls. Optional: by default nothing happens.
    func guidedAccessIdleReset()
}

extension GuidedAccessRestrictionDelegate {
    public func detailTextForGuidedAccessRestriction(withIdentifier restrictionIdentifier: String) -> String? { nil }
    public func guidedAccessIdleReset() {}
}

/// A restriction of the registered app that changed state.
public struct RestrictionChange: Hashable, Sendable {
    public var id: String
    public var state: RestrictionState

    public init(id: String, state: RestrictionState) {
        self.id = id
        self.state = state
    }
}
