import Foundation
import KioskTestSupport
import Testing

/// `kioskctl replay --profile FILE TRACE`: the session's filter, offline, on a recording.
@Suite struct ReplayCommandTests {
    let fixtures = "\(root)/Tests/KioskTracesTests/Fixtures"

    func temp(_ name: String, _ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-replay-\(UUID())-\(name)")
            .path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The Razer keyboard's multimedia node: volume up (with its MSC_SCAN), mute, then `a`.
    func keyboardTrace() throws -> String {
        let description = try String(
            contentsOfFile: "\(fixtures)/razer-blackwidow-2013.multimedia-node.desc.evemu", encoding: .utf8)
        return try temp(
            "kb.evemu",
            description + """
                E: 1.000000 0004 0004 786665
                E: 1.000000 0001 0073 0001
                E: 1.000000 0000 0000 0000
                E: 1.010000 0004 0004 786665
                E: 1.010000 0001 0073 0000
                E: 1.010000 0000 0000 0000
                E: 1.100000 0001 0071 0001
                E: 1.100000 0000 0000 0000
                E: 1.110000 0001 0071 0000
                E: 1.110000 0000 0000 0000
                E: 1.200000 0004 0004 458756
                E: 1.200000 0001 001e 0001
                E: 1.200000 0000 0000 0000
                E: 1.210000 0001 001e 0000
                E: 1.210000 0000 0000 0000

                """)
    }

    @Test func lockedKeysAndTheirScanCodesDisappearAndOtherKeysPass() throws {
        let result = try kioskctl("replay", "--profile", "\(root)/policies/museum-map.toml", try keyboardTrace())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr == "")
        #expect(
            result.stdout == """
                E: 1.200000 0004 0004 458756\t# EV_MSC / MSC_SCAN 458756
                E: 1.200000 0001 001e 0001\t# EV_KEY / KEY_A 1
                E: 1.200000 0000 0000 0000\t# ------------ SYN_REPORT (0) ----------
                E: 1.210000 0001 001e 0000\t# EV_KEY / KEY_A 0
                E: 1.210000 0000 0000 0000\t# ------------ SYN_REPORT (0) ----------

                """)
    }

    /// The catalogue locks the browser group; replay applies it as kioskd would.
    @Test func replayHonoursCombos() throws {
        let description = try String(
            contentsOfFile: "\(fixtures)/razer-blackwidow-2013.multimedia-node.desc.evemu", encoding: .utf8)
        let trace = try temp(
            "ctrl-n.evemu",
            description + """
                E: 1.000000 0001 001d 0001
                E: 1.000000 0000 0000 0000
                E: 1.100000 0001 0031 0001
                E: 1.100000 0000 0000 0000
                E: 1.110000 0001 0031 0000
                E: 1.110000 0000 0000 0000
                E: 1.200000 0001 001d 0000
                E: 1.200000 0000 0000 0000
                E: 1.300000 0001 0031 0001
                E: 1.300000 0000 0000 0000

                """)
        let result = try kioskctl("replay", "--profile", "\(root)/policies/library-catalogue.toml", trace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == """
                E: 1.000000 0001 001d 0001\t# EV_KEY / KEY_LEFTCTRL 1
                E: 1.000000 0000 0000 0000\t# ------------ SYN_REPORT (0) ----------
                E: 1.200000 0001 001d 0000\t# EV_KEY / KEY_LEFTCTRL 0
                E: 1.200000 0000 0000 0000\t# ------------ SYN_REPORT (0) ----------
                E: 1.300000 0001 0031 0001\t# EV_KEY / KEY_N 1
                E: 1.300000 0000 0000 0000\t# ------------ SYN_REPORT (0) ----------

                """, "\(result.stdout)")
    }

    @Test func aProfileAllowingVolumePassesTheSameTraceUnchanged() throws {
        let profile = try temp("p.toml", "[buttons]\nvolume = \"allowed\"\n")
        let trace = try keyboardTrace()
        let result = try kioskctl("replay", "--profile", profile, trace)
        #expect(result.status == 0)
        let input = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").filter {
            $0.hasPrefix("E: ")
        }
        let output = result.stdout.split(separator: "\n").map { $0.split(separator: "\t")[0] }
        #expect(output == input)
    }

    @Test func anExpiredSessionForwardsNothing() throws {
        let result = try kioskctl(
            "replay", "--expired", "--profile", "\(root)/policies/museum-map.toml", try keyboardTrace())
        #expect(result.status == 0)
        #expect(result.stdout == "")
    }

    /// A region over the first contact's touch-down (539, 167 on an 800×480 panel) removes that
    /// contact entirely; the second contact passes whole.
    @Test func aRegionOverTheFirstContactRemovesItAndKeepsTheOther() throws {
        let profile = try temp(
            "touch.toml",
            """
            [touch]
            mode = "regions"
            [[touch.locked-region]]
            name = "first finger"
            rect = { x = 0.6, y = 0.3, width = 0.1, height = 0.1 }

            """)
        let trace = "\(fixtures)/atmel-maxtouch-ts.2-fingers-touch-release.evemu"
        let result = try kioskctl("replay", "--profile", profile, trace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains("ABS_MT_TRACKING_ID 7\n"))
        #expect(result.stdout.contains("ABS_MT_TRACKING_ID 8\n"))
        #expect(result.stdout.contains("ABS_MT_POSITION_X 222\n"))
        #expect(result.stdout.hasSuffix("SYN_REPORT (0) ----------\n"))
    }

    @Test func aBrokenTraceOrProfileIsNamedAndExits1() throws {
        let bad = try temp("bad.evemu", "E: 1.0 0001\n")
        var result = try kioskctl("replay", "--profile", "\(root)/policies/museum-map.toml", bad)
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(result.stderr == "\(bad):1: expected 4 fields in an E: line (sec.usec type code value), found 2\n")

        result = try kioskctl("replay", "--profile", "/nonexistent/p.toml", bad)
        #expect(result.status == 1)
        #expect(result.stderr == "/nonexistent/p.toml: no such file\n")

        result = try kioskctl("replay", "--profile", "\(root)/policies/museum-map.toml", "/nonexistent/trace.evemu")
        #expect(result.status == 1)
        #expect(result.stderr == "/nonexistent/trace.evemu: no such file\n")
    }

    @Test func withoutAProfileItIsAUsageError() throws {
        let result = try kioskctl("replay", "trace.evemu")
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: Missing expected argument '--profile <profile>'\n"))
    }

    /// A kiosk without kioskd-tools: kioskctl (alone in a directory, an empty $PATH) finds no
    /// kioskctl-replay and says which package has it.
    @Test func withoutKioskdToolsItSaysToInstallThem() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kioskctl-no-tools-\(UUID())")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: BuildProducts.path(of: "kioskctl"), toPath: directory + "/kioskctl")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: directory + "/kioskctl")
        process.arguments = [
            "replay", "--profile", "\(root)/policies/museum-map.toml",
            "\(fixtures)/atmel-maxtouch-ts.2-fingers-touch-release.evemu",
        ]
        process.environment = ["PATH": directory].merging(BuildProducts.sanitizerEnvironment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile(),
            stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(stdout.isEmpty)
        #expect(
            String(decoding: stderr, as: UTF8.self) == """
                replay needs kioskctl-replay, from the kioskd-tools package, which is not installed here. \
                Install kioskd-tools (apt install kioskd-tools), or replay the trace on a machine that has it.

                """)
    }

    /// With a profile that holds a hash (the museum's: the demo passcode 1234), the
    /// exit gesture (power ×3) opens kioskd's prompt in the replay: nothing typed is forwarded, a
    /// wrong PIN is rejected, the right one (checked with libcrypt) ends the session, after which
    /// the locked volume key passes.
    @Test func replayModelsThePasscodePrompt() throws {
        let description = try String(
            contentsOfFile: "\(fixtures)/razer-blackwidow-2013.multimedia-node.desc.evemu", encoding: .utf8)
        var time = 1.0
        var lines: [String] = []
        func press(_ code: Int) {
            for value in [1, 0] {
                time += 0.05
                lines.append(String(format: "E: %.6f 0001 %04x %04d", time, code, value))
                lines.append(String(format: "E: %.6f 0000 0000 0000", time))
            }
        }
        for code in [0x74, 0x74, 0x74, 0x05, 0x05, 0x1c] { press(code) }  // gesture, 4 4, Enter
        for code in [0x74, 0x74, 0x74, 0x02, 0x03, 0x04, 0x05, 0x1c, 0x73] { press(code) }  // 1234, volume up
        let trace = try temp("prompt.evemu", description + lines.joined(separator: "\n") + "\n")
        let result = try kioskctl("replay", "--profile", "\(root)/policies/museum-map.toml", trace)
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout.split(separator: "\n").map(String.init)
        #expect(
            out.filter { $0.hasPrefix("#") } == [
                "# ExitRequested", "# PasscodeRejected", "# ExitRequested", "# PasscodeAccepted",
            ], "\(result.stdout)")
        let keys = out.filter { $0.contains(" 0001 ") }.map { $0.split(separator: "\t")[1] }
        #expect(keys == ["# EV_KEY / KEY_VOLUMEUP 1", "# EV_KEY / KEY_VOLUMEUP 0"], "\(result.stdout)")
    }
}
