import KioskAPI
import KioskCore
import KioskInput
import SystemPackage
import SystemdKit

/// Whoever a change answers: a bus call, or kioskd's own passcode prompt at the kiosk
/// (``KioskRequester``). A change's steps reply to it once the change is on disk, or answer it
/// with the error that stopped it.
protocol Requester: AnyObject {
    func reply(_ values: [DBusValue]) throws(Errno)
    func replyError(_ error: BusError) throws(Errno)
}

extension MethodCall: Requester {}

/// The passcode typed at the kiosk, as a requester of the passcode queue and of its change: the
/// outcome itself comes from ``SessionMachine`` (a value, never an error to parse); a change that
/// could not be made at all (the attempt refused, the save failed) calls `failed`.
final class KioskRequester: Requester {
    private let failed: () -> Void

    init(failed: @escaping () -> Void) { self.failed = failed }

    func reply(_ values: [DBusValue]) throws(Errno) {}

    func replyError(_ error: BusError) throws(Errno) { failed() }
}
