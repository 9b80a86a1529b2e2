import KioskInput

/// Key combinations in profiles: `[buttons] locked-combos = ["Ctrl+N"]` and the predefined
/// `combo-groups`. A combo is modifiers and a key joined by `+`: the modifiers `Ctrl`, `Alt`,
/// `Shift`, `Super` (either side) or `LeftCtrl`, `RightAlt`, … (one side); the key a US keyboard's
/// name for a key position (`N`, `F4`, `Tab`, `Esc`, `Delete`, `Left`) or an evdev name
/// (`KEY_N`). Keys are positions, not characters: on a QWERTZ keyboard Ctrl+Z is the key
/// labelled Y.
extension Profile {
    /// The predefined groups of `combo-groups`, each a documented list of combos.
    public static let comboGroups: [(name: String, combos: [String])] = [
        (
            "browser",
            [
                "Ctrl+N", "Ctrl+Shift+N", "Ctrl+T", "Ctrl+Shift+T", "Ctrl+W", "Ctrl+Shift+W", "Ctrl+F4", "Ctrl+L",
                "Ctrl+O", "Ctrl+S", "Ctrl+P", "Ctrl+H", "Ctrl+J", "Ctrl+U", "Ctrl+Shift+I", "Ctrl+Shift+J",
                "Ctrl+Shift+C", "Ctrl+Shift+Delete", "Alt+D", "Alt+Home",
            ]
        ),
        (
            "window-manager",
            [
                "Alt+F4", "Alt+Tab", "Alt+Shift+Tab", "Alt+Esc", "Alt+Space", "Ctrl+Esc", "Ctrl+Shift+Esc",
                "Ctrl+Alt+T", "Ctrl+Alt+L", "Super+L", "Super+D", "Super+E", "Super+R", "Super+Tab",
            ]
        ),
    ]

    /// `text` as a combo, or why it is not one (a phrase).
    public static func combo(_ text: String) -> Result<KeyCombo, ComboError> {
        let parts = text.split(separator: "+", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2, let keyName = parts.last, !keyName.isEmpty else {
            return .failure(ComboError("needs at least one modifier and a key, joined by \"+\" (like \"Ctrl+N\")"))
        }
        var combo = KeyCombo(key: 0)
        for modifier in parts.dropLast() {
            let sides: [(String, WritableKeyPath<KeyCombo, KeyCombo.Side>)] = [
                ("Ctrl", \.ctrl), ("Alt", \.alt), ("Shift", \.shift), ("Super", \.meta),
            ]
            var known = false
            for (name, keyPath) in sides {
                let side: KeyCombo.Side? =
                    modifier == name ? .either : modifier == "Left" + name ? .left : modifier == "Right" + name ? .right : nil
                guard let side else { continue }
                guard combo[keyPath: keyPath] == .none else {
                    return .failure(ComboError("names \(name) twice"))
                }
                combo[keyPath: keyPath] = side
                known = true
            }
            guard known else {
                return .failure(
                    ComboError(
                        "has the modifier \(Text.quoted(modifier)); modifiers are Ctrl, Alt, Shift and Super (either side) or LeftCtrl, RightAlt, … (one side)"
                    ))
            }
        }
        guard let key = keyCode(keyName) else {
            return .failure(
                ComboError(
                    "ends with \(Text.quoted(keyName)), which is not a key (a key position like \"N\", \"F4\", \"Tab\", \"Esc\", \"Left\", or an evdev name like \"KEY_N\")"
                ))
        }
        combo.key = key
        return .success(combo)
    }

    /// A key position's code: an evdev name, or the name after `KEY_` in any case, or a common
    /// alias (Del, Return, PgUp, PgDn, Ins).
    static func keyCode(_ name: String) -> UInt16? {
        let aliases = ["DEL": "DELETE", "RETURN": "ENTER", "PGUP": "PAGEUP", "PGDN": "PAGEDOWN", "INS": "INSERT"]
        let upper = name.uppercased()
        let evdev = upper.hasPrefix("KEY_") ? upper : "KEY_" + (aliases[upper] ?? upper)
        guard let code = EventCodes.code(named: evdev), code.type == EV.key else { return nil }
        return code.code
    }

    /// Why a string is not a combo.
    public struct ComboError: Error, Sendable {
        public var message: String
        init(_ message: String) { self.message = message }
    }
}

extension Profile.Buttons {
    /// Every combo this profile locks: its `locked-combos`, then its groups', each once.
    public var allLockedCombos: [KeyCombo] {
        var names = lockedCombos
        for group in Profile.comboGroups where comboGroups.contains(group.name) { names += group.combos }
        var seen = Set<KeyCombo>()
        return names.compactMap { try? Profile.combo($0).get() }.filter { seen.insert($0).inserted }
    }
}
