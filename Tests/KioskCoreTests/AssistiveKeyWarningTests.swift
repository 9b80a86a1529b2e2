import KioskCore
import Testing

/// The keys of a screen reader and of sticky and slow keys that a profile's group locks would
/// swallow: warned about by name and lock, never passed by kioskd on its own; a key the profile
/// locks by name is meant, and one it lets through by name is not warned about.
@Suite struct AssistiveKeyWarningTests {
    func warnings(_ source: String) throws -> [String] {
        try ProfileParser.parse(source: source, file: "a11y.toml").assistiveKeyWarnings
    }

    @Test func aLockedKeyboardSwallowsEveryOneAndSaysWhichLock() throws {
        let all = try warnings("[buttons]\nkeyboard = \"locked\"\n")
        #expect(all.count == 4, "\(all)")
        #expect(
            all.first
                == "Super+Alt+S (Orca's on/off toggle under GNOME-style bindings) is swallowed by keyboard = \"locked\"; if a screen reader runs at this kiosk, add \"Super+Alt+S\" to [accessibility] allowed-combos"
        )
        #expect(all.contains { $0.hasPrefix("KEY_INSERT (the Orca key on desktop layouts) is swallowed by keyboard") })
        #expect(
            all.contains {
                $0.hasPrefix("KEY_CAPSLOCK ") && $0.hasSuffix("add \"KEY_CAPSLOCK\" to [accessibility] allowed-keys")
            })
        #expect(all.contains { $0.hasPrefix("KEY_LEFTSHIFT (Shift: pressed five times it turns sticky keys on") })
    }

    @Test func homeLockedSwallowsOnlyTheToggleThroughSuper() throws {
        // The default buttons lock home (Super): the toggle is swallowed, the keyboard's keys are not.
        #expect(
            try warnings("")
                == [
                    "Super+Alt+S (Orca's on/off toggle under GNOME-style bindings) is swallowed by home = \"locked\"; if a screen reader runs at this kiosk, add \"Super+Alt+S\" to [accessibility] allowed-combos"
                ])
        #expect(try warnings("[buttons]\nhome = \"allowed\"\n").isEmpty)
    }

    @Test func whatTheProfileNamesIsNotWarnedAbout() throws {
        let allowed = """
            [buttons]
            keyboard = "locked"
            [accessibility]
            allowed-keys = ["KEY_INSERT", "KEY_CAPSLOCK", "KEY_LEFTSHIFT"]
            allowed-combos = ["Super+Alt+S"]
            """
        #expect(try warnings(allowed).isEmpty)
        // Locked by name: meant.
        let named = """
            [buttons]
            home = "allowed"
            extra-locked-keys = ["KEY_INSERT"]
            locked-combos = ["Super+Alt+S"]
            """
        #expect(try warnings(named).isEmpty)
    }
}
