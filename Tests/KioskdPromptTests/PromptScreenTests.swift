import KioskClient
import PromptScreen
import Testing

/// Every text kioskd-prompt shows, from the status kioskd publishes (no display needed).
@Suite struct PromptScreenTests {
    static let now = Timestamp(microseconds: 1_800_000_000_000_000)

    static func status(
        _ state: KioskPrompt.State, typed: Int = 0, retryAfter: Duration? = nil, closesIn: Duration = .seconds(30),
        session: SessionState = .active, sessionLeft: Duration? = nil
    ) -> KioskStatus {
        KioskStatus(
            sessionState: session, activeProfile: "museum", sessionDeadline: sessionLeft.map { now + $0 },
            version: "0.1.0",
            prompt: KioskPrompt(
                state: state, length: typed, deadline: state == .closed ? nil : now + closesIn,
                retryAfter: retryAfter.map { now + $0 }))
    }

    static func scene(
        _ status: KioskStatus?, lastClose: (KioskPrompt.CloseReason, Duration)? = nil, warned: Bool = false
    ) -> PromptScreen? {
        PromptScreen.scene(
            status: status, now: now, lastClose: lastClose.map { ($0.0, now + (.zero - $0.1)) }, warned: warned)
    }

    @Test func noWindowWhileClosedOrWithoutKioskd() {
        #expect(Self.scene(nil) == nil)
        #expect(Self.scene(Self.status(.closed)) == nil)
        #expect(Self.scene(Self.status(.closed, session: .expired)) == nil)
    }

    /// A prompt state a newer kioskd adds reads as `.unknown`, which, like every state but
    /// closed, means the prompt is up and kioskd reads the keys: the display draws it.
    @Test func aPromptStateThisBuildDoesNotKnowIsDrawnAsAPrompt() throws {
        let unknown = try #require(Self.scene(Self.status(.unknown, typed: 2)))
        #expect(unknown.title == "Enter the passcode to end Guided Access")
        #expect(unknown.dots == "● ●")
        #expect(unknown.message == "Type the passcode, then Enter or OK.")
        #expect(unknown.closing == nil)
    }

    /// The dots, and what a screen reader reads for them: how many digits were typed, never which.
    @Test func aDotPerDigitTypedAndNeverMore() throws {
        let open = try #require(Self.scene(Self.status(.open)))
        #expect(open.title == "Enter the passcode to end Guided Access")
        #expect(open.dots == "")
        #expect(open.dotsLabel == "No digits typed")
        #expect(open.message == "Type the passcode, then Enter or OK.")
        #expect(open.banner == nil && open.closing == nil)
        let three = try #require(Self.scene(Self.status(.open, typed: 3)))
        #expect(three.dots == "● ● ●")
        #expect(three.dotsLabel == "3 digits typed")
        #expect(Self.scene(Self.status(.open, typed: 1))?.dotsLabel == "1 digit typed")
        let long = try #require(Self.scene(Self.status(.open, typed: 500)))
        #expect(long.dots.filter { $0 == "●" }.count == PromptScreen.maxDots)
        #expect(long.dotsLabel == "500 digits typed")
    }

    @Test func theThrottlesWaitIsShownUntilItIsOver() {
        #expect(
            Self.scene(Self.status(.open, retryAfter: .seconds(29.2)))?.message
                == "Too many wrong passcodes. Try again in 0:30.")
        #expect(
            Self.scene(Self.status(.open, retryAfter: .seconds(3600)))?.message
                == "Too many wrong passcodes. Try again in 1:00:00.")
        #expect(
            Self.scene(Self.status(.open, retryAfter: .seconds(-1)))?.message == "Type the passcode, then Enter or OK.")
        #expect(Self.scene(Self.status(.checking, retryAfter: .seconds(30)))?.message == "Checking…")
    }

    @Test func theLastResultIsShownOnTheNextPromptForAMinute() {
        #expect(
            Self.scene(Self.status(.open), lastClose: (.rejected, .seconds(5)))?.message
                == "The passcode was wrong. Try again.")
        #expect(
            Self.scene(Self.status(.open), lastClose: (.rejected, .seconds(61)))?.message
                == "Type the passcode, then Enter or OK.")
        #expect(
            Self.scene(Self.status(.open), lastClose: (.cancelled, .seconds(5)))?.message
                == "Type the passcode, then Enter or OK.")
        #expect(
            Self.scene(Self.status(.open), lastClose: (.timeout, .seconds(5)))?.message
                == "The last prompt closed after 30 seconds without a key.")
    }

    @Test func thePromptsOwnTimeoutInItsLastSeconds() {
        #expect(Self.scene(Self.status(.open, closesIn: .seconds(11)))?.closing == nil)
        #expect(Self.scene(Self.status(.open, closesIn: .seconds(9.5)))?.closing == "Closing in 0:10")
        #expect(Self.scene(Self.status(.checking, closesIn: .seconds(5)))?.closing == nil)
    }

    @Test func theTimeLimitBannerOnceWarned() {
        #expect(Self.scene(Self.status(.open, sessionLeft: .seconds(300)))?.banner == nil)
        #expect(
            Self.scene(Self.status(.open, sessionLeft: .seconds(299.5)), warned: true)?.banner
                == "5 minutes left in this session")
        #expect(
            Self.scene(Self.status(.open, session: .expired, sessionLeft: .seconds(-3)))?.banner
                == "Time is up: the session's time limit ran out.")
    }

    @Test func spokenWarnings() {
        #expect(PromptScreen.sentence(secondsLeft: 300) == "5 minutes left")
        #expect(PromptScreen.sentence(secondsLeft: 60) == "1 minute left")
        #expect(PromptScreen.sentence(secondsLeft: 90) == "1 minute 30 seconds left")
        #expect(PromptScreen.sentence(secondsLeft: 30) == "30 seconds left")
        #expect(PromptScreen.sentence(secondsLeft: 1) == "1 second left")
        #expect(PromptScreen.sentence(secondsLeft: 5400) == "1 hour 30 minutes left")
        #expect(PromptScreen.sentence(secondsLeft: 899) == "15 minutes left")
    }

    // MARK: The offer of more time

    static func offering(
        _ offer: TimeOfferState, left: Int = 10, sessionLeft: Duration = .seconds(30),
        prompt: KioskPrompt.State = .closed,
        session: SessionState = .active
    ) -> KioskStatus {
        var status = status(prompt, session: session, sessionLeft: sessionLeft)
        status.timeOffer = offer
        status.visitorExtensionsLeft = left
        return status
    }

    @Test func theOfferAsksWithALargeButtonAndNoPad() throws {
        let screen = try #require(Self.scene(Self.offering(.open, left: 10)))
        #expect(screen.title == "Need more time?")
        #expect(screen.message == "Press any key or touch the screen to get more time. You can do this 10 more times.")
        #expect(screen.banner == "0:30 left in this session")
        #expect(screen.bannerLabel == "30 seconds left in this session", "what a screen reader reads")
        #expect(screen.dotsLabel.isEmpty, "no dots, no count")
        #expect(screen.button == "More time" && !screen.showsPad && screen.dots.isEmpty)
        #expect(Self.scene(Self.offering(.open, left: 1))?.message.hasSuffix("You can do this 1 more time.") == true)
        #expect(
            PromptScreen.offerSentence(status: Self.offering(.open), now: Self.now)
                == "Need more time? 30 seconds left. Press any key or touch the screen.")
    }

    @Test func noneLeftSaysSoWithoutAButton() throws {
        let screen = try #require(Self.scene(Self.offering(.exhausted, left: 0, sessionLeft: .seconds(25))))
        #expect(screen.title == "No more time can be added")
        #expect(screen.message == "This session ends in 0:25.")
        #expect(screen.button == nil && !screen.showsPad)
        #expect(
            PromptScreen.offerSentence(status: Self.offering(.exhausted, sessionLeft: .seconds(25)), now: Self.now)
                == "25 seconds left. No more time can be added.")
    }

    // MARK: Cleaning the screen

    /// A status with cleaning running for `left` more (`CleaningUntil`).
    static func cleaning(
        left: Duration, prompt: KioskPrompt.State = .closed, offer: TimeOfferState = .closed,
        session: SessionState = .active
    ) -> KioskStatus {
        var status = offering(offer, prompt: prompt, session: session)
        status.cleaningUntil = now + left
        return status
    }

    @Test func cleaningCountsDownInSecondsAndReadsThemInWords() throws {
        let screen = try #require(Self.scene(Self.cleaning(left: .milliseconds(24_200))))
        #expect(screen.title == "Cleaning the screen")
        #expect(screen.message == "Touch, buttons and keys are paused so that the screen can be wiped.")
        #expect(screen.banner == "Cleaning — 25 s", "rounded up, as every countdown")
        #expect(screen.bannerLabel == "Cleaning: 25 seconds left", "what a screen reader reads")
        #expect(!screen.showsPad && screen.button == nil && screen.dots.isEmpty && screen.dotsLabel.isEmpty)
        #expect(Self.scene(Self.cleaning(left: .seconds(300)))?.banner == "Cleaning — 300 s")
        #expect(
            PromptScreen.cleaningSentence(status: Self.cleaning(left: .seconds(30)), now: Self.now)
                == "Cleaning the screen. Touch, buttons and keys are paused for 30 seconds.")
        // No announcement of the passcode prompt's kind: the cleaning's sentence is said once.
        #expect(PromptScreen.announcement(from: nil, to: screen) == nil)
    }

    /// Without a session too; over the offer of more time; under the passcode prompt (which ends
    /// it at kioskd); none once its end is behind (CleaningEnded is on its way) or without one.
    @Test func cleaningShowsWithOrWithoutASessionAndThePromptComesFirst() throws {
        #expect(Self.scene(Self.cleaning(left: .seconds(10), session: .inactive))?.title == "Cleaning the screen")
        #expect(Self.scene(Self.cleaning(left: .seconds(10), offer: .open))?.title == "Cleaning the screen")
        #expect(Self.scene(Self.cleaning(left: .seconds(10), prompt: .open))?.showsPad == true)
        #expect(Self.scene(Self.cleaning(left: .zero)) == nil)
        #expect(Self.scene(Self.cleaning(left: .seconds(-1))) == nil)
        #expect(PromptScreen.cleaningSentence(status: Self.cleaning(left: .zero), now: Self.now) == nil)
        #expect(Self.scene(Self.offering(.closed)) == nil)
    }

    /// The passcode prompt takes the screen while it is open; no offer, an offer a newer kioskd
    /// names otherwise, or a session that is not active: no offer's screen.
    @Test func thePasscodePromptComesFirstAndOnlyAnActiveSessionIsOffered() throws {
        let prompt = try #require(Self.scene(Self.offering(.open, prompt: .open)))
        #expect(prompt.title == "Enter the passcode to end Guided Access" && prompt.button == nil && prompt.showsPad)
        #expect(Self.scene(Self.offering(.closed)) == nil)
        #expect(Self.scene(Self.offering(.unknown)) == nil)
        #expect(Self.scene(Self.offering(.open, session: .expired)) == nil)
    }

    // MARK: "Still there?"

    static func stillThere(
        resetIn: Duration?, prompt: KioskPrompt.State = .closed, offer: TimeOfferState = .closed
    )
        -> KioskStatus
    {
        var status = status(prompt, sessionLeft: .seconds(30))
        status.idleWarning = resetIn.map { now + $0 }
        status.timeOffer = offer
        return status
    }

    @Test func stillThereCountsDownToTheStartOverWithALargeButton() throws {
        let screen = try #require(Self.scene(Self.stillThere(resetIn: .seconds(19))))
        #expect(screen.title == "Still there?")
        #expect(
            screen.message == "Press any key or touch the screen to keep going. Otherwise the kiosk starts over.")
        #expect(screen.banner == "Starting over in 0:19")
        #expect(screen.bannerLabel == "Starting over in 19 seconds", "what a screen reader reads")
        #expect(screen.button == "Keep going" && !screen.showsPad && screen.dots.isEmpty)
        #expect(
            PromptScreen.stillThereSentence(status: Self.stillThere(resetIn: .seconds(20)), now: Self.now)
                == "Still there? 20 seconds left. Press any key or touch the screen.")
        let marked = try #require(
            PromptScreen.scene(
                status: Self.stillThere(resetIn: .seconds(19)), now: Self.now, lastClose: nil, warned: false,
                tr: TranslationTests.marked))
        for text in [marked.title, marked.message, marked.banner, marked.bannerLabel, marked.button] {
            #expect(TranslationTests.isMarked(text), "every text goes through the translation: \(marked)")
        }
    }

    /// The passcode prompt and the offer of more time come first; without `IdleWarning`, no screen.
    @Test func thePromptAndTheOfferComeBeforeStillThere() throws {
        #expect(Self.scene(Self.stillThere(resetIn: nil)) == nil)
        #expect(Self.scene(Self.stillThere(resetIn: .seconds(5), prompt: .open))?.showsPad == true)
        #expect(Self.scene(Self.stillThere(resetIn: .seconds(5), offer: .open))?.title == "Need more time?")
    }
}
