// The kernel's own uevent for a device, as its netlink datagram carries it: what kioskd needs to
// take an evdev node before udev has run its rules for it. Pure: parsed and judged on the host.

/// One kernel uevent: `add@/devices/…/input7/event3\0ACTION=add\0DEVPATH=…\0SUBSYSTEM=input\0
/// MAJOR=13\0MINOR=67\0DEVNAME=input/event3\0SEQNUM=…\0`.
public struct KernelUevent: Equatable, Sendable {
    public var action: String
    /// `/devices/…/event3`, without `/sys`.
    public var devpath: String
    public var subsystem: String?
    /// `input/event3`, relative to /dev.
    public var devname: String?
    public var major: UInt32?
    public var minor: UInt32?

    public init(
        action: String, devpath: String, subsystem: String? = nil, devname: String? = nil, major: UInt32? = nil,
        minor: UInt32? = nil
    ) {
        self.action = action; self.devpath = devpath; self.subsystem = subsystem; self.devname = devname
        self.major = major; self.minor = minor
    }

    /// Parses a datagram the kernel sent (nil for anything else: udev's own messages start with
    /// "libudev", and a kernel message always has `ACTION=` and `DEVPATH=`).
    public init?(datagram: some Collection<UInt8>) {
        let fields = datagram.split(separator: 0, omittingEmptySubsequences: true)
            .map { String(decoding: $0, as: UTF8.self) }
        guard let header = fields.first, header.contains("@") else { return nil }
        var values: [Substring: Substring] = [:]
        for field in fields.dropFirst() {
            guard let equals = field.firstIndex(of: "=") else { continue }
            values[field[..<equals]] = field[field.index(after: equals)...]
        }
        guard let action = values["ACTION"], let devpath = values["DEVPATH"] else { return nil }
        self.init(
            action: String(action), devpath: String(devpath), subsystem: values["SUBSYSTEM"].map(String.init),
            devname: values["DEVNAME"].map(String.init), major: values["MAJOR"].flatMap { UInt32($0) },
            minor: values["MINOR"].flatMap { UInt32($0) })
    }

    /// The syspath sd-device knows the device by.
    public var syspath: String { "/sys" + devpath }

    /// `/dev/input/eventN` for an evdev node (subsystem input, devname `input/event…`), else nil.
    public var eventNode: String? {
        guard subsystem == "input", let devname, devname.hasPrefix("input/event"), !devname.contains("..") else {
            return nil
        }
        return "/dev/" + devname
    }

    /// The device number as `stat`'s `st_rdev` and sd-device's devnum have it (glibc's makedev).
    public var devnum: UInt64? {
        guard let major, let minor else { return nil }
        let ma = UInt64(major), mi = UInt64(minor)
        return ((ma & 0xffff_f000) << 32) | ((ma & 0xfff) << 8) | ((mi & 0xffff_ff00) << 12) | (mi & 0xff)
    }
}
