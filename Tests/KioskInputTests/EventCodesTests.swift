import Testing
import KioskInput

@Test(arguments: [
    ("KEY_POWER", UInt16(1), UInt16(116)),
    ("KEY_VOLUMEUP", 1, 115),
    ("BTN_TOUCH", 1, 330),
    ("ABS_MT_SLOT", 3, 0x2f),
    ("SYN_REPORT", 0, 0),
    ("MSC_SCAN", 4, 4),
])
func codeNamesResolve(name: String, type: UInt16, code: UInt16) {
    let resolved = EventCodes.code(named: name)
    #expect(resolved?.type == type)
    #expect(resolved?.code == code)
    #expect(EventCodes.name(type: type, code: code) == name)
}

@Test func aliasesResolveButCanonicalNameWins() {
    #expect(EventCodes.code(named: "KEY_HANGUEL")?.code == EventCodes.code(named: "KEY_HANGEUL")?.code)
    #expect(EventCodes.name(type: 1, code: 122) == "KEY_HANGEUL")
}

@Test(arguments: ["KEY_F99", "key_power", "", "EV_KEY", "KEY_MAX"])
func unknownNamesAreNotKeys(name: String) {
    #expect(!EventCodes.isKeyName(name))
}
