import CSystemd  // EPOLLET
import Glibc
import SystemPackage

/// Device uevents as they happen, on an ``EventLoop``.
///
/// The monitor listens to **udev's** netlink source, not the kernel's: a device arrives once
/// udev's rules have run, so its node has its permissions and its properties
/// (`ID_INPUT_*`, `LIBINPUT_CALIBRATION_MATRIX`) are final. With no udev running, it receives
/// nothing (sd-device's rule for containers).
///
/// When uevents come faster than the loop reads them, the kernel drops what does not fit in the
/// socket's buffer (netlink `ENOBUFS`). sd-device swallows that error, so the monitor watches
/// the socket's drop counter itself and calls `onOverflow`: some devices' events are lost, and
/// the caller should list the devices again (``DeviceEnumerator``).
///
/// Create, use and release it on the loop thread. The handlers run on the loop thread; the
/// monitor runs until ``stop()`` or until it is released.
public final class DeviceMonitor {
    private var handle: OpaquePointer?
    private let box: HandlerBox
    private var monitorBox: CDevice.MonitorBox?
    private var overflowWatch: OpaquePointer?
    private var overflowBox: CEvent.IOBox?
    private var overflowFD: Int32 = -1

    private final class HandlerBox {
        let handler: (Device) -> Void
        let onOverflow: ((UInt32) -> Void)?
        /// The socket's drop count when it was last read.
        var drops: UInt32 = 0
        /// The monitor's socket (a duplicate), once drops are watched.
        var socket: Int32 = -1
        init(_ handler: @escaping (Device) -> Void, onOverflow: ((UInt32) -> Void)?) {
            self.handler = handler
            self.onOverflow = onOverflow
        }

        /// Calls `onOverflow` if the kernel dropped messages since the last look.
        func checkDrops() {
            guard socket >= 0, let onOverflow, let now = DeviceMonitor.drops(socket), now != drops else { return }
            let lost = now &- drops
            drops = now
            onOverflow(lost)
        }
    }

    /// Starts monitoring devices of `subsystem` (and `devtype`, if given) on `loop`.
    /// `receiveBufferSize` is the socket's buffer in bytes: a burst of uevents larger than it
    /// is lost (the kernel drops them), so it is generous by default. `onOverflow` is called
    /// with the number of uevents lost, after the kernel dropped some, before the next
    /// uevent is handed to `handler`.
    ///
    /// The corresponding C calls are `sd_device_monitor_new` (udev's netlink group),
    /// `sd_device_monitor_set_receive_buffer_size`,
    /// `sd_device_monitor_filter_add_match_subsystem_devtype`, `sd_device_monitor_attach_event`
    /// and `sd_device_monitor_start`; for overflows, `sd_event_source_get_io_fd`, `dup(2)`,
    /// `sd_event_add_io` with `SD_EVENT_PRIORITY_IMPORTANT`, and `getsockopt(SO_MEMINFO)`.
    public init(
        subsystem: String, devtype: String? = nil, loop: EventLoop, receiveBufferSize: Int = 8 << 20,
        onOverflow: ((_ lost: UInt32) -> Void)? = nil,
        _ handler: @escaping (Device) -> Void
    ) throws(Errno) {
        box = HandlerBox(handler, onOverflow: onOverflow)
        let box = box
        let monitorBox = CDevice.MonitorBox { device in
            // A message that arrived while this one was queued may have been dropped.
            box.checkDrops()
            box.handler(device)
        }
        self.monitorBox = monitorBox
        handle = try CDevice.startMonitor(
            subsystem: subsystem, devtype: devtype, event: loop.handle, receiveBufferSize: receiveBufferSize,
            box: monitorBox)
        do {
            if onOverflow != nil { try watchOverflows(loop: loop) }
        } catch {
            stop()
            throw error
        }
    }

    /// Watches the monitor's socket for drops. The kernel drops a message only while others
    /// wait in the queue, so the count is read each time sd-device hands over a device; and,
    /// for messages sd-device reads and filters out, through a second fd on the same socket at
    /// a higher priority than sd-device's own source, woken (edge-triggered, never spinning) by
    /// each arriving message and by the first `ENOBUFS` of a congestion, which sd-device reads
    /// and swallows.
    private func watchOverflows(loop: EventLoop) throws(Errno) {
        // libsystemd 252 has no sd_device_monitor_get_fd; the started monitor's io source has it.
        guard let handle else { throw .canceled }
        let socket = try CDevice.monitorSocket(handle)
        overflowFD = fcntl(socket, F_DUPFD_CLOEXEC, 3)
        guard overflowFD >= 0 else { throw Errno.last }
        box.drops = Self.drops(overflowFD) ?? 0
        box.socket = overflowFD
        let box = box
        let watch = CEvent.IOBox { _ in box.checkDrops() }
        overflowBox = watch
        let source = try CEvent.addIO(
            loop.handle, fd: overflowFD, events: IOEvents.readable.rawValue | UInt32(EPOLLET.rawValue), box: watch)
        overflowWatch = source
        try CEvent.setPriorityImportant(source)
    }

    /// The socket's count of dropped messages (`SK_MEMINFO_DROPS` of `SO_MEMINFO`, Linux 4.12).
    fileprivate static func drops(_ fd: Int32) -> UInt32? {
        let skMeminfoVars = 9, skMeminfoDrops = 8, soMeminfo: Int32 = 55  // linux/sock_diag.h, asm-generic/socket.h
        var info = [UInt32](repeating: 0, count: skMeminfoVars)
        var length = socklen_t(skMeminfoVars * MemoryLayout<UInt32>.size)
        let r = info.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, soMeminfo, $0.baseAddress, &length) }
        guard r == 0, Int(length) > skMeminfoDrops * MemoryLayout<UInt32>.size else { return nil }
        return info[skMeminfoDrops]
    }

    deinit { stop() }

    /// Stops monitoring and frees the socket. Safe to call twice.
    ///
    /// The corresponding C calls are `sd_device_monitor_stop` and `sd_device_monitor_unref`.
    public func stop() {
        if let overflowWatch { CEvent.disableUnref(overflowWatch) }
        overflowWatch = nil
        if overflowFD >= 0 { close(overflowFD) }
        overflowFD = -1
        box.socket = -1
        guard let h = handle else { return }
        handle = nil
        CDevice.stopMonitor(h)
    }
}
