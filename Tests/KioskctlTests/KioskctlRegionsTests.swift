import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskDaemon
import KioskDaemonTestSupport
import KioskInput
import KioskTestSupport
import Testing

/// `kioskctl regions draw` against kioskd's manager in process on a private bus, the touches
/// handed to it where the broker hands them (docs/kioskctl.md): the profile file rewritten on
/// Done by the line-preserving edit, and left as it is when the drawing is cancelled, the admin
/// presses Ctrl+C, the file changed meanwhile, or nothing could be drawn.
@Suite(.serialized) struct KioskctlRegionsTests {
    static let profile = """
        # The map kiosk: the gear stays out of reach.
        [touch]
        mode = "regions"            # touch works outside the regions below

        [[touch.locked-region]]     # the settings gear
        name = "gear"
        rect = { x = 0.9, y = 0.0, width = 0.1, height = 0.12 }

        [session]
        exit-gesture = { key = "KEY_POWER", presses = 3, within = "1.5s" }   # staff's way out

        """

    struct Fixture {
        let manager: InProcessManager
        let enforcer = RecordingEnforcer(canDraw: true)
        var path: String { manager.profileDirectory.appendingPathComponent("map.toml").path }

        init(profile: String = KioskctlRegionsTests.profile) async throws {
            manager = try await InProcessManager(
                uid: 0, profiles: ["map": profile, "keypad": "[touch]\nmode = \"none\"\n"], enforcer: enforcer)
        }

        /// `kioskctl regions draw` started in the background; its output goes to `out`.
        func draw(_ arguments: [String] = [], profile: String = "map") throws -> (ChildProcess, String) {
            let out = manager.bus.directory.appendingPathComponent("regions-\(UUID()).out").path
            let fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            defer { close(fd) }
            let child = try ChildProcess.spawn(
                BuildProducts.path(of: "kioskctl"),
                arguments + ["regions", "draw", profile, "--profile-dir", manager.profileDirectory.path],
                environment: manager.bus.environment, stdout: fd, stderr: fd)
            return (child, out)
        }

        /// `kioskctl ARGUMENTS` on the private bus, to its end: the status and what it printed.
        func ctl(_ arguments: [String]) throws -> (status: Int32, output: String) {
            let out = manager.bus.directory.appendingPathComponent("ctl-\(UUID()).out").path
            let fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            let child = try ChildProcess.spawn(
                BuildProducts.path(of: "kioskctl"), arguments, environment: manager.bus.environment, stdout: fd, stderr: fd)
            close(fd)
            let status = child.wait()
            return (status, try String(contentsOfFile: out, encoding: .utf8))
        }

        /// Waits until kioskd draws (its enforcer was told).
        func drawing() -> Bool { eventually { enforcer.drawingChanges.last == true } }

        func touches(_ events: [DrawingTouches.Event]) async throws {
            try await manager.onLoop { $0.drawingInput(events) }
        }
    }

    static func drag(_ a: KioskInput.Point, _ b: KioskInput.Point) -> [DrawingTouches.Event] {
        [.down(contact: 1, at: a)]
            + (1...10).map { i in
                let t = Double(i) / 10
                return .move(contact: 1, to: KioskInput.Point(x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t))
            } + [.up(contact: 1)]
    }

    /// What a file holds, "" when it cannot be read.
    static func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    static let done: [DrawingTouches.Event] = [
        .down(contact: 2, at: KioskInput.Point(x: 0.63, y: 0.05)), .up(contact: 2),
    ]

    @Test func doneWritesTheRegionsKeepingTheAdminsText() async throws {
        let f = try await Fixture()
        defer { Task { await f.manager.stop() } }
        let before = try String(contentsOfFile: f.path, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: f.path)
        let (child, out) = try f.draw()
        #expect(f.drawing(), "\(Self.text(out))")
        try await f.touches(Self.drag(KioskInput.Point(x: 0.2, y: 0.5), KioskInput.Point(x: 0.6, y: 0.7)))
        try await f.touches(Self.done)
        #expect(child.wait() == 0, "\(Self.text(out))")
        let after = try String(contentsOfFile: f.path, encoding: .utf8)
        let drawn = Profile.Region(name: "drawn 1", shape: .rect(x: 0.2, y: 0.5, width: 0.4, height: 0.2))
        #expect(after == (try ProfileRegionEdit.apply([.kept(0), .new(drawn)], to: before, file: f.path)))
        #expect(after.hasPrefix("# The map kiosk: the gear stays out of reach.\n"))
        #expect(after.contains("[[touch.locked-region]]     # the settings gear\nname = \"gear\"\n"))
        let attributes = try FileManager.default.attributesOfItem(atPath: f.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o640, "the file's mode is kept")
        let output = try String(contentsOfFile: out, encoding: .utf8)
        #expect(output.hasPrefix("Draw the regions on the kiosk's screen:"), "\(output)")
        #expect(output.hasSuffix("\(f.path): 2 locked regions written (1 kept, 1 drawn).\n"), "\(output)")
        let temporary = f.manager.profileDirectory.appendingPathComponent(".map.toml.tmp").path
        #expect(!FileManager.default.fileExists(atPath: temporary))
    }

    /// `kioskctl monitor` while staff draw: the count of regions as it changes, through
    /// KioskClient's `DrawingState`, and no line again for each point of a stroke.
    @Test func monitorFollowsTheDrawing() async throws {
        let f = try await Fixture()
        defer { Task { await f.manager.stop() } }
        let out = f.manager.bus.directory.appendingPathComponent("monitor.out").path
        let fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let monitor = try ChildProcess.spawn(
            BuildProducts.path(of: "kioskctl"), ["monitor"], environment: f.manager.bus.environment, stdout: fd,
            stderr: fd)
        close(fd)
        defer {
            monitor.signal()
            _ = monitor.wait()
        }
        #expect(eventually { Self.text(out).contains("session inactive") }, "\(Self.text(out))")
        let (child, _) = try f.draw()
        #expect(f.drawing())
        try await f.touches(Self.drag(KioskInput.Point(x: 0.2, y: 0.5), KioskInput.Point(x: 0.6, y: 0.7)))
        try await f.touches([.down(contact: 4, at: KioskInput.Point(x: 0.5, y: 0.5)), .up(contact: 4)])
        // An outline crossing itself (a figure eight): not added, and said so.
        let corners = [(0.2, 0.2), (0.6, 0.6), (0.6, 0.2), (0.2, 0.6), (0.21, 0.21)].map { KioskInput.Point(x: $0.0, y: $0.1) }
        let eight = zip(corners, corners.dropFirst()).enumerated().flatMap { index, leg in
            Self.drag(leg.0, leg.1).dropLast().dropFirst(index == 0 ? 0 : 1)
        }
        try await f.touches(Array(eight) + [.up(contact: 1)])
        #expect(
            eventually { Self.text(out).contains("map: 2 regions, drawn 1 selected, not added: crosses") },
            "\(Self.text(out))")
        try await f.touches([.key(1)])
        _ = child.wait()
        #expect(eventually { Self.text(out).hasSuffix("session inactive\n") }, "\(Self.text(out))")
        let lines = Self.text(out).split(separator: "\n").map(String.init)
        #expect(lines.contains("session inactive; drawing the regions of map: 2 regions"), "\(lines)")
        #expect(lines.contains("session inactive; drawing the regions of map: 2 regions, drawn 1 selected"), "\(lines)")
        #expect(zip(lines, lines.dropFirst()).allSatisfy { $0 != $1 }, "a line printed twice in a row: \(lines)")
    }

    /// The session runs the profile: the regions drawn are in force once kioskctl is done.
    @Test func theSessionRunningTheProfileIsReloaded() async throws {
        let f = try await Fixture()
        defer { Task { await f.manager.stop() } }
        let start = try f.ctl(["start", "map"])
        #expect(start.status == 0, "\(start)")
        let (child, out) = try f.draw(["--json"])
        #expect(f.drawing())
        try await f.touches([.key(111)])  // Delete with nothing selected: nothing
        try await f.touches([.down(contact: 3, at: KioskInput.Point(x: 0.95, y: 0.05)), .up(contact: 3)])
        try await f.touches([.key(111), .key(28)])  // the gear deleted, then Enter: Done
        #expect(child.wait() == 0, "\(Self.text(out))")
        let json = try String(contentsOfFile: out, encoding: .utf8)
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect(object?["regions"] as? Int == 0 && object?["reloaded"] as? Bool == true, "\(json)")
        // No region left: touch works everywhere, in the file and in the session's locks.
        #expect(try String(contentsOfFile: f.path, encoding: .utf8).contains("mode = \"all\""))
        #expect(eventually { f.enforcer.policy.touch == .all }, "\(f.enforcer.policy.touch)")
    }

    @Test func cancelAndCtrlCLeaveTheFileAsItWas() async throws {
        let f = try await Fixture()
        defer { Task { await f.manager.stop() } }
        let before = try Data(contentsOf: URL(fileURLWithPath: f.path))
        let (child, out) = try f.draw()
        #expect(f.drawing())
        try await f.touches([.key(1)])  // Esc
        #expect(child.wait() == 1)
        #expect(
            try String(contentsOfFile: out, encoding: .utf8).contains(
                "Failed to draw the regions: The drawing was cancelled at the kiosk; the profile was not changed."))
        #expect(try Data(contentsOf: URL(fileURLWithPath: f.path)) == before)

        // Ctrl+C on kioskctl: kioskd sees its connection go and ends the drawing.
        let (second, _) = try f.draw()
        #expect(eventually { f.enforcer.drawingChanges == [true, false, true] })
        second.signal(SIGINT)
        _ = second.wait()
        #expect(eventually { f.enforcer.drawingChanges == [true, false, true, false] }, "\(f.enforcer.drawingChanges)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: f.path)) == before)
    }

    /// Someone edited the file while the regions were drawn: their edit stays, nothing is written.
    @Test func aFileChangedMeanwhileIsNotOverwritten() async throws {
        let f = try await Fixture()
        defer { Task { await f.manager.stop() } }
        let (child, out) = try f.draw()
        #expect(f.drawing())
        let edited = try String(contentsOfFile: f.path, encoding: .utf8) + "# an admin's note\n"
        try edited.write(toFile: f.path, atomically: true, encoding: .utf8)
        try await f.touches(Self.drag(KioskInput.Point(x: 0.2, y: 0.5), KioskInput.Point(x: 0.6, y: 0.7)) + Self.done)
        #expect(child.wait() == 1)
        #expect(
            try String(contentsOfFile: out, encoding: .utf8).contains(
                "Failed to write the regions: \(f.path) changed while they were drawn; it was left as it is now."))
        #expect(try String(contentsOfFile: f.path, encoding: .utf8) == edited)
    }

    /// Refused before anyone walks to the kiosk: a profile locking all touch, one with errors, -H.
    @Test func whatCannotBeDrawnIsRefusedFirst() async throws {
        let f = try await Fixture()
        defer { Task { await f.manager.stop() } }
        let (keypad, out) = try f.draw(profile: "keypad")
        #expect(keypad.wait() == 1)
        #expect(try String(contentsOfFile: out, encoding: .utf8).contains("locks all touch (touch.mode = \"none\")"))
        let broken = f.manager.profileDirectory.appendingPathComponent("broken.toml").path
        try "app = 3\n".write(toFile: broken, atomically: true, encoding: .utf8)
        let (child, brokenOut) = try f.draw(profile: "broken")
        #expect(child.wait() == 1)
        #expect(try String(contentsOfFile: brokenOut, encoding: .utf8).contains("has errors"))
        let remote = try BuildProducts.run("kioskctl", ["regions", "draw", "map", "-H", "root@kiosk"])
        #expect(remote.status == 64, "\(remote)")
        #expect(f.enforcer.drawingChanges.isEmpty)
    }
}
