import KioskClient
import PromptScreen
import Testing

/// The display's texts in another language (docs/prompt.md#language): every text goes through
/// the translation, placeholders are filled after the lookup, and the language comes from the
/// profile or the kiosk's locale. The catalogues themselves are checked by `make check-po`; the
/// German catalogue at work in the real display is PromptDisplayTests'.
@Suite struct TranslationTests {
    typealias T = PromptScreenTests

    /// A language that marks every text it translates: a text drawn or spoken without going
    /// through the translation shows unmarked.
    static let marked = Translation(
        lookup: { "«\($0)»" }, plural: { one, other, n in "«\(n == 1 ? one : other)»" })

    static func isMarked(_ text: String?) -> Bool { text.map { $0.hasPrefix("«") && $0.hasSuffix("»") } ?? true }

    @Test func everyTextOnEveryScreenGoesThroughTheTranslation() throws {
        let screens: [PromptScreen?] = [
            PromptScreen.scene(
                status: T.status(.open, typed: 3), now: T.now, lastClose: nil, warned: false, tr: Self.marked),
            PromptScreen.scene(status: T.status(.open), now: T.now, lastClose: nil, warned: false, tr: Self.marked),
            PromptScreen.scene(
                status: T.status(.open, closesIn: .seconds(5), sessionLeft: .seconds(90)), now: T.now,
                lastClose: (.rejected, T.now), warned: true, tr: Self.marked),
            PromptScreen.scene(
                status: T.status(.checking), now: T.now, lastClose: nil, warned: false, tr: Self.marked),
            PromptScreen.scene(
                status: T.status(.open, retryAfter: .seconds(60), session: .expired), now: T.now, lastClose: nil,
                warned: true, tr: Self.marked),
            PromptScreen.scene(
                status: T.offering(.exhausted), now: T.now, lastClose: nil, warned: false, tr: Self.marked),
        ]
        for case let screen? in screens {
            #expect(Self.isMarked(screen.title), "\(screen)")
            #expect(Self.isMarked(screen.message), "\(screen)")
            #expect(Self.isMarked(screen.banner) && Self.isMarked(screen.closing), "\(screen)")
            #expect(screen.dotsLabel.isEmpty || Self.isMarked(screen.dotsLabel), "\(screen)")
        }
        #expect(screens.count == 6 && screens.allSatisfy { $0 != nil })
        // The offer's message is two sentences, each translated.
        let offer = try #require(
            PromptScreen.scene(status: T.offering(.open), now: T.now, lastClose: nil, warned: false, tr: Self.marked))
        #expect(
            offer.message == "«Press any key or touch the screen to get more time.» «You can do this 10 more times.»")
        #expect(Self.isMarked(offer.button) && Self.isMarked(offer.banner) && Self.isMarked(offer.bannerLabel))
        #expect(Self.isMarked(PromptScreen.sentence(secondsLeft: 90, tr: Self.marked)))
        // Cleaning the screen: its title, line, countdown and what a screen reader reads.
        let cleaning = try #require(
            PromptScreen.scene(
                status: T.cleaning(left: .seconds(25)), now: T.now, lastClose: nil, warned: false, tr: Self.marked))
        #expect(Self.isMarked(cleaning.title) && Self.isMarked(cleaning.message), "\(cleaning)")
        #expect(Self.isMarked(cleaning.banner) && Self.isMarked(cleaning.bannerLabel), "\(cleaning)")
        #expect(
            PromptScreen.cleaningSentence(status: T.cleaning(left: .seconds(30)), now: T.now, tr: Self.marked)
                == "«Cleaning the screen.» «Touch, buttons and keys are paused for «30 seconds».»")
        #expect(PromptScreen.keyLabel("Cancel", tr: Self.marked) == "«Cancel»")
        #expect(PromptScreen.keyLabel("7", tr: Self.marked) == "7", "digits are digits")
        #expect(PromptScreen.keyName("OK", tr: Self.marked) == "«PIN pad key «OK»»")
        #expect(Self.isMarked(PromptScreen.keyDescription(tr: Self.marked)))
        #expect(Self.isMarked(PromptScreen.windowTitle(tr: Self.marked)))
    }

    /// A language's own plural rule picks the form; the count fills its placeholder.
    @Test func pluralsTakeTheLanguagesForm() {
        // Polish-like: three forms (1; 2–4; 5 and more), from a catalogue's rule.
        let three = Translation(lookup: { $0 }) { _, _, n in
            n == 1 ? "%d minuta" : (2...4).contains(n % 10) && !(12...14).contains(n % 100) ? "%d minuty" : "%d minut"
        }
        #expect(PromptScreen.sentence(secondsLeft: 60, tr: three) == "1 minuta left")
        #expect(PromptScreen.sentence(secondsLeft: 180, tr: three) == "3 minuty left")
        #expect(PromptScreen.sentence(secondsLeft: 300, tr: three) == "5 minut left")
    }

    @Test func placeholdersAreFilledAfterTheLookup() {
        #expect(Translation.format("Try again in %s.", ["4:00"]) == "Try again in 4:00.")
        #expect(Translation.format("%d of %s", ["3", "10"]) == "3 of 10")
        #expect(Translation.format("%2$s, then %1$s", ["first", "second"]) == "second, then first", "reordered")
        #expect(Translation.format("100%% sure, %s", ["yes"]) == "100% sure, yes")
        #expect(Translation.format("%s and %s", ["one"]) == "one and %s", "a missing value shows, nothing crashes")
        #expect(Translation.format("50% off %x", ["a"]) == "50% off %x", "another % is left as it is")
        #expect(Translation.format("ends with %", []) == "ends with %")
        #expect(Translation.format("no placeholder", ["unused"]) == "no placeholder")
        #expect(Translation.format("%0$s", ["a"]) == "%0$s", "positions count from 1")
    }

    @Test(arguments: [
        // The profile's language wins over the kiosk's.
        ("de", ["LANG": "fr_FR.UTF-8"], "de"),
        // Then gettext's order: LANGUAGE, LC_ALL, LC_MESSAGES, LANG.
        ("", ["LANGUAGE": "pt_BR:pt", "LANG": "de_DE.UTF-8"], "pt_BR:pt"),
        ("", ["LC_ALL": "fr_FR.UTF-8", "LANG": "de_DE.UTF-8"], "fr_FR"),
        ("", ["LC_MESSAGES": "es_ES.UTF-8", "LANG": "de_DE.UTF-8"], "es_ES"),
        ("", ["LANG": "de_DE.UTF-8"], "de_DE"),
        ("", ["LANG": "sr_RS.UTF-8@latin"], "sr_RS@latin"),
        ("", ["LANG": "de_AT"], "de_AT"),
        ("", ["LANGUAGE": "", "LC_ALL": "", "LANG": "nl_NL.UTF-8"], "nl_NL"),
        // What is no language on the bus is ignored: the kiosk's, never a path for gettext.
        ("../../tmp/x", ["LANG": "de_DE.UTF-8"], "de_DE"),
        ("de_DE.UTF-8", ["LANG": "fr_FR.UTF-8"], "fr_FR"),
    ])
    func theLanguageIsTheProfilesElseTheKiosks(_ profile: String, _ environment: [String: String], _ expected: String) {
        #expect(Translation.language(profile: profile, environment: environment) == expected)
    }

    @Test func theCAndPOSIXLocalesAreEnglishAsWritten() {
        #expect(Translation.language(profile: "", environment: [:]) == nil)
        #expect(Translation.language(profile: "", environment: ["LANG": "C.UTF-8"]) == nil)
        #expect(Translation.language(profile: "", environment: ["LANG": "C"]) == nil)
        #expect(Translation.language(profile: "", environment: ["LC_ALL": "POSIX", "LANG": "de_DE.UTF-8"]) == nil)
    }

    @Test func theVoiceIsTheCataloguesLanguage() {
        let header = "Project-Id-Version: kioskd-prompt\nLanguage: pt_BR\nContent-Type: text/plain; charset=UTF-8\n"
        #expect(Translation.headerLanguage(header) == "pt")
        #expect(Translation.headerLanguage("Language: de\n") == "de")
        #expect(Translation.headerLanguage("Language: \n") == nil, "a template's empty Language")
        #expect(Translation.headerLanguage("") == nil, "no catalogue: English as written")
    }
}

/// What a screen reader is told as the passcode prompt changes (docs/prompt.md#the-accessible-tree).
@Suite struct AnnouncementTests {
    typealias T = PromptScreenTests

    static func screen(_ status: KioskStatus, lastClose: (KioskPrompt.CloseReason, Duration)? = nil) -> PromptScreen {
        T.scene(status, lastClose: lastClose)!
    }

    @Test func openingSaysTheTitleTheCountAndWhatToDo() {
        #expect(
            PromptScreen.announcement(from: nil, to: Self.screen(T.status(.open)))
                == "Enter the passcode to end Guided Access. No digits typed. Type the passcode, then Enter or OK.")
        // From the offer's screen to the prompt: the prompt is new to the listener.
        let offer = Self.screen(T.offering(.open))
        #expect(
            PromptScreen.announcement(from: offer, to: Self.screen(T.status(.open)))?.hasPrefix("Enter the") == true)
        #expect(PromptScreen.announcement(from: nil, to: offer) == nil, "the offer is spoken on its own")
    }

    @Test func eachNewCountAndLineIsSaidAndNothingElse() {
        let open = Self.screen(T.status(.open))
        let two = Self.screen(T.status(.open, typed: 2))
        #expect(PromptScreen.announcement(from: open, to: two) == "2 digits typed")
        #expect(PromptScreen.announcement(from: two, to: two) == nil, "nothing changed")
        let checking = Self.screen(T.status(.checking, typed: 2))
        #expect(PromptScreen.announcement(from: two, to: checking) == "Checking…")
        let wrong = Self.screen(T.status(.open), lastClose: (.rejected, .seconds(1)))
        #expect(
            PromptScreen.announcement(from: checking, to: wrong)
                == "No digits typed. The passcode was wrong. Try again.")
    }

    @Test func aWaitCountingDownIsSaidOnceAndTheTimeoutWhenItShows() {
        let wait = Self.screen(T.status(.open, retryAfter: .seconds(240)))
        let later = Self.screen(T.status(.open, retryAfter: .seconds(239)))
        #expect(wait.message != later.message)
        #expect(PromptScreen.announcement(from: wait, to: later) == nil, "a countdown's seconds are not said")
        let closing = Self.screen(T.status(.open, closesIn: .seconds(10)))
        let open = Self.screen(T.status(.open))
        #expect(PromptScreen.announcement(from: open, to: closing) == "Closing in 0:10")
        let sooner = Self.screen(T.status(.open, closesIn: .seconds(9)))
        #expect(PromptScreen.announcement(from: closing, to: sooner) == nil)
    }
}
