/// The evdev names of event types, codes and input properties, as the kernel's
/// `<linux/input-event-codes.h>` spells them (`EV_KEY`, `KEY_POWER`, `ABS_MT_SLOT`, …).
///
/// Profiles name keys this way and traces (evemu, `libinput record`) carry these numbers,
/// so both sides resolve through this one table.
public enum EventCodes {
    /// The event type number for a name such as `EV_KEY`, or `nil` if the kernel has none.
    public static func type(named name: String) -> UInt16? {
        typesByName[name]
    }

    /// The event type and code for a code name such as `KEY_F11` or `BTN_TOUCH`
    /// (aliases such as `KEY_HANGUEL` resolve too), or `nil` if the kernel has none.
    public static func code(named name: String) -> (type: UInt16, code: UInt16)? {
        codesByName[name]
    }

    /// The canonical name of a type's code (`KEY_POWER` for `(EV_KEY, 116)`), or `nil`.
    public static func name(type: UInt16, code: UInt16) -> String? {
        namesByCode[UInt32(type) << 16 | UInt32(code)]
    }

    /// The name of an event type (`EV_ABS` for 3), or `nil`.
    public static func typeName(_ type: UInt16) -> String? {
        typeNames[type]
    }

    /// The input property number for a name such as `INPUT_PROP_DIRECT`, or `nil`.
    public static func property(named name: String) -> UInt16? {
        propertiesByName[name]
    }

    /// Whether `name` is a key or button (`KEY_*` or `BTN_*`) the kernel defines.
    public static func isKeyName(_ name: String) -> Bool {
        codesByName[name]?.type == keyType
    }

    /// Every code whose kernel name starts with `KEY_`: the keys of keyboards, remote
    /// controls and consumer-control pages, but no `BTN_*` (mouse, touch, joystick buttons).
    public static let keyboardKeys: Set<UInt16> = Set(
        codeTable.lazy.filter { $0.1 == keyType && $0.0.hasPrefix("KEY_") }.map(\.2))

    /// `EV_KEY`, the event type of every key and button.
    public static let keyType: UInt16 = 1
    /// Every key and button code (`KEY_MAX` + 1 of them): what "lock everything" locks.
    public static let allKeyCodes: Set<UInt16> = Set(0..<UInt16(KEY.count))

    private static let typesByName: [String: UInt16] = Dictionary(
        typeTable.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
    private static let typeNames: [UInt16: String] = Dictionary(
        typeTable.map { ($0.1, $0.0) }, uniquingKeysWith: { first, _ in first })
    private static let codesByName: [String: (type: UInt16, code: UInt16)] = Dictionary(
        codeTable.map { ($0.0, (type: $0.1, code: $0.2)) }, uniquingKeysWith: { first, _ in first })
    private static let namesByCode: [UInt32: String] = Dictionary(
        codeTable.map { (UInt32($0.1) << 16 | UInt32($0.2), $0.0) }, uniquingKeysWith: { first, _ in first })
    private static let propertiesByName: [String: UInt16] = Dictionary(
        propertyTable.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
}
