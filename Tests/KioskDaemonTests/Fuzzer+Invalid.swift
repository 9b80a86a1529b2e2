import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskStore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// The fuzzer's invalid calls (nothing may change) and the random values they are made of.
extension Fuzzer {
    // MARK: Invalid calls: nothing may change (unknownMember, which counts, is in Fuzzer.swift)

    mutating func wrongSignature() {
        let (member, signature) = Self.members.randomElement(using: &rng)!
        var values = randomValues()
        while values.map(\.signature).joined() == signature { values = randomValues() }
        expectError(member, values, in: [Self.invalidArgs])
    }

    mutating func badContent() {
        let app = model.registry.applications.randomElement(using: &rng)
        let appID = app?.id.rawValue ?? "org.fuzz.App0"
        let restrictionID = app?.restrictions.randomElement(using: &rng)?.id.rawValue ?? "\(appID).r0"
        let errors = Self.contentErrors
        switch Int.random(in: 0..<11, using: &rng) {
        case 0:
            expectError("SetRestrictionState", [.string(badID()), .string(restrictionID), .string("deny")], in: errors)
        case 1: expectError("SetRestrictionState", [.string(appID), .string(badID()), .string("deny")], in: errors)
        case 2:
            expectError(
                "SetRestrictionState", [.string(appID), .string(restrictionID), .string(badState())], in: errors)
        case 3:
            expectError(
                "GetRestrictionState", [.string(Bool.random(using: &rng) ? badID() : appID), .string(badID())],
                in: errors)
        case 4: expectError("ListRestrictions", [.string(badID())], in: errors)
        case 5:
            expectError(
                "RegisterApplication",
                [
                    .string(badID(malformed: true)),
                    .array(
                        elementSignature: "(sss)",
                        [
                            .structure([.string("org.fuzz.X.r0"), .string("t"), .string("d")])
                        ]),
                ], in: errors)
        case 6, 7:
            // A built-in browser's id is refused to everyone, whatever it declares.
            let reserved = app.flatMap { Browser(app: $0.id) } != nil
            expectError(
                "RegisterApplication", [.string(appID), badDeclarations(appID)],
                in: reserved ? errors.union([KioskError.Code.accessDenied.dbusName]) : errors)
        case 8:
            let name =
                Bool.random(using: &rng)
                ? "nope\(Int.random(in: 0..<1000, using: &rng))" : randomString(maxLength: 300) + "/x"
            expectError("StartSession", [.string(name)], in: errors)
        case 9:
            let new = [
                "", "bell\u{7}", "tab\tin", String(repeating: "p", count: Int.random(in: 1025...5000, using: &rng)),
            ]
            .randomElement(using: &rng)!
            expectError("SetPasscode", [.string(randomString(maxLength: 40)), .string(new)], in: errors)
        default:
            if !model.session.isActive {
                expectError("ForceEndSession", [], in: errors)
            } else {
                expectError("StartSession", [.string("fuzz")], in: errors)
            }
        }
    }

    // MARK: Random values

    /// An id that breaks the reverse-DNS rules in one of many ways, or (unless `malformed`) a
    /// valid one kioskd does not know.
    mutating func badID(malformed: Bool = false) -> String {
        let base = ["org.fuzz.App1", "org.example.Museum", "a.b"].randomElement(using: &rng)!
        switch Int.random(in: 0..<(malformed ? 10 : 12), using: &rng) {
        case 0: return ""
        case 1: return "single\(Int.random(in: 0..<99, using: &rng))"
        case 2: return "1" + base
        case 3: return base + "." + "\(Int.random(in: 0..<9, using: &rng))x"
        case 4: return base.replacingOccurrences(of: ".", with: "..")
        case 5: return base + "."
        case 6: return "." + base
        case 7:
            var s = Array(base)
            s.insert(
                [" ", "/", "!", "é", "\u{1}", "\n", "\u{7F}", "✓", ":"].randomElement(using: &rng)!,
                at: Int.random(in: 0...s.count, using: &rng))
            return String(s)
        case 8: return String(repeating: "ab.", count: Int.random(in: 86...3000, using: &rng)) + "c"
        case 9: return randomString(maxLength: 300) + " "
        case 10: return "org.unknown.U\(Int.random(in: 0..<1_000_000, using: &rng))"
        default: return base + ".unknown\(Int.random(in: 0..<1000, using: &rng))"
        }
    }

    mutating func badState() -> String {
        var s = ["", "Allow", "DENY", "deny ", " allow", "maybe", "0", "1", "true", "allow\u{1}"].randomElement(
            using: &rng)!
        if Bool.random(using: &rng) { s = randomString(maxLength: 100) }
        return s == "allow" || s == "deny" ? "deny!" : s
    }

    /// A restriction list for `app` with one thing wrong.
    mutating func badDeclarations(_ app: String) -> DBusValue {
        func item(_ id: String, _ title: String = "t", _ detail: String = "d") -> DBusValue {
            .structure([.string(id), .string(title), .string(detail)])
        }
        var items = (0..<Int.random(in: 0...3, using: &rng)).map { item("\(app).ok\($0)") }
        let bad: [DBusValue]
        switch Int.random(in: 0..<7, using: &rng) {
        case 0: bad = [item(badID(malformed: true))]
        case 1: bad = [item("\(app).t", String(repeating: "t", count: Int.random(in: 257...2000, using: &rng)))]
        case 2: bad = [item("\(app).t", "two\nlines")]
        case 3: bad = [item("\(app).t", "t", String(repeating: "d", count: Int.random(in: 4097...9000, using: &rng)))]
        case 4: bad = [item("\(app).t", "t", "bell\u{7}")]
        case 5: bad = [item("\(app).dup"), item("\(app).dup")]
        default: bad = (0...KioskWire.Limits.restrictionsPerApp).map { item("\(app).many\($0)") }
        }
        items.insert(contentsOf: bad, at: Int.random(in: 0...items.count, using: &rng))
        return .array(elementSignature: "(sss)", items)
    }

    mutating func randomMemberName() -> String {
        let first = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
        let rest = first + Array("0123456789")
        return String(first.randomElement(using: &rng)!)
            + String((0..<Int.random(in: 0...30, using: &rng)).map { _ in rest.randomElement(using: &rng)! })
    }

    /// Valid UTF-8 (sd-bus refuses anything else in an `s`), with controls, non-ASCII and
    /// astral characters; no NUL.
    mutating func randomString(maxLength: Int) -> String {
        let length = Int.random(in: 0...maxLength, using: &rng)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            let value: UInt32
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: value = UInt32.random(in: 1..<0x20, using: &rng)
            case 1: value = UInt32.random(in: 0x80..<0xD800, using: &rng)
            case 2: value = UInt32.random(in: 0x10000..<0x110000, using: &rng)
            default: value = UInt32.random(in: 0x20..<0x7F, using: &rng)
            }
            // sd-bus refuses noncharacters (U+FDD0…U+FDEF, U+xFFFE, U+xFFFF) at the client, as
            // invalid UTF-8; BusGarbage sends them raw.
            let nonCharacter = (0xFDD0...0xFDEF).contains(value) || value & 0xFFFE == 0xFFFE
            scalars.append(nonCharacter ? "?" : Unicode.Scalar(value) ?? "?")
        }
        return String(scalars)
    }

    mutating func randomValue(depth: Int = 0) -> DBusValue {
        switch Int.random(in: 0..<(depth > 1 ? 12 : 16), using: &rng) {
        case 0: return .byte(.random(in: 0...255, using: &rng))
        case 1: return .bool(.random(using: &rng))
        case 2: return .int16(.random(in: .min ... .max, using: &rng))
        case 3: return .uint16(.random(in: 0 ... .max, using: &rng))
        case 4: return .int32(.random(in: .min ... .max, using: &rng))
        case 5: return .uint32(.random(in: 0 ... .max, using: &rng))
        case 6: return .int64(.random(in: .min ... .max, using: &rng))
        case 7: return .uint64(.random(in: 0 ... .max, using: &rng))
        case 8: return .double(.random(in: -1e9...1e9, using: &rng))
        case 9: return .objectPath("/x/y\(Int.random(in: 0..<9, using: &rng))")
        case 10: return .signature(["s", "a(sss)", "ay", ""].randomElement(using: &rng)!)
        case 11, 12: return .string(Bool.random(using: &rng) ? randomString(maxLength: 50) : badID())
        case 13:  // bytes that are not UTF-8, where an `s` is expected: the bus allows them in `ay`
            let invalid: [UInt8] = [0xC3, 0x28, 0xFF, 0xFE, 0xED, 0xA0, 0x80, 0xF8, 0x88, 0x80, 0x80, 0x80]
            return .array(
                elementSignature: "y",
                (0..<Int.random(in: 0...64, using: &rng)).map { _ in .byte(invalid.randomElement(using: &rng)!) })
        case 14:
            return .array(elementSignature: "s", (0..<Int.random(in: 0...4, using: &rng)).map { _ in .string(badID()) })
        default:
            return Bool.random(using: &rng)
                ? .variant(randomValue(depth: depth + 1))
                : .structure((0..<Int.random(in: 1...3, using: &rng)).map { _ in randomValue(depth: depth + 1) })
        }
    }

    mutating func randomValues() -> [DBusValue] {
        (0..<Int.random(in: 0...4, using: &rng)).map { _ in randomValue() }
    }
}
