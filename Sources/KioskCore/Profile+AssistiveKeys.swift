import KioskInput

/// The keys assistive technology needs at a kiosk, and the warning when a profile's group locks
/// (`keyboard`, `home`) would swallow one: a visitor who relies on a screen reader or on sticky
/// or slow keys must never be locked out by accident (docs/accessibility.md). kioskd does not
/// pass them by itself; the profile says so (`[accessibility] screen-reader` for a screen
/// reader's own keys, or by name in `allowed-keys`, `allowed-combos`), and a key the profile
/// locks by name (`extra-locked-keys`, a locked combo) is meant and not warned about.
extension Profile {
    /// A key or combination assistive technology uses, and what for.
    struct AssistiveKey {
        /// As the profile names it: an evdev key, or a combination (`Super+Alt+S`).
        var name: String
        var purpose: String
        /// The screen reader whose key it is (`[accessibility] screen-reader` passes it).
        var reader: Accessibility.ScreenReader? = nil
        var isCombo: Bool { name.contains("+") }

        /// What to add to the profile if the key is needed.
        var remedy: String {
            let setting = isCombo ? "allowed-combos" : "allowed-keys"
            guard let reader else { return "if visitors need it, add \"\(name)\" to [accessibility] \(setting)" }
            return
                "if a screen reader runs at this kiosk, set [accessibility] screen-reader = \"\(reader.rawValue)\" (or add \"\(name)\" to \(setting))"
        }
    }

    static let assistiveKeys = [
        AssistiveKey(name: "Super+Alt+S", purpose: "Orca's on/off toggle under GNOME-style bindings", reader: .orca),
        AssistiveKey(name: "KEY_INSERT", purpose: "the Orca key on desktop layouts", reader: .orca),
        AssistiveKey(name: "KEY_CAPSLOCK", purpose: "the Orca key on laptop layouts", reader: .orca),
        AssistiveKey(
            name: "KEY_LEFTSHIFT",
            purpose: "Shift: pressed five times it turns sticky keys on or off, held eight seconds slow keys"),
    ]

    /// One sentence per assistive key or combination this profile's group locks swallow, naming
    /// the key, what it is for, the lock, and what to add if it is needed; empty when none is.
    public var assistiveKeyWarnings: [String] {
        let policy = filterPolicy
        var warnings: [String] = []
        for key in Self.assistiveKeys {
            if key.isCombo {
                guard let combo = try? Self.combo(key.name).get(), !policy.allowedCombos.contains(combo),
                    let lock = swallowingLock(of: combo, policy)
                else { continue }
                warnings.append("\(key.name) (\(key.purpose)) is swallowed by \(lock); \(key.remedy)")
            } else {
                guard let code = EventCodes.code(named: key.name)?.code, policy.lockedKeys.contains(code),
                    let lock = groupLock(of: key.name)
                else { continue }
                warnings.append("\(key.name) (\(key.purpose)) is swallowed by \(lock); \(key.remedy)")
            }
        }
        return warnings
    }

    /// The group setting that locks the key named `name`, in the profile's words; nil when it is
    /// locked by name (`extra-locked-keys`, meant) or not locked.
    private func groupLock(of name: String) -> String? {
        if buttons.extraLockedKeys.contains(name) { return nil }
        if buttons.home == .locked && Buttons.homeKeys.contains(name) { return "home = \"locked\"" }
        if buttons.keyboard == .locked { return "keyboard = \"locked\"" }
        return nil
    }

    /// The group lock that swallows `combo`: its key's, or a modifier's on the side the combo
    /// needs (both sides for either: a locked modifier never reaches the kiosk). Nil when a
    /// locked combo of the profile's matches it (meant) or nothing swallows it.
    private func swallowingLock(of combo: KeyCombo, _ policy: FilterPolicy) -> String? {
        func needs(_ lockedSide: KeyCombo.Side, _ side: KeyCombo.Side) -> Bool { lockedSide == .none || side != .none }
        if policy.lockedCombos.contains(where: {
            $0.key == combo.key && needs($0.ctrl, combo.ctrl) && needs($0.alt, combo.alt)
                && needs($0.shift, combo.shift) && needs($0.meta, combo.meta)
        }) {
            return nil
        }
        func lock(_ name: String) -> String? {
            guard let code = EventCodes.code(named: name)?.code, policy.lockedKeys.contains(code) else { return nil }
            return groupLock(of: name)
        }
        if let name = EventCodes.name(type: EventCodes.keyType, code: combo.key), let found = lock(name) {
            return found
        }
        let modifiers: [(KeyCombo.Side, String, String)] = [
            (combo.meta, "KEY_LEFTMETA", "KEY_RIGHTMETA"), (combo.alt, "KEY_LEFTALT", "KEY_RIGHTALT"),
            (combo.ctrl, "KEY_LEFTCTRL", "KEY_RIGHTCTRL"), (combo.shift, "KEY_LEFTSHIFT", "KEY_RIGHTSHIFT"),
        ]
        for (side, left, right) in modifiers {
            switch side {
            case .none: continue
            case .left: if let found = lock(left) { return found }
            case .right: if let found = lock(right) { return found }
            case .either: if let found = lock(left), lock(right) != nil { return found }
            }
        }
        return nil
    }
}
