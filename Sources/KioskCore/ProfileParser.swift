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

/// Parses and validates profile files (DESIGN §2). Unknown keys and wrong types are
/// errors, so a typo can never silently weaken a lock.
public enum ProfileParser {
    /// Parses a profile from the bytes of `file` (the name is used in messages only).
    public static func parse(bytes: some Collection<UInt8>, file: String) throws(ProfileError) -> Profile {
        let source: String
        do {
            source = try Text.decode(bytes, what: "profile")
        } catch {
            throw ProfileError(diagnostics: [
                ProfileDiagnostic(
                    file: file, position: firstInvalidUTF8(in: Array(bytes)), message: "the file is not valid UTF-8")
            ])
        }
        return try parse(source: source, file: file)
    }

    /// Parses a profile from its text.
    public static func parse(source: String, file: String) throws(ProfileError) -> Profile {
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
        var reader = Reader(file: file, map: TOMLSourceMap(source: source))
        let profile = reader.profile(root)
        guard reader.diagnostics.isEmpty else {
            throw ProfileError(diagnostics: reader.diagnostics.sorted { $0.position < $1.position })
        }
        return profile
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
private struct Reader {
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
            message += path.isEmpty ? " at the top level" : " in \(Reader.name(path))"
            if let suggestion = Reader.closest(to: key, in: allowed) {
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
            "\(Reader.name(path)) must be \(what ?? Reader.typeName(type)), not \(Reader.typeName(value.type))",
            at: path, value: true)
        return false
    }

    mutating func string(_ value: any TOMLValueConvertible, at path: TOMLPath) -> String? {
        expect(value, .string, at: path) ? value.string : nil
    }

    mutating func table(_ value: any TOMLValueConvertible, at path: TOMLPath) -> TOMLTable? {
        expect(value, .table, at: path) ? value.table : nil
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
            error("\(Reader.name(path)) must be a number, not \(Reader.typeName(value.type))", at: path, value: true)
            return nil
        }
        guard number.isFinite, range.contains(number) else {
            error(
                "\(Reader.name(path)) is \(number), outside \(range.lowerBound)…\(range.upperBound)", at: path,
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
            error("\(Reader.name(path)) is \(Text.quoted(text)); it must be \(list)", at: path, value: true)
            return nil
        }
        return chosen
    }

    mutating func duration(_ value: any TOMLValueConvertible, at path: TOMLPath) -> Duration? {
        guard let text = string(value, at: path, what: "a duration string like \"45m\" or \"1.5s\"") else { return nil }
        guard let duration = Duration(kioskText: text), duration > .zero else {
            error(
                "\(Reader.name(path)) is \(Text.quoted(text)), not a duration; write a positive number with a unit (ms, s, m, h, d), like \"45m\", \"1.5s\" or \"1h30m\"",
                at: path, value: true)
            return nil
        }
        return duration
    }

    mutating func string(_ value: any TOMLValueConvertible, at path: TOMLPath, what: String) -> String? {
        expect(value, .string, at: path, what: what) ? value.string : nil
    }

    // MARK: The profile

    static let topKeys = ["app", "description", "buttons", "touch", "restrictions", "session", "passcode"]

    mutating func profile(_ root: TOMLTable) -> Profile {
        var profile = Profile()
        checkKeys(root, at: [], allowed: Reader.topKeys)
        if let value = root["app"] {
            let path: TOMLPath = [.key("app")]
            if let text = string(value, at: path) {
                do { profile.app = try AppID(text) } catch {
                    self.error("app: \(error.message)", at: path, value: true)
                }
            }
        }
        if let value = root["description"], let text = string(value, at: [.key("description")]) {
            do {
                try Text.validate(text, what: "description", maxBytes: KioskWire.Limits.detailBytes, multiline: true)
                profile.description = text
            } catch { self.error(error.message, at: [.key("description")], value: true) }
        }
        if let value = root["buttons"], let table = table(value, at: [.key("buttons")]) {
            profile.buttons = buttons(table, at: [.key("buttons")])
        }
        if let value = root["touch"], let table = table(value, at: [.key("touch")]) {
            profile.touch = touch(table, at: [.key("touch")])
        }
        if let value = root["restrictions"], let table = table(value, at: [.key("restrictions")]) {
            profile.presets = presets(table, at: [.key("restrictions")])
        }
        if let value = root["session"], let table = table(value, at: [.key("session")]) {
            profile.session = session(table, at: [.key("session")])
        }
        if let value = root["passcode"], let table = table(value, at: [.key("passcode")]) {
            profile.passcodeHash = passcode(table, at: [.key("passcode")])
        }
        return profile
    }

    mutating func buttons(_ table: TOMLTable, at path: TOMLPath) -> Profile.Buttons {
        var buttons = Profile.Buttons()
        checkKeys(
            table, at: path, allowed: ["power", "volume", "home", "keyboard", "escape-chords", "extra-locked-keys"])
        let groups: [(String, WritableKeyPath<Profile.Buttons, Profile.ButtonPolicy>)] = [
            ("power", \.power), ("volume", \.volume), ("home", \.home), ("keyboard", \.keyboard),
        ]
        for (key, keyPath) in groups {
            if let value = table[key],
                let policy = choice(value, at: path + [.key(key)], [Profile.ButtonPolicy.locked, .allowed])
            {
                buttons[keyPath: keyPath] = policy
            }
        }
        if let value = table["escape-chords"],
            let policy = choice(value, at: path + [.key("escape-chords")], [Profile.ChordPolicy.blocked, .allowed])
        {
            buttons.escapeChords = policy
        }
        let keysPath = path + [.key("extra-locked-keys")]
        if let value = table["extra-locked-keys"], let array = array(value, at: keysPath) {
            for (index, element) in array.enumerated() {
                let elementPath = keysPath + [.index(index)]
                guard let name = string(element, at: elementPath, what: "an evdev key name like \"KEY_F11\"") else {
                    continue
                }
                guard EventCodes.isKeyName(name) else {
                    error(
                        "\(Reader.name(elementPath)) is \(Text.quoted(name)), which is not an evdev key name (like \"KEY_F11\" or \"BTN_LEFT\")",
                        at: elementPath, value: true)
                    continue
                }
                if !buttons.extraLockedKeys.contains(name) { buttons.extraLockedKeys.append(name) }
            }
        }
        return buttons
    }

    mutating func touch(_ table: TOMLTable, at path: TOMLPath) -> Profile.Touch {
        var touch = Profile.Touch()
        checkKeys(table, at: path, allowed: ["mode", "locked-region"])
        let modePath = path + [.key("mode")]
        if let value = table["mode"], let mode = choice(value, at: modePath, [Profile.TouchMode.all, .none, .regions]) {
            touch.mode = mode
        }
        let regionsPath = path + [.key("locked-region")]
        if let value = table["locked-region"], let array = array(value, at: regionsPath) {
            for (index, element) in array.enumerated() {
                let regionPath = regionsPath + [.index(index)]
                if let regionTable = self.table(element, at: regionPath),
                    let region = region(regionTable, at: regionPath, index: index)
                {
                    touch.lockedRegions.append(region)
                }
            }
            if array.count > 64 {
                error("\(Reader.name(regionsPath)) has \(array.count) regions; at most 64 are allowed", at: regionsPath)
            }
            if touch.mode != .regions && !array.isEmpty {
                error(
                    "touch.locked-region is set but touch.mode is \"\(touch.mode.rawValue)\"; set mode = \"regions\" for the regions to apply",
                    at: modePath, value: table["mode"] != nil)
            }
        }
        if touch.mode == .regions && table["locked-region"] == nil {
            error("touch.mode is \"regions\" but no [[touch.locked-region]] is given", at: modePath, value: true)
        }
        return touch
    }

    mutating func region(_ table: TOMLTable, at path: TOMLPath, index: Int) -> Profile.Region? {
        checkKeys(table, at: path, allowed: ["name", "rect", "polygon"])
        var name = "region \(index + 1)"
        if let value = table["name"], let text = string(value, at: path + [.key("name")]) {
            do {
                try Text.validate(text, what: "region name", maxBytes: KioskWire.Limits.titleBytes, multiline: false)
                name = text
            } catch { self.error(error.message, at: path + [.key("name")], value: true) }
        }
        switch (table["rect"], table["polygon"]) {
        case (let rect?, nil):
            guard let shape = self.rect(rect, at: path + [.key("rect")]) else { return nil }
            return Profile.Region(name: name, shape: shape)
        case (nil, let polygon?):
            guard let shape = self.polygon(polygon, at: path + [.key("polygon")]) else { return nil }
            return Profile.Region(name: name, shape: shape)
        case (.some, .some):
            error(
                "\(Reader.name(path)) has both rect and polygon; give one shape per region",
                at: path + [.key("polygon")])
            return nil
        case (nil, nil):
            error(
                "\(Reader.name(path)) has no shape; give rect = { x, y, width, height } or polygon = [[x, y], …]",
                at: path)
            return nil
        }
    }

    mutating func rect(_ value: any TOMLValueConvertible, at path: TOMLPath) -> Profile.Shape? {
        guard let table = table(value, at: path) else { return nil }
        checkKeys(table, at: path, allowed: ["x", "y", "width", "height"])
        var parts: [Double] = []
        for key in ["x", "y", "width", "height"] {
            guard let v = table[key] else {
                error("\(Reader.name(path)) is missing \(key); a rect needs x, y, width and height", at: path)
                return nil
            }
            guard let number = number(v, at: path + [.key(key)], in: 0...1) else { return nil }
            parts.append(number)
        }
        let (x, y, width, height) = (parts[0], parts[1], parts[2], parts[3])
        if width == 0 || height == 0 {
            error("\(Reader.name(path)) has no area (width and height must be above 0)", at: path, value: true)
            return nil
        }
        if x + width > 1 + 1e-9 {
            error(
                "\(Reader.name(path)) reaches x = \(x + width), past the right edge (x + width must be ≤ 1)",
                at: path + [.key("width")], value: true)
            return nil
        }
        if y + height > 1 + 1e-9 {
            error(
                "\(Reader.name(path)) reaches y = \(y + height), past the bottom edge (y + height must be ≤ 1)",
                at: path + [.key("height")], value: true)
            return nil
        }
        return .rect(x: x, y: y, width: width, height: height)
    }

    mutating func polygon(_ value: any TOMLValueConvertible, at path: TOMLPath) -> Profile.Shape? {
        guard let array = array(value, at: path) else { return nil }
        var points: [Profile.Point] = []
        for (index, element) in array.enumerated() {
            let pointPath = path + [.index(index)]
            guard let pair = self.array(element, at: pointPath) else { return nil }
            guard pair.count == 2 else {
                error(
                    "\(Reader.name(pointPath)) has \(pair.count) numbers; a point is [x, y]", at: pointPath, value: true
                )
                return nil
            }
            guard let x = number(pair[0], at: pointPath + [.index(0)], in: 0...1),
                let y = number(pair[1], at: pointPath + [.index(1)], in: 0...1)
            else { return nil }
            points.append(Profile.Point(x: x, y: y))
        }
        guard points.count >= 3 else {
            error("\(Reader.name(path)) has \(points.count) points; a polygon needs at least 3", at: path, value: true)
            return nil
        }
        guard points.count <= 64 else {
            error("\(Reader.name(path)) has \(points.count) points; at most 64 are allowed", at: path, value: true)
            return nil
        }
        if let problem = Polygon.simplicityProblem(points) {
            error("\(Reader.name(path)) is not a simple polygon: \(problem)", at: path, value: true)
            return nil
        }
        return .polygon(points)
    }

    mutating func presets(_ table: TOMLTable, at path: TOMLPath) -> [Profile.Preset] {
        var presets: [Profile.Preset] = []
        // Keep the file's order: TOMLKit's tables are sorted by key.
        let appKeys = table.keys.sorted { map.position(of: path + [.key($0)]) < map.position(of: path + [.key($1)]) }
        for appKey in appKeys {
            let appPath = path + [.key(appKey)]
            let app: AppID
            do { app = try AppID(appKey) } catch {
                self.error("restrictions: \(error.message)", at: appPath)
                continue
            }
            guard let value = table[appKey], let states = self.table(value, at: appPath) else { continue }
            let ids = states.keys.sorted {
                map.position(of: appPath + [.key($0)]) < map.position(of: appPath + [.key($1)])
            }
            for idKey in ids {
                let idPath = appPath + [.key(idKey)]
                let id: RestrictionID
                do { id = try RestrictionID(idKey) } catch {
                    self.error("restrictions: \(error.message)", at: idPath)
                    continue
                }
                guard let stateValue = states[idKey],
                    let state = choice(stateValue, at: idPath, [RestrictionState.allow, .deny])
                else { continue }
                presets.append(Profile.Preset(app: app, restriction: id, state: state))
            }
        }
        return presets
    }

    mutating func session(_ table: TOMLTable, at path: TOMLPath) -> Profile.Session {
        var session = Profile.Session()
        checkKeys(table, at: path, allowed: ["time-limit", "warnings", "exit-gesture"])
        let limitPath = path + [.key("time-limit")]
        if let value = table["time-limit"], let limit = duration(value, at: limitPath) {
            if limit > Profile.Session.maximumTimeLimit {
                error(
                    "session.time-limit is \(limit.kioskText); at most \(Profile.Session.maximumTimeLimit.kioskText) is allowed",
                    at: limitPath, value: true)
            } else {
                session.timeLimit = limit
            }
        }
        let warningsPath = path + [.key("warnings")]
        if let value = table["warnings"], let array = array(value, at: warningsPath) {
            if table["time-limit"] == nil {
                error("session.warnings needs a session.time-limit to count down from", at: warningsPath)
            }
            for (index, element) in array.enumerated() {
                let warningPath = warningsPath + [.index(index)]
                guard let warning = duration(element, at: warningPath) else { continue }
                if let limit = session.timeLimit, warning >= limit {
                    error(
                        "\(Reader.name(warningPath)) is \(warning.kioskText), not less than the time limit \(limit.kioskText)",
                        at: warningPath, value: true)
                } else if session.warnings.contains(warning) {
                    error("\(Reader.name(warningPath)) repeats \(warning.kioskText)", at: warningPath, value: true)
                } else {
                    session.warnings.append(warning)
                }
            }
            session.warnings.sort(by: >)
        }
        let gesturePath = path + [.key("exit-gesture")]
        if let value = table["exit-gesture"], let gesture = self.table(value, at: gesturePath) {
            session.exitGesture = exitGesture(gesture, at: gesturePath)
        }
        return session
    }

    mutating func exitGesture(_ table: TOMLTable, at path: TOMLPath) -> Profile.ExitGesture? {
        checkKeys(table, at: path, allowed: ["key", "presses", "within"])
        guard let keyValue = table["key"], let pressesValue = table["presses"], let withinValue = table["within"] else {
            error(
                "session.exit-gesture needs key, presses and within, like { key = \"KEY_POWER\", presses = 3, within = \"1.5s\" }",
                at: path)
            return nil
        }
        let keyPath = path + [.key("key")]
        guard let key = string(keyValue, at: keyPath, what: "an evdev key name like \"KEY_POWER\"") else { return nil }
        guard EventCodes.isKeyName(key) else {
            error(
                "session.exit-gesture.key is \(Text.quoted(key)), which is not an evdev key name (like \"KEY_POWER\")",
                at: keyPath, value: true)
            return nil
        }
        let pressesPath = path + [.key("presses")]
        guard expect(pressesValue, .int, at: pressesPath), let presses = pressesValue.int else { return nil }
        guard (1...10).contains(presses) else {
            error("session.exit-gesture.presses is \(presses), outside 1…10", at: pressesPath, value: true)
            return nil
        }
        let withinPath = path + [.key("within")]
        guard let within = duration(withinValue, at: withinPath) else { return nil }
        guard within >= .milliseconds(100) && within <= .seconds(10) else {
            error("session.exit-gesture.within is \(within.kioskText), outside 100ms…10s", at: withinPath, value: true)
            return nil
        }
        return Profile.ExitGesture(key: key, presses: presses, within: within)
    }

    mutating func passcode(_ table: TOMLTable, at path: TOMLPath) -> String? {
        checkKeys(table, at: path, allowed: ["hash"])
        let hashPath = path + [.key("hash")]
        guard let value = table["hash"], let hash = string(value, at: hashPath) else { return nil }
        if let problem = PasscodeHash.problem(with: hash) {
            error("passcode.hash \(problem)", at: hashPath, value: true)
            return nil
        }
        return hash
    }
}
