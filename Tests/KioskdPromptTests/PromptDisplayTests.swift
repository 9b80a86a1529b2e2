import BusTestSupport
import Foundation
import Glibc
import KioskTestSupport
import Testing

/// The real kioskd-prompt on a private bus, drawing on a real display server: under cage, the
/// kiosk's compositor (headless wlroots), and on Xvfb through GTK's X11 backend.
///
/// kioskd's side is a stand-in (Tests/Support/stand-in-kioskd) serving the same interface: the
/// real kioskd publishes the `Prompt*` properties only from its input broker, after an exit
/// gesture on real devices, and its prompt phase is tested by the daemon's own tests. What is
/// tested here is the display: it follows the interface, opens a window only while the prompt is
/// open, and destroys it when the prompt closes.
///
/// Why two display servers: cage is what kiosks run, and it shows how the window lives there
/// (cage maximizes it to the whole output and activates it; it is destroyed on close), read from
/// the client's own Wayland protocol log. Its pixels cannot be read back, though: cage 0.1.4 on
/// wlroots 0.15's headless backend hands grim a black or a stale frame once a window covers the
/// whole output (its direct scan-out path). Xvfb's framebuffer file shows every frame, so the
/// dots, the pad and the window's coming and going are checked there, in pixels.
@Suite(.serialized) struct PromptDisplayTests {
    static let xvfb = "/usr/bin/Xvfb"
    static let cage = "/usr/bin/cage"
    static let support = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Support")

    /// The stand-in's pad (Tests/Support/stand-in-kioskd), as fractions of the screen.
    static let pad: [[Double]] = (0..<12).map { index -> [Double] in
        let (row, column) = (Double(index / 3), Double(index % 3))
        return [0.3 + column * 0.14, 0.4 + row * 0.14, 0.12, 0.12]
    }

    struct Screen: Decodable {
        var width: Int
        var height: Int
        var uniform: Bool
        var dots: Int
        var keys: [Bool]
        /// The widest run of the prompt's gold (#ffd700) in a row, in pixels: the offer's button.
        var widestGold: Int
        /// The colour at each point asked for (``look(at:points:)``).
        var colours: [[Int]]
    }

    /// Reads a screen image and the colours at `points` (fractions of the screen); `rects` are
    /// checked for a key's fill, as ``look(at:saveAs:)`` checks the pad's.
    static func look(at file: String, points: [[Double]], rects: [[Double]] = []) throws -> Screen {
        let given = String(
            decoding: try JSONSerialization.data(withJSONObject: ["rects": rects, "points": points]), as: UTF8.self)
        let out = try runTool(
            "/usr/bin/python3", [support.appendingPathComponent("screen-pixels").path, file], input: given)
        guard out.status == 0 else { throw HarnessError("screen-pixels failed: \(out)") }
        return try JSONDecoder().decode(Screen.self, from: Data(out.stdout.utf8))
    }

    /// Reads a screen image (Xvfb's XWD, or a PNG) through Tests/Support/screen-pixels.
    static func look(at file: String, saveAs png: String? = nil) throws -> Screen {
        let rects = String(decoding: try JSONSerialization.data(withJSONObject: pad), as: UTF8.self)
        let out = try runTool(
            "/usr/bin/python3",
            [support.appendingPathComponent("screen-pixels").path, file] + (png.map { [$0] } ?? []),
            input: rects)
        guard out.status == 0 else { throw HarnessError("screen-pixels failed: \(out)") }
        return try JSONDecoder().decode(Screen.self, from: Data(out.stdout.utf8))
    }

    /// Polls `probe` until `condition` holds, at most 15 s; returns the last value.
    static func poll<T>(_ probe: () throws -> T, until condition: (T) -> Bool) async throws -> T {
        try await eventually(timeout: .seconds(15), every: .milliseconds(200), probe, until: condition)
    }

    /// The display's own log of its window, in order: "opened" and "closed" for each window it
    /// made and destroyed, "drawing" and "drawing closed" for the drawing's window. Each line is
    /// written when it happens, on GTK's thread, in one write(2).
    static func windowLog(_ path: String) -> [String] {
        text(path).split(separator: "\n").compactMap {
            $0.contains("The prompt opened")
                ? "opened"
                : $0.contains("The prompt closed")
                    ? "closed"
                    : $0.contains("The drawing started")
                        ? "drawing" : $0.contains("The drawing ended") ? "drawing closed" : nil
        }
    }

    /// Emits a time-limit warning of `seconds` until the display has said `sentence` (it speaks
    /// only once it has read `SpeakWarnings`, which must be true); returns whether it did. The
    /// display handles kioskd's events one at a time, in order: once a warning is spoken,
    /// everything before it has been handled, and whatever the handling wrote to the log is there.
    static func spokenWarning(
        _ standIn: StandInKioskd, said: String, seconds: Int, sentence: String
    ) async throws
        -> Bool
    {
        let before = text(said).count
        return try await eventually(timeout: .seconds(15), every: .milliseconds(500)) {
            try standIn.emit("TimeLimitWarning", [seconds])
            return text(said).dropFirst(before).contains(sentence + "\n")
        }
    }

    /// A speak command that appends each sentence to a file, instead of espeak-ng.
    static func recordingSpeaker(in directory: URL) throws -> (command: String, said: String) {
        let said = directory.appendingPathComponent("said.txt").path
        let command = directory.appendingPathComponent("speak").path
        try "#!/bin/sh\nprintf '%s\\n' \"$*\" >>\(said)\n".write(toFile: command, atomically: true, encoding: .utf8)
        chmod(command, 0o755)
        return (command, said)
    }

    static func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    static func microseconds(fromNow seconds: Double) -> UInt64 {
        UInt64((Date().timeIntervalSince1970 + seconds) * 1_000_000)
    }

    // MARK: Xvfb: the pixels

    /// Xvfb on a display of its own, and the built kioskd-prompt drawing on it through GTK's X11
    /// backend, reading `bus` and speaking through a recording speaker: what the Xvfb tests start
    /// with. ``stop()`` stops the display, then Xvfb.
    struct XvfbPrompt {
        let server: ChildProcess
        let prompt: ChildProcess
        /// Xvfb's screen, a file it keeps current.
        let framebuffer: String
        /// What the display spoke, a line each.
        let said: String
        /// The display's stdout and stderr.
        let log: String

        /// `environment` is added to the display's own (a session bus, for the accessibility bus).
        /// `ownSpeaker: false`: no `--speak-command`, so the display picks its command itself
        /// (from `PATH`); `said` is then wherever the caller's command writes.
        static func start(
            on bus: PrivateBus, environment: [String: String] = [:], ownSpeaker: Bool = true, arguments: [String] = []
        ) async throws -> XvfbPrompt {
            let directory = bus.directory
            // Xvfb picks a free display number and prints it.
            let displayFile = directory.appendingPathComponent("display").path
            let fd = open(displayFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            let server = try ChildProcess.spawn(
                PromptDisplayTests.xvfb,
                [
                    "-displayfd", "1", "-screen", "0", "1280x720x24", "-fbdir", directory.path, "-nolisten", "tcp",
                    "-br",
                ],
                stdout: fd)
            close(fd)
            let display = try await PromptDisplayTests.poll({
                PromptDisplayTests.text(displayFile).trimmingCharacters(in: .whitespacesAndNewlines)
            }) { !$0.isEmpty }
            guard !display.isEmpty else {
                server.signal()
                server.wait()
                throw HarnessError("Xvfb printed no display number")
            }
            let (speak, said) = try PromptDisplayTests.recordingSpeaker(in: directory)
            let log = directory.appendingPathComponent("prompt.log").path
            let logFD = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            let prompt = try ChildProcess.spawn(
                BuildProducts.path(of: "kioskd-prompt"), (ownSpeaker ? ["--speak-command", speak] : []) + arguments,
                environment: [
                    "PATH": "/usr/bin:/bin", "HOME": directory.path, "DISPLAY": ":\(display)", "GDK_BACKEND": "x11",
                    "DBUS_SYSTEM_BUS_ADDRESS": bus.address, "XDG_RUNTIME_DIR": directory.path,
                ].merging(environment) { $1 }, stdout: logFD, stderr: logFD)
            close(logFD)
            return XvfbPrompt(
                server: server, prompt: prompt, framebuffer: directory.appendingPathComponent("Xvfb_screen0").path,
                said: said, log: log)
        }

        func stop() {
            prompt.signal()
            prompt.wait()
            server.signal()
            server.wait()
        }
    }

    /// The dark display (`DisplayPower`, `[idle] blank-after`): kioskd-prompt turns the display
    /// off and on as kioskd wants it — under X11 with `xset dpms force`, with `--display-command`
    /// when given — and on when kioskd leaves the bus. A command that fails is said in its log.
    /// The commands are stand-ins on `PATH` that write down how they were run (the real `wlopm`
    /// under labwc is the Debian 13 boot test's).
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: xvfb), "needs Xvfb (Debian's xvfb; make test installs it)")
    )
    func theDisplayFollowsDisplayPowerAndComesOnWhenKioskdGoes() async throws {
        for hook in [false, true] {
            let bus = try PrivateBus()
            defer { bus.stop() }
            let bin = bus.directory.appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            let ran = bus.directory.appendingPathComponent("ran").path
            for name in ["xset", "display-power"] {
                let path = bin.appendingPathComponent(name).path
                try "#!/bin/sh\nprintf '%s %s\\n' \"$(basename \"$0\")\" \"$*\" >>\(ran)\n".write(
                    toFile: path, atomically: true, encoding: .utf8)
                chmod(path, 0o755)
            }
            let xvfb = try await XvfbPrompt.start(
                on: bus, environment: ["PATH": "\(bin.path):/usr/bin:/bin"],
                arguments: hook ? ["--display-command", "display-power"] : [])
            defer { xvfb.stop() }
            let standIn = try StandInKioskd(bus: bus)
            let (off, on) =
                hook ? ("display-power off", "display-power on") : ("xset dpms force off", "xset dpms force on")
            try standIn.set(["SessionState": "active", "DisplayPower": "off"])
            #expect(
                try await Self.poll({ Self.text(ran) }) { $0 == off + "\n" } == off + "\n",
                "hook \(hook): \(Self.text(ran)); \(Self.text(xvfb.log))")
            try standIn.set(["DisplayPower": "on"])
            #expect(try await Self.poll({ Self.text(ran) }) { $0.hasSuffix(on + "\n") }.hasSuffix(on + "\n"))
            try standIn.set(["DisplayPower": "off"])
            _ = try await Self.poll({ Self.text(ran) }) { $0.hasSuffix(off + "\n") }
            // kioskd goes away while the display is dark: it comes on.
            standIn.stop()
            #expect(
                try await Self.poll({ Self.text(ran) }) { $0.hasSuffix(on + "\n") }
                    == [off, on, off, on].map { $0 + "\n" }
                    .joined(), "\(Self.text(ran))")
        }
        // A command that fails is said in the log; nothing is retried behind the admin's back.
        let bus = try PrivateBus()
        defer { bus.stop() }
        let xvfb = try await XvfbPrompt.start(on: bus, arguments: ["--display-command", "false"])
        defer { xvfb.stop() }
        let standIn = try StandInKioskd(bus: bus)
        defer { standIn.stop() }
        try standIn.set(["SessionState": "active", "DisplayPower": "off"])
        #expect(
            try await Self.poll({ Self.text(xvfb.log) }) { $0.contains("failed") }.contains(
                "/usr/bin/false off failed"),
            "\(Self.text(xvfb.log))")
    }

    /// With a screen reader in the kiosk session (`SCREEN_READER`, which kiosk-session passes
    /// on), the display speaks through speech-dispatcher's `spd-say`, as Orca does; without one,
    /// through `espeak-ng`. Each is a stand-in here, found on `PATH` as the real ones are.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: xvfb), "needs Xvfb (Debian's xvfb; make test installs it)")
    )
    func withAScreenReaderItSpeaksThroughSpeechDispatcher() async throws {
        for (screenReader, command) in [("orca", "spd-say"), ("", "espeak-ng")] {
            let bus = try PrivateBus()
            defer { bus.stop() }
            let bin = bus.directory.appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            let said = bus.directory.appendingPathComponent("said-by-\(command)").path
            for name in ["spd-say", "espeak-ng"] {
                let path = bin.appendingPathComponent(name).path
                let target = bus.directory.appendingPathComponent("said-by-\(name)").path
                try "#!/bin/sh\nprintf '%s\\n' \"$*\" >>\(target)\n".write(
                    toFile: path, atomically: true, encoding: .utf8)
                chmod(path, 0o755)
            }
            let xvfb = try await XvfbPrompt.start(
                on: bus, environment: ["PATH": "\(bin.path):/usr/bin:/bin", "SCREEN_READER": screenReader],
                ownSpeaker: false)
            defer { xvfb.stop() }
            let standIn = try StandInKioskd(bus: bus)
            defer { standIn.stop() }
            try standIn.set(["SpeakWarnings": true])
            #expect(
                try await Self.spokenWarning(standIn, said: said, seconds: 120, sentence: "2 minutes left"),
                "SCREEN_READER='\(screenReader)': nothing said through \(command)")
            let other = bus.directory.appendingPathComponent(
                "said-by-\(command == "spd-say" ? "espeak-ng" : "spd-say")"
            ).path
            #expect(Self.text(other).isEmpty, "SCREEN_READER='\(screenReader)': spoken through the other command too")

            // The passcode prompt's changes: announced to a screen reader (GTK 4.8 has no
            // announcement, so through speech-dispatcher), never spoken without one.
            try standIn.set([
                "SessionState": "active", "PromptState": "open", "PromptLength": 0,
                "PromptDeadline": Self.microseconds(fromNow: 60),
            ])
            if screenReader.isEmpty {
                // The sentinel: a warning spoken after the prompt opened and a digit was typed.
                _ = try await Self.poll({ try Self.look(at: xvfb.framebuffer) }) { !$0.uniform }
                try standIn.set(["PromptLength": 1])
                #expect(try await Self.spokenWarning(standIn, said: said, seconds: 60, sentence: "1 minute left"))
                #expect(
                    !Self.text(said).contains("digit"), "spoken without a screen reader: \(Self.text(said))")
            } else {
                let opened =
                    "Enter the passcode to end Guided Access. No digits typed. Type the passcode, then Enter or OK."
                #expect(
                    try await Self.poll({ Self.text(said) }) { $0.contains(opened + "\n") }.contains(opened + "\n"),
                    "announced: \(Self.text(said))")
                try standIn.set(["PromptLength": 3])
                #expect(
                    try await Self.poll({ Self.text(said) }) { $0.hasSuffix("3 digits typed\n") }
                        .hasSuffix("3 digits typed\n"), "announced: \(Self.text(said))")
                print("Announced through spd-say: \(Self.text(said).split(separator: "\n"))")
            }
        }
    }

    /// po/de.po compiled as `make install` does, into a locale directory of its own.
    static func germanCatalogue(in directory: URL) throws -> String {
        let locale = directory.appendingPathComponent("locale")
        let messages = locale.appendingPathComponent("de/LC_MESSAGES")
        try FileManager.default.createDirectory(at: messages, withIntermediateDirectories: true)
        let po = support.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("po/de.po")
        let out = try runTool(
            "/usr/bin/msgfmt",
            ["--check", "-o", messages.appendingPathComponent("kioskd-prompt.mo").path, po.path])
        guard out.status == 0 else { throw HarnessError("msgfmt failed: \(out)") }
        return locale.path
    }

    /// The display in the profile's language while its session runs (`Language`), and in the
    /// kiosk's locale otherwise — also a locale nobody generated, as on a kiosk without the
    /// `locales` package: spoken in that language's voice (espeak-ng's `-v de`) and drawn.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: xvfb), "needs Xvfb (Debian's xvfb; make test installs it)"),
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/msgfmt"),
            "needs msgfmt (Debian's gettext; make test installs it)")
    )
    func speaksAndDrawsTheProfilesLanguageElseTheKiosks() async throws {
        for kiosk in ["C.UTF-8", "de_DE.UTF-8"] {
            let bus = try PrivateBus()
            defer { bus.stop() }
            let locale = try Self.germanCatalogue(in: bus.directory)
            let bin = bus.directory.appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
            let said = bus.directory.appendingPathComponent("said").path
            try "#!/bin/sh\nprintf '%s\\n' \"$*\" >>\(said)\n".write(
                toFile: bin.appendingPathComponent("espeak-ng").path, atomically: true, encoding: .utf8)
            chmod(bin.appendingPathComponent("espeak-ng").path, 0o755)
            let xvfb = try await XvfbPrompt.start(
                on: bus, environment: ["PATH": "\(bin.path):/usr/bin:/bin", "LANG": kiosk, "LC_ALL": ""],
                ownSpeaker: false, arguments: ["--locale-dir", locale])
            defer { xvfb.stop() }
            let standIn = try StandInKioskd(bus: bus)
            defer { standIn.stop() }
            try standIn.set(["SpeakWarnings": true])
            let kiosks = kiosk == "C.UTF-8" ? "2 minutes left" : "-v de Noch 2 Minuten"
            #expect(
                try await Self.spokenWarning(standIn, said: said, seconds: 120, sentence: kiosks),
                "LANG=\(kiosk), no session: \(Self.text(said)) \(Self.text(xvfb.log))")
            // A session whose profile says `language = "de"`.
            try standIn.set(["SessionState": "active", "Language": "de"])
            #expect(
                try await Self.spokenWarning(standIn, said: said, seconds: 60, sentence: "-v de Noch 1 Minute"),
                "LANG=\(kiosk), Language de: \(Self.text(said))")
            // Drawn too (what it says is read by AccessibleTreeTests; here the pixels, and the
            // picture docs/prompt.md shows).
            try standIn.set([
                "PromptState": "open", "PromptLength": 2, "PromptDeadline": Self.microseconds(fromNow: 30),
            ])
            let screen = try await Self.poll({ try Self.look(at: xvfb.framebuffer) }) {
                $0.dots == 2 && $0.keys.allSatisfy { $0 }
            }
            #expect(screen.dots == 2 && screen.keys.allSatisfy { $0 }, "LANG=\(kiosk): \(screen)")
            if kiosk == "C.UTF-8", let path = ProcessInfo.processInfo.environment["KIOSKD_PROMPT_SCREENSHOT_DE"] {
                _ = try Self.look(at: xvfb.framebuffer, saveAs: path)
            }
            // The offer of more time, with its large button.
            try standIn.set([
                "PromptState": "closed", "PromptLength": 0, "PromptDeadline": 0, "TimeOffer": "open",
                "VisitorExtensionsLeft": 10, "SessionDeadline": Self.microseconds(fromNow: 30),
            ])
            let offer = try await Self.poll({ try Self.look(at: xvfb.framebuffer) }) { $0.widestGold >= 100 }
            #expect(offer.widestGold >= 100, "LANG=\(kiosk): the offer's button: \(offer)")
            if kiosk == "C.UTF-8", let path = ProcessInfo.processInfo.environment["KIOSKD_PROMPT_SCREENSHOT_DE_OFFER"] {
                _ = try Self.look(at: xvfb.framebuffer, saveAs: path)
            }
            try standIn.set(["TimeOffer": "closed", "VisitorExtensionsLeft": 0, "SessionDeadline": 0])
            // The session ends: the kiosk's language again.
            try standIn.set(["SessionState": "inactive", "Language": ""])
            #expect(
                try await Self.spokenWarning(
                    standIn, said: said, seconds: 300,
                    sentence: kiosk == "C.UTF-8" ? "5 minutes left" : "-v de Noch 5 Minuten"),
                "LANG=\(kiosk), after the session: \(Self.text(said))")
        }
    }

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: xvfb), "needs Xvfb (Debian's xvfb; make test installs it)")
    )
    func drawsThePromptOnlyWhileItIsOpen() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        // The display starts first: with no kioskd on the bus it waits, and draws nothing.
        let xvfb = try await XvfbPrompt.start(on: bus)
        defer { xvfb.stop() }
        let (framebuffer, said, log, prompt) = (xvfb.framebuffer, xvfb.said, xvfb.log, xvfb.prompt)
        let standIn = try StandInKioskd(bus: bus)
        defer { standIn.stop() }
        // The sentinel: a spoken warning, after the display has read the (closed) prompt.
        try standIn.set(["SpeakWarnings": true])
        #expect(try await Self.spokenWarning(standIn, said: said, seconds: 120, sentence: "2 minutes left"))
        #expect(Self.windowLog(log) == [], "a window while the prompt is closed")
        #expect(try Self.look(at: framebuffer).uniform, "a window while the prompt is closed")
        try standIn.set(["SpeakWarnings": false])

        // Open with 3 digits typed: a full-screen window with 3 dots and the 12 keys.
        try standIn.set([
            "SessionState": "active", "PromptState": "open", "PromptLength": 3,
            "PromptDeadline": Self.microseconds(fromNow: 30), "SessionDeadline": Self.microseconds(fromNow: 300),
        ])
        try standIn.emit("TimeLimitWarning", [300])  // SpeakWarnings is false: not spoken
        var screen = try await Self.poll({ try Self.look(at: framebuffer) }) {
            $0.dots == 3 && $0.keys.allSatisfy { $0 }
        }
        #expect(screen.dots == 3)
        #expect(screen.keys == Array(repeating: true, count: 12), "the pad's keys where PromptPad puts them")
        if let path = ProcessInfo.processInfo.environment["KIOSKD_PROMPT_SCREENSHOT"] {
            _ = try Self.look(at: framebuffer, saveAs: path)  // the README's picture (docs/images/prompt.png)
        }

        // Typing goes on: the open window shows each new count.
        try standIn.set(["PromptLength": 5, "PromptRetryAfter": Self.microseconds(fromNow: 95)])
        screen = try await Self.poll({ try Self.look(at: framebuffer) }) { $0.dots == 5 }
        #expect(screen.dots == 5)

        // Closed: the window is gone (the screen is the bare root window again).
        try standIn.emit("PromptClosed", ["rejected"])
        try standIn.set(["PromptState": "closed", "PromptLength": 0, "PromptDeadline": 0])
        screen = try await Self.poll({ try Self.look(at: framebuffer) }) { $0.uniform }
        #expect(screen.uniform, "the window outlived the prompt")

        // A spoken warning opens nothing. The sentinel: two later changes, handled after it, in
        // order: SpeakWarnings off (a window the warning had opened would go, and say so) and the
        // prompt opened again (its window is the second the log shows).
        try standIn.set(["SpeakWarnings": true])
        #expect(try await Self.spokenWarning(standIn, said: said, seconds: 300, sentence: "5 minutes left"))
        try standIn.set(["SpeakWarnings": false])

        // kioskd going away while the prompt is open takes the window with it.
        try standIn.set(["PromptState": "open", "PromptLength": 1])
        _ = try await Self.poll({ try Self.look(at: framebuffer) }) { $0.dots == 1 }
        #expect(Self.windowLog(log) == ["opened", "closed", "opened"], "a time-limit warning opened a window")
        standIn.stop()
        screen = try await Self.poll({ try Self.look(at: framebuffer) }) { $0.uniform }
        #expect(screen.uniform, "the window outlived kioskd")
        #expect(prompt.isRunning, "kioskd-prompt exited: \(Self.text(log))")
    }

    /// Staff drawing regions (`Drawing`, `DrawingState`, `DrawingBar`): a full-screen window
    /// with each shape shaded grey inside a white edge (the selected one's edge gold), the bar's
    /// buttons where `DrawingBar` puts them, the stroke being drawn in gold; gone when the drawing
    /// ends.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: xvfb), "needs Xvfb (Debian's xvfb; make test installs it)")
    )
    func drawsTheRegionsStaffDraw() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let xvfb = try await XvfbPrompt.start(on: bus)
        defer { xvfb.stop() }
        let standIn = try StandInKioskd(bus: bus)
        defer { standIn.stop() }
        // A rect from (0.2, 0.3) to (0.5, 0.6), as kioskd sends it: its 4 corners.
        let shape: [any Sendable] = ["gear", [0.2, 0.3, 0.5, 0.3, 0.5, 0.6, 0.2, 0.6]]
        let bar = [[0.30, 0.02, 0.12, 0.08], [0.44, 0.02, 0.12, 0.08], [0.58, 0.02, 0.12, 0.08]]
        // Inside the shape, outside it, on its left edge, on the stroke.
        let points = [[0.35, 0.45], [0.75, 0.45], [0.2, 0.45], [0.7, 0.75]]
        try standIn.set([
            "SessionState": "active", "Drawing": "map",
            "DrawingState": [[shape], -1, [Double](), ""] as [any Sendable],
        ])
        func grey(_ c: [Int]) -> Bool { abs(c[0] - c[1]) < 12 && abs(c[1] - c[2]) < 12 }
        var screen = try await Self.poll({ try Self.look(at: xvfb.framebuffer, points: points, rects: bar) }) {
            $0.keys == [true, true, true] && $0.colours.count == 4 && $0.colours[0][0] > $0.colours[1][0] + 40
        }
        #expect(screen.keys == [true, true, true], "the bar's buttons where DrawingBar puts them")
        #expect(grey(screen.colours[0]) && screen.colours[0][0] > screen.colours[1][0] + 40, "\(screen.colours)")
        #expect(screen.colours[2].allSatisfy { $0 > 200 }, "a white edge: \(screen.colours)")
        #expect(Self.windowLog(xvfb.log) == ["drawing"], "\(Self.text(xvfb.log))")

        // Selected, with a stroke on its way: the edge gold, the stroke gold.
        try standIn.set(["DrawingState": [[shape], 0, [0.6, 0.75, 0.7, 0.75, 0.8, 0.75], "crosses"] as [any Sendable]])
        screen = try await Self.poll({ try Self.look(at: xvfb.framebuffer, points: points) }) {
            $0.colours.count == 4 && $0.colours[2] == [255, 215, 0]
        }
        #expect(screen.colours[2] == [255, 215, 0], "the selected shape's edge: \(screen.colours)")
        #expect(screen.colours[3] == [255, 215, 0], "the stroke: \(screen.colours)")
        if let path = ProcessInfo.processInfo.environment["KIOSKD_DRAWING_SCREENSHOT"] {
            _ = try Self.look(at: xvfb.framebuffer, saveAs: path)
        }

        // The drawing ends: the window is gone.
        try standIn.set(["Drawing": ""])
        screen = try await Self.poll({ try Self.look(at: xvfb.framebuffer) }) { $0.uniform }
        #expect(screen.uniform, "the window outlived the drawing")
        #expect(Self.windowLog(xvfb.log) == ["drawing", "drawing closed"], "\(Self.text(xvfb.log))")
        #expect(xvfb.prompt.isRunning, "kioskd-prompt exited: \(Self.text(xvfb.log))")
    }

    /// The offer of more time (`TimeOffer`): a full-screen "Need more time?" with its large
    /// button and no PIN pad, spoken once as it comes up whatever `SpeakWarnings` says; the
    /// passcode prompt takes the screen over while it is open, and the offer's screen comes back
    /// after it; no offer, no window.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: xvfb), "needs Xvfb (Debian's xvfb; make test installs it)")
    )
    func drawsAndSpeaksTheOfferOfMoreTime() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let xvfb = try await XvfbPrompt.start(on: bus)
        defer { xvfb.stop() }
        let (framebuffer, said, log, prompt) = (xvfb.framebuffer, xvfb.said, xvfb.log, xvfb.prompt)
        let standIn = try StandInKioskd(bus: bus)
        defer { standIn.stop() }

        // The offer comes up 30 s before the end: spoken (SpeakWarnings stays false) and drawn.
        try standIn.set([
            "SessionState": "active", "SessionDeadline": Self.microseconds(fromNow: 30), "TimeOffer": "open",
            "VisitorExtensionsLeft": 10,
        ])
        #expect(
            try await Self.poll({ Self.text(said) }) { $0.contains("Need more time?") }
                .hasPrefix("Need more time? 30 seconds left. Press any key or touch the screen.\n"),
            "\(Self.text(said))")
        var screen = try await Self.poll({ try Self.look(at: framebuffer) }) { $0.widestGold > 200 }
        #expect(screen.widestGold > 200, "the large button: \(screen)")
        #expect(screen.keys == Array(repeating: false, count: 12), "no PIN pad on the offer's screen")
        if let path = ProcessInfo.processInfo.environment["KIOSKD_OFFER_SCREENSHOT"] {
            _ = try Self.look(at: framebuffer, saveAs: path)  // docs/images/time-offer.png
        }

        // The passcode prompt takes over (its pad and dots), the offer's screen comes back after.
        try standIn.set(["PromptState": "open", "PromptLength": 2, "PromptDeadline": Self.microseconds(fromNow: 30)])
        // The pad and the dots may come in two frames: wait for both, as the other tests do.
        screen = try await Self.poll({ try Self.look(at: framebuffer) }) { $0.keys.allSatisfy { $0 } && $0.dots == 2 }
        #expect(screen.keys == Array(repeating: true, count: 12) && screen.dots == 2, "\(screen)")
        try standIn.set(["PromptState": "closed", "PromptLength": 0, "PromptDeadline": 0])
        screen = try await Self.poll({ try Self.look(at: framebuffer) }) {
            $0.widestGold > 200 && !$0.keys.contains(true)
        }
        #expect(screen.widestGold > 200 && !screen.keys.contains(true), "\(screen)")

        // Taken: no offer, no window; none left the next time: said and shown, without a button.
        try standIn.set(["TimeOffer": "closed", "VisitorExtensionsLeft": 0])
        screen = try await Self.poll({ try Self.look(at: framebuffer) }) { $0.uniform }
        #expect(screen.uniform, "the offer's window outlived the offer")
        try standIn.set(["TimeOffer": "exhausted", "SessionDeadline": Self.microseconds(fromNow: 25)])
        #expect(
            try await Self.poll({ Self.text(said) }) { $0.contains("No more time can be added.") }
                .contains("left. No more time can be added.\n"), "\(Self.text(said))")
        screen = try await Self.poll({ try Self.look(at: framebuffer) }) { !$0.uniform }
        #expect(!screen.uniform && screen.widestGold < 100, "a window with no button: \(screen)")
        #expect(
            Self.text(said).components(separatedBy: "Need more time?").count == 2, "spoken once: \(Self.text(said))")
        #expect(prompt.isRunning, "kioskd-prompt exited: \(Self.text(log))")
    }

    // MARK: cage: the kiosk's compositor

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: cage),
            "needs cage (Debian's cage, with xwayland; make test installs them)"),
    )
    func underCageTheWindowIsMaximizedThenDestroyed() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        // cage refuses to run as root: as root, the test runs it as uid 65534 (setpriv).
        let user = Root.isRoot ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] : []
        let runtime = bus.directory.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        if Root.isRoot { chown(runtime.path, 65534, 65534) }
        chmod(runtime.path, 0o700)
        let (speak, said) = try Self.recordingSpeaker(in: bus.directory)
        let log = bus.directory.appendingPathComponent("cage.log").path
        let logFD = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        chmod(bus.directory.path, 0o777)  // the speaker writes said.txt as uid 65534
        // WAYLAND_DEBUG=client: kioskd-prompt logs the Wayland protocol it speaks with cage.
        let command = user + [Self.cage, "--", BuildProducts.path(of: "kioskd-prompt"), "--speak-command", speak]
        let compositor = try ChildProcess.spawn(
            command[0], Array(command.dropFirst()),
            environment: [
                "PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": runtime.path, "WLR_BACKENDS": "headless",
                "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_RENDERER": "pixman", "DBUS_SYSTEM_BUS_ADDRESS": bus.address,
                "WAYLAND_DEBUG": "client", "HOME": runtime.path,
            ], stdout: logFD, stderr: logFD)
        close(logFD)
        defer {
            compositor.signal()
            compositor.wait()
        }
        let standIn = try StandInKioskd(bus: bus)
        defer { standIn.stop() }
        // The sentinel: a spoken warning, after the display has read the (closed) prompt.
        try standIn.set(["SpeakWarnings": true])
        #expect(try await Self.spokenWarning(standIn, said: said, seconds: 120, sentence: "2 minutes left"))
        #expect(Self.windowLog(log) == [], "a window before the prompt opened")
        #expect(!Self.text(log).contains("get_toplevel"), "a window before the prompt opened")
        try standIn.set(["SpeakWarnings": false])

        try standIn.set(["SessionState": "active", "PromptState": "open", "PromptLength": 2])
        // cage maximizes the new toplevel to its whole 1280×720 output.
        let opened = try await Self.poll({ Self.text(log) }) {
            $0.contains("The prompt opened") && $0.contains(".configure(1280, 720")
        }
        #expect(opened.contains("get_toplevel"), "no toplevel was made:\n\(opened.suffix(3000))")
        #expect(opened.contains(".configure(1280, 720"), "cage did not size it to the output:\n\(opened.suffix(3000))")

        try standIn.set(["PromptState": "closed", "PromptLength": 0])
        let closed = try await Self.poll({ Self.text(log) }) { $0.contains("The prompt closed") }
        #expect(closed.contains("xdg_toplevel@") && closed.contains(".destroy()"), "the toplevel was not destroyed")

        // A spoken warning makes no new toplevel (under cage it would take the app's focus). The
        // sentinel: two later changes, handled after it, in order: SpeakWarnings off (a window
        // the warning had opened would go, and say so) and the prompt opened again.
        try standIn.set(["SpeakWarnings": true])
        #expect(try await Self.spokenWarning(standIn, said: said, seconds: 60, sentence: "1 minute left"))
        try standIn.set(["SpeakWarnings": false])
        try standIn.set(["PromptState": "open", "PromptLength": 1])
        let reopened = try await Self.poll({ Self.windowLog(log) }) { $0.count >= 3 }
        #expect(reopened == ["opened", "closed", "opened"], "a warning opened a window")
        #expect(Self.text(log).components(separatedBy: "get_toplevel").count - 1 == 2, "a warning made a toplevel")
        #expect(compositor.isRunning, "cage (and so kioskd-prompt, its app) exited:\n\(Self.text(log).suffix(3000))")
    }
}
