import Foundation

/// Writes what kioskctl prints: straight to the fd, unbuffered, so `monitor` lines appear as
/// they happen even through a pipe.
enum Output {
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// `value` as JSON: pretty-printed with sorted keys (a stable shape for scripts), or one
    /// compact line (`monitor --json`).
    static func json(_ value: some Encodable, compact: Bool = false) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = compact ? [.sortedKeys, .withoutEscapingSlashes]
                                           : [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding these plain structs cannot fail.
        write(String(decoding: (try? encoder.encode(value)) ?? Data("null".utf8), as: UTF8.self) + "\n")
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
