import BusTestSupport
import Foundation
import Glibc
import InputTestSupport
import KioskCore
import KioskInput
import KioskTestSupport
import KioskdProcessTestSupport
import LinuxInput
import Testing

/// Drawing the regions at a real kiosk: the touchscreen is a uinput device calibrated by the
/// admin's udev rule (x mirrored, as in CalibrationVMTests), kioskd brokers it, `kioskctl regions
/// draw` waits, and a finger's drag and a tap on Done go through the kernel, the broker and the
/// filter's calibration into the profile file. Nothing of the drawing reaches the clone.
@Suite(
    "Real kernel: a region drawn on a calibrated touchscreen lands in the profile where the filter judges it (VM, root, udev)",
    .serialized, .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct DrawingVMTests {
    /// A drag by one finger from screen fractions `a` to `b`, through the device's mirrored x.
    static func drag(_ a: (Double, Double), _ b: (Double, Double), trackingID: Int32) -> [[InputEvent]] {
        func event(_ type: String, _ code: String, _ value: Int32) -> InputEvent {
            let c = EventCodes.code(named: code)!
            return InputEvent(type: c.type, code: c.code, value: value)
        }
        let steps = 20
        let points = (0...steps).map { i -> (Int32, Int32) in
            let t = Double(i) / Double(steps)
            return CalibrationVMTests.device(a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)
        }
        var frames: [[InputEvent]] = [
            [
                event("EV_ABS", "ABS_MT_SLOT", 0), event("EV_ABS", "ABS_MT_TRACKING_ID", trackingID),
                event("EV_ABS", "ABS_MT_POSITION_X", points[0].0), event("EV_ABS", "ABS_MT_POSITION_Y", points[0].1),
                event("EV_KEY", "BTN_TOUCH", 1), event("EV_ABS", "ABS_X", points[0].0),
                event("EV_ABS", "ABS_Y", points[0].1),
            ]
        ]
        for point in points.dropFirst() {
            frames.append([
                event("EV_ABS", "ABS_MT_POSITION_X", point.0), event("EV_ABS", "ABS_MT_POSITION_Y", point.1),
                event("EV_ABS", "ABS_X", point.0), event("EV_ABS", "ABS_Y", point.1),
            ])
        }
        frames.append([event("EV_ABS", "ABS_MT_TRACKING_ID", -1), event("EV_KEY", "BTN_TOUCH", 0)])
        return frames
    }

    @Test("a drag draws a rectangle where the calibrated filter places it; Done writes it into the profile")
    func aDragOnTheCalibratedTouchscreenLandsInTheProfile() throws {
        try CalibrationVMTests.withKiosk { kioskd, touch, physical, clone in
            let watcher = try Probe.Watcher(spying: [physical])
            defer { watcher.stop() }
            let path = kioskd.profileDirectory.appendingPathComponent("calibration.toml").path
            let before = try String(contentsOfFile: path, encoding: .utf8)
            let out = kioskd.bus.directory.appendingPathComponent("regions-draw.out").path
            let fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            let ctl = try ChildProcess.spawn(
                BuildProducts.path(of: "kioskctl"),
                ["regions", "draw", "calibration", "--profile-dir", kioskd.profileDirectory.path],
                environment: kioskd.bus.environment, stdout: fd, stderr: fd)
            close(fd)
            let drawing = try eventually(timeout: .seconds(30)) { try kioskd.property("Drawing") } until: {
                $0 == "s \"calibration\""
            }
            try #require(drawing == "s \"calibration\"", "no drawing: \(kioskd.log)")
            let mark = watcher.snapshot.events.count

            // Right half, lower middle: screen x 0.6 → 0.9, y 0.6 → 0.8 (the device's x is mirrored).
            try touch.write(frames: Self.drag((0.6, 0.6), (0.9, 0.8), trackingID: 40))
            let done = CalibrationVMTests.device(0.64, 0.06)
            try touch.write(frames: FakeDevice.tap(trackingID: 41, x: done.x, y: done.y))
            #expect(ctl.wait(timeout: .seconds(60)) == 0, "\((try? String(contentsOfFile: out, encoding: .utf8)) ?? "")")

            let after = try String(contentsOfFile: path, encoding: .utf8)
            let regions = try ProfileParser.parse(source: after, file: path).touch.lockedRegions
            #expect(regions.count == 2, "\(after)")
            #expect(regions.first?.name == "top-left", "the profile's own region kept")
            guard regions.count == 2, case .rect(let x, let y, let width, let height) = regions[1].shape else {
                Issue.record("no drawn rect: \(after)")
                return
            }
            for (got, want) in [(x, 0.6), (y, 0.6), (width, 0.3), (height, 0.2)] {
                #expect(abs(got - want) < 0.002, "drawn \(regions[1]) where the finger went 0.6,0.6 → 0.9,0.8")
            }
            #expect(after.hasPrefix(String(before.prefix(60))), "the admin's text before the regions kept")
            #expect(try kioskd.property("Drawing") == "s \"\"")
            // The drawing's touches never reached the kiosk. The sentinel: a tap once it ended
            // (no session: it passes), which comes to the clone after anything written before it.
            let sentinel = CalibrationVMTests.device(0.8, 0.3)
            try touch.write(frames: FakeDevice.tap(trackingID: 42, x: sentinel.x, y: sentinel.y))
            let trackingID = EventCodes.code(named: "ABS_MT_TRACKING_ID")!.code
            let seen = try watcher.wait("the sentinel tap on the clone") { snapshot in
                snapshot.events.dropFirst(mark).contains { $0.phys == clone.phys && $0.code == trackingID && $0.value == -1 }
            }
            let reached = seen.events.dropFirst(mark).filter { $0.phys == clone.phys }
            let downs = reached.filter { $0.code == trackingID && $0.value >= 0 }
            #expect(downs.count == 1, "only the sentinel's touch reached the clone: \(reached.prefix(12))")
        }
    }
}
