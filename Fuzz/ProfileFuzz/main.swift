// The profile parser's harness (docs/testing.md § Fuzzing): any bytes as a profile file. A
// profile that parses must also map onto the filter's policy (what a session enforces), and a
// refused one must say where and why.
import FuzzSupport
import KioskCore

runFuzzer { bytes in
    do throws(ProfileError) {
        let profile = try ProfileParser.parse(bytes: bytes, file: "fuzz.toml")
        _ = profile.filterPolicy
    } catch {
        guard !error.diagnostics.isEmpty else { fatalError("invariant: a profile refused with no diagnostic") }
        for diagnostic in error.diagnostics where diagnostic.message.isEmpty || diagnostic.position.line < 1 {
            fatalError("invariant: a diagnostic with no message or no line: \(diagnostic)")
        }
    }
}
