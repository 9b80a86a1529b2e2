import Glibc

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes what kioskctl prints: straight to the fd, unbuffered, so `monitor` lines appear as
/// they happen even through a pipe.
enum Output {
    static func write(_ text: String) {
        writeAll(STDOUT_FILENO, text)
    }

    /// `value` as JSON: pretty-printed with sorted keys (a stable shape for scripts), or one
    /// compact line (`monitor --json`).
    static func json(_ value: some Encodable, compact: Bool = false) {
        write(jsonText(value, compact: compact) + "\n")
    }

    /// What ``json(_:compact:)`` prints, without the newline.
    static func jsonText(_ value: some Encodable, compact: Bool = false) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            compact
            ? [.sortedKeys, .withoutEscapingSlashes]
            : [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding these plain structs cannot fail.
        return String(decoding: (try? encoder.encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }
}

func printError(_ message: String) {
    writeAll(STDERR_FILENO, message + "\n")
}

/// All of `text` to `fd`, as `FileHandle.write` did (FoundationEssentials has no FileHandle):
/// retried on EINTR and short writes; given up silently on any other error (a closed pipe).
private func writeAll(_ fd: Int32, _ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var written = 0
        while written < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            written += n
        }
    }
}
