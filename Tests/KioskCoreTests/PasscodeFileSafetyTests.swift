import KioskCore
import Testing

/// A hash is taken only from a file no one but its trusted owner can read or write.
@Suite struct PasscodeFileSafetyTests {
    @Test(arguments: [0o600, 0o400, 0o700, 0o100600] as [UInt32])
    func privateFilesOfATrustedOwnerAreSafe(_ mode: UInt32) {
        #expect(PasscodeFileSafety.problem(path: "/p.toml", mode: mode, owner: 0, trustedOwners: [0]) == nil)
        #expect(PasscodeFileSafety.problem(path: "/p.toml", mode: mode, owner: 999, trustedOwners: [0, 999]) == nil)
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o620, 0o602, 0o660, 0o100644] as [UInt32])
    func anyPermissionForGroupOrOthersIsAProblem(_ mode: UInt32) throws {
        let problem = try #require(
            PasscodeFileSafety.problem(path: "/p.toml", mode: mode, owner: 0, trustedOwners: [0]))
        #expect(problem.contains("is mode 0\(String(mode & 0o777, radix: 8))"), "\(problem)")
        #expect(problem.hasSuffix("chmod 600 /p.toml"))
    }

    @Test func anOwnerOtherThanRootOrKioskdIsAProblem() throws {
        let problem = try #require(
            PasscodeFileSafety.problem(path: "/p.toml", mode: 0o600, owner: 1000, trustedOwners: [0, 999]))
        #expect(
            problem
                == "/p.toml holds a passcode hash but is owned by uid 1000, who could read or replace it; only root or uid 999 may own it: chown root /p.toml"
        )
    }
}
