import KioskAPI
import TOMLKit

// `[idle]` (docs/profiles.md § A visitor who walks away, a dark screen): each value refused at
// its line when out of range or without what it needs.
extension ProfileReader {
    mutating func idle(_ table: TOMLTable, at path: TOMLPath) -> Profile.Idle {
        var idle = Profile.Idle()
        checkKeys(table, at: path, allowed: ["reset-after", "reset", "reset-warning", "blank-after", "display-off"])
        idle.resetAfter = idleTime(table, "reset-after", at: path)
        let modePath = path + [.key("reset")]
        if let value = table["reset"] {
            if let mode = choice(value, at: modePath, [Profile.Idle.ResetMode.signal, .restartApp]) {
                idle.reset = mode
            }
            if table["reset-after"] == nil { error("idle.reset is only for idle.reset-after", at: modePath) }
        }
        let warningPath = path + [.key("reset-warning")]
        if let value = table["reset-warning"], let warning = duration(value, at: warningPath) {
            if table["reset-after"] == nil {
                error("idle.reset-warning is only for idle.reset-after", at: warningPath)
            } else if warning < Profile.Idle.minimumResetWarning {
                error(
                    "idle.reset-warning is \(warning.kioskText); give at least \(Profile.Idle.minimumResetWarning.kioskText) (\(Profile.Idle.accessibleResetWarning.kioskText) or more lets a person react)",
                    at: warningPath, value: true)
            } else if let after = idle.resetAfter, warning >= after {
                error(
                    "idle.reset-warning is \(warning.kioskText), not less than idle.reset-after \(after.kioskText): the screen comes that long before the reset",
                    at: warningPath, value: true)
            } else {
                idle.resetWarning = warning
            }
        }
        idle.blankAfter = idleTime(table, "blank-after", at: path)
        let windowsPath = path + [.key("display-off")]
        if let value = table["display-off"], let array = array(value, at: windowsPath) {
            if table["blank-after"] == nil {
                error(
                    "idle.display-off needs idle.blank-after: how long a touch shows the display in the window",
                    at: windowsPath)
            }
            for (index, element) in array.enumerated() {
                let itemPath = windowsPath + [.index(index)]
                guard let text = string(element, at: itemPath) else { continue }
                if let window = Profile.DisplayWindow(text) {
                    idle.displayOff.append(window)
                } else {
                    error(
                        "idle.display-off[\(index)] is \(Text.quoted(text)), not a time window; write the kiosk's local time as \"HH:MM-HH:MM\" (24-hour clock, start and end different), like \"22:00-07:00\"",
                        at: itemPath, value: true)
                }
            }
        }
        return idle
    }

    /// `reset-after` or `blank-after`: a duration in ``Profile/Idle/idleRange``, refused at its
    /// line otherwise.
    private mutating func idleTime(_ table: TOMLTable, _ key: String, at path: TOMLPath) -> Duration? {
        let keyPath = path + [.key(key)]
        guard let value = table[key], let after = duration(value, at: keyPath) else { return nil }
        let range = Profile.Idle.idleRange
        guard range.contains(after) else {
            error(
                "idle.\(key) is \(after.kioskText); give \(range.lowerBound.kioskText) to \(range.upperBound.kioskText)",
                at: keyPath, value: true)
            return nil
        }
        return after
    }
}
