import CSystemd
import Glibc

// The sd-device C calls SystemdKit uses. Nothing here is public: the typed API is `Device`,
// `DeviceEnumerator` and `DeviceMonitor`.

extension Device {
    /// A snapshot of an `sd_device`. The corresponding C calls are `sd_device_get_syspath`,
    /// `sd_device_get_sysname`, `sd_device_get_subsystem`, `sd_device_get_devname`,
    /// `sd_device_get_devnum`, `sd_device_get_action`, `sd_device_get_is_initialized` and
    /// `sd_device_get_property_first`/`_next`.
    init?(_ device: OpaquePointer) {
        guard let syspath = Self.string(device, sd_device_get_syspath) else { return nil }
        let sysname = Self.string(device, sd_device_get_sysname) ?? String(syspath.split(separator: "/").last ?? "")
        var properties: [String: String] = [:]
        var value: UnsafePointer<CChar>?
        var key = sd_device_get_property_first(device, &value)
        while let k = key {
            properties[String(cString: k)] = value.map { String(cString: $0) } ?? ""
            key = sd_device_get_property_next(device, &value)
        }
        var devnum = dev_t()
        let hasDevnum = sd_device_get_devnum(device, &devnum) >= 0
        var action = sd_device_action_t(rawValue: 0)
        let hasAction = sd_device_get_action(device, &action) >= 0
        self.init(
            syspath: syspath, sysname: sysname,
            subsystem: Self.string(device, sd_device_get_subsystem),
            devnode: Self.string(device, sd_device_get_devname),
            devnum: hasDevnum ? UInt64(devnum) : nil,
            action: hasAction ? Action(action) : nil,
            isInitialized: sd_device_get_is_initialized(device) > 0,
            properties: properties)
    }

    private static func string(
        _ device: OpaquePointer,
        _ get: (OpaquePointer?, UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32
    ) -> String? {
        var text: UnsafePointer<CChar>?
        guard get(device, &text) >= 0, let text else { return nil }
        return String(cString: text)
    }
}

extension Device.Action {
    init?(_ action: sd_device_action_t) {
        switch action {
        case SD_DEVICE_ADD: self = .add
        case SD_DEVICE_REMOVE: self = .remove
        case SD_DEVICE_CHANGE: self = .change
        case SD_DEVICE_MOVE: self = .move
        case SD_DEVICE_ONLINE: self = .online
        case SD_DEVICE_OFFLINE: self = .offline
        case SD_DEVICE_BIND: self = .bind
        case SD_DEVICE_UNBIND: self = .unbind
        default: return nil
        }
    }
}
