import SystemPackage

/// Lists the devices that exist now, from sysfs and the udev database.
///
/// Without ``allowUninitialized``, a device with a `/dev` node is listed only once udev has
/// processed it (its rules ran): one udev has not finished yet arrives later as an `add` uevent
/// on a ``DeviceMonitor``. Start the monitor first, then enumerate, and treat a device seen
/// twice (by syspath) as one.
public struct DeviceEnumerator: Sendable {
    /// Subsystems to list (any of them), e.g. `["input"]`; empty lists every subsystem.
    public var subsystems: [String]
    /// Sysname globs (any of them), e.g. `["event*"]`; empty lists every name.
    public var sysnames: [String]
    /// Also list devices udev has not processed (their properties are the kernel's only).
    public var allowUninitialized: Bool

    public init(subsystems: [String] = [], sysnames: [String] = [], allowUninitialized: Bool = false) {
        self.subsystems = subsystems
        self.sysnames = sysnames
        self.allowUninitialized = allowUninitialized
    }

    /// The matching devices, in sd-device's order (sorted by syspath within a subsystem).
    ///
    /// The corresponding C calls are `sd_device_enumerator_new`,
    /// `sd_device_enumerator_add_match_subsystem`, `sd_device_enumerator_add_match_sysname`,
    /// `sd_device_enumerator_allow_uninitialized` and
    /// `sd_device_enumerator_get_device_first`/`_next`.
    public func devices() throws(Errno) -> [Device] {
        try CDevice.enumerate(subsystems: subsystems, sysnames: sysnames, allowUninitialized: allowUninitialized)
    }
}
