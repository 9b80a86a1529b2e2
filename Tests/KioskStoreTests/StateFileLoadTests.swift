import Foundation
import KioskCore
import KioskTestSupport
import SystemPackage
import Testing

@testable import KioskStore

/// A state file with `apps` (JSON objects) as its applications, the rest as `save` writes it.
func stateFile(apps: [String]) -> String {
    #"{"state":{"registry":{"applications":[\#(apps.joined(separator: ","))]},"#
        + #""session":{"pendingPresets":[],"pendingWarnings":[],"profileName":"","saved":[],"state":"inactive"},"#
        + #""throttle":{"failures":0}},"version":1}"#
}

func app(_ name: String, uid: Int = 1000, _ restrictions: [String]) -> String {
    #"{"id":"org.example.\#(name)","ownerUID":\#(uid),"restrictions":[\#(restrictions.joined(separator: ","))]}"#
}

func restriction(
    _ id: String, title: String = "T", detail: String = "D", state: String = "allow", retired: Bool = false
) -> String {
    #"["\#(id)","\#(title)","\#(detail)","\#(state)",\#(retired)]"#
}

/// Three good restrictions of org.example.B, then `bad` as its fourth.
func fileWith(badRestriction bad: String) -> String {
    stateFile(apps: [
        app("A", [restriction("org.example.A.x")]),
        app("B", (0..<3).map { restriction("org.example.B.r\($0)") } + [bad]),
    ])
}

/// Loading through the splitter (in pieces) and decoding the whole file must agree on every file.
@Suite struct StateFileLoadTests {
    /// A hand-edited or corrupt file: the error names the file and the place, and the file stays.
    static let corruptFiles: [(String, String, String)] = [
        (
            fileWith(badRestriction: restriction("org.example.B.bell", title: #"Ring\u0007"#)),
            "state.registry.applications.1.restrictions.3.title", "control character U+0007"
        ),
        (
            fileWith(badRestriction: restriction("org.example.B.del", title: "Delete\u{7F}")),
            "state.registry.applications.1.restrictions.3.title", "control character U+007F"
        ),
        (
            fileWith(badRestriction: restriction("org.example.B.nl", title: #"two\nlines"#)),
            "state.registry.applications.1.restrictions.3.title", "control character U+000A"
        ),
        (
            fileWith(badRestriction: restriction("org.example.B.c1", detail: "next\u{85}line")),
            "state.registry.applications.1.restrictions.3.detail", "control character U+0085"
        ),
        (
            fileWith(badRestriction: restriction("org.example.B.esc", detail: #"\u001b[31m"#)),
            "state.registry.applications.1.restrictions.3.detail", "control character U+001B"
        ),
        (
            fileWith(badRestriction: restriction("org.example.B.long", title: String(repeating: "é", count: 129))),
            "state.registry.applications.1.restrictions.3.title", "is 258 bytes long; at most 256 are allowed"
        ),
        (
            fileWith(badRestriction: restriction("org.example.B.long", detail: String(repeating: "d", count: 4097))),
            "state.registry.applications.1.restrictions.3.detail", "is 4097 bytes long; at most 4096 are allowed"
        ),
        (
            fileWith(badRestriction: restriction("org.example.B..x")),
            "state.registry.applications.1.restrictions.3.id", "empty label"
        ),
        (
            fileWith(badRestriction: restriction("org.example.B.r1")),
            "state.registry.applications.1.restrictions.3.id",
            "org.example.B.r1 of org.example.B appears twice (first as restriction 1)"
        ),
        (
            fileWith(badRestriction: restriction("org.example.B.s", state: "maybe")),
            "state.registry.applications.1.restrictions.3.state", #"The state "maybe" is unknown"#
        ),
        (
            stateFile(apps: [app("A", []), #"{"id":"org.example","ownerUID":1,"restrictions":[]}"#, app("A", [])]),
            "state.registry.applications.2.id", "org.example.A appears twice (first as application 0)"
        ),
        (
            stateFile(apps: [app("A", []), app("C", []), app("B", []), app("A", []), app("C", []), app("B", [])]),
            "state.registry.applications.3.id", "org.example.A appears twice (first as application 0)"
        ),
        (
            stateFile(apps: [app("A", []), #"{"id":"org.3example.B","ownerUID":1,"restrictions":[]}"#]),
            "state.registry.applications.1.id", "starting with a digit"
        ),
        // Numbers the model's arithmetic could not take: refused, not trapped on later.
        (
            stateFile(apps: []).replacingOccurrences(of: #""failures":0"#, with: #""failures":9223372036854775807"#),
            "state.throttle", "wrong passcodes is outside 0 to 1000000000"
        ),
        (
            stateFile(apps: []).replacingOccurrences(of: #""failures":0"#, with: #""failures":-1"#),
            "state.throttle", "wrong passcodes is outside 0 to 1000000000"
        ),
        (
            stateFile(apps: []).replacingOccurrences(
                of: #""failures":0"#, with: #""failures":7,"lastFailure":9223372036854775807"#),
            "state.throttle.lastFailure", "is not a time between 1970 and 9999"
        ),
        (
            stateFile(apps: []).replacingOccurrences(
                of: #""profileName":"""#, with: #""profileName":"","deadline":-9223372036854775808"#),
            "state.session.deadline", "is not a time between 1970 and 9999"
        ),
        (
            stateFile(apps: []).replacingOccurrences(
                of: #""pendingWarnings":[]"#, with: #""pendingWarnings":[[600000000000,0]]"#),
            "state.session", "a pending warning of"
        ),
        (
            stateFile(apps: [
                app("A", (0...KioskWire.Limits.restrictionsPerApp).map { restriction("org.example.A.r\($0)") })
            ]),
            "state.registry.applications.0.restrictions.256", "more restrictions than the limits allow"
        ),
    ]

    @Test(arguments: corruptFiles)
    func corruptFileNamesThePlaceAndIsKept(contents: String, place: String, problem: String) throws {
        let store = StateStore(directory: try temporaryDirectory())
        try Data(contents.utf8).write(to: URL(fileURLWithPath: store.path))
        #expect {
            try store.load()
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .corrupt && error.message.contains(store.path)
                && error.message.contains("at \(place): ") && error.message.contains(problem)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.path)) == Data(contents.utf8))
    }

    /// What the checks allow: line breaks and tabs in a detail, the longest title, non-ASCII text.
    @Test func textTheRulesAllowLoads() throws {
        let store = StateStore(directory: try temporaryDirectory())
        let title = String(repeating: "é", count: KioskWire.Limits.titleBytes / 2)
        let json = fileWith(
            badRestriction: restriction("org.example.B.ok", title: title, detail: #"line\n\tindented ©\u00a0"#))
        try Data(json.utf8).write(to: URL(fileURLWithPath: store.path))
        let listed = try store.load().registry.restrictions(of: AppID("org.example.B"))
        #expect(listed.last?.title == title && listed.last?.detail == "line\n\tindented ©\u{A0}")
    }

    /// 1,000 apps × 50 restrictions: saved, read in pieces (as `load` does) and whole, the same.
    @Test func bigStateRoundTripsInPieces() throws {
        let store = StateStore(directory: try temporaryDirectory())
        var state = KioskState()
        state.registry = StateFixtures.registry(apps: 1000, restrictions: 50)
        state.passcodeHash = "$y$j9T$abc$def"
        try store.save(state)
        let data = try Data(contentsOf: URL(fileURLWithPath: store.path))
        let inPieces = try #require(try inPieces(store, data))
        #expect(inPieces == state)
        #expect(try store.decode(data) == state)
        #expect(try store.load() == state)
        // The index answers for every app as the list does.
        for (index, app) in state.registry.applications.enumerated() where index % 97 == 0 {
            #expect(try inPieces.registry.application(app.id) == app)
            #expect(inPieces.registry.owner(of: app.id) == app.ownerUID)
        }
    }

    /// Files `save` would not write but `JSONDecoder` reads: whitespace, other key orders, escapes,
    /// an empty registry, numbers spelled differently. Each loads as decoding it whole does.
    static let unusualFiles: [String] = [
        " \n\t{ \"version\" : 1 , \"state\" : { \"throttle\" : {\"failures\":0} , \"registry\" : { \"applications\" : [ \n "
            + app("A", [restriction("org.example.A.x")]) + " \r\n , \n" + app("B", uid: 2, []) + " ] } , \"session\" : "
            + #"{"pendingPresets":[],"pendingWarnings":[],"profileName":"","saved":[],"state":"inactive"} } }  "#,
        stateFile(apps: []),
        stateFile(apps: [" \n "]),
        stateFile(apps: [
            app("A", [restriction("org.example.A.x", title: #"\"quoted\" \\ \/ \u00e9 [],{}:"#, detail: #"\n\u2028"#)])
        ]),
        stateFile(apps: [#"{"restrictions":[],"ownerUID":1e3,"id":"org.example.A"}"#]),
        stateFile(apps: [app("A", [])]).replacingOccurrences(
            of: #"{"state""#, with: #"{"extra":{"state":{"registry":[1,{"a":"]"}]}},"state""#),
        // Not split (left to `JSONDecoder`): an escaped key, a duplicate key, a byte-order mark.
        stateFile(apps: [app("A", [])]).replacingOccurrences(of: #""registry""#, with: #""regis\u0074ry""#),
        stateFile(apps: [app("A", [])]).replacingOccurrences(of: #"{"state""#, with: #"{"state":{},"state""#),
        "\u{FEFF}" + stateFile(apps: [app("A", [])]),
        // Nested deeper than `JSONDecoder` reads in the file, but not in a piece: decoded whole.
        stateFile(apps: [
            app("A", []).replacingOccurrences(
                of: #"{"id""#,
                with: #"{"deep":"# + String(repeating: "[", count: 510)
                    + String(repeating: "]", count: 510) + #","id""#)
        ]),
        stateFile(apps: [
            app("A", []).replacingOccurrences(
                of: #"{"id""#,
                with: #"{"deep":"# + String(repeating: "[", count: 50)
                    + String(repeating: "]", count: 50) + #","id""#)
        ]),
    ]

    @Test(arguments: unusualFiles)
    func unusualFilesLoadAsDecodingThemWholeDoes(contents: String) throws {
        let store = StateStore(directory: try temporaryDirectory())
        try Data(contents.utf8).write(to: URL(fileURLWithPath: store.path))
        let whole = Result { () throws(StoreError) in try store.decode(Data(contents.utf8)) }
        let loaded = Result { () throws(StoreError) in try store.load() }
        switch (whole, loaded) {
        case (.success(let a), .success(let b)): #expect(a == b)
        case (.failure(let a), .failure(let b)): #expect(a == b)
        default: Issue.record("decoded whole: \(whole); loaded: \(loaded)")
        }
        if case .success(let state) = whole, let split = try inPieces(store, Data(contents.utf8)) {
            #expect(split == state)
        }
    }

    /// The files `save` writes are always split, never decoded whole (the memory peak depends on it).
    @Test func savedFilesAreReadInPieces() throws {
        let store = StateStore(directory: try temporaryDirectory())
        for sequence in [0, 1, 17, 123] {
            let state = StateFixtures.state(sequence: sequence)
            try store.save(state)
            #expect(try inPieces(store, Data(contentsOf: URL(fileURLWithPath: store.path))) == state)
        }
        try store.save(KioskState())
        #expect(try inPieces(store, Data(contentsOf: URL(fileURLWithPath: store.path))) == KioskState())
    }

    /// Random damage to a small file — bytes JSON gives meaning to, deleted, inserted, swapped —
    /// never makes the split reading accept what decoding the whole file refuses, or read it
    /// differently. 3,000 mutants, with a fixed seed so that a failure can be replayed.
    @Test func damagedFilesAreNeverReadDifferently() throws {
        let store = StateStore(directory: try temporaryDirectory())
        let original = Array(
            stateFile(apps: [
                app(
                    "A",
                    [
                        restriction("org.example.A.x", title: #"a \"b\" [c]"#),
                        restriction("org.example.A.y", retired: true),
                    ]),
                app("B", uid: 7, [restriction("org.example.B.z", state: "deny")]),
            ]).utf8)
        let alphabet = Array(#"{}[],:"\ 0aé"#.utf8) + [0x00, 0x0A, 0xEF, 0xBB, 0xBF]
        var random = SeededGenerator(seed: 0x5EED)
        var split = 0, refused = 0
        for round in 0..<3000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: at)
                default: bytes[at] = alphabet.randomElement(using: &random)!
                }
            }
            let data = Data(bytes)
            let whole = try? store.decode(data)
            let pieces = try inPieces(store, data)
            if pieces != nil { split += 1 }
            if whole == nil { refused += 1 }
            if let pieces {
                #expect(pieces == whole, "round \(round): \(String(decoding: bytes, as: UTF8.self))")
            }
        }
        // Most damage is refused (about 97 %); what is not (spaces, a changed letter) is mostly
        // still split, so both branches were taken often.
        #expect(refused > 2000 && split > 50, "refused \(refused), split \(split)")
    }

    /// Chunk boundaries fall anywhere: inside strings, escapes, keys and between elements.
    @Test(arguments: [1, 2, 3, 5, 8, 13, 64])
    func anyChunkSizeSplitsTheSame(chunk: Int) throws {
        let a = app("A", [restriction("org.example.A.x", title: #"\\\" ]}"#)]), b = app("B", [])
        let file = Array(stateFile(apps: [a, b]).utf8)
        var splitter = ApplicationSplitter()
        var elements: [String] = []
        for start in stride(from: 0, to: file.count, by: chunk) {
            try file[start..<min(start + chunk, file.count)].withUnsafeBufferPointer { buffer in
                try splitter.feed(buffer) { elements.append(String(decoding: $0, as: UTF8.self)) }
            }
        }
        try splitter.finish()
        #expect(elements == [a, b])
        #expect(String(decoding: splitter.outline, as: UTF8.self) == stateFile(apps: []))
    }

    /// A save writes what `JSONEncoder` wrote for the whole state before, byte for byte, in
    /// chunks of about `chunkSize`: for states big and small, with a session and a passcode hash.
    @Test func savedBytesAreJSONEncodersInChunks() throws {
        struct Envelope: Encodable { var version: Int; var state: KioskState }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let store = StateStore(directory: try temporaryDirectory())
        var big = KioskState()
        big.registry = StateFixtures.registry(apps: 300, restrictions: 20)
        big.passcodeHash = "$y$j9T$a/b$c"
        for state in [KioskState(), StateFixtures.state(sequence: 40), big] {
            var chunks: [Int] = []
            var bytes: [UInt8] = []
            try store.encode(state) { chunk throws(StoreError) in
                chunks.append(chunk.count)
                bytes += chunk
                chunk.removeAll(keepingCapacity: true)
            }
            #expect(bytes == Array(try encoder.encode(Envelope(version: StateStore.formatVersion, state: state))))
            #expect(
                chunks.dropLast().allSatisfy { $0 >= StateStore.chunkSize && $0 < StateStore.chunkSize + 16 * 1024 })
            try store.save(state)
            #expect(try Data(contentsOf: URL(fileURLWithPath: store.path)) == Data(bytes))
        }
    }

    /// The state read by splitting, or nil where `load` would decode the whole file.
    func inPieces(_ store: StateStore, _ data: Data) throws -> KioskState? {
        let path = store.directory + "/pieces.json"
        try data.write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        return try store.decodeInPieces(FileDescriptor(rawValue: fd))
    }
}

/// A small deterministic generator (SplitMix64), so a failing mutant can be found again.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
