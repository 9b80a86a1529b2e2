// The recordings' harness (docs/testing.md § Fuzzing): any bytes as an evemu recording or a
// `libinput record` file, the first byte choosing the parser (so each sees every input, whatever
// the sniffing of `Trace.parse` would pick). A trace that parses must hold events with timestamps
// a trace may hold.
import FuzzSupport
import KioskInput
import KioskTraces

runFuzzer { bytes in
    guard let selector = bytes.first else { return }
    let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
    let trace: Trace
    do throws(TraceParseError) {
        switch selector % 3 {
        case 0: trace = try EvemuParser.parse(text)
        case 1: trace = try LibinputRecordParser.parse(text)
        default: trace = try Trace.parse(text)
        }
    } catch {
        guard error.line >= 0, !error.message.isEmpty else { fatalError("invariant: an error with no line or message") }
        return
    }
    for device in trace.devices {
        for event in device.events where !InputEvent.isValidTimestamp(seconds: event.seconds, microseconds: event.microseconds) {
            fatalError("invariant: a parsed event with an invalid timestamp: \(event)")
        }
    }
}
