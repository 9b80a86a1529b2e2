import KioskAPI
import KioskInput
import TOMLKit

/// One problem in a profile file, printed as `file:line:col: message`.
public struct ProfileDiagnostic: Hashable, Sendable, CustomStringConvertible, Codable {
    public var file: String
    public var position: SourcePosition
    public var message: String

    public var description: String { "\(file):\(position.line):\(position.column): \(message)" }
}

/// A profile that could not be used, with every problem found in it, in file order.
public struct ProfileError: Error, Hashable, Sendable, CustomStringConvertible {
    public var diagnostics: [ProfileDiagnostic]
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// Parses and validates profile files (docs/profiles.md). Unknown keys and wrong types are
/// errors, so a typo can never silently weaken a lock.
public enum ProfileParser {
    /// Parses a profile from the bytes of `file` (the name is used in messages only).
    public static func parse(bytes: some Collection<UInt8>, file: String) throws(ProfileError) -> Profile {
        try parse(source: text(of: bytes, file: file), file: file)
    }

    /// Parses a profile from its text.
    public static func parse(source: String, file: String) throws(ProfileError) -> Profile {
        let (root, map) = try document(source: source, file: file)
        var reader = ProfileReader(file: file, map: map)
        let profile = reader.profile(root)
        guard reader.diagnostics.isEmpty else {
            throw ProfileError(diagnostics: reader.diagnostics.sorted { $0.position < $1.position })
        }
        return profile
    }

    /// The bytes of a TOML file of kioskd's (a profile, a web app's manifest) as text: refused at
    /// the first byte that is not UTF-8.
    static func text(of bytes: some Collection<UInt8>, file: String) throws(ProfileError) -> String {
        do {
            return try Text.decode(bytes, what: "file")
        } catch {
            throw ProfileError(diagnostics: [
                ProfileDiagnostic(
                    file: file, position: firstInvalidUTF8(in: Array(bytes)), message: "the file is not valid UTF-8")
            ])
        }
    }

    /// The TOML document of `source` and where each of its keys stands, or the syntax error (or
    /// the NUL character TOML forbids) at its line.
    static func document(source: String, file: String) throws(ProfileError) -> (TOMLTable, TOMLSourceMap) {
        if let nul = source.unicodeScalars.firstIndex(of: "\0") {
            let before = source.unicodeScalars[..<nul]
            let line = before.count { $0 == "\n" } + 1
            let column = before.reversed().prefix { $0 != "\n" }.count + 1
            throw ProfileError(diagnostics: [
                ProfileDiagnostic(
                    file: file, position: SourcePosition(line: line, column: column),
                    message: "the file contains a NUL character")
            ])
        }
        // toml++ only ever sees well-formed TOML: some malformed documents reach one of its
        // assertions, which abort the process (TOMLSyntax).
        if let (position, message) = TOMLSyntax.firstError(in: source) {
            throw ProfileError(diagnostics: [
                ProfileDiagnostic(file: file, position: position, message: "TOML syntax: \(message)")
            ])
        }
        let root: TOMLTable
        do {
            root = try TOMLTable(string: source)
        } catch let error as TOMLParseError {
            throw ProfileError(diagnostics: [
                ProfileDiagnostic(
                    file: file,
                    position: SourcePosition(line: error.source.begin.line, column: error.source.begin.column),
                    message: "TOML syntax: \(error.description)")
            ])
        } catch {
            throw ProfileError(diagnostics: [
                ProfileDiagnostic(
                    file: file, position: SourcePosition(line: 1, column: 1), message: "TOML syntax: \(error)")
            ])
        }
        return (root, TOMLSourceMap(source: source))
    }

    private static func firstInvalidUTF8(in bytes: [UInt8]) -> SourcePosition {
        var line = 1, column = 1, i = 0
        while i < bytes.count {
            let b = bytes[i]
            let width = b < 0x80 ? 1 : b >> 5 == 0b110 ? 2 : b >> 4 == 0b1110 ? 3 : b >> 3 == 0b11110 ? 4 : 0
            if width == 0 || i + width > bytes.count { break }
            var valid = String(validating: bytes[i..<(i + width)], as: UTF8.self) != nil
            if width == 1 { valid = true }
            if !valid { break }
            if b == UInt8(ascii: "\n") { line += 1; column = 1 } else { column += 1 }
            i += width
        }
        return SourcePosition(line: line, column: column)
    }
}

/// Walks the parsed TOML tree, turning it into a ``Profile`` and collecting diagnostics.
struct ProfileReader {
    let file: String
    let map: TOMLSourceMap
    var diagnostics: [ProfileDiagnostic] = []

    init(file: String, map: TOMLSourceMap) {
        self.file = file
        self.map = map
    }

    // MARK: Reporting

    mutating func error(_ message: String, at path: TOMLPath, value: Bool = false) {
        let position = value ? map.valuePosition(of: path) : map.position(of: path)
        diagnostics.append(ProfileDiagnostic(file: file, position: position, message: message))
    }

    static func name(_ path: TOMLPath) -> String {
        var out = ""
        for component in path {
            switch component {
            case .key(let key):
                let bare =
                    !key.isEmpty
                    && key.unicodeScalars.allSatisfy {
                        ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
                            || $0 == "_"
                    }
                let shown = bare ? key : Text.quoted(key)
                out += out.isEmpty ? shown : ".\(shown)"
            case .index(let index):
                out += "[\(index)]"
            }
        }
        return out
    }

    static func typeName(_ type: TOMLType) -> String {
        switch type {
        case .table: "a table"
        case .array: "an array"
        case .string: "a string"
        case .int: "an integer"
        case .double: "a float"
        case .bool: "a boolean"
        case .date: "a date"
        case .time: "a time"
        case .dateTime: "a date-time"
        }
    }

    /// Reports every key of `table` that is not in `allowed`, suggesting the closest one.
    mutating func checkKeys(_ table: TOMLTable, at path: TOMLPath, allowed: [String]) {
        for key in table.keys where !allowed.contains(key) {
            let keyPath = path + [.key(key)]
            var message = "unknown key \(Text.quoted(key))"
            message += path.isEmpty ? " at the top level" : " in \(ProfileReader.name(path))"
            if let suggestion = ProfileReader.closest(to: key, in: allowed) {
                message += "; did you mean \(Text.quoted(suggestion))?"
            } else {
                message += "; expected one of: \(allowed.joined(separator: ", "))"
            }
            error(message, at: keyPath)
        }
    }

    static func closest(to key: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(key.lowercased(), $0)) }.min { $0.1 < $1.1 }
        guard let (best, distance) = scored, distance <= max(1, best.count / 3) else { return nil }
        return best
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        var row = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }

    // MARK: Typed access

    mutating func expect(
        _ value: any TOMLValueConvertible, _ type: TOMLType, at path: TOMLPath, what: String? = nil
    ) -> Bool {
        if value.type == type { return true }
        error(
            "\(ProfileReader.name(path)) must be \(what ?? ProfileReader.typeName(type)), not \(ProfileReader.typeName(value.type))",
            at: path, value: true)
        return false
    }

    mutating func string(_ value: any TOMLValueConvertible, at path: TOMLPath) -> String? {
        expect(value, .string, at: path) ? value.string : nil
    }

    mutating func table(_ value: any TOMLValueConvertible, at path: TOMLPath, what: String? = nil) -> TOMLTable? {
        expect(value, .table, at: path, what: what) ? value.table : nil
    }

    mutating func array(_ value: any TOMLValueConvertible, at path: TOMLPath) -> TOMLArray? {
        expect(value, .array, at: path) ? value.array : nil
    }

    /// A number (integer or float) in `range`.
    mutating func number(_ value: any TOMLValueConvertible, at path: TOMLPath, in range: ClosedRange<Double>) -> Double?
    {
        let number: Double
        if let int = value.int {
            number = Double(int)
        } else if let double = value.double {
            number = double
        } else {
            error(
                "\(ProfileReader.name(path)) must be a number, not \(ProfileReader.typeName(value.type))", at: path,
                value: true)
            return nil
        }
        guard number.isFinite, range.contains(number) else {
            error(
                "\(ProfileReader.name(path)) is \(number), outside \(range.lowerBound)…\(range.upperBound)", at: path,
                value: true)
            return nil
        }
        return number
    }

    mutating func choice<T: RawRepresentable<String>>(
        _ value: any TOMLValueConvertible, at path: TOMLPath, _ options: [T]
    ) -> T? {
        guard let text = string(value, at: path) else { return nil }
        guard let chosen = T(rawValue: text), options.contains(where: { $0.rawValue == text }) else {
            let list = options.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
            error("\(ProfileReader.name(path)) is \(Text.quoted(text)); it must be \(list)", at: path, value: true)
            return nil
        }
        return chosen
    }

    mutating func duration(_ value: any TOMLValueConvertible, at path: TOMLPath) -> Duration? {
        guard let text = string(value, at: path, what: "a duration string like \"45m\" or \"1.5s\"") else { return nil }
        guard let duration = Duration(kioskText: text), duration > .zero else {
            error(
                "\(ProfileReader.name(path)) is \(Text.quoted(text)), not a duration; write a positive number with a unit (ms, s, m, h, d), like \"45m\", \"1.5s\" or \"1h30m\"",
                at: path, value: true)
            return nil
        }
        return duration
    }

    mutating func string(_ value: any TOMLValueConvertible, at path: TOMLPath, what: String) -> String? {
        expect(value, .string, at: path, what: what) ? value.string : nil
    }
}
