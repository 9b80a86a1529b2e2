import Foundation
import KioskCore
import KioskInput
import KioskTestSupport
import Testing

/// Profile → the input filter's policy: what each profile setting locks (README § Profiles).
@Suite struct FilterPolicyMappingTests {
    func key(_ name: String) -> UInt16 { EventCodes.code(named: name)!.code }

    func profile(_ source: String) throws -> Profile {
        try ProfileParser.parse(source: source, file: "p.toml")
    }

    @Test func defaultsLockPowerVolumeAndHomeAndBlockTheChords() throws {
        let policy = try profile("").filterPolicy
        let expected = [
            "KEY_POWER", "KEY_POWER2", "KEY_SLEEP", "KEY_SUSPEND", "KEY_WAKEUP", "KEY_RESTART",
            "KEY_VOLUMEUP", "KEY_VOLUMEDOWN", "KEY_MUTE", "KEY_HOMEPAGE", "KEY_LEFTMETA", "KEY_RIGHTMETA",
        ]
        #expect(policy.lockedKeys == Set(expected.map(key)))
        #expect(policy.blockEscapeChords)
        #expect(policy.touch == .all)
        #expect(policy.exitGesture == nil)
        #expect(!policy.holdAllInput)
    }

    @Test func allowedGroupsAndExtraKeys() throws {
        let policy = try profile(
            """
            [buttons]
            power = "allowed"
            volume = "allowed"
            home = "locked"
            escape-chords = "allowed"
            extra-locked-keys = ["KEY_F11", "BTN_LEFT"]
            """
        ).filterPolicy
        #expect(
            policy.lockedKeys == Set(["KEY_HOMEPAGE", "KEY_LEFTMETA", "KEY_RIGHTMETA", "KEY_F11", "BTN_LEFT"].map(key)))
        #expect(!policy.blockEscapeChords)
    }

    /// Key combinations, written as modifiers and a key position, and predefined groups.
    @Test func lockedCombosAndGroupsBecomeTheFiltersCombos() throws {
        let policy = try profile(
            """
            [buttons]
            locked-combos = ["Ctrl+N", "LeftAlt+q", "Super+KEY_L", "Ctrl+Shift+Esc", "Ctrl+N"]
            """
        ).filterPolicy
        #expect(
            policy.lockedCombos == [
                KeyCombo(ctrl: .either, key: key("KEY_N")), KeyCombo(alt: .left, key: key("KEY_Q")),
                KeyCombo(meta: .either, key: key("KEY_L")),
                KeyCombo(ctrl: .either, shift: .either, key: key("KEY_ESC")),
            ])
        let browser = try profile("[buttons]\ncombo-groups = [\"browser\"]").filterPolicy.lockedCombos
        #expect(browser.contains(KeyCombo(ctrl: .either, key: key("KEY_N"))))
        #expect(browser.contains(KeyCombo(ctrl: .either, shift: .either, key: key("KEY_I"))))
        #expect(browser.count == Profile.comboGroups.first { $0.name == "browser" }!.combos.count)
        for group in Profile.comboGroups {
            for combo in group.combos { #expect(throws: Never.self, "\(combo)") { try Profile.combo(combo).get() } }
        }
    }

    @Test(arguments: [
        ("N", "needs at least one modifier"), ("Ctrl+", "needs at least one modifier"),
        ("Hyper+N", "has the modifier \"Hyper\""), ("Ctrl+Ctrl+N", "names Ctrl twice"),
        ("Ctrl+Ü", "ends with \"Ü\", which is not a key"),
    ])
    func aComboThatIsNotOneIsAnErrorAtItsLine(_ text: String, _ problem: String) {
        #expect {
            try profile("[buttons]\nlocked-combos = [\"\(text)\"]")
        } throws: { error in
            "\(error)".contains(problem) && "\(error)".contains(":2:")
        }
        #expect(throws: (any Error).self) { try profile("[buttons]\ncombo-groups = [\"games\"]") }
    }

    /// Alt+←/→ may be let through (a browser's Back and Forward); nothing else may.
    @Test func allowedChordsLetOnlyAltArrowsThrough() throws {
        let policy = try profile("[buttons]\nallowed-chords = [\"Alt+Left\", \"Alt+Right\", \"Alt+Left\"]").filterPolicy
        #expect(policy.blockEscapeChords)
        #expect(policy.allowedAltChords == [KEY.left, KEY.right])
        #expect(try profile("[buttons]").filterPolicy.allowedAltChords.isEmpty)
        #expect {
            try profile("[buttons]\nallowed-chords = [\"Ctrl+Alt+Delete\"]")
        } throws: { error in
            "\(error)".contains("the escape chords a profile may let through are \"Alt+Left\" and \"Alt+Right\"")
        }
    }

    @Test func aLockedKeyboardLocksEveryKeyButNoButton() throws {
        let policy = try profile("[buttons]\nkeyboard = \"locked\"").filterPolicy
        for name in ["KEY_A", "KEY_ESC", "KEY_F24", "KEY_KPENTER", "KEY_POWER", "KEY_VOLUMEUP", "KEY_MACRO1"] {
            #expect(policy.lockedKeys.contains(key(name)), "\(name)")
        }
        for name in ["BTN_TOUCH", "BTN_LEFT", "BTN_TOOL_FINGER", "BTN_SOUTH"] {
            #expect(!policy.lockedKeys.contains(key(name)), "\(name)")
        }
    }

    @Test func touchModesAndRegions() throws {
        #expect(try profile("[touch]\nmode = \"none\"").filterPolicy.touch == TouchPolicy.none)
        let regions = try profile(
            """
            [touch]
            mode = "regions"
            [[touch.locked-region]]
            name = "gear"
            rect = { x = 0.9, y = 0.0, width = 0.1, height = 0.12 }
            [[touch.locked-region]]
            name = "legend"
            polygon = [[0.0, 0.8], [0.3, 0.8], [0.3, 1.0]]
            """
        ).filterPolicy.touch
        #expect(
            regions
                == .regions([
                    .rect(x: 0.9, y: 0.0, width: 0.1, height: 0.12),
                    .polygon([(x: 0.0, y: 0.8), (x: 0.3, y: 0.8), (x: 0.3, y: 1.0)]),
                ]))
    }

    @Test func theExitGestureInKeyCodesAndMicroseconds() throws {
        let policy = try profile(
            """
            [session]
            exit-gesture = { key = "KEY_VOLUMEDOWN", presses = 4, within = "2.5s" }
            """
        ).filterPolicy
        #expect(policy.exitGesture == ExitGesture(key: key("KEY_VOLUMEDOWN"), presses: 4, within: 2_500_000))
    }

    /// The cleaning gesture in the filter's terms, and the keys that pass while cleaning: the
    /// allowed keys and the screen reader's own (docs/profiles.md § Cleaning the screen).
    @Test func theCleaningGestureAndTheKeysThatPassWhileCleaning() throws {
        let parsed = try profile(
            """
            [session]
            exit-gesture = { key = "KEY_POWER", presses = 3, within = "1.5s" }
            cleaning-gesture = [{ key = "KEY_POWER", presses = 5, within = "3s" }, { corner = "top-right", taps = 4, within = "2s" }]
            cleaning-time = "45s"
            [accessibility]
            allowed-keys = ["KEY_SPACE"]
            screen-reader = "orca"
            """
        )
        let policy = parsed.filterPolicy
        #expect(parsed.session.cleaningTime == .seconds(45))
        #expect(policy.cleaningGesture == ExitGesture(key: key("KEY_POWER"), presses: 5, within: 3_000_000))
        #expect(policy.touchCleaningGesture == TouchExitGesture(corner: .topRight, taps: 4, within: 2_000_000))
        #expect(policy.cleaningPassKeys == [key("KEY_SPACE"), key("KEY_INSERT"), key("KEY_CAPSLOCK")])
        #expect(!policy.cleaning)
        #expect(try profile("").session.cleaningTime == .seconds(30))
        #expect(try profile("").filterPolicy.cleaningGesture == nil)
    }

    /// logind's power-key inhibitor follows the policy: held when any power-group key is
    /// swallowed, or everything is held.
    @Test func thePowerKeysAreLockedWhenThePolicySaysSo() throws {
        #expect(!FilterPolicy.passThrough.locksPowerKeys)
        #expect(try profile("").filterPolicy.locksPowerKeys)
        #expect(try !profile("[buttons]\npower = \"allowed\"").filterPolicy.locksPowerKeys)
        #expect(FilterPolicy(lockedKeys: [key("KEY_SUSPEND")]).locksPowerKeys)
        #expect(FilterPolicy(holdAllInput: true).locksPowerKeys)
        #expect(FilterPolicy.strictest(exitGesture: nil).locksPowerKeys)
    }

    @Test func theSessionStateDecidesWhatIsEnforced() throws {
        let clock = ManualClock()
        let museum = try profile(
            """
            [buttons]
            volume = "locked"
            [session]
            time-limit = "1m"
            exit-gesture = { key = "KEY_POWER", presses = 3, within = "1.5s" }
            """)
        var state = KioskState()
        #expect(state.filterPolicy(profile: museum) == .passThrough)

        _ = try state.session.start(profileName: "museum", profile: museum, at: clock.now(), registry: &state.registry)
        #expect(state.filterPolicy(profile: museum) == museum.filterPolicy)

        // The profile went missing or broke: fail closed, with the fallback exit gesture live.
        let strictest = state.filterPolicy(profile: nil)
        #expect(strictest.holdAllInput && strictest.touch == .none && strictest.blockEscapeChords)
        #expect(strictest.lockedKeys.contains(key("KEY_A")) && strictest.lockedKeys.contains(key("BTN_LEFT")))
        #expect(strictest.exitGesture == ExitGesture(key: key("KEY_POWER"), presses: 3, within: 1_500_000))

        clock.advance(by: .seconds(61))
        #expect(state.session.advance(to: clock.now()) == [.expired])
        var held = museum.filterPolicy
        held.holdAllInput = true
        #expect(state.filterPolicy(profile: museum) == held)
    }

    /// The bundled museum profile (policies/museum-map.toml) locks what its comments say.
    @Test func theBundledMuseumProfileLocksWhatItsCommentsSay() throws {
        let path = #filePath.split(separator: "/").dropLast(3).joined(separator: "/")
        let policy = try ProfileParser.parse(
            source: String(contentsOfFile: "/\(path)/policies/museum-map.toml", encoding: .utf8),
            file: "museum-map.toml"
        ).filterPolicy
        #expect(
            policy.lockedKeys.isSuperset(
                of: ["KEY_POWER", "KEY_VOLUMEUP", "KEY_HOMEPAGE", "KEY_F11", "KEY_F12"].map(key)))
        #expect(!policy.lockedKeys.contains(key("KEY_A")))
        guard case .regions(let regions) = policy.touch else { Issue.record("no regions: \(policy.touch)"); return }
        #expect(regions.count == 2)
        #expect(regions[0].contains(Point(x: 0.95, y: 0.05)) && !regions[0].contains(Point(x: 0.5, y: 0.5)))
        #expect(policy.exitGesture == ExitGesture(key: key("KEY_POWER"), presses: 3, within: 1_500_000))
    }

    /// `[pointer] mode = "follow-touch"` (the default) takes the touch mode's.
    @Test func pointerFollowsTouchByDefault() throws {
        #expect(try profile("").filterPolicy.pointer == .allowed)
        #expect(try profile("[touch]\nmode = \"none\"").filterPolicy.pointer == .locked)
        let regions = """
            [touch]
            mode = "regions"
            [[touch.locked-region]]
            rect = { x = 0.0, y = 0.0, width = 0.5, height = 0.5 }
            """
        #expect(try profile(regions).filterPolicy.pointer == .regions)
        #expect(try profile(regions + "\n[pointer]\nmode = \"allowed\"").filterPolicy.pointer == .allowed)
        #expect(try profile("[pointer]\nmode = \"locked\"").filterPolicy.pointer == .locked)
        #expect(try profile("[touch]\nmode = \"none\"\n[pointer]\nmode = \"allowed\"").filterPolicy.pointer == .allowed)
    }

    @Test func accessibilityKeysAndCombosPassTheLocks() throws {
        let policy = try profile(
            """
            [buttons]
            keyboard = "locked"
            [accessibility]
            allowed-keys = ["KEY_SPACE", "KEY_ENTER"]
            allowed-combos = ["Super+Alt+S", "Ctrl+Alt+Z"]
            """
        ).filterPolicy
        #expect(!policy.lockedKeys.contains(key("KEY_SPACE")))
        #expect(!policy.lockedKeys.contains(key("KEY_ENTER")))
        #expect(policy.lockedKeys.contains(key("KEY_A")))
        #expect(policy.lockedKeys.contains(key("KEY_LEFTMETA")))
        #expect(
            policy.allowedCombos == [
                KeyCombo(alt: .either, meta: .either, key: key("KEY_S")),
                KeyCombo(ctrl: .either, alt: .either, key: key("KEY_Z")),
            ])
        // With the escape chords allowed, an allowed combo may be one.
        #expect(
            try profile("[buttons]\nescape-chords = \"allowed\"\n[accessibility]\nallowed-combos = [\"Alt+F2\"]")
                .filterPolicy.allowedCombos.count == 1)
    }

    @Test func keyboardAccessFeaturesReachTheFilterInMicroseconds() throws {
        let policy = try profile(
            """
            [accessibility]
            sticky-keys = true
            slow-keys = "300ms"
            bounce-keys = "1.5s"
            """
        ).filterPolicy
        #expect(policy.keyAccess == KeyAccessSettings(stickyKeys: true, slowKeys: 300_000, bounceKeys: 1_500_000))
        #expect(policy.keyAccess.isOn)
        // Off unless the profile says so, and never in the strictest locks.
        #expect(try profile("[accessibility]\nsticky-keys = false").filterPolicy.keyAccess == KeyAccessSettings())
        #expect(!(try profile("").filterPolicy.keyAccess.isOn))
        #expect(!FilterPolicy.strictest(exitGesture: nil).keyAccess.isOn)
        // The bounds themselves are taken.
        #expect(
            try profile("[accessibility]\nslow-keys = \"5s\"\nbounce-keys = \"10ms\"").filterPolicy.keyAccess
                == KeyAccessSettings(slowKeys: 5_000_000, bounceKeys: 10_000))
    }

    /// `hide-pointer = true`: with no passes nothing of the device passes; with passes = "keys"
    /// its keys do; either way the filter hides its pointer, and a mouse it matches has none on
    /// its clone even with pointers allowed.
    @Test func hidePointerEntriesHideThePointer() throws {
        let parsed = try profile(
            """
            [pointer]
            mode = "allowed"

            [[device]]
            role = "hdmi-cec"
            name = "vc4-hdmi"
            hide-pointer = true

            [[device]]
            role = "remote"
            vendor = 0x1234
            passes = "keys"
            hide-pointer = true
            """)
        #expect(parsed.devices.map(\.passes) == [.nothing, .keys])
        #expect(parsed.devices.map(\.hidePointer) == [true, true])
        let devices = parsed.filterPolicy.allowedDevices
        #expect(!devices[0].passesKeys && !devices[0].passesPointer && devices[0].hidesPointer)
        #expect(devices[1].passesKeys && !devices[1].passesPointer && devices[1].hidesPointer)
        let cec = DeviceDescription(name: "vc4-hdmi", codes: [EV.key: [0x110], EV.rel: [0, 1]])
        #expect(parsed.filterPolicy.pointerHiding(of: cec) == .entry(role: "hdmi-cec"))
        let other = DeviceDescription(name: "USB Mouse", codes: [EV.key: [0x110], EV.rel: [0, 1]])
        #expect(parsed.filterPolicy.pointerHiding(of: other) == nil)
    }

    @Test func deviceEntriesBecomeAllowedDevices() throws {
        let parsed = try profile(
            """
            [[device]]
            role = "keypad"
            vendor = 0x1234
            product = 0xabcd
            passes = "keys"

            [[device]]
            role = "accessibility"
            name = "AbleNet Switch"
            udev = { ID_PATH = "pci-0000:00:14.0-usb-0:2:1.0", ID_INPUT_KEYBOARD = "1" }
            passes = "all"
            """)
        #expect(parsed.devices.map(\.line) == [1, 7])
        #expect(parsed.devices[0].summary == "keypad (vendor 0x1234, product 0xabcd)")
        let devices = parsed.filterPolicy.allowedDevices
        #expect(devices.count == 2)
        #expect(devices[0].passesKeys && !devices[0].passesPointer)
        #expect(devices[1].passesKeys && devices[1].passesPointer)
        var keypad = DeviceDescription(name: "Keypad", id: .init(bus: 3, vendor: 0x1234, product: 0xabcd))
        #expect(devices[0].matcher.matches(keypad))
        keypad.id.product = 0xabce
        #expect(!devices[0].matcher.matches(keypad))
        var switchDevice = DeviceDescription(name: "AbleNet Switch")
        #expect(!devices[1].matcher.matches(switchDevice), "a udev match never matches a device of unknown udev")
        switchDevice.udevProperties = ["ID_PATH": "pci-0000:00:14.0-usb-0:2:1.0", "ID_INPUT_KEYBOARD": "1"]
        #expect(devices[1].matcher.matches(switchDevice))
        switchDevice.udevProperties?["ID_PATH"] = "pci-0000:00:14.0-usb-0:3:1.0"
        #expect(!devices[1].matcher.matches(switchDevice))
    }
}
