import Logging

/// The `MESSAGE_ID` of each kind of audit entry kioskd writes to the journal, as systemd's own
/// daemons mark theirs: `journalctl MESSAGE_ID=…` finds every entry of a kind, whatever its
/// wording, and `packaging/catalog/kioskd.catalog` (installed in /usr/lib/systemd/catalog)
/// explains each one (`journalctl -x`). Stable: a kind keeps its id for ever.
enum MessageID: String, CaseIterable {
    case restrictionSet = "372be593fc87424382d42408bf6a4630"
    case applicationRegistered = "bc96988aa47547d6ad7691c76fef5cb4"
    case applicationForgotten = "453ba66a97904d0dae3f887354fe91d1"
    case sessionStarted = "5685a8b9ef3b4245ae8c1ee9ffa49698"
    case sessionEnded = "0bc170a7c4c44055919e85b7767a2a90"
    case sessionForceEnded = "094a764f25f44810bd502dc051767ee0"
    case sessionExpired = "3e23c536a07240698fcff05359217032"
    case sessionTimeChanged = "fa863d8c2da7408f92ae620a958a01b7"
    case trialEnded = "a848029eb6ff4f2fbdbd258cbf41d05f"
    case trialConfirmed = "d7abb71aea5f49c4b4b435e9e6bfc676"
    case wrongPasscode = "c6da322eec434c0eb17b60eaa886672b"
    case passcodeThrottled = "d183d3d85b3b49dc891d233650179477"
    case passcodeSet = "54413e6949c145cf8f68cd1b70412cca"
    case passcodeThrottleReset = "d948082b32f840fcb4eac5d747e1a8e4"
    case callRefused = "72f856f17b434b11ab31f42426f3c68e"
    case profileReloaded = "bc9c7a1943a741149e927efce7827d14"
    case profileReloadFailed = "eef9c8a74e5148b7824d36e3f07a2096"
    case exitGesture = "b3b03a45f4eb4e7483c073a7e5ba4b5f"
    case promptClosed = "10f6d8ea61744fe88852532fb4c53efe"
    case deviceAllowed = "46f49faca6464e348459f0afc43ac936"
    case visitorExtended = "e3613e09cc09436587f8a79059f85e7c"
    case idleReset = "8b5960c52fc1494f9ef66b4038c6460d"
    case displayPower = "8f608263ff3343edaa8ad0dd8cb81caf"
    case cleaningStarted = "3f0818f278b44b29a39b0385188299b7"
    case cleaningEnded = "613957d44d304b6f8c1a28f663d80b58"
    case stateSaveFailing = "8c8b35f9c1ec438cbb06a08b769a4cb1"
    case stateSaved = "de4f73fa2c8b486ca183e3459d2b5d23"

    /// The entry's metadata: `MESSAGE_ID` once the journal handler upper-snakes the key.
    var metadata: Logger.Metadata { ["message.id": "\(rawValue)"] }
}
