import CGtk
import Glibc
import KioskClient
import PromptScreen

/// What the display knows of kioskd and what it does about it, on GTK's thread: opens the
/// window when the prompt opens, redraws it as the prompt changes (and every second, for the
/// waits), destroys it when the prompt closes or kioskd goes away, and speaks time-limit warnings
/// without opening anything.
@MainActor final class PromptDisplay {
    private var status: KioskStatus?
    private var pad: [KioskPrompt.Key]?
    private var lastClose: (reason: KioskPrompt.CloseReason, at: Timestamp)?
    /// A time-limit warning came in this session: the prompt shows the time left from then on.
    private var warned = false
    private var window: PromptWindow?
    private var ticker: Ticker?
    private let speaker: Speaker
    private let language: Language
    /// A screen reader runs in the kiosk session (`SCREEN_READER`): the prompt's changes are
    /// announced to it, through speech-dispatcher where GTK cannot announce.
    private let screenReader: Bool
    /// The screen last announced from, for what changed (``PromptScreen/announcement(from:to:)``);
    /// nil in a new window's first second.
    private var drawn: PromptScreen?
    /// The cleaning's sentence, announced once its window is up (``announceCleaning(_:)``).
    private var pendingCleaningSentence: String?
    /// Asks the bus side for `PromptPad` (it answers with `padRead`).
    private let readPad: @MainActor () -> Void
    private var padRequested = false
    /// The offer of more time as last spoken: said again only when it comes up anew or runs out.
    private var spokenOffer: TimeOfferState = .closed
    /// "Still there?" as last spoken: said once each time it comes up.
    private var spokeStillThere = false
    /// Turns the display off and on as kioskd wants it.
    private let displayControl: DisplayControl
    /// The cleaning's end as last spoken: said once as it starts (and again when it starts anew).
    private var spokenCleaning: Timestamp?
    /// The bar (`DrawingBar`, read when a drawing starts), the drawing's window, and its screen
    /// as last announced. What staff draw is the status's (`DrawingState`).
    private var bar: [KioskDrawing.Button]?
    private var barRequested = false
    private let readBar: @MainActor () -> Void
    private var drawingWindow: DrawingWindow?
    private var drawnDrawing: DrawingScreen?

    init(
        speaker: Speaker, language: Language, screenReader: Bool, displayControl: DisplayControl,
        readBar: @escaping @MainActor () -> Void = {}, readPad: @escaping @MainActor () -> Void
    ) {
        self.readBar = readBar
        self.displayControl = displayControl
        self.speaker = speaker
        self.language = language
        self.screenReader = screenReader
        self.readPad = readPad
    }

    func handle(_ event: ManagerEvent) {
        switch event {
        case .statusChanged(let next):
            if next.sessionState == .inactive { warned = false }
            status = next
            if language.follow(profile: next.language) {
                log("Language: \(language.current ?? "English, as written") (\(language.voice ?? "no catalogue")).")
            }
            speakOffer(next)
            speakStillThere(next)
            displayControl.follow(next.sessionState == .active ? next.displayPower : .on)
            announceCleaning(next)
        case .promptClosed(let reason):
            // Closed now, whichever of this signal and PropertiesChanged comes first.
            lastClose = (reason, Self.now)
            status?.prompt.state = .closed
        case .timeLimitWarning(let seconds):
            warned = true
            if status?.speakWarnings == true {
                say(PromptScreen.sentence(secondsLeft: seconds, tr: language.translation))
            }
        case .daemonStarted:
            pad = nil  // a restarted kioskd is read afresh
            padRequested = false
            bar = nil
            barRequested = false
        case .daemonStopped, .disconnected:
            displayControl.follow(.on)  // never dark without kioskd to wake it
            status = nil  // no kioskd, no prompt: the window goes
            pad = nil
            padRequested = false
            bar = nil
            barRequested = false
        case .exitRequested, .restrictionStateChanged, .timeExtended, .idleReset, .cleaningStarted, .cleaningEnded:
            break  // PromptState and CleaningUntil say when to draw
        }
        refresh()
    }

    /// The offer of more time is announced on a second sense, whatever `SpeakWarnings` says: the
    /// visitor must notice it to take it (spoken once when it comes up, once when none are left).
    private func speakOffer(_ status: KioskStatus) {
        let offer = status.sessionState == .active ? status.timeOffer : .closed
        defer { spokenOffer = offer }
        guard offer != spokenOffer, offer == .open || offer == .exhausted else { return }
        say(PromptScreen.offerSentence(status: status, now: Self.now, tr: language.translation))
    }

    /// "Still there?" is announced on a second sense too, once each time it comes up: the
    /// visitor must notice it to keep their work.
    private func speakStillThere(_ status: KioskStatus) {
        let up = status.sessionState == .active && status.idleWarning != nil
        defer { spokeStillThere = up }
        guard up, !spokeStillThere else { return }
        say(PromptScreen.stillThereSentence(status: status, now: Self.now, tr: language.translation))
    }

    /// Cleaning is announced once as it starts, as the passcode prompt's changes are: through the
    /// screen reader (GTK 4.14 and later), or speech-dispatcher when one runs and GTK cannot.
    private func announceCleaning(_ status: KioskStatus) {
        defer { spokenCleaning = status.cleaningUntil }
        guard status.cleaningUntil != spokenCleaning,
            let sentence = PromptScreen.cleaningSentence(status: status, now: Self.now, tr: language.translation)
        else { return }
        pendingCleaningSentence = sentence
    }

    /// Speaks in the voice of the language shown.
    private func say(_ sentence: String) { speaker.say(sentence, language: language.voice) }

    func barRead(_ buttons: [KioskDrawing.Button]?) {
        barRequested = false
        bar = buttons
        refresh()
    }

    /// The drawing's window while staff draw (it takes the screen: no prompt is open then); false
    /// when none is drawn, and the drawing's window is gone.
    private func refreshDrawing() -> Bool {
        guard
            let screen = DrawingScreen.scene(
                status: status, bar: bar ?? [], tr: language.translation)
        else {
            if drawingWindow != nil { log("The drawing ended: window destroyed.") }
            drawingWindow?.destroy()
            drawingWindow = nil
            drawnDrawing = nil
            return false
        }
        if bar == nil, !barRequested {
            barRequested = true
            readBar()
        }
        if drawingWindow == nil {
            drawingWindow = DrawingWindow()
            log("The drawing started: window shown.")
        }
        drawingWindow?.show(screen)
        if let window = drawingWindow, let message = DrawingScreen.announcement(from: drawnDrawing, to: screen) {
            if !window.announce(message), screenReader { say(message) }
        }
        drawnDrawing = screen
        return true
    }

    func padRead(_ keys: [KioskPrompt.Key]?) {
        padRequested = false
        pad = keys
        refresh()
    }

    /// `tick`: called by the window's once-a-second ticker.
    private func refresh(tick: Bool = false) {
        if refreshDrawing() {
            // Staff draw: nothing else is on the screen (the prompt cannot be open meanwhile).
            ticker?.cancel()
            ticker = nil
            window?.destroy()
            window = nil
            drawn = nil
            return
        }
        guard
            let screen = PromptScreen.scene(
                status: status, now: Self.now, lastClose: lastClose, warned: warned, tr: language.translation)
        else {
            if window != nil { log("The prompt closed: window destroyed.") }
            ticker?.cancel()
            ticker = nil
            window?.destroy()
            window = nil
            drawn = nil
            return
        }
        if pad == nil, !padRequested {
            padRequested = true
            readPad()
        }
        if window == nil {
            window = PromptWindow(tr: language.translation)
            ticker = Ticker(every: 1000) { [unowned self] in refresh(tick: true) }
            log("The prompt opened: window shown.")
        }
        window?.show(screen, pad: pad ?? [])
        // A new window is registered with the screen reader asynchronously, and an announcement
        // made before that is lost (GTK 4.18: the Debian 13 boot test heard the counts, not the
        // opening): the opening is announced at the window's first tick, a second after it was
        // shown, with what the screen says then.
        guard drawn != nil || tick else { return }
        if let window, let sentence = pendingCleaningSentence {
            pendingCleaningSentence = nil
            if !window.announce(sentence), screenReader { say(sentence) }
        }
        if let window, let message = PromptScreen.announcement(from: drawn, to: screen) {
            // GTK 4.14 and later: the screen reader says it. Older GTK (Debian 12's 4.8) has no
            // announcement; with a screen reader in the session, speech-dispatcher says it, in
            // turn with the screen reader. Without one, nothing is spoken (a count of digits is
            // for those who cannot see the dots).
            if !window.announce(message), screenReader { say(message) }
        }
        drawn = screen
    }

    static var now: Timestamp {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Timestamp(microseconds: Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1000)
    }
}
