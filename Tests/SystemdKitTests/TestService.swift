import BusTestSupport
import Foundation
import Glibc
import SystemdKit

/// A tiny service exported with SystemdKit on a private bus: the thing the tests poke at with
/// busctl, gdbus, python3-dbus and a SystemdKit client.
final class TestService: @unchecked Sendable {  // state touched only on `loop`
    static let name = "org.kioskd.Test1"
    static let path = "/org/kioskd/Test1"
    static let interface = "org.kioskd.Test1"
    static let action = "org.kioskd.Test1.manage"
    static let echoSignature = "ynqiuxtdsogbasa{sv}(sib)v"

    let loop: EventLoop
    let bus: Bus
    private var object: ExportedObject?
    private var timers: [EventSource] = []
    var counter: UInt32 = 0
    /// How many `Defer` calls were answered (`MethodCall.whenAnswered`).
    var deferredAnswered = 0

    private init(loop: EventLoop, bus: Bus) {
        self.loop = loop
        self.bus = bus
    }

    /// Starts a loop thread, connects to `address`, exports the object and takes the name.
    static func start(address: String) async throws -> TestService {
        let loop = try EventLoop()
        try loop.startThread()
        return try await loop.perform {
            let bus = try Bus.open(address: address)
            try bus.attach(to: loop)
            let service = TestService(loop: loop, bus: bus)
            service.object = try bus.export(service.makeInterface(), at: path)
            try bus.requestName(name)
            return service
        }
    }

    func stop() async throws {
        try await loop.perform { [self] in
            object?.remove()
            object = nil
            timers.removeAll()
            bus.close()
        }
        loop.exit()
    }

    private func makeInterface() -> BusInterface {
        BusInterface(
            Self.interface,
            methods: [
                BusMethod("Hello", in: [("s", "name")], out: [("s", "greeting")]) { call in
                    .values([.string("hello, \(call.arguments[0].string ?? "")")])
                },
                BusMethod(
                    "Echo", in: [(Self.echoSignature, "value")].flatMap(Self.split),
                    out: [(Self.echoSignature, "value")].flatMap(Self.split)
                ) { call in
                    .values(call.arguments)
                },
                BusMethod("Defer", in: [("u", "milliseconds")], out: [("s", "answer")]) { [unowned self] call in
                    let ms = call.arguments[0].uint64 ?? 0
                    call.whenAnswered { [unowned self] in deferredAnswered += 1 }
                    timers.append(
                        try loop.addTimer(after: .milliseconds(Int64(ms))) {
                            try? call.reply([.string("deferred \(ms) ms")])
                        })
                    return .deferred
                },
                BusMethod("Fail") { _ in
                    throw BusError(name: "org.kioskd.Test1.Error.Nope", message: "Nope, as asked.")
                },
                BusMethod("SetCounter", in: [("u", "value")]) { [unowned self] call in
                    counter = call.arguments[0].uint64.map { UInt32($0) } ?? 0
                    try bus.emitPropertiesChanged(path: Self.path, interface: Self.interface, properties: ["Counter"])
                    try bus.emitSignal(
                        path: Self.path, interface: Self.interface, member: "CounterChanged",
                        arguments: [.uint32(counter), .string(call.sender ?? "")])
                    return .empty
                },
                BusMethod("WhoAmI", out: [("u", "sync_uid"), ("u", "async_uid")]) { [unowned self] call in
                    let syncUID = try call.message.senderEUID()
                    try bus.unixUser(ofName: call.sender ?? "") { result in
                        switch result {
                        case .success(let uid): try? call.reply([.uint32(syncUID), .uint32(uid)])
                        case .failure(let error):
                            try? call.replyError(BusError(name: BusError.failed, message: "\(error)"))
                        }
                    }
                    return .deferred
                },
                BusMethod("Authorize", in: [("s", "action")], out: [("s", "result")]) { [unowned self] call in
                    try PolkitAuthority(bus: bus).checkAuthorization(
                        action: call.arguments[0].string ?? "", busName: call.sender ?? ""
                    ) { result in
                        switch result {
                        case .success(let r): try? call.reply([.string("\(r)")])
                        case .failure(let error):
                            try? call.replyError(BusError(name: BusError.failed, message: "\(error)"))
                        }
                    }
                    return .deferred
                },
            ],
            signals: [BusSignal("CounterChanged", arguments: [("u", "value"), ("s", "who")])],
            properties: [
                BusProperty("Counter", "u") { [unowned self] in .uint32(counter) },
                BusProperty("Version", "s", flags: [.const]) { .string("1.0") },
            ])
    }

    /// Splits a multi-type signature into one (type, name) pair per complete type: arg0, arg1 …
    static func split(_ pair: (String, String)) -> [(String, String)] {
        var out: [(String, String)] = []
        var depth = 0
        var current = ""
        for c in pair.0 {
            current.append(c)
            switch c {
            case "(", "{": depth += 1
            case ")", "}": depth -= 1
            default: break
            }
            if depth == 0 && c != "a" {
                out.append((current, "\(pair.1)\(out.count)"))
                current = ""
            }
        }
        return out
    }
}

/// A SystemdKit client connection with its own loop thread.
final class TestClient: @unchecked Sendable {
    let loop: EventLoop
    let bus: Bus

    private init(loop: EventLoop, bus: Bus) {
        self.loop = loop
        self.bus = bus
    }

    static func connect(address: String) async throws -> TestClient {
        let loop = try EventLoop()
        try loop.startThread()
        let bus = try await loop.perform {
            let bus = try Bus.open(address: address)
            try bus.attach(to: loop)
            return bus
        }
        return TestClient(loop: loop, bus: bus)
    }

    func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await bus.call(
            destination: TestService.name, path: TestService.path, interface: TestService.interface,
            member: member, arguments: arguments, timeout: .seconds(10))
    }

    func close() async throws {
        try await loop.perform { [bus] in bus.close() }
        loop.exit()
    }
}

/// The tools the tests drive the service with; none written here.
enum Tools {
    static let busctl = "/usr/bin/busctl"
    static let gdbus = "/usr/bin/gdbus"
    static let python = "/usr/bin/python3"  // Debian's, which has python3-dbus
    static let setpriv = "/usr/bin/setpriv"
}

func withTimeout<T: Sendable>(
    _ timeout: Duration, _ what: String,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw HarnessError("timed out after \(timeout): \(what)")
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
