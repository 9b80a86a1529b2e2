import BusTestSupport
import Foundation

/// Runs `body` with the built kioskd on a fresh `PrivateBus`: the profiles written (name →
/// TOML text), `state` as its state file when given, anything else `setUp` does to the
/// stopped process, then `start()` (`--no-input`, returning once it owns its name). kioskd is
/// stopped (SIGTERM), then the bus, however `body` ends.
///
/// For the usual set-up only; a test that needs a notify socket, polkit, a second instance or
/// kioskd not running yet builds its own `PrivateBus` and `KioskdProcess`.
@discardableResult
public func withKioskd<Result>(
    profiles: [String: String] = [:], state: Data? = nil,
    setUp: (KioskdProcess) throws -> Void = { _ in },
    _ body: (KioskdProcess, PrivateBus) throws -> Result
) throws -> Result {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let kioskd = try KioskdProcess.prepared(on: bus, profiles: profiles, state: state, setUp: setUp)
    try kioskd.start()
    defer { kioskd.stop() }
    return try body(kioskd, bus)
}

/// `withKioskd` for async tests.
@discardableResult
public func withKioskd<Result>(
    isolation: isolated (any Actor)? = #isolation,
    profiles: [String: String] = [:], state: Data? = nil,
    setUp: (KioskdProcess) throws -> Void = { _ in },
    _ body: (KioskdProcess, PrivateBus) async throws -> Result
) async throws -> Result {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let kioskd = try KioskdProcess.prepared(on: bus, profiles: profiles, state: state, setUp: setUp)
    try kioskd.start()
    defer { kioskd.stop() }
    return try await body(kioskd, bus)
}

extension KioskdProcess {
    fileprivate static func prepared(
        on bus: PrivateBus, profiles: [String: String], state: Data?, setUp: (KioskdProcess) throws -> Void
    ) throws -> KioskdProcess {
        let kioskd = try KioskdProcess(bus: bus)
        for (name, text) in profiles.sorted(by: { $0.key < $1.key }) { try kioskd.writeProfile(name, text) }
        if let state { try state.write(to: URL(fileURLWithPath: kioskd.statePath)) }
        try setUp(kioskd)
        return kioskd
    }
}
