// The client's API speaks KioskCore's types (RestrictionState, RestrictionDeclaration,
// KioskError, WallClockTime): `import KioskClient` is all an app needs.
@_exported import KioskCore
