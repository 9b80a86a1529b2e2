import SystemPackage

/// polkit's authority (`org.freedesktop.PolicyKit1`), asked asynchronously so the loop never
/// blocks, as systemd's daemons do.
public struct PolkitAuthority {
    public static let busName = "org.freedesktop.PolicyKit1"
    public static let path = "/org/freedesktop/PolicyKit1/Authority"
    public static let interface = "org.freedesktop.PolicyKit1.Authority"

    /// The outcome of a check.
    public enum Result: Equatable, Sendable {
        /// Authorized.
        case allowed
        /// Not authorized, and authenticating would not help.
        case denied
        /// Not authorized now; authenticating (an agent prompt) could authorize.
        case challenge
        /// No polkit on this bus; the caller decides (kioskd: only root).
        case unavailable
    }

    private let bus: Bus

    public init(bus: Bus) { self.bus = bus }

    /// Checks whether the process owning bus name `busName` (a caller's unique name) may do
    /// `action`. `completion` runs on the loop; errors other than "no polkit" are passed on.
    /// The corresponding call is `org.freedesktop.PolicyKit1.Authority.CheckAuthorization` with a
    /// `("system-bus-name", {"name": <busName>})` subject, sent with `sd_bus_call_async`.
    public func checkAuthorization(
        action: String, busName: String, details: [String: String] = [:],
        allowInteraction: Bool = false,
        completion: @escaping (Swift.Result<Result, any Error>) -> Void
    ) throws(Errno) {
        let call = try bus.makeMethodCall(
            destination: Self.busName, path: Self.path,
            interface: Self.interface, member: "CheckAuthorization")
        // CheckAuthorization(in (sa{sv}) subject, in s action_id, in a{ss} details,
        //                    in u flags, in s cancellation_id, out (bba{ss}) result)
        try call.append(
            .structure([.string("system-bus-name"), .vardict([("name", .string(busName))])]),
            .string(action),
            .array(
                elementSignature: "{ss}",
                details.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .string($0.value)) }),
            .uint32(allowInteraction ? 1 : 0),
            .string(""))
        try bus.callAsync(call) { reply in
            switch reply {
            case .success(let message):
                completion(Swift.Result { try Self.decode(message.read(signature: "(bba{ss})")) })
            case .failure(let error as BusError)
            where [BusError.serviceUnknown, BusError.nameHasNoOwner, "org.freedesktop.DBus.Error.ServiceNotFound"]
                .contains(error.name):
                completion(.success(.unavailable))
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }

    /// The same check, awaited from any task.
    public func checkAuthorization(
        action: String, busName: String, details: [String: String] = [:],
        allowInteraction: Bool = false
    ) async throws -> Result {
        guard let loop = bus.loop else { throw Errno.socketNotConnected }
        let bus = self.bus
        return try await withCheckedThrowingContinuation { continuation in
            loop.execute {
                do {
                    try PolkitAuthority(bus: bus).checkAuthorization(
                        action: action, busName: busName, details: details, allowInteraction: allowInteraction
                    ) { continuation.resume(with: $0) }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    static func decode(_ values: [DBusValue]) throws -> Result {
        guard let fields = values.first?.fields, fields.count == 3,
            let authorized = fields[0].bool, let challenge = fields[1].bool
        else {
            throw BusError.invalidArgs("CheckAuthorization returned \(values), expected (bba{ss}).")
        }
        return authorized ? .allowed : (challenge ? .challenge : .denied)
    }
}
