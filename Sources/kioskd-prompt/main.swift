// kioskd-prompt: draws kioskd's passcode prompt at the kiosk (docs/prompt.md, kioskd-prompt(1)).
// A passive display: kioskd reads the passcode from the input devices itself; this shows only
// the prompt's state, dots, the PIN pad, the throttle's wait and the time-limit warnings.

import CGtk
import Glibc
import KioskClient

/// A line on stderr (the journal, under the kiosk session), in one write(2).
func log(_ line: String) {
    let text = "kioskd-prompt: \(line)\n"
    _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
}

let usage = """
    Usage: kioskd-prompt [--speak-command COMMAND] [--display-command COMMAND] [--locale-dir DIR]
           kioskd-prompt --locked-regions

    Draws kioskd's passcode prompt full screen while it is open, and speaks time-limit
    warnings when the session's profile asks for it. It reads kioskd's state on the system
    bus ($DBUS_SYSTEM_BUS_ADDRESS) and never sees a key.

      --speak-command COMMAND  the text-to-speech command, run as COMMAND SENTENCE
                               (default: spd-say when SCREEN_READER is set, as the
                               kiosk session sets it, else espeak-ng)
      --display-command COMMAND  turns the display off and on as kioskd wants it
                               ([idle] blank-after), run as COMMAND off and COMMAND on
                               (default: wlopm under Wayland, xset under X11)
      --locale-dir DIR         where the translations are, DIR/LANG/LC_MESSAGES/
                               kioskd-prompt.mo (default: ../share/locale from the
                               binary's directory, here \(defaultLocaleDirectory()))
      --locked-regions         shade the session's locked touch regions over the app
                               and nothing else (kioskd-prompt starts itself so, under
                               Wayland with gtk4-layer-shell)
      --version                print the version
      --help                   print this help
    """

// With a screen reader in the kiosk session (SCREEN_READER, which kiosk-session passes on), the
// prompt speaks through speech-dispatcher, as Orca does, so that the two take turns instead of
// talking over each other; otherwise through espeak-ng directly.
let screenReader = !(getenv("SCREEN_READER").map { String(cString: $0) } ?? "").isEmpty
var speakCommand = screenReader ? "spd-say" : "espeak-ng"
var localeDirectory = defaultLocaleDirectory()
var displayCommand: String?
var lockedRegionsOnly = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--speak-command":
        guard let value = arguments.popFirst(), !value.isEmpty else {
            log("--speak-command needs a command\n\(usage)")
            exit(64)
        }
        speakCommand = value
    case "--display-command":
        guard let value = arguments.popFirst(), !value.isEmpty else {
            log("--display-command needs a command\n\(usage)")
            exit(64)
        }
        displayCommand = value
    case "--locale-dir":
        guard let value = arguments.popFirst(), !value.isEmpty else {
            log("--locale-dir needs a directory\n\(usage)")
            exit(64)
        }
        localeDirectory = value
    case "--locked-regions":
        lockedRegionsOnly = true
    case "--version":
        print("kioskd-prompt \(KioskWire.version)")
        exit(0)
    case "--help", "-h":
        print(usage)
        exit(0)
    default:
        log("unknown argument \(argument)\n\(usage)")
        exit(64)
    }
}

// Without a GPU (no render node: a VM, a board without a GL driver, a headless test), GTK's
// GL renderer would run on Mesa's software rasterizer; cairo draws these few labels for less.
if getenv("GSK_RENDERER") == nil, !hasRenderNode() {
    setenv("GSK_RENDERER", "cairo", 1)
}

/// `../share/locale` from the binary's own directory: /usr/share/locale for /usr/bin/kioskd-prompt,
/// /usr/local/share/locale after `make install PREFIX=/usr/local`.
func defaultLocaleDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return "/usr/share/locale" }
    let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let bin = path.prefix(upTo: path.lastIndex(of: "/") ?? path.startIndex)
    let prefix = bin.prefix(upTo: bin.lastIndex(of: "/") ?? bin.startIndex)
    return prefix + "/share/locale"
}

func hasRenderNode() -> Bool {
    guard let directory = opendir("/dev/dri") else { return false }
    defer { closedir(directory) }
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name.hasPrefix("renderD") { return true }
    }
    return false
}

// The app id GTK gives the window (there is no GtkApplication): what labwc's window rule for
// the prompt matches (packaging/labwc/rc.xml).
g_set_prgname(KioskWire.promptAppID)
guard gtk_init_check() != 0 else {
    log("Cannot open a display: run it inside the kiosk's compositor (Wayland or X11).")
    exit(1)
}

// The locked regions' layer, in a process of its own (LockedRegionsProcess.swift).
if lockedRegionsOnly { LockedRegionsProcess.run() }
LockedRegionsProcess.start()

var environment: [String: String] = [:]
for name in ["LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"] {
    if let value = getenv(name) { environment[name] = String(cString: value) }
}
// After gtk_init, which sets the locale from the environment.
let language = Language(localeDirectory: localeDirectory, environment: environment)
let bridge = BusBridge()
let displayControl = DisplayControl(command: displayCommand)
// Said once as the kiosk session starts: how the display is turned off, or why it cannot be.
displayControl.probe()
let display = PromptDisplay(
    speaker: Speaker(command: speakCommand), language: language, screenReader: screenReader,
    displayControl: displayControl,
    readBar: { bridge.readBar { buttons in display.barRead(buttons) } }
) {
    bridge.readPad { keys in display.padRead(keys) }
}
// Detached: a task made here would inherit the main actor, whose queue GLib's loop never runs.
Task.detached { await bridge.run { event in display.handle(event) } }
g_main_loop_run(g_main_loop_new(nil, 0))
