import KioskAPI
import Testing

@testable import KioskCore

/// The one rule kioskd and kioskd-bridge decide the web apps' manifests by
/// (docs/browsers.md § Web apps, § The bridge).
struct WebAppDirectoryReadingTests {
    static let directory = "/etc/kioskd/apps"

    static func manifest(_ id: String) -> [UInt8] {
        Array(
            """
            id = "\(id)"
            origins = ["https://guide.museum.example"]

            [[restriction]]
            id = "\(id).video"
            title = "Videos"
            detail = "Visitors may play videos."
            """.utf8)
    }

    static func read(
        _ files: [String: Result<WebAppDirectoryReading.File, WebAppDirectoryReading.Unreadable>],
        trusted: Set<UInt32> = [0]
    ) -> WebAppDirectoryReading {
        WebAppDirectoryReading(
            directory: directory, names: files.keys.sorted(), trustedOwners: trusted
        ) { path in
            let name = String(path.dropFirst(directory.count + 1).dropLast(".toml".count))
            return files[name]!
        }
    }

    @Test func aGoodManifestIsUsedAndEachBadOneFailsItsOwnAppAlone() {
        let reading = Self.read([
            "org.example.Guide": .success(.init(bytes: Self.manifest("org.example.Guide"), owner: 0, mode: 0o100644)),
            "org.example.Writable": .success(
                .init(bytes: Self.manifest("org.example.Writable"), owner: 0, mode: 0o100666)),
            "org.example.Stranger": .success(
                .init(bytes: Self.manifest("org.example.Stranger"), owner: 1000, mode: 0o100644)),
            "org.chromium.Chromium": .success(
                .init(bytes: Self.manifest("org.chromium.Chromium"), owner: 0, mode: 0o100644)),
            "org.example.Broken": .success(.init(bytes: Array("id = ".utf8), owner: 0, mode: 0o100644)),
            "org.example.Gone": .failure(.init(reason: "is not a regular file")),
        ])
        #expect(reading.manifests.map(\.app.rawValue) == ["org.example.Guide"])
        #expect(
            reading.failed.map(\.rawValue).sorted() == [
                "org.chromium.Chromium", "org.example.Broken", "org.example.Gone", "org.example.Stranger",
                "org.example.Writable",
            ])
        #expect(reading.problems.count == 5)
        #expect(reading.problems.contains { $0.contains("a browser kioskd declares itself") })
        #expect(reading.problems.contains { $0.contains("is owned by uid 1000 with mode 644") })
        #expect(reading.problems.contains { $0.contains("with mode 666") })
        #expect(reading.problems.contains { $0 == "\(Self.directory)/org.example.Gone.toml is not a regular file" })
        #expect(reading.problems.contains { $0.hasPrefix("\(Self.directory)/org.example.Broken.toml:1:") })
    }

    @Test func theReadersOwnUidIsTrustedWhenItSaysSo() {
        let files: [String: Result<WebAppDirectoryReading.File, WebAppDirectoryReading.Unreadable>] = [
            "org.example.Guide": .success(.init(bytes: Self.manifest("org.example.Guide"), owner: 1000, mode: 0o100644))
        ]
        #expect(Self.read(files).manifests.isEmpty)
        #expect(Self.read(files, trusted: [0, 1000]).manifests.count == 1)
    }

    @Test func atMostMaxFilesAreLookedAt() {
        var names: [String] = []
        let reading = WebAppDirectoryReading(
            directory: Self.directory, names: (0...WebAppDirectoryReading.maxFiles).map { "org.example.App\($0)" },
            trustedOwners: [0]
        ) { path in
            names.append(path)
            return .failure(.init(reason: "is missing"))
        }
        #expect(names.count == WebAppDirectoryReading.maxFiles)
        #expect(reading.failed.count == WebAppDirectoryReading.maxFiles)
    }
}
