import CSystemd
import Glibc
import SystemPackage

/// The sd-device C calls SystemdKit uses, each turning `-errno` into a thrown `Errno`. Nothing
/// here is public: the typed API is `Device`, `DeviceEnumerator` and `DeviceMonitor`.
enum CDevice {
    /// `sd_device_enumerator_*`: the devices matching every subsystem and sysname given.
    static func enumerate(
        subsystems: [String], sysnames: [String], allowUninitialized: Bool
    ) throws(Errno)
        -> [Device]
    {
        var enumerator: OpaquePointer?
        try Errno.check(sd_device_enumerator_new(&enumerator))
        defer { sd_device_enumerator_unref(enumerator) }
        for subsystem in subsystems {
            try Errno.check(sd_device_enumerator_add_match_subsystem(enumerator, subsystem, 1))
        }
        for sysname in sysnames {
            try Errno.check(sd_device_enumerator_add_match_sysname(enumerator, sysname))
        }
        if allowUninitialized {
            try Errno.check(sd_device_enumerator_allow_uninitialized(enumerator))
        }
        var result: [Device] = []
        var device = sd_device_enumerator_get_device_first(enumerator)
        while let d = device {
            if let snapshot = Device(d) { result.append(snapshot) }
            device = sd_device_enumerator_get_device_next(enumerator)
        }
        return result
    }

    // MARK: monitors

    /// What a monitor calls with each device; the `DeviceMonitor` keeps it.
    final class MonitorBox {
        let handler: (Device) -> Void
        init(_ handler: @escaping (Device) -> Void) { self.handler = handler }
    }

    /// `sd_device_monitor_new`, `_set_receive_buffer_size` (best effort: without
    /// CAP_NET_ADMIN the kernel caps it at rmem_max), `_filter_add_match_subsystem_devtype`,
    /// `_attach_event` and `_start`. On failure the half-made monitor is freed.
    static func startMonitor(
        subsystem: String, devtype: String?, event: OpaquePointer, receiveBufferSize: Int, box: MonitorBox
    ) throws(Errno) -> OpaquePointer {
        var m: OpaquePointer?
        try Errno.check(sd_device_monitor_new(&m))
        let monitor = m!
        do {
            _ = sd_device_monitor_set_receive_buffer_size(monitor, receiveBufferSize)
            try Errno.check(sd_device_monitor_filter_add_match_subsystem_devtype(monitor, subsystem, devtype))
            try Errno.check(sd_device_monitor_attach_event(monitor, event))
            try Errno.check(
                sd_device_monitor_start(
                    monitor,
                    { _, device, userdata in
                        guard let device, let userdata, let snapshot = Device(device) else { return 0 }
                        Unmanaged<MonitorBox>.fromOpaque(userdata).takeUnretainedValue().handler(snapshot)
                        return 0
                    }, Unmanaged.passUnretained(box).toOpaque()))
        } catch {
            stopMonitor(monitor)
            throw error
        }
        return monitor
    }

    /// The started monitor's socket: libsystemd 252 has no `sd_device_monitor_get_fd`, so
    /// `sd_event_source_get_io_fd` of `sd_device_monitor_get_event_source`.
    static func monitorSocket(_ monitor: OpaquePointer) throws(Errno) -> Int32 {
        try Errno.check(sd_event_source_get_io_fd(sd_device_monitor_get_event_source(monitor)))
    }

    /// `sd_device_monitor_stop`, `_detach_event` and `_unref`.
    static func stopMonitor(_ monitor: OpaquePointer) {
        sd_device_monitor_stop(monitor)
        sd_device_monitor_detach_event(monitor)
        sd_device_monitor_unref(monitor)
    }
}

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
