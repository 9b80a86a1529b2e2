// The client's API speaks KioskAPI's types (RestrictionState, RestrictionDeclaration,
// KioskError, WallClockTime, SessionState): `import KioskClient` is all an app needs. Only
// KioskAPI: an app never links the daemon's model (KioskCore), its TOML parser or the filter.
@_exported import KioskAPI
