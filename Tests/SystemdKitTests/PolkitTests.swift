import BusTestSupport
import Foundation
import Glibc
import SystemdKit
import Testing

@Suite struct PolkitTests {
    static let policy = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE policyconfig PUBLIC "-//freedesktop//DTD PolicyKit Policy Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/PolicyKit/1/policyconfig.dtd">
        <policyconfig>
          <action id="\(TestService.action)">
            <description>Manage the test service</description>
            <message>Authentication is required to manage the test service</message>
            <defaults>
              <allow_any>no</allow_any>
              <allow_inactive>no</allow_inactive>
              <allow_active>auth_admin_keep</allow_active>
            </defaults>
          </action>
        </policyconfig>
        """
    /// uid 1 (`daemon`) is allowed by rule; everyone else falls back to the defaults.
    static let rules = """
        polkit.addRule(function(action, subject) {
            if (action.id == "\(TestService.action)" && subject.user == "daemon") {
                return polkit.Result.YES;
            }
        });
        """

    func authorize(as uid: Int, bus: PrivateBus) throws -> ToolOutput {
        var args = [
            Tools.busctl, "--address=\(bus.address)", "call", TestService.name, TestService.path,
            TestService.interface, "Authorize", "s", TestService.action,
        ]
        if uid != 0 { args = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"] + args }
        return try runTool(uid == 0 ? args.removeFirst() : Tools.setpriv, args)
    }

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("polkitd in a mount namespace, and setpriv"))))
    func polkitOnThePrivateBusAllowsRootAndRuledUIDsAndDeniesNobody_needsRoot() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let polkit = try PrivatePolkit(
            bus: bus, actions: ["org.kioskd.Test1.policy": Self.policy],
            rules: ["49-kioskd-test.rules": Self.rules])
        defer { polkit.stop() }
        let service = try await TestService.start(address: bus.address)

        let root = try authorize(as: 0, bus: bus)
        #expect(root.stdout == "s \"allowed\"\n", "\(root)")
        let daemon = try authorize(as: 1, bus: bus)
        #expect(daemon.stdout == "s \"allowed\"\n", "\(daemon)")
        let nobody = try authorize(as: 65534, bus: bus)
        #expect(nobody.stdout == "s \"denied\"\n", "\(nobody)")

        // The async convenience, from a task, for a SystemdKit client's own name (root).
        let client = try await TestClient.connect(address: bus.address)
        let me = try await client.loop.perform { [bus = client.bus] in try bus.uniqueName() }
        let result = try await PolkitAuthority(bus: client.bus).checkAuthorization(
            action: TestService.action, busName: me)
        #expect(result == .allowed)
        try await client.close()
        try await service.stop()
    }

    @Test func withoutPolkitOnTheBusTheResultIsUnavailable() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let client = try await TestClient.connect(address: bus.address)
        let me = try await client.loop.perform { [bus = client.bus] in try bus.uniqueName() }
        let result = try await PolkitAuthority(bus: client.bus).checkAuthorization(
            action: TestService.action, busName: me)
        #expect(result == .unavailable)
        try await client.close()
    }
}
