import BusTestSupport
import Foundation
import KioskAPI
import KioskCore
import KioskDaemonTestSupport
import KioskTestSupport
import SystemdKit
import Testing

@testable import KioskDaemon

/// `LockedRegions` (docs/dbus-api.md § Seeing locked regions) through kioskd's manager in
/// process: empty without a session, the session profile's regions while it is active, and a
/// `PropertiesChanged` carrying the new value when a session starts, is reloaded, expires, is
/// revived and ends.
@Suite(.serialized) struct LockedRegionsBusTests {
    static let map = """
        [session]
        time-limit = "10m"
        [touch]
        mode = "regions"
        shade-opacity = 0.5
        [[touch.locked-region]]
        name = "settings"
        rect = { x = 0.75, y = 0.0, width = 0.25, height = 0.125 }
        """

    static func regions(_ source: String) throws -> [ShadedRegion] {
        try ProfileParser.parse(source: source, file: "map.toml").shadedRegions
    }

    /// The `PropertiesChanged` entry for `regions`, as the manager's listener notes it.
    static func changed(_ regions: [ShadedRegion]) -> String {
        "LockedRegions=\(DBusValue.variant(ManagerObject.lockedRegionsValue(regions)))"
    }

    func write(_ manager: InProcessManager, _ name: String, _ text: String) throws {
        let url = manager.profileDirectory.appendingPathComponent(name + ".toml")
        try Data(text.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    @Test func theRegionsFollowTheSessionStartReloadExpiryAndEnd() async throws {
        let manager = try await InProcessManager(profiles: ["map": Self.map])
        defer { Task { await manager.stop() } }
        manager.changedProperties.watch([KioskWire.Member.lockedRegions])
        let client = try ManagerClient(address: manager.bus.address)
        let none = ManagerObject.lockedRegionsValue([])
        #expect(try client.property("LockedRegions") == none)

        let settings = try Self.regions(Self.map)
        #expect(settings.count == 1 && settings[0].opacity == 0.5)
        try client.call("StartSession", [.string("map")])
        #expect(manager.changedProperties.waitFor(Self.changed(settings)), "\(manager.changedProperties.all)")
        #expect(try client.property("LockedRegions") == ManagerObject.lockedRegionsValue(settings))

        // Reloaded with a second region: the new outline, in the profile's order.
        let two = Self.map + "\n[[touch.locked-region]]\npolygon = [[0.0, 1.0], [0.25, 0.5], [0.5, 1.0]]\n"
        try write(manager, "map", two)
        try client.call("ReloadProfiles")
        let both = try Self.regions(two)
        #expect(both.count == 2)
        #expect(manager.changedProperties.waitFor(Self.changed(both)), "\(manager.changedProperties.all)")
        #expect(try client.property("LockedRegions") == ManagerObject.lockedRegionsValue(both))

        // Reloaded with show-locked = false: nothing to shade, the same locks.
        try write(manager, "map", two.replacingOccurrences(of: "[touch]\n", with: "[touch]\nshow-locked = false\n"))
        try client.call("ReloadProfiles")
        #expect(manager.changedProperties.waitFor(Self.changed([])), "\(manager.changedProperties.all)")
        try write(manager, "map", two)
        try client.call("ReloadProfiles")
        #expect(try client.property("LockedRegions") == ManagerObject.lockedRegionsValue(both))

        // Expired: all input is held, no region is shaded; revived, they come back.
        manager.changedProperties.removeAll()
        try client.call("ExtendSession", [.int64(-3600)])
        #expect(try client.property("SessionState")?.string == "expired")
        #expect(manager.changedProperties.waitFor(Self.changed([])), "\(manager.changedProperties.all)")
        #expect(try client.property("LockedRegions") == none)
        try client.call("ExtendSession", [.int64(300)])
        #expect(manager.changedProperties.waitFor(Self.changed(both)), "\(manager.changedProperties.all)")

        // Ended: empty again, and said so.
        manager.changedProperties.removeAll()
        try client.call("ForceEndSession")
        #expect(manager.changedProperties.waitFor(Self.changed([])), "\(manager.changedProperties.all)")
        #expect(try client.property("LockedRegions") == none)
    }
}
