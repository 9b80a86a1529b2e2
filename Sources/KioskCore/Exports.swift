// KioskCore's API speaks KioskAPI's types (AppID, RestrictionState, KioskError, Timestamp,
// KioskWire's limits): whoever uses the model needs them too, so `import KioskCore` brings them.
// Files of this module import KioskAPI themselves, as MemberImportVisibility asks.
@_exported import KioskAPI
