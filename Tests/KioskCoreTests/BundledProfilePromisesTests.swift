import Foundation
import KioskCore
import KioskInput
import KioskTestSupport
import Testing

/// Each promise the bundled profiles make in their comments, checked through the
/// filter they map to, on devices like a kiosk's.
@Suite struct BundledProfilePromisesTests {
    func policy(_ name: String) throws -> FilterPolicy {
        let url = repositoryRoot.appendingPathComponent("policies").appendingPathComponent("\(name).toml")
        return try ProfileParser.parse(bytes: Array(try Data(contentsOf: url)), file: "\(name).toml").filterPolicy
    }

    func key(_ name: String) -> UInt16 { EventCodes.code(named: name)!.code }

    /// A kiosk's devices, fed frame by frame; what reaches each clone.
    struct Kiosk {
        let filter: InputFilter
        var ids: [String: DeviceID] = [:]
        var output = OutputBuffer()
        var time: Int64 = 1_000_000

        init(_ policy: FilterPolicy, devices: [String: DeviceDescription]) {
            filter = InputFilter(policy: policy)
            for (name, description) in devices { ids[name] = filter.addDevice(description) }
        }

        /// Sends one frame (events as (code name, value)); returns what its clone got, by name.
        mutating func frame(_ device: String, _ events: [(String, Int32)]) -> [String] {
            time += 10_000
            output.removeAll()
            for (name, value) in events + [("SYN_REPORT", 0)] {
                let code = EventCodes.code(named: name)!
                filter.process(
                    InputEvent(
                        seconds: Int(time / 1_000_000), microseconds: Int(time % 1_000_000), type: code.type,
                        code: code.code, value: value), device: ids[device]!, into: &output)
            }
            return output.frames.flatMap { output.events(of: $0).dropLast() }.map {
                "\(EventCodes.name(type: $0.type, code: $0.code) ?? "?") \($0.value)"
            }
        }
    }

    static let keyboard = DeviceDescription(name: "USB Keyboard", codes: [1: Set(1..<0x100), 4: [4]])
    static let mouse = DeviceDescription(name: "USB Mouse", codes: [1: [0x110, 0x111], 2: [0, 1, 8]])
    static let pen = DeviceDescription(
        name: "Pen", properties: [1], codes: [1: [0x140, 0x14a, 0x14b], 3: [0, 1, 0x18]],
        absInfo: [0: .init(minimum: 0, maximum: 999), 1: .init(minimum: 0, maximum: 999), 0x18: .init(minimum: 0, maximum: 1023)])

    @Test("self-check-in: every keyboard is locked but the keypad; a switch's Space and Enter work; no mouse")
    func selfCheckIn() throws {
        var keypad = Self.keyboard
        keypad.name = "Self-Check-In Keypad"
        var kiosk = Kiosk(try policy("self-check-in"), devices: ["kbd": Self.keyboard, "pad": keypad, "mouse": Self.mouse])
        #expect(kiosk.frame("kbd", [("KEY_1", 1)]).isEmpty)
        #expect(kiosk.frame("pad", [("KEY_1", 1)]) == ["KEY_1 1"])
        #expect(kiosk.frame("kbd", [("KEY_SPACE", 1)]) == ["KEY_SPACE 1"])
        #expect(kiosk.frame("kbd", [("KEY_ENTER", 1)]) == ["KEY_ENTER 1"])
        #expect(kiosk.frame("mouse", [("REL_X", 3), ("BTN_LEFT", 1)]).isEmpty)
        // The keypad cannot reboot: Ctrl+Alt+Del stays blocked.
        _ = kiosk.frame("pad", [("KEY_LEFTCTRL", 1)])
        _ = kiosk.frame("pad", [("KEY_LEFTALT", 1)])
        #expect(kiosk.frame("pad", [("KEY_DELETE", 1)]).isEmpty)
    }

    @Test("library catalogue: no new window; Back and Forward work; the screen reader's toggle works; the mouse works")
    func libraryCatalogue() throws {
        var kiosk = Kiosk(try policy("library-catalogue"), devices: ["kbd": Self.keyboard, "mouse": Self.mouse])
        _ = kiosk.frame("kbd", [("KEY_LEFTCTRL", 1)])
        #expect(kiosk.frame("kbd", [("KEY_N", 1)]).isEmpty)
        #expect(kiosk.frame("kbd", [("KEY_N", 0)]).isEmpty)
        _ = kiosk.frame("kbd", [("KEY_LEFTSHIFT", 1)])
        #expect(kiosk.frame("kbd", [("KEY_N", 1)]).isEmpty)
        _ = kiosk.frame("kbd", [("KEY_N", 0), ("KEY_LEFTSHIFT", 0), ("KEY_LEFTCTRL", 0)])
        _ = kiosk.frame("kbd", [("KEY_LEFTALT", 1)])
        #expect(kiosk.frame("kbd", [("KEY_LEFT", 1)]) == ["KEY_LEFT 1"])
        #expect(kiosk.frame("kbd", [("KEY_F2", 1)]).isEmpty, "no VT switch")
        _ = kiosk.frame("kbd", [("KEY_LEFT", 0), ("KEY_F2", 0)])
        #expect(kiosk.frame("kbd", [("KEY_LEFTMETA", 1)]).isEmpty, "Super is locked (home)")
        // Alt is still held (and was forwarded: the keyboard works): Super goes out just before S.
        #expect(kiosk.frame("kbd", [("KEY_S", 1)]) == ["KEY_LEFTMETA 1", "KEY_S 1"])
        #expect(kiosk.frame("mouse", [("REL_X", 3), ("BTN_LEFT", 1)]) == ["REL_X 3", "BTN_MOUSE 1"])
    }

    @Test("museum map: a pen cannot tap the settings gear but draws elsewhere; a mouse does nothing")
    func museumMap() throws {
        var kiosk = Kiosk(try policy("museum-map"), devices: ["pen": Self.pen, "mouse": Self.mouse])
        // The gear: top-right, x 0.90…1.0, y 0…0.12.
        #expect(kiosk.frame("pen", [("ABS_X", 950), ("ABS_Y", 50), ("BTN_TOOL_PEN", 1)]).count == 3, "hover passes")
        #expect(kiosk.frame("pen", [("ABS_PRESSURE", 300), ("BTN_TOUCH", 1)]).isEmpty)
        #expect(kiosk.frame("pen", [("ABS_PRESSURE", 0), ("BTN_TOUCH", 0)]).isEmpty)
        _ = kiosk.frame("pen", [("ABS_X", 500), ("ABS_Y", 500)])
        #expect(kiosk.frame("pen", [("ABS_PRESSURE", 300), ("BTN_TOUCH", 1)]) == ["ABS_PRESSURE 300", "BTN_TOUCH 1"])
        #expect(kiosk.frame("mouse", [("REL_X", 3), ("BTN_LEFT", 1)]).isEmpty)
    }

    /// Each predefined combo group, combo by combo through the filter: the combo is swallowed
    /// with its modifiers held (on another keyboard too), its key alone passes.
    @Test("every combo of every combo group is locked; its key alone is not", arguments: Profile.comboGroups.map(\.name))
    func comboGroup(_ group: String) throws {
        let policy = try ProfileParser.parse(
            source: "[buttons]\nhome = \"allowed\"\ncombo-groups = [\"\(group)\"]", file: "p.toml"
        ).filterPolicy
        let combos = Profile.comboGroups.first { $0.name == group }!.combos
        for text in combos {
            let combo = try Profile.combo(text).get()
            var kiosk = Kiosk(policy, devices: ["kbd": Self.keyboard, "other": Self.keyboard])
            let key = EventCodes.name(type: 1, code: combo.key)!
            #expect(kiosk.frame("kbd", [(key, 1)]) == ["\(key) 1"], "\(text): the key alone")
            _ = kiosk.frame("kbd", [(key, 0)])
            let modifiers = [
                (combo.ctrl, "KEY_LEFTCTRL", "KEY_RIGHTCTRL"), (combo.alt, "KEY_LEFTALT", "KEY_RIGHTALT"),
                (combo.shift, "KEY_LEFTSHIFT", "KEY_RIGHTSHIFT"), (combo.meta, "KEY_LEFTMETA", "KEY_RIGHTMETA"),
            ].compactMap { side, left, right -> String? in side == .none ? nil : side == .right ? right : left }
            for modifier in modifiers { _ = kiosk.frame("other", [(modifier, 1)]) }
            #expect(kiosk.frame("kbd", [(key, 1)]).isEmpty, "\(text) with the modifiers on another keyboard")
            #expect(kiosk.frame("kbd", [(key, 2)]).isEmpty, "\(text): its autorepeat")
        }
    }
}
