import Foundation
import KioskCore
import KioskInput
import Testing

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
let policyFiles = try! FileManager.default.contentsOfDirectory(
    atPath: repositoryRoot.appendingPathComponent("policies").path
)
.filter { $0.hasSuffix(".toml") }.sorted()

func parse(_ source: String) throws(ProfileError) -> Profile {
    try ProfileParser.parse(source: source, file: "test.toml")
}

@Suite struct ProfileTests {
    @Test(arguments: ["museum", "museum-map_2.v1", "A", String(repeating: "p", count: 250)])
    func plainFileNamesNameProfiles(name: String) throws {
        try Profile.validateName(name)
    }

    @Test(arguments: ["", "../museum", "museum/map", "museum map", "muséum", String(repeating: "p", count: 251)])
    func otherNamesAreInvalidArguments(name: String) {
        #expect(throws: KioskError.self) { try Profile.validateName(name) }
        do {
            try Profile.validateName(name)
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.hasPrefix("The profile name \(Text.quoted(name)) is not a plain file name"))
        }
    }

    @Test func thereAreAtLeastThreeExamples() {
        #expect(policyFiles.count >= 3)
    }

    @Test(arguments: policyFiles)
    func everyExampleParses(_ name: String) throws {
        let url = repositoryRoot.appendingPathComponent("policies").appendingPathComponent(name)
        let profile = try ProfileParser.parse(bytes: Array(try Data(contentsOf: url)), file: name)
        #expect(profile.app != nil)
        #expect(!profile.description.isEmpty)
        #expect(profile.buttons.power == .locked)
        #expect(profile.buttons.escapeChords == .blocked)
        // Staff can summon the passcode prompt: a key's gesture, or taps in a corner.
        #expect(profile.session.exitGesture != nil || profile.session.touchExitGesture != nil)
    }

    @Test(arguments: policyFiles)
    func everyLineOfAnExampleIsCommented(_ name: String) throws {
        let text = try String(
            contentsOf: repositoryRoot.appendingPathComponent("policies").appendingPathComponent(name), encoding: .utf8)
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            #expect(line.contains("#"), "\(name):\(number + 1) has no comment")
        }
    }

    @Test func museumMapResolvesAsWritten() throws {
        let url = repositoryRoot.appendingPathComponent("policies/museum-map.toml")
        let profile = try ProfileParser.parse(bytes: Array(try Data(contentsOf: url)), file: "museum-map.toml")
        #expect(profile.app?.rawValue == "org.example.MuseumMap")
        #expect(profile.buttons.extraLockedKeys == ["KEY_F11", "KEY_F12"])
        #expect(profile.touch.mode == .regions)
        #expect(profile.touch.lockedRegions.map(\.name) == ["settings gear", "legend"])
        #expect(profile.touch.lockedRegions[0].shape == .rect(x: 0.9, y: 0, width: 0.1, height: 0.12))
        guard case .polygon(let points) = profile.touch.lockedRegions[1].shape else {
            Issue.record("the legend is not a polygon"); return
        }
        #expect(points.count == 4 && points[2] == Profile.Point(x: 0.3, y: 1.0))
        #expect(
            profile.presets.map(\.restriction.rawValue) == [
                "org.example.MuseumMap.controls", "org.example.MuseumMap.zoom",
            ])
        #expect(profile.presets.map(\.state) == [.deny, .allow])
        #expect(
            profile.session.exitGesture
                == Profile.ExitGesture(key: "KEY_POWER", presses: 3, within: .milliseconds(1500)))
        #expect(profile.passcodeHash?.hasPrefix("$y$") == true)
    }

    @Test func defaultsOfAnEmptyProfileLockTheHardwareButtons() throws {
        let profile = try parse("")
        #expect(
            profile.buttons.power == .locked && profile.buttons.volume == .locked && profile.buttons.home == .locked)
        #expect(profile.buttons.keyboard == .allowed && profile.buttons.escapeChords == .blocked)
        #expect(profile.touch.mode == .all && profile.session.timeLimit == nil)
    }

    @Test func timeLimitAndWarnings() throws {
        let profile = try parse(
            """
            [session]
            time-limit = "1h30m"
            warnings = ["1m", "5m"]
            """)
        #expect(profile.session.timeLimit == .seconds(5400))
        #expect(profile.session.warnings == [.seconds(300), .seconds(60)])
    }

    @Test func visitorExtensionsWithDefaultsAndWithValues() throws {
        let defaults = try parse("[session]\ntime-limit = \"3m\"\nvisitor-extensions = 10\n")
        #expect(defaults.session.visitorExtensions == 10)
        #expect(defaults.session.extensionLength == .seconds(180), "the time limit again")
        #expect(defaults.session.warnBefore == .seconds(30))
        #expect(defaults.session.warningMarks == [.seconds(30)])
        let given = try parse(
            """
            [session]
            time-limit = "2d"
            warnings = ["5m", "1m"]
            visitor-extensions = 100
            extend-by = "10m"
            warn-before = "1m"
            """)
        #expect(given.session.extensionLength == .seconds(600))
        #expect(given.session.warnBefore == .seconds(60))
        #expect(given.session.warningMarks == [.seconds(300), .seconds(60)], "one mark, not two, at 1m")
        let long = try parse("[session]\ntime-limit = \"2d\"\nvisitor-extensions = 12\n")
        #expect(long.session.extensionLength == .seconds(86400), "at most a day")
        let none = try parse("[session]\ntime-limit = \"3m\"\n")
        #expect(none.session.extensionLength == nil && none.session.warningMarks.isEmpty)
    }

    @Test func fingersAtOnceAndTheEdgeMargin() throws {
        let profile = try parse("[touch]\nmax-contacts = 2\nedge-margin = 0.02\n")
        #expect(profile.touch.maxContacts == 2 && profile.touch.edgeMargin == 0.02)
        #expect(profile.filterPolicy.maxContacts == 2 && profile.filterPolicy.edgeMargin == 0.02)
        let none = try parse("[touch]\nedge-margin = 0\n")
        #expect(none.touch.edgeMargin == nil && none.filterPolicy.edgeMargin == 0, "0: no margin")
        #expect(try parse("").filterPolicy.maxContacts == nil, "no limit unless set")
    }

    @Test(arguments: ["de", "pt_BR", "es_419", "sr@latin", "ast", "ca_ES@valencia"])
    func aLanguageAsGettextTakesIt(_ language: String) throws {
        #expect(try parse("[session]\nlanguage = \"\(language)\"\n").session.language == language)
        #expect(try parse("").session.language == nil, "the kiosk's locale")
    }

    /// Broken profiles: each fails at the right `line:col` with a message naming the problem.
    @Test(arguments: [
        // A typo'd key must never silently weaken a lock.
        ("[buttons]\npowr = \"locked\"\n", "2:1", "unknown key \"powr\" in buttons; did you mean \"power\"?"),
        ("app = \"org.example.A\"\nbutons = {}\n", "2:1", "unknown key \"butons\" at the top level"),
        (
            "[touch]\nmode = \"regions\"\n[[touch.locked-region]]\nname = \"x\"\nrect = { x = 0.1, y = 0.1, widht = 0.2, height = 0.2 }\n",
            "5:28", "unknown key \"widht\""
        ),
        // Wrong types.
        ("[buttons]\npower = true\n", "2:9", "buttons.power must be a string, not a boolean"),
        ("[buttons]\nextra-locked-keys = \"KEY_F11\"\n", "2:21", "must be an array, not a string"),
        (
            "[touch]\nmode = \"regions\"\n[[touch.locked-region]]\nrect = { x = \"0.1\", y = 0.1, width = 0.2, height = 0.2 }\n",
            "4:14", "must be a number, not a string"
        ),
        ("[session]\ntime-limit = 45\n", "2:14", "must be a duration string"),
        // Values out of their domain.
        ("[buttons]\nvolume = \"off\"\n", "2:10", "it must be \"locked\" or \"allowed\""),
        (
            "[touch]\nmode = \"regions\"\n[[touch.locked-region]]\nrect = { x = 0.95, y = 0.0, width = 0.1, height = 0.1 }\n",
            "4:37", "past the right edge"
        ),
        (
            "[touch]\nmode = \"regions\"\n[[touch.locked-region]]\nrect = { x = -0.1, y = 0.0, width = 0.1, height = 0.1 }\n",
            "4:14", "outside 0.0…1.0"
        ),
        (
            "[touch]\nmode = \"regions\"\n[[touch.locked-region]]\npolygon = [[0.0, 0.0], [1.5, 0.5], [0.0, 1.0]]\n",
            "4:25", "outside 0.0…1.0"
        ),
        (
            "[touch]\nmode = \"regions\"\n[[touch.locked-region]]\npolygon = [[0.0, 0.0], [0.5, 0.5]]\n", "4:11",
            "a polygon needs at least 3"
        ),
        (
            "[touch]\nmode = \"regions\"\n[[touch.locked-region]]\npolygon = [[0,0], [1,1], [1,0], [0,1]]\n", "4:11",
            "not a simple polygon: edge 1 crosses edge 3"
        ),
        (
            "[touch]\nmode = \"all\"\n[[touch.locked-region]]\nrect = { x = 0.0, y = 0.0, width = 0.1, height = 0.1 }\n",
            "2:8", "set mode = \"regions\""
        ),
        ("[session]\ntime-limit = \"45 minutes\"\n", "2:14", "not a duration"),
        ("[session]\ntime-limit = \"10m\"\nwarnings = [\"5m\", \"1x\"]\n", "3:19", "not a duration"),
        ("[session]\ntime-limit = \"10m\"\nwarnings = [\"10m\"]\n", "3:13", "not less than the time limit"),
        ("[session]\nwarnings = [\"1m\"]\n", "2:1", "needs a session.time-limit"),
        // Time the visitor can extend: WCAG 2.2.1's floor and what each key needs.
        ("[session]\nvisitor-extensions = 10\n", "2:1", "visitor-extensions needs a session.time-limit"),
        ("[session]\ntime-limit = \"5m\"\nvisitor-extensions = 9\n", "3:22", "give 10 to 100"),
        ("[session]\ntime-limit = \"5m\"\nvisitor-extensions = 101\n", "3:22", "give 10 to 100"),
        ("[session]\ntime-limit = \"5m\"\nvisitor-extensions = \"10\"\n", "3:22", "must be an integer"),
        ("[session]\ntime-limit = \"5m\"\nextend-by = \"1m\"\n", "3:1", "only for session.visitor-extensions"),
        ("[session]\ntime-limit = \"5m\"\nwarn-before = \"1m\"\n", "3:1", "only for session.visitor-extensions"),
        (
            "[session]\ntime-limit = \"5m\"\nvisitor-extensions = 10\nextend-by = \"0s\"\n", "4:13",
            "write a positive number"
        ),
        (
            "[session]\ntime-limit = \"5m\"\nvisitor-extensions = 10\nextend-by = \"25h\"\n", "4:13",
            "give more than 0s and at most 1d"
        ),
        (
            "[session]\ntime-limit = \"5m\"\nvisitor-extensions = 10\nwarn-before = \"19s\"\n", "4:15",
            "needs at least 20s"
        ),
        (
            "[session]\ntime-limit = \"5m\"\nvisitor-extensions = 10\nwarn-before = \"5m\"\n", "4:15",
            "not less than the time limit"
        ),
        ("[session]\ntime-limit = \"25s\"\nvisitor-extensions = 10\n", "3:1", "default session.warn-before"),
        // Fingers at once and the edge margin.
        ("[touch]\nmax-contacts = 0\n", "2:16", "touch.max-contacts is 0; give 1 to 10"),
        ("[touch]\nmax-contacts = 11\n", "2:16", "touch.max-contacts is 11; give 1 to 10"),
        ("[touch]\nmax-contacts = 2.5\n", "2:16", "must be an integer"),
        ("[touch]\nedge-margin = 0.3\n", "2:15", "touch.edge-margin is 0.3, outside 0.0…0.2"),
        ("[touch]\nedge-margin = -0.01\n", "2:15", "outside 0.0…0.2"),
        ("[touch]\nedge-margin = \"2%\"\n", "2:15", "must be a number"),
        // Seeing locked regions: a yes or no, and a shade a visitor can see.
        ("[touch]\nshow-locked = \"yes\"\n", "2:15", "touch.show-locked must be a boolean, not a string"),
        ("[touch]\nshow-locked = 1\n", "2:15", "must be a boolean"),
        ("[touch]\nshade-opacity = 0.05\n", "2:17", "touch.shade-opacity is 0.05, outside 0.1…1.0"),
        ("[touch]\nshade-opacity = 1.5\n", "2:17", "outside 0.1…1.0"),
        ("[touch]\nshade-opacity = \"#00000066\"\n", "2:17", "touch.shade-opacity must be a number"),
        // The language of kioskd's screens: a gettext language, no codeset, no locale path.
        ("[session]\nlanguage = \"de_DE.UTF-8\"\n", "2:12", "session.language \"de_DE.UTF-8\" is not a language"),
        ("[session]\nlanguage = \"German\"\n", "2:12", "give a language code as gettext takes it"),
        ("[session]\nlanguage = \"../de\"\n", "2:12", "is not a language"),
        ("[session]\nlanguage = \"de_de\"\n", "2:12", "is not a language"),
        ("[session]\nlanguage = \"\"\n", "2:12", "is not a language"),
        ("[session]\nlanguage = 7\n", "2:12", "must be a string"),
        (
            "[session]\nexit-gesture = { key = \"KEY_POWR\", presses = 3, within = \"1.5s\" }\n", "2:24",
            "not an evdev key name"
        ),
        // The cleaning gesture: the exit gesture's forms, never the exit gesture itself.
        (
            "[session]\nexit-gesture = { key = \"KEY_POWER\", presses = 3, within = \"1.5s\" }\ncleaning-gesture = { key = \"KEY_POWER\", presses = 3, within = \"2s\" }\n",
            "3:1", "session.cleaning-gesture is 3 presses of KEY_POWER, as session.exit-gesture is"
        ),
        (
            "[session]\nexit-gesture = { corner = \"top-left\", taps = 5, within = \"3s\" }\ncleaning-gesture = { corner = \"top-left\", taps = 5, within = \"2s\" }\n",
            "3:1", "5 taps in the top-left corner, as session.exit-gesture is"
        ),
        (
            "[session]\ncleaning-gesture = { key = \"KEY_F12\", presses = 11, within = \"2s\" }\n", "2:49",
            "session.cleaning-gesture.presses is 11, outside 1…10"
        ),
        (
            "[session]\ncleaning-gesture = { key = \"KEY_F12\", presses = 3, within = \"2s\" }\ncleaning-time = \"4s\"\n",
            "3:17", "session.cleaning-time is 4s, outside 5s…5m"
        ),
        (
            "[session]\ncleaning-gesture = { key = \"KEY_F12\", presses = 3, within = \"2s\" }\ncleaning-time = \"301s\"\n",
            "3:17", "outside 5s…5m"
        ),
        ("[session]\ncleaning-time = \"30s\"\n", "2:1", "needs a session.cleaning-gesture"),
        (
            "[session]\ncleaning-gesture = { corner = \"top-right\", taps = 4 }\n", "2:1",
            "session.cleaning-gesture's touch gesture needs corner, taps and within"
        ),
        ("[buttons]\nextra-locked-keys = [\"KEY_F11\", \"F12\"]\n", "2:33", "\"F12\", which is not an evdev key name"),
        ("[passcode]\nhash = \"1234\"\n", "2:8", "must never be a plain passcode"),
        ("[passcode]\nhash = \"$1$abc$defghijklmnopqrstuvwxyz\"\n", "2:8", "does not accept"),
        ("app = \"not-reverse-dns\"\n", "1:7", "one label"),
        (
            "[restrictions.\"org.example.A\"]\n\"org.example.A.x\" = \"denied\"\n", "2:21",
            "it must be \"allow\" or \"deny\""
        ),
        ("[restrictions.\"org.example.A\"]\n\"org..x\" = \"deny\"\n", "2:1", "empty label"),
        // Only a profile with an app may be requested by it.
        ("[session]\napp-may-request = true\n", "2:19", "needs the profile's app"),
        // Pointers, accessibility, allowed devices.
        ("[pointer]\nmode = \"regions\"\n", "2:8", "it must be \"follow-touch\" or \"locked\" or \"allowed\""),
        ("[pointer]\nmodes = \"locked\"\n", "2:1", "did you mean \"mode\""),
        ("[accessibility]\nallowed-keys = [\"BTN_LEFT\"]\n", "2:17", "not an evdev keyboard key name"),
        (
            "[buttons]\nextra-locked-keys = [\"KEY_SPACE\"]\n[accessibility]\nallowed-keys = [\"KEY_SPACE\"]\n",
            "4:17", "a key is either locked or allowed"
        ),
        ("[accessibility]\nallowed-combos = [\"Ctrl+Alt+Delete\"]\n", "2:19", "an escape chord"),
        ("[accessibility]\nallowed-combos = [\"Alt+F2\"]\n", "2:19", "an escape chord"),
        ("[accessibility]\nallowed-combos = [\"Super\"]\n", "2:19", "needs at least one modifier"),
        // Keyboard access features: a boolean, and delays of 10 ms to 5 s.
        ("[accessibility]\nsticky-keys = \"yes\"\n", "2:15", "a boolean"),
        ("[accessibility]\nslow-keys = \"6s\"\n", "2:13", "accessibility.slow-keys is 6s, outside 10ms…5s"),
        ("[accessibility]\nslow-keys = \"0s\"\n", "2:13", "write a positive number"),
        ("[accessibility]\nslow-keys = 300\n", "2:13", "a duration string"),
        ("[accessibility]\nbounce-keys = \"5ms\"\n", "2:15", "accessibility.bounce-keys is 5ms, outside 10ms…5s"),
        ("[accessibility]\nsticky-key = true\n", "2:1", "did you mean \"sticky-keys\""),
        ("[[device]]\nrole = \"keypad\"\npasses = \"keys\"\n", "1:1", "has nothing to match a device by"),
        (
            "[[device]]\nrole = \"keypad\"\npasses = \"keys\"\nudev = { ID_INPUT_KEYBOARD = \"1\" }\n", "1:1",
            "matches only on ID_INPUT_KEYBOARD, which every device of its class has"
        ),
        ("[[device]]\nrole = \"keypad\"\nproduct = 0x1234\npasses = \"keys\"\n", "3:1", "product but no vendor"),
        ("[[device]]\nname = \"Pad\"\npasses = \"keys\"\n", "1:1", "has no role"),
        ("[[device]]\nname = \"Pad\"\nrole = \"keypad\"\n", "1:1", "has no passes"),
        ("[[device]]\nname = \"Pad\"\nrole = \"keypad\"\nhide-pointer = false\n", "1:1", "has no passes"),
        ("[[device]]\nname = \"CEC\"\nrole = \"hdmi-cec\"\nhide-pointer = \"yes\"\n", "4:16", "a boolean"),
        (
            "[[device]]\nname = \"CEC\"\nrole = \"hdmi-cec\"\npasses = \"pointer\"\nhide-pointer = true\n", "5:1",
            "its pointer cannot both pass and be hidden"
        ),
        (
            "[[device]]\nname = \"CEC\"\nrole = \"hdmi-cec\"\npasses = \"all\"\nhide-pointer = true\n", "5:1",
            "has hide-pointer = true and passes = \"all\""
        ),
        ("[[device]]\nname = \"Pad\"\nrole = \"Key Pad\"\npasses = \"keys\"\n", "3:8", "a role is a lower-case word"),
        ("[[device]]\nname = \"Pad\"\nrole = \"keypad\"\npasses = \"everything\"\n", "4:10", "it must be \"all\""),
        ("[[device]]\nvendor = 0x10000\nrole = \"keypad\"\npasses = \"keys\"\n", "2:10", "outside 0x0000…0xffff"),
        (
            "[[device]]\nname = \"Pad\"\nrole = \"keypad\"\npasses = \"keys\"\nmatch = \"x\"\n", "5:1",
            "unknown key \"match\""
        ),
        // TOML syntax errors carry TOMLKit's position.
        ("[buttons\npower = \"locked\"\n", "1:9", "TOML syntax"),
        ("a = \"x\"\na = \"y\"\n", "2:5", "cannot redefine"),
    ])
    func brokenProfilesFailAtTheRightPlace(source: String, position: String, message: String) {
        do {
            _ = try parse(source)
            Issue.record("parsed without error: \(source)")
        } catch {
            // The diagnostic that names the problem stands at the position (a broken line may
            // also break a rule that needs the missing value: both are reported).
            let match = error.diagnostics.first { $0.message.contains(message) }
            #expect(match.map { "\($0.position.line):\($0.position.column)" } == position, "\(error)")
            #expect(match?.description.hasPrefix("test.toml:\(position): ") == true, "\(error)")
        }
    }

    @Test func everyErrorIsReportedInFileOrder() {
        do {
            _ = try parse("[buttons]\nvolume = 1\npowr = \"x\"\n[touch]\nmode = \"some\"\n")
            Issue.record("parsed")
        } catch {
            #expect(error.diagnostics.map { "\($0.position.line):\($0.position.column)" } == ["2:10", "3:1", "5:8"])
        }
    }

    @Test func invalidUTF8AndNULAreErrorsWithAPosition() {
        #expect(throws: ProfileError.self) {
            try ProfileParser.parse(bytes: Array("app = \"a.b\"\n# caf".utf8) + [0xE9, 0x0A], file: "f.toml")
        }
        do {
            _ = try ProfileParser.parse(
                bytes: Array("a = 1\nb = \"".utf8) + [0xFF] + Array("\"\n".utf8), file: "f.toml")
        } catch {
            #expect(error.description == "f.toml:2:6: the file is not valid UTF-8")
        }
        do {
            _ = try parse("description = \"a\u{0}b\"")
        } catch {
            #expect(error.description == "test.toml:1:17: the file contains a NUL character")
        }
    }

    @Test(arguments: [("45m", 2700.0), ("1.5s", 1.5), ("1h30m", 5400), ("250ms", 0.25), ("2d", 172_800), ("0.5m", 30)])
    func durationsParse(_ text: String, seconds: Double) {
        #expect(Duration(kioskText: text) == .milliseconds(Int64(seconds * 1000)))
    }

    @Test(arguments: ["", "45", "m", "1.s", ".5s", "5 m", "5M", "1e3s", "-5s", "5w", "1s5"])
    func nonDurations(_ text: String) {
        #expect(Duration(kioskText: text) == nil)
    }

    @Test(arguments: [Duration.seconds(2700), .milliseconds(1500), .seconds(5400), .milliseconds(250), .seconds(90061)])
    func durationsRoundTripThroughText(_ duration: Duration) {
        #expect(Duration(kioskText: duration.kioskText) == duration)
    }
}
