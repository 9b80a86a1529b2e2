import KioskAPI
import KioskCore
import KioskInput
import SystemPackage
import SystemdKit

/// Whoever a change answers: a bus call, or kioskd's own passcode prompt at the kiosk
/// (``PromptRequester``). A change's steps reply to it once the change is on disk, or answer it
/// with the error that stopped it.
protocol Requester: AnyObject {
    func reply(_ values: [DBusValue]) throws(Errno)
    func replyError(_ error: BusError) throws(Errno)
}

extension MethodCall: Requester {}

/// The passcode typed at the kiosk, as a requester: its outcome closes the prompt with the
/// reason a display shows (`PromptClosed`).
final class PromptRequester: Requester {
    private let done: (ManagerObject.PromptOutcome) -> Void
    private var answered = false

    init(done: @escaping (ManagerObject.PromptOutcome) -> Void) { self.done = done }

    func reply(_ values: [DBusValue]) throws(Errno) {
        answer(.accepted)
    }

    func replyError(_ error: BusError) throws(Errno) {
        switch KioskError.Code(dbusName: error.name) {
        case .wrongPasscode: answer(.rejected)
        case .throttled: answer(.throttled)
        case .noSession: answer(.ended)
        default: answer(.failed)
        }
    }

    private func answer(_ outcome: ManagerObject.PromptOutcome) {
        guard !answered else { return }
        answered = true
        done(outcome)
    }
}
