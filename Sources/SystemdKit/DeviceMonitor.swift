import CSystemd

/// Device uevents as they happen, on an ``EventLoop``.
///
/// The monitor listens to **udev's** netlink source, not the kernel's: a device arrives once
/// udev's rules have run, so its node has its permissions and its properties
/// (`ID_INPUT_*`, `LIBINPUT_CALIBRATION_MATRIX`) are final. With no udev running, it receives
/// nothing (sd-device's rule for containers).
///
/// Create, use and release it on the loop thread. The handler runs on the loop thread; the
/// monitor runs until ``stop()`` or until it is released.
public final class DeviceMonitor {
    private var handle: OpaquePointer?
    private let box: HandlerBox

    private final class HandlerBox {
        let handler: (Device) -> Void
        init(_ handler: @escaping (Device) -> Void) { self.handler = handler }
    }

    /// Starts monitoring devices of `subsystem` (and `devtype`, if given) on `loop`.
    /// `receiveBufferSize` is the socket's buffer in bytes: a burst of uevents larger than it
    /// is lost (the kernel drops them), so it is generous by default.
    ///
    /// The corresponding C calls are `sd_device_monitor_new` (udev's netlink group),
    /// `sd_device_monitor_set_receive_buffer_size`,
    /// `sd_device_monitor_filter_add_match_subsystem_devtype`, `sd_device_monitor_attach_event`
    /// and `sd_device_monitor_start`.
    public init(subsystem: String, devtype: String? = nil, loop: EventLoop, receiveBufferSize: Int = 8 << 20,
                _ handler: @escaping (Device) -> Void) throws(Errno) {
        box = HandlerBox(handler)
        var monitor: OpaquePointer?
        try Errno.check(sd_device_monitor_new(&monitor))
        handle = monitor
        do {
            // Best effort: without CAP_NET_ADMIN the kernel caps it at rmem_max.
            _ = sd_device_monitor_set_receive_buffer_size(monitor, receiveBufferSize)
            try Errno.check(sd_device_monitor_filter_add_match_subsystem_devtype(monitor, subsystem, devtype))
            try Errno.check(sd_device_monitor_attach_event(monitor, loop.handle))
            try Errno.check(sd_device_monitor_start(monitor, { _, device, userdata in
                guard let device, let userdata, let snapshot = Device(device) else { return 0 }
                Unmanaged<HandlerBox>.fromOpaque(userdata).takeUnretainedValue().handler(snapshot)
                return 0
            }, Unmanaged.passUnretained(box).toOpaque()))
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Stops monitoring and frees the socket. Safe to call twice.
    ///
    /// The corresponding C calls are `sd_device_monitor_stop` and `sd_device_monitor_unref`.
    public func stop() {
        guard let h = handle else { return }
        handle = nil
        sd_device_monitor_stop(h)
        sd_device_monitor_detach_event(h)
        sd_device_monitor_unref(h)
    }
}
