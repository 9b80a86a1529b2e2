import ArgumentParser
import Glibc
import KioskCore
import KioskFiles
import SystemPackage

/// `kioskctl-profile-png`: what `kioskctl profile show NAME --png FILE` runs (kioskctl execs it
/// with its arguments), and runs alone on an admin's workstation. A program of its own, shipped
/// in kioskd-tools, because it links cairo (and through it libpng, pixman, freetype and
/// fontconfig), which a kiosk's kioskctl must not carry (docs/packaging.md). What to draw is
/// ``ProfilePicture``'s; this program only reads the screenshot, draws and writes.
@main
struct ProfilePNGTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kioskctl-profile-png",
        abstract:
            "Draw a profile's locked touch regions, edge margin and gesture corners as a PNG (what `kioskctl profile show --png` runs).",
        discussion: """
            The picture is the screenshot given with --over, at its size, or a white frame of \
            --size (default 1280x800); a profile's fractions map to its pixels. Locked regions \
            are translucent grey with their names, the edge margin a light orange band, a corner \
            exit gesture's corner blue and a corner cleaning gesture's green. The legend, in pixels, is printed on stdout. The file is \
            written whole or not at all.
            """
    )

    @Option(help: ArgumentHelp("The PNG file to write.", valueName: "file"))
    var png: String

    @Option(help: ArgumentHelp("A screenshot (PNG) to draw over, at its size.", valueName: "screenshot"))
    var over: String?

    @Option(help: ArgumentHelp("The blank frame's size, WIDTHxHEIGHT (default 1280x800).", valueName: "WxH"))
    var size: String?

    @Argument(help: "The profile file.")
    var profile: String

    /// The largest screenshot read: a 16384-pixel-wide PNG of noise is well under it.
    static let screenshotLimit = 256 << 20
    /// The eight bytes every PNG file starts with (PNG § 5.2).
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    func validate() throws {
        if let problem = ProfilePicture.optionsProblem(over: over, size: size) { throw ValidationError(problem) }
    }

    func run() throws {
        do {
            let profile = try Self.loadProfile(self.profile)
            let surface = try background()
            let picture = ProfilePicture(profile, width: surface.width, height: surface.height)
            try Self.draw(picture, on: surface)
            let bytes: [UInt8]
            do { bytes = try surface.png() } catch { throw ToolError("\(png): cairo could not encode the PNG: \(error).") }
            do {
                try Files.replace(png, with: bytes, permissions: [.ownerReadWrite, .groupRead, .otherRead], durable: false)
            } catch {
                throw ToolError("\(png): could not write it: \(error.reason)")
            }
            print(picture.legend, terminator: "")
            print("wrote \(png)")
        } catch {
            let message = Array("\(error)\n".utf8)
            _ = message.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            throw ExitCode.failure
        }
    }

    /// The screenshot, or a white frame.
    func background() throws -> ImageSurface {
        if let over {
            let read: Files.Regular
            do {
                read = try Files.readRegular(over, limit: Self.screenshotLimit)
            } catch {
                throw ToolError("\(over): \(error.reason)")
            }
            guard read.bytes.starts(with: Self.pngSignature) else {
                throw ToolError("\(over): not a PNG image (it does not start with PNG's signature).")
            }
            do {
                return try ImageSurface(png: read.bytes)
            } catch {
                // cairo 1.16 words libpng's errors as "out of memory": say what it was given.
                throw ToolError("\(over): a PNG image that cairo cannot decode (damaged or cut short; cairo: \(error)).")
            }
        }
        let size = self.size.flatMap(ProfilePicture.size) ?? ProfilePicture.defaultSize
        let surface: ImageSurface
        do { surface = try ImageSurface(width: size.width, height: size.height) } catch {
            throw ToolError("cairo could not make a \(size.width)x\(size.height) image: \(error).")
        }
        let context = try DrawingContext(surface)
        context.setColour(1, 1, 1, 1)
        context.paint()
        return surface
    }

    /// Each item filled and outlined, then every label over all of them (white-edged black
    /// text, kept inside the frame).
    static func draw(_ picture: ProfilePicture, on surface: ImageSurface) throws {
        let context = try DrawingContext(surface)
        for item in picture.items {
            context.path(item.polygons.map { $0.map { (x: $0.x, y: $0.y) } })
            let fill = item.kind.fill, outline = item.kind.outline
            context.setColour(fill.red, fill.green, fill.blue, fill.alpha)
            context.fillEvenOddPreserve()
            context.setColour(outline.red, outline.green, outline.blue, outline.alpha)
            context.stroke(width: ProfilePicture.outlineWidth)
        }
        context.font(size: ProfilePicture.labelSize)
        for item in picture.items {
            guard let at = item.labelAt else { continue }
            let advance = context.advance(of: item.label)
            let x = max(2, min(at.x, Double(picture.width) - advance - 2))
            let y = max(ProfilePicture.labelSize, min(at.y, Double(picture.height) - 4))
            context.textPath(item.label, x: x, y: y)
            context.setColour(1, 1, 1, 0.9)
            context.strokePreserve(width: 3)
            context.setColour(0, 0, 0, 1)
            context.fill()
        }
        do { try context.check() } catch { throw ToolError("cairo could not draw the picture: \(error).") }
    }

    /// kioskctl's `ProfileFile.load` (that one is in kioskctl, which this program does not
    /// link): a regular file of at most ``Profile/maximumFileSize``, read as kioskd reads it.
    static func loadProfile(_ path: String) throws -> Profile {
        let read: Files.Regular
        do {
            read = try Files.readRegular(path, limit: Profile.maximumFileSize)
        } catch {
            throw ToolError("\(path): \(error.reason)")
        }
        return try ProfileParser.parse(bytes: read.bytes, file: path)
    }
}

/// A failure this program reports as a sentence on stderr (exit status 1).
struct ToolError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
