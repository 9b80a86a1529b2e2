import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskdProcessTestSupport
import Synchronization
import SystemdKit
import Testing

@testable import KioskDaemon

/// TOMLKit never frees a parsed document, so kioskd parses each profile's contents once
/// (`ProfileParseCache`): `make soak` saw kioskd grow by a few MiB an hour from re-reading
/// unchanged profiles (docs/benchmarks.md § Soak).
@Suite struct ProfileParseCacheTests {
    static let museum = "description = \"Museum\"\n[buttons]\npower = \"locked\"\n"

    @Test func theSameBytesOfTheSameFileAreParsedOnce() throws {
        let cache = ProfileParseCache()
        let bytes = Array(Self.museum.utf8)
        let first = try cache.parse(bytes: bytes, file: "/p/museum.toml")
        let again = try cache.parse(bytes: bytes, file: "/p/museum.toml")
        #expect(first == again)
        #expect(first == (try ProfileParser.parse(bytes: bytes, file: "/p/museum.toml")))
        #expect(cache.parses == 1)
        // Other bytes, or the same bytes in another file (its name is in the diagnostics): parsed.
        _ = try cache.parse(bytes: Array((Self.museum + "# edited\n").utf8), file: "/p/museum.toml")
        _ = try cache.parse(bytes: bytes, file: "/p/other.toml")
        #expect(cache.parses == 3)
    }

    @Test func aProfileThatDoesNotParseThrowsTheSameErrorEachTimeParsedOnce() {
        let cache = ProfileParseCache()
        let bytes = Array("description = \n".utf8)
        var errors: [ProfileError] = []
        for _ in 0..<2 {
            do {
                _ = try cache.parse(bytes: bytes, file: "/p/broken.toml")
                Issue.record("a broken profile parsed")
            } catch {
                errors.append(error)
            }
        }
        #expect(errors.count == 2 && errors[0] == errors[1])
        #expect(errors.first?.description.contains("/p/broken.toml") == true)
        #expect(cache.parses == 1)
    }

    @Test func atMostCapacityContentsAreKeptTheOldestGoingFirst() throws {
        let calls = Mutex(0)
        let cache = ProfileParseCache(parser: { _, _ throws(ProfileError) in
            calls.withLock { $0 += 1 }
            return try ProfileParser.parse(source: Self.museum, file: "x.toml")
        })
        for i in 0...ProfileParseCache.capacity {
            _ = try cache.parse(bytes: [UInt8(i % 256), UInt8(i / 256)], file: "f")
        }
        #expect(calls.withLock { $0 } == ProfileParseCache.capacity + 1)
        _ = try cache.parse(
            bytes: [UInt8(ProfileParseCache.capacity % 256), UInt8(ProfileParseCache.capacity / 256)], file: "f")
        #expect(calls.withLock { $0 } == ProfileParseCache.capacity + 1, "the newest was forgotten")
        _ = try cache.parse(bytes: [0, 0], file: "f")
        #expect(calls.withLock { $0 } == ProfileParseCache.capacity + 2, "the oldest was kept past the capacity")
    }

    @Test func atMostByteCapacityOfContentsIsKeptTheOldestGoingFirst() throws {
        let calls = Mutex(0)
        let cache = ProfileParseCache(parser: { _, _ throws(ProfileError) in
            calls.withLock { $0 += 1 }
            return try ProfileParser.parse(source: Self.museum, file: "x.toml")
        })
        // Profiles of the largest size a profile may have: four fit, the fifth pushes out the first.
        let large = { (tag: UInt8) in [tag] + [UInt8](repeating: UInt8(ascii: " "), count: Profile.maximumFileSize - 1)
        }
        for tag in UInt8(0)...4 { _ = try cache.parse(bytes: large(tag), file: "f") }
        #expect(calls.withLock { $0 } == 5)
        #expect(cache.rememberedBytes <= ProfileParseCache.byteCapacity)
        #expect(cache.rememberedBytes == 4 * Profile.maximumFileSize)
        _ = try cache.parse(bytes: large(4), file: "f")
        _ = try cache.parse(bytes: large(1), file: "f")
        #expect(calls.withLock { $0 } == 5, "the newest four were kept")
        _ = try cache.parse(bytes: large(0), file: "f")
        #expect(calls.withLock { $0 } == 6, "the oldest went")
        // Contents larger than the whole capacity are parsed each time, never kept.
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: ProfileParseCache.byteCapacity + 1)
        _ = try cache.parse(bytes: huge, file: "f")
        _ = try cache.parse(bytes: huge, file: "f")
        #expect(calls.withLock { $0 } == 8)
        #expect(cache.rememberedBytes == 4 * Profile.maximumFileSize)
    }

    /// The web apps' manifests go through their own cache: kioskd reads the directory at its
    /// start and again at every reload, and an unchanged manifest is not parsed again.
    @Test func anUnchangedManifestIsParsedOnceAcrossReadings() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "apps-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("org.example.MuseumGuide.toml").path
        let manifest = """
            id = "org.example.MuseumGuide"
            origins = ["https://guide.museum.example"]
            [[restriction]]
            id = "org.example.MuseumGuide.video"
            title = "Exhibit videos"
            detail = "Visitors may play the video beside each exhibit."

            """
        #expect(FileManager.default.createFile(atPath: file, contents: Data(manifest.utf8)))
        chmod(file, 0o644)
        let apps = WebAppDirectory(path: directory.path)
        let first = apps.read()
        #expect(first.manifests.map(\.app.rawValue) == ["org.example.MuseumGuide"], "\(first.problems)")
        #expect(apps.read() == first)
        #expect(apps.parsed.parses == 1)
        try Data((manifest + "# edited\n").utf8).write(to: URL(fileURLWithPath: file))
        #expect(apps.read().manifests == first.manifests)
        #expect(apps.parsed.parses == 2)
    }

    /// The leak itself, on the built kioskd: 400 `ListProfiles` of an unchanged profile leave its
    /// VmRSS where 100 left it (each parse kept about 4.5 KiB before: 1.8 MiB).
    @Test func listingUnchangedProfilesAgainAndAgainDoesNotGrowKioskd() throws {
        let profile =
            "description = \"A profile of some size\"\n" + KioskdSessionTests.museum + """

                [buttons]
                power = "locked"
                volume = "locked"
                [touch]
                mode = "regions"
                [[touch.locked-region]]
                name = "corner"
                rect = { x = 0.9, y = 0.0, width = 0.1, height = 0.2 }
                [session]
                time-limit = "1h"
                """
        try withKioskd(profiles: ["museum": profile, "second": profile]) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            let pid = try #require(kioskd.process?.pid)
            func rss() throws -> Int {
                let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
                let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
                return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
            }
            for _ in 0..<100 { try client.call("ListProfiles") }
            let before = try rss()
            for _ in 0..<400 { try client.call("ListProfiles") }
            let grown = try rss() - before
            #expect(grown < 512, "kioskd grew by \(grown) KiB over 400 ListProfiles of unchanged profiles")
        }
    }
}
