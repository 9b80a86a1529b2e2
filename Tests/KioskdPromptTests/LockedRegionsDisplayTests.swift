import BusTestSupport
import Foundation
import Glibc
import KioskTestSupport
import Testing

/// kioskd-prompt's locked regions' layer (`LockedRegions`, docs/prompt.md § Seeing locked
/// regions) on Xvfb with a compositing manager (xcompmgr), over xev as the app: the regions are
/// shaded black at their opacity in Xvfb's framebuffer, a click on the shade reaches xev (the
/// layer takes no input), the layer goes with the regions; without a compositor nothing is
/// drawn and the log says why. The layer-shell layer under labwc is the Debian 13 boot test's.
@Suite(.serialized) struct LockedRegionsDisplayTests {
    static let tools = ["/usr/bin/Xvfb", "/usr/bin/xcompmgr", "/usr/bin/xev", "/usr/bin/xdotool"]
    static let haveTools = tools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }

    /// The gear (a rect, 0.5) and the legend (a polygon's outline of a rect, 0.4), as the stand-in
    /// publishes them: `[name, opacity, [x, y, …]]`.
    static let regions: [any Sendable] = [
        ["gear", 0.5, [0.75, 0.0, 1.0, 0.0, 1.0, 0.25, 0.75, 0.25]] as [any Sendable],
        ["legend", 0.4, [0.0, 0.8, 0.3, 0.8, 0.3, 1.0, 0.0, 1.0]] as [any Sendable],
    ]

    /// A pixel of Xvfb's framebuffer file (XWD, 24 or 32 bpp) as (r, g, b); nil before it is whole.
    static func pixel(_ file: String, _ x: Int, _ y: Int) -> [Int]? {
        guard let data = FileManager.default.contents(atPath: file), data.count > 100 else { return nil }
        let bytes = [UInt8](data)
        func field(_ i: Int) -> Int {
            (0..<4).reduce(0) { $0 << 8 | Int(bytes[i * 4 + $1]) }
        }
        let (headerSize, width, byteOrder, bitsPerPixel, bytesPerLine, colours) = (
            field(0), field(4), field(7), field(11), field(12), field(19)
        )
        let step = bitsPerPixel / 8
        let at = headerSize + colours * 12 + y * bytesPerLine + x * step
        guard x < width, step >= 3, at + step <= bytes.count else { return nil }
        return byteOrder == 0
            ? [Int(bytes[at + 2]), Int(bytes[at + 1]), Int(bytes[at])]
            : [Int(bytes[at + step - 3]), Int(bytes[at + step - 2]), Int(bytes[at + step - 1])]
    }

    /// Whether a pixel is a grey of a value in `values` (white is 255; white under black at 0.5,
    /// 127 or 128 as the compositor rounds).
    static func grey(_ pixel: [Int]?, _ values: ClosedRange<Int>) -> Bool {
        guard let pixel, pixel.count == 3, pixel[0] == pixel[1], pixel[1] == pixel[2] else { return false }
        return values.contains(pixel[0])
    }

    struct Screen {
        var processes: [ChildProcess] = []
        let display: String
        let framebuffer: String
        let log: String
        let xev: String

        func stop() {
            for process in processes.reversed() {
                process.signal()
                _ = process.wait()
            }
        }
    }

    /// Xvfb (1280 × 720), xcompmgr when `composited`, xev full screen, then kioskd-prompt.
    static func start(on bus: PrivateBus, composited: Bool) async throws -> Screen {
        let directory = bus.directory
        let displayFile = directory.appendingPathComponent("display").path
        let fd = open(displayFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let server = try ChildProcess.spawn(
            "/usr/bin/Xvfb",
            ["-displayfd", "1", "-screen", "0", "1280x720x24", "-fbdir", directory.path, "-nolisten", "tcp"],
            stdout: fd)
        close(fd)
        let number = try await PromptDisplayTests.poll({
            PromptDisplayTests.text(displayFile).trimmingCharacters(in: .whitespacesAndNewlines)
        }) { !$0.isEmpty }
        var screen = Screen(
            processes: [server], display: ":\(number)",
            framebuffer: directory.appendingPathComponent("Xvfb_screen0").path,
            log: directory.appendingPathComponent("prompt.log").path,
            xev: directory.appendingPathComponent("xev.log").path)
        guard !number.isEmpty else {
            screen.stop()
            throw HarnessError("Xvfb printed no display number")
        }
        let environment = [
            "PATH": "/usr/bin:/bin", "HOME": directory.path, "DISPLAY": screen.display, "GDK_BACKEND": "x11",
            "DBUS_SYSTEM_BUS_ADDRESS": bus.address, "XDG_RUNTIME_DIR": directory.path,
        ]
        if composited {
            screen.processes.append(try ChildProcess.spawn("/usr/bin/xcompmgr", [], environment: environment))
        }
        let xevFD = open(screen.xev, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        screen.processes.append(
            try ChildProcess.spawn(
                "/usr/bin/xev", ["-geometry", "1280x720+0+0", "-event", "button"], environment: environment,
                stdout: xevFD))
        close(xevFD)
        // xev's white window is up before the display starts.
        _ = try await PromptDisplayTests.poll({ pixel(screen.framebuffer, 640, 360) }) { grey($0, 255...255) }
        let logFD = open(screen.log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        screen.processes.append(
            try ChildProcess.spawn(
                BuildProducts.path(of: "kioskd-prompt"), ["--speak-command", "/bin/true"], environment: environment,
                stdout: logFD, stderr: logFD))
        close(logFD)
        return screen
    }

    @Test(.enabled(if: haveTools, "needs Xvfb, xcompmgr, xev (x11-utils) and xdotool (make test installs them)"))
    func theRegionsAreShadedOverTheAppWhichStillGetsEveryClick() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let standIn = try StandInKioskd(bus: bus)
        defer { standIn.stop() }
        let screen = try await Self.start(on: bus, composited: true)
        defer { screen.stop() }
        try standIn.set(["SessionState": "active", "LockedRegions": Self.regions])
        // 1280 × 720: the gear is x 960–1280, y 0–180; the legend x 0–384, y 576–720.
        let gear = try await PromptDisplayTests.poll({ Self.pixel(screen.framebuffer, 1100, 50) }) {
            Self.grey($0, 127...128)
        }
        #expect(Self.grey(gear, 127...128), "white at 0.5 of black: \(String(describing: gear))\n\(PromptDisplayTests.text(screen.log))")
        let legend = Self.pixel(screen.framebuffer, 100, 650)
        #expect(Self.grey(legend, 152...153), "white at 0.4 of black: \(String(describing: legend))")
        for (x, y) in [(900, 50), (640, 360), (100, 500), (1100, 200), (400, 650)] {
            #expect(Self.grey(Self.pixel(screen.framebuffer, x, y), 255...255), "(\(x), \(y)) is off the shade")
        }
        #expect(PromptDisplayTests.text(screen.log).contains("Locked regions: layer shown (2 regions)."))

        // A click on the shade and one off it both reach xev: the layer takes no input.
        for (x, y) in [(1100, 50), (640, 360)] {
            let environment = ["DISPLAY": screen.display, "PATH": "/usr/bin:/bin"]
            let click = try ChildProcess.spawn(
                "/usr/bin/xdotool", ["mousemove", "\(x)", "\(y)", "click", "1"], environment: environment)
            _ = click.wait()
            let seen = try await PromptDisplayTests.poll({ PromptDisplayTests.text(screen.xev) }) {
                $0.contains("ButtonPress") && $0.contains("root:(\(x),\(y))")
            }
            #expect(seen.contains("root:(\(x),\(y))"), "xev got the click at (\(x), \(y))\n\(seen)")
        }

        // The regions go (the session ended): the layer goes.
        try standIn.set(["SessionState": "inactive", "LockedRegions": [] as [any Sendable]])
        let cleared = try await PromptDisplayTests.poll({ Self.pixel(screen.framebuffer, 1100, 50) }) {
            Self.grey($0, 255...255)
        }
        #expect(Self.grey(cleared, 255...255))
        #expect(PromptDisplayTests.text(screen.log).contains("Locked regions: layer removed."))
    }

    @Test(.enabled(if: haveTools, "needs Xvfb, xev (x11-utils) and xdotool (make test installs them)"))
    func withoutACompositorNothingIsDrawnAndTheLogSaysWhy() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let standIn = try StandInKioskd(bus: bus)
        defer { standIn.stop() }
        let screen = try await Self.start(on: bus, composited: false)
        defer { screen.stop() }
        let why = "Under X11 without a compositing manager a window cannot be translucent: locked regions are not shaded."
        let log = try await PromptDisplayTests.poll({ PromptDisplayTests.text(screen.log) }) { $0.contains(why) }
        #expect(log.contains(why), "\(log)")
        // Said by the layer's process as it gave up, before any region came: then a session.
        try standIn.set(["SessionState": "active", "LockedRegions": Self.regions])
        try standIn.set(["PromptState": "open"])  // the prompt's window: proof the display took the change
        _ = try await PromptDisplayTests.poll({ Self.pixel(screen.framebuffer, 640, 360) }) { !Self.grey($0, 255...255) }
        try standIn.set(["PromptState": "closed"])
        let back = try await PromptDisplayTests.poll({ Self.pixel(screen.framebuffer, 640, 360) }) {
            Self.grey($0, 255...255)
        }
        #expect(Self.grey(back, 255...255))
        #expect(Self.grey(Self.pixel(screen.framebuffer, 1100, 50), 255...255), "the gear is not shaded")
    }
}
