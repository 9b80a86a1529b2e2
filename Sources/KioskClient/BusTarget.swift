import SystemPackage
import SystemdKit

/// Which bus kioskd is reached on.
public enum BusTarget: Hashable, Sendable {
    /// The system bus, or the one `$DBUS_SYSTEM_BUS_ADDRESS` names (how tests and `make demo`
    /// point everything at a private bus).
    case system
    /// The system bus of `host` (`user@host`) over SSH, as `systemctl -H` does.
    case remote(host: String)
    /// A bus address, e.g. `unix:path=/run/dbus/system_bus_socket`.
    case address(String)

    /// Opens a connection. The corresponding C calls are `sd_bus_open_system`,
    /// `sd_bus_open_system_remote` and `sd_bus_new` + `sd_bus_set_address` + `sd_bus_start`.
    func open() throws(KioskClientError) -> Bus {
        do {
            switch self {
            case .system: return try Bus.openSystem()
            case .remote(let host): return try Bus.openSystem(remoteHost: host)
            case .address(let address): return try Bus.open(address: address)
            }
        } catch {
            throw KioskClientError(.busUnavailable, "Could not connect to \(self): \(Errno.reason(of: error)).")
        }
    }
}

extension BusTarget: CustomStringConvertible {
    public var description: String {
        switch self {
        case .system: "the system bus"
        case .remote(let host): "the system bus of \(host)"
        case .address(let address): "the bus at \(address)"
        }
    }
}
