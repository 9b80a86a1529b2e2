import BusTestSupport
import Foundation
import Glibc
import KioskClient
import KioskTestSupport
import Testing

/// kioskd-prompt's accessible tree as a screen reader gets it: read over AT-SPI by a client no
/// one here wrote (python3-pyatspi on Debian's at-spi2-core, through Tests/Support/atspi-tree),
/// with the built kioskd-prompt drawing on Xvfb as in ``PromptDisplayTests`` and the stand-in
/// kioskd serving the prompt's properties.
///
/// The session's buses are the test's own: a `dbus-daemon --session` on a socket in the test's
/// directory (never the machine's buses), and at-spi2-core's `at-spi-bus-launcher` on it, which
/// starts the accessibility bus (a second dbus-daemon) where the registry daemon,
/// `at-spi2-registryd`, is started on demand. kioskd-prompt finds it as any GTK 4 app does
/// (`org.a11y.Bus.GetAddress` on the session bus), and so does the reader.
@Suite(.serialized) struct AccessibleTreeTests {
    static let launcher = "/usr/libexec/at-spi-bus-launcher"
    static let reader = PromptDisplayTests.support.appendingPathComponent("atspi-tree").path
    static let pyatspi = "/usr/lib/python3/dist-packages/pyatspi"
    static let prerequisites =
        FileManager.default.isExecutableFile(atPath: PromptDisplayTests.xvfb)
        && FileManager.default.isExecutableFile(atPath: launcher) && FileManager.default.fileExists(atPath: pyatspi)

    /// A node of the tree as the reader prints it (`role`: the AT-SPI role's nick, such as
    /// "push-button", which libatspi names "push button" in Debian 12 and "button" in Debian 13).
    struct Node: Decodable {
        var role: String
        var name: String
        var description: String
        var states: [String]
        var text: String?
        var children: [Node]

        /// Every node with a name, depth first: what a screen reader's flat review reads.
        var named: [Node] { (name.isEmpty ? [] : [self]) + children.flatMap(\.named) }
    }

    struct Tree: Decodable {
        var app: String
        var windows: [Node]
    }

    /// The session bus and the accessibility bus launcher on it; ``stop()`` stops both (the
    /// launcher takes the accessibility bus and the registry with it).
    struct AccessibilityBus {
        let session: ChildProcess
        let launcher: ChildProcess
        /// The session bus's address.
        let address: String
        /// The launcher's stdout and stderr.
        let log: String

        /// What a client of the session needs: the session bus, and GSettings kept in memory
        /// (the launcher and GTK read a few settings; no dconf on the test's bus).
        var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address, "GSETTINGS_BACKEND": "memory"] }

        static func start(in directory: URL) async throws -> AccessibilityBus {
            let addressFile = directory.appendingPathComponent("session-address").path
            let fd = open(addressFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            let session = try ChildProcess.spawn(
                PrivateBus.dbusDaemon,
                [
                    "--session", "--address=unix:path=\(directory.path)/session-bus", "--nofork", "--nopidfile",
                    "--print-address=1",
                ], stdout: fd)
            close(fd)
            let address = try await PromptDisplayTests.poll({
                PromptDisplayTests.text(addressFile).trimmingCharacters(in: .whitespacesAndNewlines)
            }) { !$0.isEmpty }
            guard !address.isEmpty else {
                session.signal()
                session.wait()
                throw HarnessError("dbus-daemon --session printed no address")
            }
            // The launcher makes the accessibility bus's socket under $XDG_RUNTIME_DIR/at-spi.
            let runtime = directory.appendingPathComponent("a11y-runtime")
            try FileManager.default.createDirectory(
                at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let log = directory.appendingPathComponent("at-spi-bus-launcher.log").path
            let logFD = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            let launcher = try ChildProcess.spawn(
                AccessibleTreeTests.launcher, ["--launch-immediately"],
                environment: [
                    "PATH": "/usr/bin:/bin", "HOME": directory.path, "XDG_RUNTIME_DIR": runtime.path,
                    "DBUS_SESSION_BUS_ADDRESS": address, "GSETTINGS_BACKEND": "memory",
                ], stdout: logFD, stderr: logFD)
            close(logFD)
            let bus = AccessibilityBus(session: session, launcher: launcher, address: address, log: log)
            // kioskd-prompt asks for the address once, when it makes its first window: the
            // launcher must own org.a11y.Bus before then. --auto-start=no: asking must not start
            // a second launcher through the session bus's own activation.
            let answer = try await PromptDisplayTests.poll({
                try runTool(
                    "/usr/bin/busctl",
                    [
                        "--address=\(address)", "--auto-start=no", "call", "org.a11y.Bus", "/org/a11y/bus",
                        "org.a11y.Bus", "GetAddress",
                    ])
            }) { $0.status == 0 }
            guard answer.status == 0 else {
                bus.stop()
                throw HarnessError("org.a11y.Bus never answered: \(answer)\n\(PromptDisplayTests.text(log))")
            }
            return bus
        }

        func stop() {
            launcher.signal()
            launcher.wait()
            session.signal()
            session.wait()
        }
    }

    /// The prompt's tree as the reader sees it now; nil while the app is not on the bus.
    static func read(_ environment: [String: String]) throws -> Tree? {
        let out = try runTool(
            "/usr/bin/python3", [reader, "tree", KioskWire.promptAppID],
            environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 })
        guard out.status == 0 else {
            if out.status == 3 { return nil }
            throw HarnessError("atspi-tree failed: \(out)")
        }
        return try JSONDecoder().decode(Tree.self, from: Data(out.stdout.utf8))
    }

    /// `role: name` of each named node of the first window, for exact comparison.
    static func outline(_ tree: Tree?) -> [String] {
        tree?.windows.first?.named.map { "\($0.role): \($0.name)" } ?? []
    }

    /// The lines the event reader printed, decoded.
    static func events(_ path: String) -> [[String: String]] {
        PromptDisplayTests.text(path).split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return nil
            }
            return object.mapValues { "\($0)" }
        }
    }

    @Test(
        .enabled(
            if: prerequisites,
            "needs Xvfb, at-spi2-core and python3-pyatspi (Debian's xvfb, at-spi2-core, python3-pyatspi; make test installs them)"
        )
    )
    func aScreenReaderReadsThePromptAndTheOfferOfMoreTime() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let a11y = try await AccessibilityBus.start(in: bus.directory)
        defer { a11y.stop() }
        let xvfb = try await PromptDisplayTests.XvfbPrompt.start(on: bus, environment: a11y.environment)
        defer { xvfb.stop() }
        let standIn = try StandInKioskd(bus: bus)
        defer { standIn.stop() }
        let environment = a11y.environment

        // A screen reader listening before the prompt opens: its events, a line each.
        let eventLog = bus.directory.appendingPathComponent("events.jsonl").path
        let eventFD = open(eventLog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let listener = try ChildProcess.spawn(
            "/usr/bin/python3", [Self.reader, "events", KioskWire.promptAppID],
            environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }, stdout: eventFD, stderr: eventFD)
        close(eventFD)
        defer {
            listener.signal()
            listener.wait()
        }
        #expect(
            try await PromptDisplayTests.poll({ PromptDisplayTests.text(eventLog) }) { $0.hasPrefix("ready\n") }
                .hasPrefix("ready\n"), "the event reader did not start: \(PromptDisplayTests.text(eventLog))")

        // The passcode prompt, 3 digits typed: a modal dialog named by its title, the count as
        // a label's name (the dots its text), and the pad's 12 keys as buttons.
        try standIn.set([
            "SessionState": "active", "PromptState": "open", "PromptLength": 3,
            "PromptDeadline": PromptDisplayTests.microseconds(fromNow: 300),
        ])
        // (The pad's keys come once the display has read PromptPad.)
        let prompt = try await PromptDisplayTests.poll({ try Self.read(environment) }) {
            Self.outline($0).contains("label: 3 digits typed") && Self.outline($0).count == 16
        }
        let title = "Enter the passcode to end Guided Access"
        let keys = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "Cancel", "0", "OK"]
        #expect(prompt?.app == KioskWire.promptAppID)
        #expect(prompt?.windows.count == 1, "one window: \(String(describing: prompt))")
        #expect(
            Self.outline(prompt)
                == [
                    "dialog: \(title)", "label: \(title)", "label: 3 digits typed",
                    "label: Type the passcode, then Enter or OK.",
                ] + keys.map { "push-button: PIN pad key \($0)" })
        let window = try #require(prompt?.windows.first)
        #expect(window.states.contains("modal"), "the dialog's states: \(window.states)")
        let count = try #require(window.named.first { $0.name == "3 digits typed" })
        #expect(count.text == "● ● ●", "the count's text: the dots, never a digit")
        print("AT-SPI, the passcode prompt: \(Self.outline(prompt)); the count's text \(count.text ?? "none")")

        // Typing goes on: the count's name changes, and a listening client hears it.
        try standIn.set(["PromptLength": 4])
        let heard = try await PromptDisplayTests.poll({ Self.events(eventLog) }) { events in
            events.contains { $0["type"] == "object:property-change:accessible-name" && $0["name"] == "4 digits typed" }
        }
        #expect(
            heard.contains {
                $0["type"] == "object:property-change:accessible-name" && $0["role"] == "label"
                    && $0["name"] == "4 digits typed"
            }, "events: \(PromptDisplayTests.text(eventLog))")
        #expect(
            Self.outline(try Self.read(environment)).contains("label: 4 digits typed"), "the tree after the event")

        // The prompt closes and the offer of more time comes up in the same window: the dialog
        // renamed, its countdown in words, the button, and no pad.
        try standIn.set([
            "PromptState": "closed", "PromptLength": 0, "PromptDeadline": 0, "TimeOffer": "open",
            "VisitorExtensionsLeft": 10, "SessionDeadline": PromptDisplayTests.microseconds(fromNow: 30),
        ])
        let offer = try await PromptDisplayTests.poll({ try Self.read(environment) }) {
            Self.outline($0).first == "dialog: Need more time?"
        }
        let outline = Self.outline(offer)
        #expect(offer?.windows.count == 1, "one window: \(outline)")
        #expect(outline.count == 5, "\(outline)")
        #expect(outline.first == "dialog: Need more time?")
        let countdown = outline.dropFirst().first ?? ""
        let seconds =
            countdown.hasPrefix("label: ") && countdown.hasSuffix(" seconds left in this session")
            ? Int(countdown.dropFirst(7).prefix { $0.isNumber }) : nil
        #expect(seconds.map { (1...30).contains($0) } == true, "the countdown in words: \(countdown)")
        #expect(
            Array(outline.dropFirst(2))
                == [
                    "label: Need more time?",
                    "label: Press any key or touch the screen to get more time. You can do this 10 more times.",
                    "push-button: More time",
                ])
        print("AT-SPI, the offer of more time: \(outline)")

        // Cleaning the screen starts over the offer: the dialog renamed, its countdown in words,
        // what is paused; announced once (GTK 4.14 and later) with how long.
        try standIn.set(["CleaningUntil": PromptDisplayTests.microseconds(fromNow: 30)])
        let cleaning = try await PromptDisplayTests.poll({ try Self.read(environment) }) {
            Self.outline($0).first == "dialog: Cleaning the screen"
        }
        let cleaningOutline = Self.outline(cleaning)
        #expect(cleaning?.windows.count == 1, "one window: \(cleaningOutline)")
        let cleaningCountdown = cleaningOutline.dropFirst().first ?? ""
        let cleaningSeconds =
            cleaningCountdown.hasPrefix("label: Cleaning: ") && cleaningCountdown.hasSuffix(" seconds left")
            ? Int(cleaningCountdown.dropFirst(17).prefix { $0.isNumber }) : nil
        #expect(
            cleaningSeconds.map { (1...30).contains($0) } == true, "the countdown in words: \(cleaningOutline)")
        #expect(
            Array(cleaningOutline.dropFirst(2))
                == [
                    "label: Cleaning the screen",
                    "label: Touch, buttons and keys are paused so that the screen can be wiped.",
                ], "\(cleaningOutline)")
        print("AT-SPI, cleaning the screen: \(cleaningOutline)")
        let renamed = heard.filter { $0["role"] == "label" && $0["type"] == "object:property-change:accessible-name" }
        print("AT-SPI events heard: \(heard.count), the labels' names: \(renamed.map { $0["name"] ?? "" })")

        // The trees were read, so GTK found the accessibility bus: nothing about it in its log.
        let log = PromptDisplayTests.text(xvfb.log)
        #expect(!log.contains("accessibility bus") && !log.contains("AT-SPI"), "kioskd-prompt's log: \(log)")
        #expect(xvfb.prompt.isRunning, "kioskd-prompt exited: \(log)")
    }

    /// In the profile's language (`Language`, from `[session] language`): what a screen reader
    /// reads is the German catalogue's, shipped in po/de.po.
    @Test(
        .enabled(
            if: prerequisites && FileManager.default.isExecutableFile(atPath: "/usr/bin/msgfmt"),
            "needs Xvfb, at-spi2-core, python3-pyatspi and msgfmt (make test installs them)"
        )
    )
    func aScreenReaderReadsThePromptInTheProfilesLanguage() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let a11y = try await AccessibilityBus.start(in: bus.directory)
        defer { a11y.stop() }
        let locale = try PromptDisplayTests.germanCatalogue(in: bus.directory)
        let xvfb = try await PromptDisplayTests.XvfbPrompt.start(
            on: bus, environment: a11y.environment.merging(["LANG": "C.UTF-8"]) { $1 },
            arguments: ["--locale-dir", locale])
        defer { xvfb.stop() }
        let standIn = try StandInKioskd(bus: bus)
        defer { standIn.stop() }
        try standIn.set([
            "SessionState": "active", "Language": "de", "PromptState": "open", "PromptLength": 3,
            "PromptDeadline": PromptDisplayTests.microseconds(fromNow: 300),
        ])
        let prompt = try await PromptDisplayTests.poll({ try Self.read(a11y.environment) }) {
            Self.outline($0).contains("label: 3 Ziffern eingegeben") && Self.outline($0).count == 16
        }
        let title = "Code eingeben, um den geführten Zugriff zu beenden"
        let keys = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "Abbrechen", "0", "OK"]
        #expect(
            Self.outline(prompt)
                == [
                    "dialog: \(title)", "label: \(title)", "label: 3 Ziffern eingegeben",
                    "label: Geben Sie den Code ein, dann die Eingabetaste oder OK.",
                ] + keys.map { "push-button: Ziffernblock-Taste \($0)" })
        print("AT-SPI, the passcode prompt in German: \(Self.outline(prompt))")
        // One digit: the singular.
        try standIn.set(["PromptLength": 1])
        let one = try await PromptDisplayTests.poll({ try Self.read(a11y.environment) }) {
            Self.outline($0).contains("label: 1 Ziffer eingegeben")
        }
        #expect(Self.outline(one).contains("label: 1 Ziffer eingegeben"), "\(Self.outline(one))")
    }
}
