import KioskCore
import KioskCrypt
import Testing

@testable import KioskDaemon

/// `PasscodeCheck.maxBytes` is exactly the longest passcode libcrypt hashes: one byte more and
/// `crypt_r` refuses the phrase (`ERANGE`). A longer attempt is wrong without hashing — the
/// fuzzer's 2,000-character guesses once came back `Failed` ("Numerical result out of range")
/// instead of `WrongPasscode` — and a longer new passcode is refused before it could be set.
@Suite struct PasscodeLimitTests {
    static let longest = String(repeating: "p", count: PasscodeCheck.maxBytes)

    @Test func theLongestAcceptedPasscodeHashesAndVerifies() throws {
        let hash = try Passcode.hash(Self.longest)
        #expect(hash.hasPrefix("$y$"))
        #expect(try Passcode.verify(Self.longest, against: hash))
        try PasscodeCheck.validateNew(Self.longest)
    }

    @Test func oneByteMoreIsWrongWithoutHashingAndNeverANewPasscode() throws {
        let hash = try Passcode.hash("1234")
        let longer = Self.longest + "p"
        #expect(try Passcode.verify(longer, against: hash) == false)
        #expect(throws: KioskError.self) { try PasscodeCheck.validateNew(longer) }
        // libcrypt itself refuses it: the limit is libcrypt's, not a number of our own.
        #expect(throws: Passcode.CryptError.self) { try Passcode.hash(longer) }
    }
}
