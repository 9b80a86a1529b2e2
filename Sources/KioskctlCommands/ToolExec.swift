import ArgumentParser
import Glibc

/// The kioskd-tools programs kioskctl runs for a verb (`replay`: kioskctl-replay; `profile show
/// --png`: kioskctl-profile-png). They are apart because of what they link (Yams and Foundation,
/// cairo), which a kiosk's kioskctl is kept without (docs/packaging.md). Like git's and cargo's
/// external subcommands: next to this kioskctl first (a build tree), else on $PATH (/usr/bin).
enum ToolExec {
    /// Replaces this process with `tool` run with `arguments`; returns only by throwing, having
    /// said why on stderr: `verb` needs `tool`, and, when it is not installed, what to do
    /// instead (`otherwise`).
    static func exec(_ tool: String, _ arguments: [String], verb: String, otherwise: String) throws -> Never {
        var argv = ([tool] + arguments).map { strdup($0) } + [nil]
        if let sibling = sibling(tool), access(sibling, X_OK) == 0 {
            execv(sibling, &argv)
        } else {
            execvp(tool, &argv)
        }
        if errno == ENOENT {
            printError(
                "\(verb) needs \(tool), from the kioskd-tools package, which is not installed here. Install kioskd-tools (apt install kioskd-tools), or \(otherwise)."
            )
        } else {
            printError("\(verb) could not run \(tool): \(String(cString: strerror(errno))).")
        }
        throw ExitCode.failure
    }

    /// `tool` in the directory of this executable (/proc/self/exe: the multi-call binary, not
    /// the kioskctl link to it).
    static func sibling(_ tool: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let executable = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            + "/" + tool
    }
}
