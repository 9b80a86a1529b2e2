import KioskCore

/// One file's result in `profile check --json` and `web-app check --json`; the invocation prints
/// an array of these, one per file in the order named (docs/kioskctl.md).
struct FileCheck: Encodable {
    /// One error: where it is and what is wrong. `line` and `column` are null when the file could
    /// not be read at all (missing, a FIFO, too large).
    struct Problem: Encodable {
        var line: Int?
        var column: Int?
        var message: String

        private enum CodingKeys: String, CodingKey { case line, column, message }

        /// Written by hand so that a missing position is `null`, not an absent key: every error
        /// has the same three keys.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(line, forKey: .line)
            try container.encode(column, forKey: .column)
            try container.encode(message, forKey: .message)
        }
    }

    var file: String
    var ok: Bool
    var errors: [Problem]
    var warnings: [String]

    /// A file that passed, with its warnings.
    static func passed(_ file: String, warnings: [String] = []) -> FileCheck {
        FileCheck(file: file, ok: true, errors: [], warnings: warnings)
    }

    /// A file that failed with `error`: each diagnostic of a ``ProfileError`` with its position,
    /// an ``UnreadableFile`` with its reason and no position.
    static func failed(_ file: String, _ error: any Error) -> FileCheck {
        let problems: [Problem] =
            switch error {
            case let error as ProfileError:
                error.diagnostics.map {
                    Problem(line: $0.position.line, column: $0.position.column, message: $0.message)
                }
            case let error as UnreadableFile: [Problem(line: nil, column: nil, message: error.reason)]
            default: [Problem(line: nil, column: nil, message: "\(error)")]
            }
        return FileCheck(file: file, ok: false, errors: problems, warnings: [])
    }
}

/// A file kioskctl refused to read as kioskd would refuse it; printed as `path: reason`.
struct UnreadableFile: Error, CustomStringConvertible {
    var path: String
    var reason: String
    var description: String { "\(path): \(reason)" }
}
