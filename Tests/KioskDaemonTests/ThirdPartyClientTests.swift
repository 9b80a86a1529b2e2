import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskInput
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// kioskd driven by clients no one here wrote: gdbus, dbus-send, busctl (monitor,
/// get-property) and gdbus monitor.
@Suite(.serialized) struct ThirdPartyClientTests {
    static let app = KioskdBusTests.app
    static let controls = KioskdBusTests.controls
    static let share = KioskdBusTests.share
    static let museum = """
        [restrictions."org.example.MuseumMap"]
        "org.example.MuseumMap.share" = "deny"

        [touch]
        mode = "regions"
        shade-opacity = 0.5
        [[touch.locked-region]]
        name = "settings"
        rect = { x = 0.5, y = 0, width = 0.5, height = 0.25 }
        """

    /// A step: a method of the manager (or `Properties.X`), its arguments in GVariant text,
    /// and what gdbus prints (the reply) or the error name it reports.
    enum Expected: Equatable, CustomStringConvertible {
        case reply(String)
        case error(KioskError.Code)
        var description: String {
            switch self {
            case .reply(let text): text
            case .error(let code): "error \(code.dbusName)"
            }
        }
    }

    static let gdbusSteps: [(String, [String], Expected)] = [
        (
            "RegisterApplication",
            [app, "[('\(controls)', 'Map controls', 'Pan and zoom'), ('\(share)', 'Sharing', 'Send to phone')]"],
            .reply("()")
        ),
        // The built-in browsers first: kioskd declares them at its start (docs/browsers.md).
        ("ListApplications", [], .reply("(['org.chromium.Chromium', 'org.mozilla.firefox', '\(app)'],)")),
        (
            "ListRestrictions", [app],
            .reply(
                "([('\(controls)', 'Map controls', 'Pan and zoom', 'allow'), ('\(share)', 'Sharing', 'Send to phone', 'allow')],)"
            )
        ),
        ("GetRestrictionState", [app, controls], .reply("('allow',)")),
        ("SetRestrictionState", [app, controls, "deny"], .reply("()")),
        ("GetRestrictionState", [app, controls], .reply("('deny',)")),
        ("GetRestrictionState", [app, "org.example.MuseumMap.none"], .error(.unknownRestriction)),
        ("ListRestrictions", ["org.example.Other"], .error(.unknownApplication)),
        ("SetRestrictionState", [app, controls, "maybe"], .error(.invalidArgument)),
        ("RegisterApplication", ["1bad.app", "[]"], .error(.invalidArgument)),
        ("EndSession", ["1234"], .error(.noSession)),
        ("ForceEndSession", [], .error(.noSession)),
        ("ExtendSession", ["60"], .error(.noSession)),
        ("ReloadProfiles", [], .reply("()")),
        ("ConfirmSession", [], .error(.noSession)),
        // The profile decides whose app may request it (not the registry): museum is not Nope's.
        ("RequestSession", ["org.example.Nope", "museum"], .error(.accessDenied)),
        ("ReleaseSession", ["org.example.Nope"], .error(.noSession)),
        ("StartTrialSession", ["museum", "5"], .error(.invalidArgument)),
        ("SetSessionDeadline", ["0"], .error(.noSession)),
        ("Blank", [], .error(.noSession)),
        ("Wake", [], .error(.noSession)),
        ("ListProfiles", [], .reply("([('museum', '', true, false)],)")),
        ("StartSession", ["nope"], .error(.unknownProfile)),
        ("StartSession", ["../museum"], .error(.invalidArgument)),
        ("SetPasscode", ["", ""], .error(.invalidArgument)),
        ("SetPasscode", ["", "1234"], .reply("()")),
        ("StartSession", ["museum"], .reply("()")),
        ("Properties.Get", [KioskWire.managerInterface, "SessionState"], .reply("(<'active'>,)")),
        ("Properties.Get", [KioskWire.managerInterface, "ActiveProfile"], .reply("(<'museum'>,)")),
        (
            "Properties.Get", [KioskWire.managerInterface, "LockedRegions"],
            .reply("(<[('settings', 0.5, [0.5, 0.0, 1.0, 0.0, 1.0, 0.25, 0.5, 0.25])]>,)")
        ),
        ("GetRestrictionState", [app, share], .reply("('deny',)")),
        // No browser restriction is denied and no web app is declared: no browser policy.
        ("Properties.Get", [KioskWire.managerInterface, "BrowserPolicies"], .reply("(<@a(ssss) []>,)")),
        // The state directory takes writes: nothing failing, no problem.
        ("Properties.Get", [KioskWire.managerInterface, "StateStorage"], .reply("(<(uint64 0, '')>,)")),
        ("Blank", [], .reply("()")),
        ("Properties.Get", [KioskWire.managerInterface, "DisplayPower"], .reply("(<'off'>,)")),
        ("Wake", [], .reply("()")),
        ("Properties.Get", [KioskWire.managerInterface, "DisplayPower"], .reply("(<'on'>,)")),
        ("StartSession", ["museum"], .error(.sessionActive)),
        ("ExtendSession", ["60"], .error(.invalidArgument)),
        ("ExtendSession", ["0"], .error(.invalidArgument)),
        ("SetSessionDeadline", ["99999999999999999"], .error(.invalidArgument)),
        ("EndSession", ["0000"], .error(.wrongPasscode)),
        ("EndSession", ["1234"], .reply("()")),
        ("GetRestrictionState", [app, share], .reply("('allow',)")),
        ("StartSession", ["museum"], .reply("()")),
        ("ForceEndSession", [], .reply("()")),
        (
            "Properties.GetAll", [KioskWire.managerInterface],
            .reply(
                "({'SessionState': <'inactive'>, 'ActiveProfile': <''>, 'SessionDeadline': <uint64 0>, 'SessionProblem': <''>, 'ActiveApp': <''>, 'TrialDeadline': <uint64 0>, 'SessionWarnings': <@as []>, 'PromptState': <'closed'>, 'PromptLength': <uint32 0>, 'PromptDeadline': <uint64 0>, 'PromptRetryAfter': <uint64 0>, 'PromptPad': <PAD>, 'SpeakWarnings': <false>, 'Language': <''>, 'TimeOffer': <'closed'>, 'VisitorExtensionsLeft': <uint32 0>, 'IdleWarning': <uint64 0>, 'DisplayPower': <'on'>, 'CleaningUntil': <uint64 0>, 'Drawing': <''>, 'DrawingState': <(@a(sad) [], -1, @ad [], '')>, 'DrawingBar': <BAR>, 'LockedRegions': <@a(sdad) []>, 'BrowserPolicies': <@a(ssss) []>, 'PasscodeSet': <true>, 'StateStorage': <(uint64 0, '')>, 'Version': <'\(KioskWire.version)'>},)"
            )
        ),
        ("SetPasscode", ["wrong", "5678"], .error(.wrongPasscode)),
        ("SetPasscode", ["1234", "5678"], .reply("()")),
        ("ResetPasscodeThrottle", ["everyone"], .error(.invalidArgument)),
        ("ResetPasscodeThrottle", ["kiosk"], .reply("()")),
        ("StartCleaning", ["4"], .error(.invalidArgument)),
        ("StartCleaning", ["301"], .error(.invalidArgument)),
        ("Properties.Get", [KioskWire.managerInterface, "CleaningUntil"], .reply("(<uint64 0>,)")),
        ("StartCleaning", ["30"], .reply("()")),
        ("StopCleaning", [], .reply("()")),
        ("StopCleaning", [], .reply("()")),
        ("Properties.Get", [KioskWire.managerInterface, "CleaningUntil"], .reply("(<uint64 0>,)")),
        ("DrawRegions", ["../museum"], .error(.invalidArgument)),
        ("DrawRegions", ["nope"], .error(.unknownProfile)),
        // kioskd here reads no input device: nobody could draw.
        ("DrawRegions", ["museum"], .error(.failed)),
        ("Properties.Get", [KioskWire.managerInterface, "Drawing"], .reply("(<''>,)")),
        ("UnregisterApplication", ["org.example.Nope"], .error(.unknownApplication)),
        ("UnregisterApplication", [app], .reply("()")),
        ("ListApplications", [], .reply("(['org.chromium.Chromium', 'org.mozilla.firefox'],)")),
    ]

    @Test func gdbusCallsEveryMethodAndGetsTheDocumentedErrors() throws {
        try withKioskd(profiles: ["museum": Self.museum]) { _, bus in
            for (index, (member, arguments, expected)) in Self.gdbusSteps.enumerated() {
                let method =
                    member.hasPrefix("Properties.")
                    ? "org.freedesktop.DBus.\(member)" : "\(KioskWire.managerInterface).\(member)"
                let out = try runTool(
                    Tools.gdbus,
                    [
                        "call", "--address", bus.address, "--dest", KioskWire.busName,
                        "--object-path", KioskWire.objectPath, "--method", method,
                    ] + arguments)
                let got: String
                if out.status == 0 {
                    got = Self.withPadChecked(out.stdout.trimmingCharacters(in: .newlines))
                } else {
                    // "Error: GDBus.Error:<name>: <message>"
                    let name = out.stderr.components(separatedBy: "GDBus.Error:").dropFirst().first?.prefix {
                        $0 != ":"
                    }
                    got = "error \(name.map(String.init) ?? out.stderr)"
                }
                #expect(got == expected.description, "step \(index): \(member) \(arguments)\n\(out)")
            }
            let exercised = Set(Self.gdbusSteps.map(\.0).filter { !$0.hasPrefix("Properties.") })
            let shipped = try InterfaceXMLTests.shipped()
            #expect(exercised == Set(shipped.methods.keys))
        }
    }

    @Test func dbusSendCallsMethodsAndReportsErrors() throws {
        try withKioskd { _, bus in
            try KioskdBusTests.registerSample(ManagerClient(address: bus.address))
            // --bus=, not --address= (an alias of --peer=: no Hello, so the bus refuses every call).
            func send(
                _ member: String, _ arguments: String..., interface: String = KioskWire.managerInterface
            ) throws -> ToolOutput {
                try runTool(
                    Tools.dbusSend,
                    [
                        "--bus=\(bus.address)", "--print-reply=literal", "--dest=\(KioskWire.busName)",
                        KioskWire.objectPath, "\(interface).\(member)",
                    ] + arguments)
            }
            var out = try send("GetRestrictionState", "string:\(Self.app)", "string:\(Self.controls)")
            #expect(out.status == 0 && out.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "allow", "\(out)")
            out = try send("SetRestrictionState", "string:\(Self.app)", "string:\(Self.controls)", "string:deny")
            #expect(out.status == 0, "\(out)")
            out = try send("GetRestrictionState", "string:\(Self.app)", "string:\(Self.controls)")
            #expect(out.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "deny", "\(out)")
            out = try send("ListApplications")
            #expect(out.stdout.contains(Self.app), "\(out)")
            out = try send(
                "Get", "string:\(KioskWire.managerInterface)", "string:Version",
                interface: "org.freedesktop.DBus.Properties")
            #expect(out.stdout.contains(KioskWire.version), "\(out)")
            out = try send("Ping", interface: "org.freedesktop.DBus.Peer")
            #expect(out.status == 0, "\(out)")
            // Errors: dbus-send prints "Error <name>: <message>" and exits 1.
            out = try send("ListRestrictions", "string:org.example.Other")
            #expect(
                out.status == 1
                    && out.stderr.hasPrefix(
                        "Error \(KioskError.Code.unknownApplication.dbusName): No application org.example.Other"),
                "\(out)")
            out = try send("EndSession", "int32:5")
            #expect(
                out.status == 1 && out.stderr.hasPrefix("Error \(KioskError.Code.invalidArgument.dbusName):"), "\(out)")
            out = try send("SetRestrictionState", "string:\(Self.app)", "string:\(Self.controls)", "string:")
            #expect(out.stderr.hasPrefix("Error \(KioskError.Code.invalidArgument.dbusName):"), "\(out)")
            out = try send("NoSuchMethod")
            #expect(out.stderr.hasPrefix("Error org.freedesktop.DBus.Error.UnknownMethod:"), "\(out)")
            #expect(try ManagerClient(address: bus.address).state(Self.app, Self.controls) == "deny")
        }
    }

    /// Runs `start`, then a restriction change and a session start, and returns the monitor's output
    /// once `done` holds.
    func monitor(
        _ tool: String, _ arguments: (PrivateBus) -> [String], ready: String,
        until done: @escaping (String) -> Bool
    ) throws -> (String, Bool) {
        return try withKioskd(profiles: ["museum": Self.museum]) { _, bus in
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            let monitor = try BackgroundTool(tool, arguments(bus), directory: bus.directory)
            defer { monitor.stop() }
            #expect(monitor.waitUntil { $0.contains(ready) }, "\(monitor.output)")
            try client.call("SetRestrictionState", [.string(Self.app), .string(Self.controls), .string("deny")])
            try client.call("StartSession", [.string("museum")])
            let seen = monitor.waitUntil(done)
            return (monitor.output, seen)
        }
    }

    /// PromptPad and DrawingBar as gdbus prints them are GVariant's text for doubles: read them
    /// back as numbers and compare them with the pad and the bar, then stand `<PAD>` and `<BAR>`
    /// in their place.
    static func withPadChecked(_ text: String) -> String {
        let pad = PadKey.standardPad.map { "'\($0.label)' \([$0.x, $0.y, $0.width, $0.height])" }
        let bar = RegionDrawing.buttons.map { "'\($0.button.rawValue)' \([$0.x, $0.y, $0.width, $0.height])" }
        return withChecked("DrawingBar", bar, "BAR", withChecked("PromptPad", pad, "PAD", text))
    }

    /// The array of (s, d, d, d, d) `property` has in `text`, compared with `expected`, then
    /// `<placeholder>` in its place.
    static func withChecked(_ property: String, _ expected: [String], _ placeholder: String, _ text: String) -> String {
        guard let start = text.range(of: "'\(property)': <["),
            let end = text.range(of: "]>", range: start.upperBound..<text.endIndex)
        else { return text }
        let body = text[start.upperBound..<end.lowerBound]
        let keys = body.split(separator: ")").map { $0.drop { $0 == "," || $0 == " " || $0 == "(" } }.filter {
            !$0.isEmpty
        }
        let parsed = keys.map { key -> String in
            let parts = key.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let numbers = parts.dropFirst().compactMap(Double.init).map { ($0 * 1000).rounded() / 1000 }
            return "\(parts.first ?? "") \(numbers)"
        }
        guard parsed == expected else { return text }
        return text.replacingCharacters(in: start.lowerBound..<end.upperBound, with: "'\(property)': <\(placeholder)>")
    }

    @Test func gdbusMonitorSeesRestrictionStateChangedAndPropertiesChanged() throws {
        let changed =
            "\(KioskWire.objectPath): \(KioskWire.managerInterface).RestrictionStateChanged ('\(Self.app)', '\(Self.controls)', 'deny')"
        let preset =
            "\(KioskWire.objectPath): \(KioskWire.managerInterface).RestrictionStateChanged ('\(Self.app)', '\(Self.share)', 'deny')"
        let properties =
            "\(KioskWire.objectPath): org.freedesktop.DBus.Properties.PropertiesChanged ('\(KioskWire.managerInterface)', {'SessionState': <'active'>, 'ActiveProfile': <'museum'>, 'SessionDeadline': <uint64 0>, 'SessionProblem': <''>, 'SessionWarnings': <@as []>, 'SpeakWarnings': <false>, 'Language': <''>, 'TrialDeadline': <uint64 0>, 'ActiveApp': <''>, 'LockedRegions': <[('settings', 0.5, [0.5, 0.0, 1.0, 0.0, 1.0, 0.25, 0.5, 0.25])]>}, @as [])"
        let (output, seen) = try monitor(
            Tools.gdbus, { ["monitor", "--address", $0.address, "--dest", KioskWire.busName] },
            ready: "is owned by"
        ) { $0.contains(properties) }
        #expect(seen, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix(KioskWire.objectPath) } == [changed, preset, properties], "\(output)")
    }

    @Test func busctlMonitorSeesRestrictionStateChangedAndPropertiesChanged() throws {
        let (output, seen) = try monitor(
            Tools.busctl, { ["--address=\($0.address)", "monitor", "--json=short", KioskWire.busName] },
            ready: "Monitoring bus message stream."
        ) { $0.contains("\"PropertiesChanged\"") }
        #expect(seen, "\(output)")
        let signals = output.split(separator: "\n").compactMap { line -> [String: Any]? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                object["type"] as? String == "signal", object["sender"] as? String != "org.freedesktop.DBus"
            else { return nil }
            return object
        }
        let members = signals.map { "\($0["interface"] ?? "").\($0["member"] ?? "")" }
        #expect(
            members == [
                "\(KioskWire.managerInterface).RestrictionStateChanged",
                "\(KioskWire.managerInterface).RestrictionStateChanged",
                "org.freedesktop.DBus.Properties.PropertiesChanged",
            ], "\(output)")
        guard signals.count == 3 else { return }
        let first = signals[0]["payload"] as? [String: Any]
        #expect(first?["type"] as? String == "sss")
        #expect(first?["data"] as? [String] == [Self.app, Self.controls, "deny"])
        let payload = signals[2]["payload"] as? [String: Any]
        let data = payload?["data"] as? [Any]
        #expect(payload?["type"] as? String == "sa{sv}as")
        #expect(data?.first as? String == KioskWire.managerInterface)
        let changed = data?.dropFirst().first as? [String: [String: Any]]
        #expect(changed?["SessionState"]?["data"] as? String == "active", "\(output)")
        #expect(changed?["ActiveProfile"]?["data"] as? String == "museum")
        #expect(
            Set(changed?.keys.map { $0 } ?? []) == [
                "SessionState", "ActiveProfile", "SessionDeadline", "SessionProblem", "SessionWarnings",
                "SpeakWarnings", "Language", "TrialDeadline", "ActiveApp", "LockedRegions",
            ])
    }

    @Test func busctlReadsPropertiesAndTheTree() throws {
        try withKioskd { _, bus in
            let a = "--address=\(bus.address)"
            let state = try runTool(
                Tools.busctl,
                [
                    a, "get-property", KioskWire.busName, KioskWire.objectPath, KioskWire.managerInterface,
                    "SessionState", "SessionDeadline", "Version",
                ])
            #expect(state.stdout == "s \"inactive\"\nt 0\ns \"\(KioskWire.version)\"\n", "\(state)")
            let tree = try runTool(Tools.busctl, [a, "tree", "--list", KioskWire.busName])
            #expect(tree.stdout.split(separator: "\n").contains(Substring(KioskWire.objectPath)), "\(tree)")
            let table = try runTool(
                Tools.busctl, [a, "introspect", KioskWire.busName, KioskWire.objectPath, KioskWire.managerInterface])
            #expect(table.stdout.contains(".SetRestrictionState") && table.stdout.contains("sss"), "\(table)")
        }
    }
}
