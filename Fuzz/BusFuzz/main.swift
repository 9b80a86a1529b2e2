// The D-Bus arguments' harness (docs/testing.md § Fuzzing): values decoded from the input are
// appended to a real sd-bus method call (libsystemd's checks refuse what the wire cannot carry),
// the message is sealed as sd-bus seals what it receives, and then read as kioskd reads every
// call (`Message.readAll(within:)`, RegisterApplication's limits or none) and, for
// RegisterApplication's signature, turned into the typed request
// (`ManagerObject.parseRegistration`). What is read must be what was appended, within the limits,
// and a refused request must be an InvalidArgs-class KioskError.
import CSystemd
import FuzzSupport
import KioskAPI
@testable import KioskDaemon
@testable import SystemdKit
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A bus connection that never carries a message: connected to a socket that listens and never
/// accepts, so sd-bus makes and seals messages for it (`sd_bus_message_new_method_call` needs an
/// open bus) while nothing is ever sent.
let bus: Bus = {
    let dir = "/tmp/kioskd-bus-fuzz-\(getpid())"
    mkdir(dir, 0o700)
    let path = dir + "/socket"
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0, listen(fd, 8) == 0 else { fatalError("cannot listen on \(path)") }
    do {
        let bus = try Bus.open(address: "unix:path=" + path)
        unlink(path)
        rmdir(dir)
        return bus
    } catch {
        fatalError("cannot open a bus to \(path): \(error)")
    }
}()

/// A value of a type the input picks: basic ones, strings (perhaps with a NUL, perhaps long),
/// object paths and signatures (perhaps invalid), arrays, structures, dict entries and variants
/// nested a few levels.
func value(_ input: inout FuzzInput, depth: Int = 0) -> DBusValue {
    let kinds = depth >= 4 ? 9 : 14
    switch input.choose(kinds) {
    case 0: return .byte(input.byte())
    case 1: return .bool(input.bool())
    case 2: return .int16(Int16(bitPattern: input.uint16()))
    case 3: return .uint32(input.uint32())
    case 4: return .int64(Int64(input.int32()) << Int64(input.choose(33)))
    case 5: return .uint64(UInt64(input.uint32()) << UInt64(input.choose(33)))
    case 6: return .double(Double(input.int32()) / 7)
    case 7: return .objectPath(input.bool() ? "/org/kioskd/" + input.text(limit: 8) : input.text(limit: 8))
    case 8: return .string(text(&input))
    case 9: return .signature(input.text(limit: 6))
    case 10:
        // At least one field: D-Bus has no empty structure (sd-bus appends one, and no peer
        // can send it).
        let items = (0...input.choose(5)).map { _ in value(&input, depth: depth + 1) }
        return .structure(items)
    case 11: return .variant(value(&input, depth: depth + 1))
    case 12: return .dictEntry(value(&input, depth: depth + 1), value(&input, depth: depth + 1))
    default:
        // An array: usually of one element type (as sd-bus requires), sometimes not.
        let first = value(&input, depth: depth + 1)
        var items = [first]
        for _ in 0..<input.choose(8) { items.append(input.choose(8) == 0 ? value(&input, depth: depth + 1) : first) }
        if input.choose(4) == 0 { items = [] }
        return .array(elementSignature: first.signature, items)
    }
}

/// A string: short text from the input, or one past RegisterApplication's limit on a string.
func text(_ input: inout FuzzInput) -> String {
    input.choose(16) == 0 ? String(repeating: "x", count: KioskWire.Limits.detailBytes + input.choose(3) - 1)
        : input.text(limit: 24)
}

/// RegisterApplication's arguments, `(s app_id, a(sss) restrictions)`, with the input's texts
/// and count (perhaps past the limit).
func registration(_ input: inout FuzzInput) -> [DBusValue] {
    let app = input.bool() ? "org.example.App" : input.text(limit: 40)
    let count = input.choose(8) == 0 ? KioskWire.Limits.restrictionsPerApp + input.choose(3) - 1 : input.choose(5)
    var restrictions: [DBusValue] = []
    for index in 0..<count {
        restrictions.append(
            .structure(
                index < 4 ? [.string(text(&input)), .string(text(&input)), .string(text(&input))]
                    : [.string("r\(index)"), .string("T"), .string("")]))
    }
    return [.string(app), .array(elementSignature: "(sss)", restrictions)]
}

/// Whether a value holds a string the wire cannot carry as is (a NUL ends it in C).
func holdsNUL(_ value: DBusValue) -> Bool {
    switch value {
    case .string(let s), .objectPath(let s), .signature(let s): return s.utf8.contains(0)
    case .array(_, let items), .structure(let items): return items.contains(where: holdsNUL)
    case .dictEntry(let k, let v): return holdsNUL(k) || holdsNUL(v)
    case .variant(let inner): return holdsNUL(inner)
    default: return false
    }
}

/// Whether every array of `value` has at most `limits.arrayItems` items and every string at
/// most `limits.stringBytes` bytes.
func fits(_ value: DBusValue, _ limits: ReadLimits) -> Bool {
    switch value {
    case .string(let s), .objectPath(let s), .signature(let s): return s.utf8.count <= limits.stringBytes
    case .array(_, let items): return items.count <= limits.arrayItems && items.allSatisfy { fits($0, limits) }
    case .structure(let items): return items.allSatisfy { fits($0, limits) }
    case .dictEntry(let k, let v): return fits(k, limits) && fits(v, limits)
    case .variant(let inner): return fits(inner, limits)
    default: return true
    }
}

/// Doubles compared by their bits, so that the comparison is exact.
func same(_ a: [DBusValue], _ b: [DBusValue]) -> Bool { a.description == b.description }

let registrationLimits = ReadLimits(
    arrayItems: KioskWire.Limits.restrictionsPerApp, stringBytes: KioskWire.Limits.detailBytes)

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let isRegistration = input.bool()
    let values: [DBusValue] =
        isRegistration ? registration(&input) : (0..<input.choose(4)).map { _ in value(&input) }
    let limits = input.bool() ? registrationLimits : ReadLimits.none
    let message: Message
    do {
        message = try bus.makeMethodCall(
            destination: KioskWire.busName, path: KioskWire.objectPath, interface: KioskWire.managerInterface,
            member: "RegisterApplication")
    } catch {
        fatalError("cannot make a method call: \(error)")
    }
    do throws(Errno) {
        try message.append(values)
    } catch {
        return  // sd-bus refused a value the wire cannot carry: nothing is sent
    }
    guard sd_bus_message_seal(message.handle, 1, 0) >= 0 else { fatalError("cannot seal the message") }
    let read: [DBusValue]
    do throws(Errno) {
        read = try message.readAll(within: limits)
    } catch {
        guard error == .argListTooLong, !values.allSatisfy({ fits($0, limits) }) else {
            fatalError("invariant: \(values) within the limits did not read back: \(error)")
        }
        return
    }
    guard read.allSatisfy({ fits($0, limits) }) else { fatalError("invariant: a value past the limits was read") }
    if !values.contains(where: holdsNUL) && !same(read, values) {
        fatalError("invariant: read \(read), appended \(values)")
    }
    do throws(KioskError) {
        let (_, declarations) = try ManagerObject.parseRegistration(read)
        guard declarations.count <= KioskWire.Limits.restrictionsPerApp else {
            fatalError("invariant: \(declarations.count) restrictions taken")
        }
    } catch {
        guard error.code == .invalidArgument else {
            fatalError("invariant: a malformed registration refused as \(error.code)")
        }
    }
}
