import Foundation
import KioskCore
import KioskTestSupport
import Testing

/// The line-preserving edit of a profile's locked regions (docs/profiles.md § Editing regions
/// at the kiosk): on every profile the project ships, only the regions' lines and the touch
/// mode change; comments, order and spacing elsewhere stay byte for byte.
@Suite struct ProfileRegionEditTests {
    /// Every profile the project ships: the bundled ones and the fleet example's.
    static let shipped: [String] = {
        let root = repositoryRoot
        var paths: [String] = []
        for directory in ["policies", "packaging/ansible/examples/fleet/files"] {
            let url = root.appendingPathComponent(directory)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
            paths += names.filter { $0.hasSuffix(".toml") }.sorted().map { directory + "/" + $0 }
        }
        return paths
    }()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent(path), encoding: .utf8)
    }

    static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    static let drawnRect = Profile.Region(name: "drawn 1", shape: .rect(x: 0.25, y: 0.5, width: 0.125, height: 0.2))
    static let drawnOutline = Profile.Region(
        name: "drawn 2",
        shape: .polygon([
            Profile.Point(x: 0.6, y: 0.6), Profile.Point(x: 0.8, y: 0.62), Profile.Point(x: 0.7, y: 0.9),
        ]))

    @Test func theShippedProfilesAreFound() {
        #expect(Self.shipped.count >= 5, "\(Self.shipped)")
    }

    @Test(arguments: shipped)
    func keepingEveryRegionChangesNoByte(path: String) throws {
        let source = try Self.text(path)
        let profile = try ProfileParser.parse(source: source, file: path)
        guard profile.touch.mode != .none else {
            #expect(throws: ProfileRegionEdit.Refusal.self) {
                try ProfileRegionEdit.apply([], to: source, file: path)
            }
            return
        }
        let kept = profile.touch.lockedRegions.indices.map { ProfileRegionEdit.Region.kept($0) }
        #expect(try ProfileRegionEdit.apply(kept, to: source, file: path) == source)
    }

    /// A drawn region added to each shipped profile that takes touch: the lines before the
    /// regions (or before the new [touch] table) are the same, every other line of the source
    /// is still there in order, and the result holds the old regions and the new one.
    @Test(arguments: shipped)
    func aDrawnRegionAddsItsLinesAndChangesNoOther(path: String) throws {
        let source = try Self.text(path)
        let profile = try ProfileParser.parse(source: source, file: path)
        guard profile.touch.mode != .none else { return }
        let regions = profile.touch.lockedRegions.indices.map { ProfileRegionEdit.Region.kept($0) }
        let edited = try ProfileRegionEdit.apply(regions + [.new(Self.drawnRect)], to: source, file: path)
        let after = try ProfileParser.parse(source: edited, file: path)
        #expect(after.touch.lockedRegions == profile.touch.lockedRegions + [Self.drawnRect])
        #expect(after.touch.mode == .regions)
        var rest = after
        rest.touch = profile.touch
        for i in rest.devices.indices { rest.devices[i].line = profile.devices[i].line }  // lines moved
        #expect(rest == profile)
        // Every original line but a mode line is kept, in order (a subsequence of the result).
        var remaining = Self.lines(edited)[...]
        for line in Self.lines(source) where !line.hasPrefix("mode") {
            guard let found = remaining.firstIndex(of: line) else {
                Issue.record("\(path): the line \(line.debugDescription) is gone")
                return
            }
            remaining = remaining[(found + 1)...]
        }
        #expect(edited.contains("[[touch.locked-region]]\nname = \"drawn 1\"\nrect = { x = 0.25, y = 0.5, width = 0.125, height = 0.2 }\n"))
    }

    @Test func deletingARegionTakesOutItsBlockAndTheCommentAboveIt() throws {
        let path = "policies/museum-map.toml"
        let source = try Self.text(path)
        let edited = try ProfileRegionEdit.apply([.kept(1)], to: source, file: path)
        let lines = Self.lines(source)
        let first = try #require(lines.firstIndex { $0.hasPrefix("[[touch.locked-region]]") })
        // The first region's header, its two lines and the blank line after it.
        var expected = lines
        expected.removeSubrange(first..<(first + 4))
        #expect(Self.lines(edited) == expected)
        let after = try ProfileParser.parse(source: edited, file: path)
        #expect(after.touch.lockedRegions.map(\.name) == ["legend"])
    }

    @Test func regionsAreWrittenInTheOrderGiven() throws {
        let path = "policies/museum-map.toml"
        let source = try Self.text(path)
        let edited = try ProfileRegionEdit.apply([.new(Self.drawnOutline), .kept(1), .kept(0)], to: source, file: path)
        let after = try ProfileParser.parse(source: edited, file: path)
        #expect(after.touch.lockedRegions.map(\.name) == ["drawn 2", "legend", "settings gear"])
        #expect(edited.contains("polygon = [[0.6, 0.6], [0.8, 0.62], [0.7, 0.9]]\n"))
        // The comments on the kept headers moved with them.
        #expect(edited.contains("[[touch.locked-region]]     # second locked region\nname = \"legend\""))
    }

    /// No region left: touch works everywhere, so the mode becomes "all", its comment kept.
    @Test func deletingEveryRegionMakesTheModeAll() throws {
        let path = "policies/museum-map.toml"
        let source = try Self.text(path)
        let edited = try ProfileRegionEdit.apply([], to: source, file: path)
        #expect(!edited.contains("locked-region"))
        // The comment keeps its column.
        #expect(edited.contains("\nmode = \"all\"                # touch works everywhere except in the regions below\n"))
        let after = try ProfileParser.parse(source: edited, file: path)
        #expect(after.touch.mode == .all)
        #expect(after.touch.lockedRegions.isEmpty)
    }

    /// `[touch] mode = "all"` (library-catalogue): the mode is set in place and the region goes
    /// at the end of the table, before the comments of the next one.
    @Test func aRegionInATableWithoutRegionsGoesAtItsEnd() throws {
        let path = "policies/library-catalogue.toml"
        let source = try Self.text(path)
        let edited = try ProfileRegionEdit.apply([.new(Self.drawnRect)], to: source, file: path)
        #expect(
            edited.contains(
                "[touch]                     # the touch screen(s)\nmode = \"regions\"            # the touch screen works everywhere\n\n[[touch.locked-region]]\nname = \"drawn 1\"\nrect = { x = 0.25, y = 0.5, width = 0.125, height = 0.2 }\n\n[pointer]"
            ))
    }

    @Test func aProfileWithoutATouchTableGetsOneAtTheEnd() throws {
        let source = "app = \"org.example.App\"\n\n[buttons]\npower = \"locked\"   # keep\n"
        let edited = try ProfileRegionEdit.apply([.new(Self.drawnRect)], to: source, file: "p.toml")
        #expect(
            edited
                == source
                + "\n[touch]\nmode = \"regions\"\n\n[[touch.locked-region]]\nname = \"drawn 1\"\nrect = { x = 0.25, y = 0.5, width = 0.125, height = 0.2 }\n"
        )
        #expect(try ProfileParser.parse(source: edited, file: "p.toml").touch.lockedRegions == [Self.drawnRect])
    }

    /// A `[` at the start of a line inside a multi-line string is text, not a table.
    @Test func bracketsInsideStringsAreNoTables() throws {
        let source = """
            app = "org.example.App"
            description = \"\"\"
            [[touch.locked-region]]
            [pointer]\"\"\"

            [touch]
            mode = "regions"

            [[touch.locked-region]]
            polygon = [
              [0.0, 0.0],   # a point
              [0.5, 0.0],
              [0.0, 0.5],
            ]

            [passcode]
            hash = "$y$j9T$wu5EV0ZTWsGnMUW7dRD.v/$rUAZoDJKaSqm6adNI/J85tr9e.L1CawC/ZXm0damhMC"

            """
        #expect(try ProfileRegionEdit.apply([.kept(0)], to: source, file: "p.toml") == source)
        let replaced = try ProfileRegionEdit.apply([.new(Self.drawnRect)], to: source, file: "p.toml")
        #expect(replaced.hasPrefix("app = \"org.example.App\"\ndescription = \"\"\"\n[[touch.locked-region]]\n[pointer]\"\"\"\n"))
        #expect(!replaced.contains("[0.5, 0.0]"))
        #expect(replaced.hasSuffix("\n[passcode]\nhash = \"$y$j9T$wu5EV0ZTWsGnMUW7dRD.v/$rUAZoDJKaSqm6adNI/J85tr9e.L1CawC/ZXm0damhMC\"\n"))
    }

    /// A comment line right above a region's header, and its sub-tables, go with the region.
    @Test func aRegionsCommentAndSubTablesGoWithIt() throws {
        let help = """
            # the help button
            [[touch.locked-region]]
            name = "help"
            [touch.locked-region.rect]
            x = 0.0
            y = 0.0
            width = 0.5
            height = 0.5


            """
        let map = """
            # the map
            [[touch.locked-region]]
            name = "map"
            rect = { x = 0.5, y = 0.5, width = 0.5, height = 0.5 }

            """
        let head = "app = \"a.b\"\n\n[touch]\nmode = \"regions\"\n\n"
        let source = head + help + map
        #expect(try ProfileRegionEdit.apply([.kept(1)], to: source, file: "p.toml") == head + map)
        let swapped = try ProfileRegionEdit.apply([.kept(1), .kept(0)], to: source, file: "p.toml")
        #expect(swapped == head + map + "\n" + help, "a blank line between the moved regions")
    }

    /// Rounded to 4 decimals by its edges: never past the right or bottom edge.
    @Test func aDrawnRectIsRoundedInsideTheScreen() throws {
        let source = "app = \"org.example.App\"\n"
        let region = Profile.Region(name: "corner", shape: .rect(x: 0.12345, y: 0.99991, width: 0.87655, height: 0.00009))
        let edited = try ProfileRegionEdit.apply([.new(region)], to: source, file: "p.toml")
        let shape = try ProfileParser.parse(source: edited, file: "p.toml").touch.lockedRegions.first?.shape
        guard case .rect(let x, let y, let width, let height) = shape else {
            Issue.record("no rect: \(String(describing: shape))")
            return
        }
        #expect(x == 0.1235 && width == 0.8765 && y == 0.9999 && height == 0.0001)
    }

    @Test func namesAreEscaped() throws {
        let region = Profile.Region(name: "the \"help\" \\ button", shape: .rect(x: 0, y: 0, width: 0.5, height: 0.5))
        let edited = try ProfileRegionEdit.apply([.new(region)], to: "app = \"a.b\"\n", file: "p.toml")
        #expect(edited.contains("name = \"the \\\"help\\\" \\\\ button\"\n"))
        #expect(try ProfileParser.parse(source: edited, file: "p.toml").touch.lockedRegions == [region])
    }

    // MARK: refusals

    @Test func aProfileThatLocksAllTouchIsRefused() throws {
        let source = try Self.text("policies/self-check-in.toml")
        let refusal = #expect(throws: ProfileRegionEdit.Refusal.self) {
            try ProfileRegionEdit.apply([.new(Self.drawnRect)], to: source, file: "self-check-in.toml")
        }
        #expect(refusal?.message.contains("touch.mode = \"none\"") == true)
    }

    @Test func aProfileWithErrorsIsRefused() {
        let refusal = #expect(throws: ProfileRegionEdit.Refusal.self) {
            try ProfileRegionEdit.apply([.new(Self.drawnRect)], to: "app = 3\n", file: "p.toml")
        }
        #expect(refusal?.message.contains("p.toml has errors") == true)
    }

    @Test func regionsWrittenAsAnInlineArrayAreRefused() {
        let source = "app = \"a.b\"\n[touch]\nmode = \"regions\"\nlocked-region = [{ rect = { x = 0.0, y = 0.0, width = 0.5, height = 0.5 } }]\n"
        let refusal = #expect(throws: ProfileRegionEdit.Refusal.self) {
            try ProfileRegionEdit.apply([.kept(0)], to: source, file: "p.toml")
        }
        #expect(refusal?.message.contains("[[touch.locked-region]] table") == true)
    }

    @Test func touchKeysAtTheTopLevelAreRefused() {
        let source = "app = \"a.b\"\ntouch.mode = \"all\"\n"
        #expect(throws: ProfileRegionEdit.Refusal.self) {
            try ProfileRegionEdit.apply([.new(Self.drawnRect)], to: source, file: "p.toml")
        }
    }

    @Test func aRegionNotInTheFileCannotBeKept() throws {
        let source = try Self.text("policies/museum-map.toml")
        #expect(throws: ProfileRegionEdit.Refusal.self) {
            try ProfileRegionEdit.apply([.kept(2)], to: source, file: "museum-map.toml")
        }
    }

    @Test func aShapeTheParserRefusesIsRefused() throws {
        let crossing = Profile.Region(
            name: "bow tie",
            shape: .polygon([
                Profile.Point(x: 0, y: 0), Profile.Point(x: 0.5, y: 0.5), Profile.Point(x: 0.5, y: 0),
                Profile.Point(x: 0, y: 0.5),
            ]))
        let source = try Self.text("policies/museum-map.toml")
        let refusal = #expect(throws: ProfileRegionEdit.Refusal.self) {
            try ProfileRegionEdit.apply([.kept(0), .new(crossing)], to: source, file: "museum-map.toml")
        }
        #expect(refusal?.message.contains("not a simple polygon") == true)
    }
}
