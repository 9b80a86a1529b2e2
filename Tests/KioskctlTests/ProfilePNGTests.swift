import Foundation
import KioskCore
import KioskTestSupport
import Testing

/// `kioskctl profile show NAME --png FILE`: kioskctl execs kioskctl-profile-png (built next to
/// it), which draws with cairo. The pictures are read back by a PNG decoder of the test's own
/// (Python's zlib, no cairo), and their pixels checked against the colours ProfilePicture names.
@Suite struct ProfilePNGTests {
    /// A PNG writer (RGB, one colour) and reader (8-bit RGB or RGBA, every filter type) on
    /// zlib alone: `write PATH W H R G B`, `read PATH X,Y ...` (prints "W H" then "R G B" per point).
    static let pngTool = #"""
        import struct, sys, zlib
        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        if sys.argv[1] == "write":
            path, w, h, r, g, b = sys.argv[2], *map(int, sys.argv[3:8])
            rows = b"".join(b"\x00" + bytes([r, g, b]) * w for _ in range(h))
            png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            open(path, "wb").write(png + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
            sys.exit(0)
        data = open(sys.argv[2], "rb").read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
        pos, idat = 8, b""
        while pos < len(data):
            (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
            body = data[pos + 8:pos + 8 + length]
            if kind == b"IHDR":
                w, h, depth, colour = struct.unpack(">IIBB", body[:10])
                assert depth == 8 and colour in (2, 6) and body[12] == 0, "unsupported PNG"
            elif kind == b"IDAT":
                idat += body
            pos += 12 + length
        n = 3 if colour == 2 else 4
        raw, stride, rows, prev = zlib.decompress(idat), w * n, [], bytearray(w * n)
        for y in range(h):
            f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
            for i in range(stride):
                a = line[i - n] if i >= n else 0
                b, c = prev[i], prev[i - n] if i >= n else 0
                if f == 1: line[i] = (line[i] + a) & 255
                elif f == 2: line[i] = (line[i] + b) & 255
                elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
                elif f == 4:
                    p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            rows.append(line); prev = line
        print(w, h)
        for point in sys.argv[3:]:
            x, y = map(int, point.split(","))
            print(*rows[y][x * n:x * n + 3])
        """#

    static func python(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", pngTool] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CommandFailure("python3 \(arguments): \(String(decoding: stderr, as: UTF8.self))")
        }
        return String(decoding: stdout, as: UTF8.self)
    }

    struct CommandFailure: Error, CustomStringConvertible {
        var description: String; init(_ d: String) { description = d }
    }

    typealias RGB = (r: Double, g: Double, b: Double)

    /// The picture's size and the colours at `points`.
    static func pixels(_ path: String, _ points: [(Int, Int)]) throws -> (width: Int, height: Int, colours: [RGB]) {
        let lines = try python(["read", path] + points.map { "\($0.0),\($0.1)" }).split(separator: "\n")
        let size = lines[0].split(separator: " ").map { Int($0)! }
        let colours = lines.dropFirst().map { line in
            let c = line.split(separator: " ").map { Double($0)! }
            return (r: c[0], g: c[1], b: c[2])
        }
        return (size[0], size[1], colours)
    }

    /// `under` with `kind`'s translucent fill drawn over it (straight alpha: what cairo's OVER does).
    static func over(_ under: RGB, _ kind: ProfilePicture.Kind) -> RGB {
        let f = kind.fill
        func mix(_ u: Double, _ c: Double) -> Double { u * (1 - f.alpha) + c * 255 * f.alpha }
        return (mix(under.r, f.red), mix(under.g, f.green), mix(under.b, f.blue))
    }

    /// Within 2 of each channel: cairo composites in premultiplied 8-bit steps.
    static func near(_ a: RGB, _ b: RGB) -> Bool {
        abs(a.r - b.r) <= 2 && abs(a.g - b.g) <= 2 && abs(a.b - b.b) <= 2
    }

    static func directory() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-png-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        return directory
    }

    static let museum = "\(root)/policies/museum-map.toml"
    static let white: RGB = (255, 255, 255)

    /// museum-map on the default blank frame: the settings gear's rect and the legend's polygon
    /// are shaded grey (away from their labels), the middle of the screen is white, and the
    /// legend in pixels is printed.
    @Test func museumMapOnABlankFrame() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let png = "\(directory)/museum.png"
        let result = try kioskctl("profile", "show", Self.museum, "--png", png)
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stdout == """
                frame 1280×800 px
                locked region 1 "settings gear": (1152, 0) (1280, 0) (1280, 96) (1152, 96)
                locked region 2 "legend": (0, 640) (384, 640) (384, 800) (0, 800)
                wrote \(png)

                """)
        #expect(result.stderr == "")
        let read = try Self.pixels(png, [(1216, 70), (200, 760), (640, 400), (1100, 50), (420, 760)])
        #expect(read.width == 1280 && read.height == 800)
        let grey = Self.over(Self.white, .lockedRegion)
        #expect(Self.near(read.colours[0], grey), "gear: \(read.colours[0]), expected \(grey)")
        #expect(Self.near(read.colours[1], grey), "legend: \(read.colours[1]), expected \(grey)")
        for colour in read.colours[2...] { #expect(colour == Self.white) }
        let mode = try FileManager.default.attributesOfItem(atPath: png)[.posixPermissions] as? Int
        #expect(mode == 0o644)
    }

    /// Over a screenshot (made here: 320×200 of one blue): the picture takes its size, the
    /// legend's region is the screenshot's pixel with grey over it, the rest is the screenshot's
    /// pixel exactly.
    @Test func museumMapOverAScreenshot() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let screenshot = "\(directory)/screen.png", png = "\(directory)/museum.png"
        _ = try Self.python(["write", screenshot, "320", "200", "30", "120", "200"])
        let result = try kioskctl("profile", "show", Self.museum, "--png", png, "--over", screenshot)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.hasPrefix("frame 320×200 px\n"))
        let read = try Self.pixels(png, [(80, 195), (160, 100), (10, 100), (200, 190)])
        #expect(read.width == 320 && read.height == 200)
        let blue: RGB = (30, 120, 200)
        let shaded = Self.over(blue, .lockedRegion)
        #expect(Self.near(read.colours[0], shaded), "legend: \(read.colours[0]), expected \(shaded)")
        for colour in read.colours[1...] { #expect(colour == blue) }
    }

    /// The edge margin's band and the corner exit and cleaning gestures' squares, each in its own
    /// colour; the inside of the band is untouched.
    @Test func edgeBandAndGestureCorners() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let profile = "\(directory)/edges.toml", png = "\(directory)/edges.png"
        try Data(
            """
            [touch]
            edge-margin = 0.02
            [session]
            exit-gesture = { corner = "bottom-right", taps = 3, within = "2s" }
            cleaning-gesture = { corner = "top-left", taps = 4, within = "3s" }

            """.utf8
        ).write(to: URL(fileURLWithPath: profile))
        let result = try kioskctl("profile", "show", profile, "--png", png, "--size", "1000x600")
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stdout == """
                frame 1000×600 px
                edge margin 0.02: contacts starting within 20 px of the left and right edges and 12 px of the top and bottom are dropped
                exit gesture corner bottom-right: 3 taps within 2s in (900, 540) (1000, 540) (1000, 600) (900, 600)
                cleaning gesture corner top-left: 4 taps within 3s in (0, 0) (100, 0) (100, 60) (0, 60)
                wrote \(png)

                """)
        let read = try Self.pixels(png, [(500, 6), (8, 300), (930, 575), (500, 300), (880, 575), (60, 45), (120, 45)])
        #expect(read.width == 1000 && read.height == 600)
        let band = Self.over(Self.white, .edgeMargin), corner = Self.over(Self.white, .exitCorner)
        #expect(Self.near(read.colours[0], band), "top band: \(read.colours[0]), expected \(band)")
        #expect(Self.near(read.colours[1], band), "left band: \(read.colours[1]), expected \(band)")
        #expect(Self.near(read.colours[2], corner), "corner: \(read.colours[2]), expected \(corner)")
        #expect(read.colours[3] == Self.white)
        #expect(read.colours[4] == Self.white)
        let cleaning = Self.over(Self.white, .cleaningCorner)
        #expect(Self.near(read.colours[5], cleaning), "cleaning corner: \(read.colours[5]), expected \(cleaning)")
        #expect(read.colours[6] == Self.white)
    }

    /// A profile that does not parse: `profile check`'s message, exit 1, no picture written and
    /// an earlier one left as it was.
    @Test func aBadProfileWritesNothing() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let profile = "\(directory)/bad.toml", png = "\(directory)/bad.png"
        try Data("[touch]\nmode = \"sideways\"\n".utf8).write(to: URL(fileURLWithPath: profile))
        let check = try kioskctl("profile", "check", profile)
        #expect(check.status == 1 && !check.stderr.isEmpty)
        let result = try kioskctl("profile", "show", profile, "--png", png)
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(result.stderr == check.stderr)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["bad.toml"])
    }

    /// A screenshot that is missing, not a PNG, or a PNG cut short: a sentence naming it,
    /// exit 1, and the file already at the --png path keeps its bytes (no temporary left).
    @Test func aBadScreenshotWritesNothing() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let png = "\(directory)/out.png", text = "\(directory)/notes.txt", cut = "\(directory)/cut.png"
        let whole = "\(directory)/whole.png"
        try Data("earlier picture".utf8).write(to: URL(fileURLWithPath: png))
        try Data("not a picture\n".utf8).write(to: URL(fileURLWithPath: text))
        _ = try Self.python(["write", whole, "64", "64", "1", "2", "3"])
        try Data(try Data(contentsOf: URL(fileURLWithPath: whole)).prefix(60)).write(to: URL(fileURLWithPath: cut))
        for (over, message) in [
            ("\(directory)/missing.png", "\(directory)/missing.png: no such file"),
            (text, "\(text): not a PNG image (it does not start with PNG's signature)."),
            (
                cut,
                "\(cut): a PNG image that cairo cannot decode (damaged or cut short; cairo: error while reading from input stream)."
            ),
        ] {
            let result = try kioskctl("profile", "show", Self.museum, "--png", png, "--over", over)
            #expect(result.status == 1, "\(over)")
            #expect(result.stdout == "")
            #expect(result.stderr == message + "\n")
            #expect(try String(contentsOfFile: png, encoding: .utf8) == "earlier picture")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == [
                "cut.png", "notes.txt", "out.png", "whole.png",
            ])
    }

    /// What goes with --png only, or not with it, is a usage error (exit 64) before anything is read.
    @Test(arguments: [
        (["--over", "x.png"], "Error: --over and --size go with --png.\n"),
        (["--png", "x.png", "--json"], "Error: --png and --json exclude each other.\n"),
        (
            ["--png", "x.png", "--over", "s.png", "--size", "100x100"],
            "Error: --size and --over exclude each other: the picture takes the screenshot's size.\n"
        ),
        (
            ["--png", "x.png", "--size", "100"],
            "Error: --size '100' is not WIDTHxHEIGHT with each side 16 to 16384 pixels.\n"
        ),
    ])
    func usageErrors(arguments: [String], message: String) throws {
        let result = try BuildProducts.run("kioskctl", ["profile", "show", Self.museum] + arguments)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix(message), "\(result.stderr)")
    }

    /// A kiosk without kioskd-tools: kioskctl (alone in a directory, an empty $PATH) says which
    /// package draws the picture, and writes nothing.
    @Test func withoutKioskdToolsItSaysToInstallThem() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: BuildProducts.path(of: "kioskctl"), toPath: directory + "/kioskctl")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: directory + "/kioskctl")
        process.arguments = ["profile", "show", Self.museum, "--png", directory + "/out.png"]
        process.environment = ["PATH": directory].merging(BuildProducts.sanitizerEnvironment) { $1 }
        let err = Pipe()
        process.standardError = err
        try process.run()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(
            String(decoding: stderr, as: UTF8.self) == """
                profile show --png needs kioskctl-profile-png, from the kioskd-tools package, which is not installed here. \
                Install kioskd-tools (apt install kioskd-tools), or draw the profile on a machine that has it.

                """)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["kioskctl"])
    }
}
