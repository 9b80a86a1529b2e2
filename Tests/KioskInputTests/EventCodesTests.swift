import Foundation
import KioskInput
import Testing

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

/// The committed table is exactly what `scripts/gen-event-codes.py` makes from the committed copy
/// of the kernel header (`scripts/linux/input-event-codes.h`), never from the machine's: a hand
/// edit of the table, a change to the generator, or a header copied in without regenerating fails
/// here, and a Debian update of linux-libc-dev changes nothing.
@Test func generatedNamesMatchTheGeneratorByteForByte() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let generator = root.appendingPathComponent("scripts/gen-event-codes.py")
    let committed = try Data(contentsOf: root.appendingPathComponent("Sources/KioskInput/EventCode+Names.swift"))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = [generator.path]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let generated = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(generated.count > 10_000)
    #expect(
        generated == committed,
        "regenerate: python3 scripts/gen-event-codes.py > Sources/KioskInput/EventCode+Names.swift")
}
