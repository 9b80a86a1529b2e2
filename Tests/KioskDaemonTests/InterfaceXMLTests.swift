import BusTestSupport
import Foundation
import KioskCore
import KioskdProcessTestSupport
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// `packaging/dbus/org.kioskd.GuidedAccess1.xml` is the interface kioskd introspects: the same
/// methods, arguments (name, type, direction), signals, properties (type, access) and annotations.
@Suite(.serialized) struct InterfaceXMLTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../packaging/dbus/\(KioskWire.busName).xml").standardized

    static func shipped() throws -> Interface {
        let data = try Data(contentsOf: file)
        let interfaces = try Interface.parse(data)
        return try #require(interfaces[KioskWire.managerInterface], "\(file.path) has no \(KioskWire.managerInterface)")
    }

    @Test func theShippedFileDescribesEveryMemberOfTheAPI() throws {
        let xml = try Self.shipped()
        typealias M = KioskWire.Member
        #expect(
            Set(xml.methods.keys) == [
                M.registerApplication, M.unregisterApplication, M.listApplications, M.listRestrictions,
                M.getRestrictionState,
                M.setRestrictionState, M.startSession, M.endSession, M.forceEndSession, M.setPasscode,
                M.extendSession, M.setSessionDeadline, M.listProfiles, M.reloadProfiles, M.startTrialSession,
                M.confirmSession, M.requestSession, M.releaseSession, M.resetPasscodeThrottle, M.wake, M.blank,
                M.startCleaning, M.stopCleaning, M.drawRegions,
            ])
        #expect(
            Set(xml.signals.keys) == [
                M.restrictionStateChanged, M.exitRequested, M.timeLimitWarning, M.promptClosed, M.timeExtended,
                M.idleReset, M.cleaningStarted, M.cleaningEnded,
            ])
        #expect(
            Set(xml.properties.keys) == [
                M.sessionState, M.activeProfile, M.sessionDeadline, M.sessionProblem, M.sessionWarnings,
                M.trialDeadline, M.activeApp,
                M.promptState, M.promptLength, M.promptDeadline, M.promptRetryAfter, M.promptPad, M.speakWarnings,
                M.language, M.timeOffer, M.visitorExtensionsLeft, M.idleWarning, M.displayPower, M.cleaningUntil,
                M.drawing, M.drawingState, M.drawingBar, M.lockedRegions, M.browserPolicies, M.passcodeSet, M.stateStorage, M.version,
            ])
        #expect(
            xml.methods[M.listRestrictions]?.arguments == [
                Interface.Argument(name: "app_id", type: "s", direction: "in"),
                Interface.Argument(name: "restrictions", type: "a(ssss)", direction: "out"),
            ])
        #expect(
            xml.properties[M.version]
                == Interface.Property(
                    type: "s", access: "read",
                    annotations: [
                        "org.freedesktop.DBus.Property.EmitsChangedSignal": "const"
                    ]))
    }

    @Test(arguments: ["busctl", "gdbus"])
    func runtimeIntrospectionEqualsTheShippedFile(tool: String) throws {
        try withKioskd { kioskd, bus in
            let out =
                tool == "busctl"
                ? try runTool(
                    Tools.busctl,
                    [
                        "--address=\(bus.address)", "--xml-interface", "introspect", KioskWire.busName,
                        KioskWire.objectPath,
                    ])
                : try runTool(
                    Tools.gdbus,
                    [
                        "introspect", "--address", bus.address, "--dest", KioskWire.busName,
                        "--object-path", KioskWire.objectPath, "--xml",
                    ])
            #expect(out.status == 0, "\(out)")
            let runtime = try #require(try Interface.parse(Data(out.stdout.utf8))[KioskWire.managerInterface], "\(out)")
            let shipped = try Self.shipped()
            #expect(runtime.differences(from: shipped) == [], "update \(Self.file.path) to match what kioskd serves")
            #expect(runtime == shipped)
        }
    }

    @Test func theComparisonNoticesAnExtraPropertyAndARenamedArgument() throws {
        var changed = try Self.shipped()
        changed.properties["Locked"] = Interface.Property(type: "b", access: "read", annotations: [:])
        changed.methods[KioskWire.Member.endSession]?.arguments[0].name = "code"
        let differences = changed.differences(from: try Self.shipped())
        #expect(differences.contains("property Locked: b read [:] vs absent"), "\(differences)")
        #expect(differences.count == 2, "\(differences)")
    }
}

/// One interface of an introspection document, as parsed structures: members keyed by name,
/// arguments in order, a method argument's direction defaulting to "in", a signal's to "out".
struct Interface: Equatable {
    struct Argument: Equatable, CustomStringConvertible {
        var name: String?
        var type: String
        var direction: String
        var description: String { "\(direction) \(type) \(name ?? "-")" }
    }

    struct Member: Equatable, CustomStringConvertible {
        var arguments: [Argument] = []
        var annotations: [String: String] = [:]
        var description: String { "(\(arguments.map(\.description).joined(separator: ", "))) \(annotations)" }
    }

    struct Property: Equatable, CustomStringConvertible {
        var type: String
        var access: String
        var annotations: [String: String]
        var description: String { "\(type) \(access) \(annotations)" }
    }

    var methods: [String: Member] = [:]
    var signals: [String: Member] = [:]
    var properties: [String: Property] = [:]
    var annotations: [String: String] = [:]

    /// Every interface in `data`, by name.
    static func parse(_ data: Data) throws -> [String: Interface] {
        let delegate = IntrospectionParser()
        let parser = XMLParser(data: data)
        parser.delegate = delegate
        parser.shouldResolveExternalEntities = false
        guard parser.parse() else {
            throw HarnessError(
                "introspection XML does not parse: \(parser.parserError.map { "\($0)" } ?? "unknown error")")
        }
        return delegate.interfaces
    }

    /// One line per difference, "kind name: mine vs other".
    func differences(from other: Interface) -> [String] {
        func compare<V: Equatable & CustomStringConvertible>(
            _ kind: String, _ a: [String: V], _ b: [String: V]
        ) -> [String] {
            Set(a.keys).union(b.keys).sorted().compactMap { name in
                a[name] == b[name]
                    ? nil
                    : "\(kind) \(name): \(a[name]?.description ?? "absent") vs \(b[name]?.description ?? "absent")"
            }
        }
        return compare("method", methods, other.methods) + compare("signal", signals, other.signals)
            + compare("property", properties, other.properties)
            + (annotations == other.annotations
                ? [] : ["interface annotations: \(annotations) vs \(other.annotations)"])
    }
}

private final class IntrospectionParser: NSObject, XMLParserDelegate {
    var interfaces: [String: Interface] = [:]
    private var interface: (name: String, value: Interface)?
    private enum Open { case method(String), signal(String), property(String) }
    private var member: Open?

    func parser(
        _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        switch element {
        case "interface":
            interface = (attributes["name"] ?? "", Interface())
        case "method" where interface != nil:
            member = .method(attributes["name"] ?? "")
            interface!.value.methods[attributes["name"] ?? ""] = Interface.Member()
        case "signal" where interface != nil:
            member = .signal(attributes["name"] ?? "")
            interface!.value.signals[attributes["name"] ?? ""] = Interface.Member()
        case "property" where interface != nil:
            member = .property(attributes["name"] ?? "")
            interface!.value.properties[attributes["name"] ?? ""] = Interface.Property(
                type: attributes["type"] ?? "", access: attributes["access"] ?? "", annotations: [:])
        case "arg":
            switch member {
            case .method(let name):
                interface!.value.methods[name]!.arguments.append(
                    Interface.Argument(
                        name: attributes["name"], type: attributes["type"] ?? "",
                        direction: attributes["direction"] ?? "in"))
            case .signal(let name):
                interface!.value.signals[name]!.arguments.append(
                    Interface.Argument(
                        name: attributes["name"], type: attributes["type"] ?? "",
                        direction: attributes["direction"] ?? "out"))
            default:
                break
            }
        case "annotation":
            let (key, value) = (attributes["name"] ?? "", attributes["value"] ?? "")
            switch member {
            case .method(let name): interface?.value.methods[name]?.annotations[key] = value
            case .signal(let name): interface?.value.signals[name]?.annotations[key] = value
            case .property(let name): interface?.value.properties[name]?.annotations[key] = value
            case nil: interface?.value.annotations[key] = value
            }
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        switch element {
        case "interface":
            if let interface { interfaces[interface.name] = interface.value }
            interface = nil
        case "method", "signal", "property":
            member = nil
        default:
            break
        }
    }
}
