import KioskCore
import KioskInput
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
                == "Super+Alt+S (Orca's on/off toggle under GNOME-style bindings) is swallowed by keyboard = \"locked\"; if a screen reader runs at this kiosk, set [accessibility] screen-reader = \"orca\" (or add \"Super+Alt+S\" to allowed-combos)"
        )
        #expect(all.contains { $0.hasPrefix("KEY_INSERT (the Orca key on desktop layouts) is swallowed by keyboard") })
        #expect(
            all.contains {
                $0.hasPrefix("KEY_CAPSLOCK ")
                    && $0.hasSuffix(
                        "set [accessibility] screen-reader = \"orca\" (or add \"KEY_CAPSLOCK\" to allowed-keys)")
            })
        #expect(
            all.contains {
                $0.hasPrefix("KEY_LEFTSHIFT (Shift: pressed five times it turns sticky keys on")
                    && $0.hasSuffix("if visitors need it, add \"KEY_LEFTSHIFT\" to [accessibility] allowed-keys")
            })
    }

    @Test func homeLockedSwallowsOnlyTheToggleThroughSuper() throws {
        // The default buttons lock home (Super): the toggle is swallowed, the keyboard's keys are not.
        #expect(
            try warnings("")
                == [
                    "Super+Alt+S (Orca's on/off toggle under GNOME-style bindings) is swallowed by home = \"locked\"; if a screen reader runs at this kiosk, set [accessibility] screen-reader = \"orca\" (or add \"Super+Alt+S\" to allowed-combos)"
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

    /// `screen-reader = "orca"`: Orca's keys pass every group lock and are not warned about; a
    /// key or combo the profile locks by name stays locked; an unknown reader is refused at
    /// its line.
    @Test func aScreenReaderPassesItsOwnKeys() throws {
        let source = """
            [buttons]
            keyboard = "locked"
            [accessibility]
            screen-reader = "orca"
            """
        let profile = try ProfileParser.parse(source: source, file: "a11y.toml")
        #expect(profile.assistiveKeyWarnings.count == 1, "\(profile.assistiveKeyWarnings)")
        #expect(profile.assistiveKeyWarnings.first?.hasPrefix("KEY_LEFTSHIFT ") == true)
        let policy = profile.filterPolicy
        for name in ["KEY_INSERT", "KEY_CAPSLOCK"] {
            #expect(!policy.lockedKeys.contains(try #require(EventCodes.code(named: name)).code), "\(name)")
        }
        #expect(policy.lockedKeys.contains(try #require(EventCodes.code(named: "KEY_A")).code))
        #expect(policy.allowedCombos.contains(try Profile.combo("Super+Alt+S").get()))

        let lockedByName = try ProfileParser.parse(
            source: """
                [buttons]
                keyboard = "locked"
                extra-locked-keys = ["KEY_CAPSLOCK"]
                locked-combos = ["Super+Alt+S"]
                [accessibility]
                screen-reader = "orca"
                """, file: "a.toml")
        #expect(
            lockedByName.filterPolicy.lockedKeys.contains(try #require(EventCodes.code(named: "KEY_CAPSLOCK")).code))
        #expect(
            !lockedByName.filterPolicy.lockedKeys.contains(try #require(EventCodes.code(named: "KEY_INSERT")).code))
        #expect(!lockedByName.filterPolicy.allowedCombos.contains(try Profile.combo("Super+Alt+S").get()))

        #expect {
            try ProfileParser.parse(source: "[accessibility]\nscreen-reader = \"nvda\"\n", file: "a.toml")
        } throws: { error in
            "\(error)".contains("a.toml:2")
                && "\(error)".contains("accessibility.screen-reader is \"nvda\"; kioskd knows the keys of \"orca\"")
        }
    }
}
