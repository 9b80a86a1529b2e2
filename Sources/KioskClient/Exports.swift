// The client's API speaks KioskAPI's types (RestrictionState, RestrictionDeclaration,
// KioskError, Timestamp, SessionState): `import KioskClient` is all an app needs. Only
// KioskAPI: an app never links the daemon's model (KioskCore), its TOML parser or the filter.
@_exported import KioskAPI

/// The former name of `Timestamp` (kioskd 0.1.0 and before): inside kioskd its values are
/// kiosk-clock time, not the wall clock's, so the name no longer said what it holds. The times
/// the bus shows an app are wall-clock time, as before.
@available(*, deprecated, renamed: "Timestamp")
public typealias WallClockTime = Timestamp
