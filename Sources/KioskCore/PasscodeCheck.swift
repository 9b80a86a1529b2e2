import KioskAPI

/// The rules of a passcode attempt (`EndSession`, `SetPasscode`): which hash it is compared
/// with, what "no passcode set" means for each call, and how a new passcode must look.
///
/// Pure: the comparison itself (yescrypt, libcrypt) is passed in by the daemon.
public struct PasscodeCheck: Hashable, Sendable {
    public enum Purpose: Hashable, Sendable {
        /// `EndSession`: the passcode ends the active session.
        case endSession
        /// `SetPasscode`: the passcode is the current one, needed to set a new one.
        case setPasscode
    }

    /// The longest passcode accepted, in bytes: the longest libcrypt hashes. Its
    /// `CRYPT_MAX_PASSPHRASE_SIZE` (512) counts the terminating NUL, and `crypt_r` refuses a
    /// phrase of 512 bytes or more with `ERANGE`: a longer new passcode could never be set, and a
    /// longer attempt can match no hash (it is wrong without hashing). `PasscodeLimitTests` holds
    /// this to libcrypt on both sides.
    public static let maxBytes = 511

    public var purpose: Purpose
    /// The crypt(3) hash the passcode is compared with; nil when no passcode is set.
    public var expectedHash: String?

    public init(purpose: Purpose, expectedHash: String?) {
        self.purpose = purpose
        self.expectedHash = expectedHash
    }

    /// The check for `purpose` in `state`, with the active session's profile: a profile's
    /// passcode hash takes precedence over the one set with `SetPasscode` for ending its
    /// session; `SetPasscode` compares with the one set with `SetPasscode`.
    /// - Throws: `NoSession` for `endSession` when no session is active.
    public init(_ purpose: Purpose, in state: KioskState, activeProfile: Profile?) throws(KioskError) {
        switch purpose {
        case .endSession:
            try state.session.checkActive()
            self.init(purpose: purpose, expectedHash: activeProfile?.passcodeHash ?? state.passcodeHash)
        case .setPasscode:
            self.init(purpose: purpose, expectedHash: state.passcodeHash)
        }
    }

    /// Whether `passcode` passes, `verify(passcode, hash)` comparing it with a hash (and throwing
    /// when it cannot compare at all). With no hash set, `EndSession`'s passcode is wrong (an admin
    /// uses `ForceEndSession`) and `SetPasscode`'s current passcode is ignored (`verify` is not called).
    public func accepts<Failure: Error>(
        _ passcode: String, verify: (_ passcode: String, _ hash: String) throws(Failure) -> Bool
    ) throws(Failure) -> Bool {
        guard let expectedHash else { return purpose == .setPasscode }
        return try verify(passcode, expectedHash)
    }

    /// The `WrongPasscode` error for a passcode this check did not accept.
    public var wrongPasscode: KioskError {
        KioskError(
            .wrongPasscode,
            expectedHash == nil
                ? "No passcode is set; an admin can end the session with ForceEndSession."
                : "The passcode is wrong.")
    }

    /// Validates a new passcode: not empty, at most ``maxBytes``, no control characters.
    public static func validateNew(_ passcode: String) throws(KioskError) {
        guard !passcode.isEmpty else {
            throw KioskError(.invalidArgument, "The new passcode is empty; it must have at least one character.")
        }
        let bytes = passcode.utf8.count
        guard bytes <= maxBytes else {
            throw KioskError(
                .invalidArgument, "The new passcode is \(bytes) bytes long; at most \(maxBytes) are allowed.")
        }
        guard !passcode.unicodeScalars.contains(where: Text.isControl) else {
            throw KioskError(.invalidArgument, "The new passcode contains a control character, which is not allowed.")
        }
    }
}
