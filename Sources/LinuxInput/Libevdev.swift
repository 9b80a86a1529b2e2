// The one file of LinuxInput that calls C. Every function returns Swift values
// and throws swift-system's `Errno` for a failed call (libevdev reports `-errno`,
// syscalls set `errno`), so the typed API above never compares raw integers. The
// evdev and uinput nodes are opened, read, written and closed as swift-system
// `FileDescriptor`s.

import CEvdev
import Glibc
import KioskInput
import SystemPackage
import SystemdKit

enum Libevdev {
    // MARK: File descriptors

    /// `open(2)`, non-blocking and close-on-exec, tried once (`EINTR` is an error).
    static func open(_ path: String, _ mode: FileDescriptor.AccessMode) throws(Errno) -> FileDescriptor {
        try Errno.typed {
            try FileDescriptor.open(
                FilePath(path), mode, options: [.nonBlocking, .closeOnExec], retryOnInterrupt: false)
        }
    }

    static func close(_ fd: FileDescriptor) {
        try? fd.close()  // the fd is gone even on EINTR (Linux); nothing to retry
    }

    /// One `write(2)` of the whole buffer (retried on `EINTR`; continued only if the
    /// kernel took part of it, which uinput does only when an event fails mid-way).
    ///
    /// `write(2)` itself, not swift-system's `writeAll`: that is generic over any sequence of
    /// bytes and not specialized across the module boundary, so every frame paid for runtime
    /// generic-metadata lookups and witness calls (docs/benchmarks.md § Latency). And the
    /// system call itself (`cevdev_write`), not glibc's cancellation-point wrapper.
    ///
    /// The usual case, the whole buffer taken at once, returns after one comparison; what is
    /// left after an interruption or a partial write is written out of line (inline, the
    /// slicing and its bounds checks cost about 40 instructions on every frame).
    @inline(__always)
    static func write(_ fd: FileDescriptor, _ events: UnsafeBufferPointer<input_event>) throws(Errno) {
        let size = events.count * MemoryLayout<input_event>.stride
        guard size > 0 else { return }
        let n = cevdev_write(fd.rawValue, events.baseAddress, size)
        if n == size { return }
        try writeRest(fd, UnsafeRawBufferPointer(events), afterWriting: n)
    }

    /// The rest of ``write(_:_:)`` after a first `write(2)` that returned `first` (-errno, or
    /// fewer bytes than `buffer` holds).
    @inline(never)
    private static func writeRest(
        _ fd: FileDescriptor, _ buffer: UnsafeRawBufferPointer, afterWriting first: Int
    )
        throws(Errno)
    {
        var rest = buffer
        var n = first
        while true {
            if n >= 0 {
                rest = UnsafeRawBufferPointer(rebasing: rest[n...])
                if rest.isEmpty { return }
            } else if n != -Int(EINTR) {
                throw Errno(rawValue: Int32(-n))
            }
            n = cevdev_write(fd.rawValue, rest.baseAddress, rest.count)
        }
    }

    /// `read(2)` of whole `input_event`s (retried on `EINTR`); 0 when nothing is pending (`EAGAIN`).
    /// `read(2)` itself (`cevdev_read`), not swift-system's nor glibc's, for the reasons
    /// ``write(_:_:)`` gives.
    static func read(_ fd: FileDescriptor, into events: UnsafeMutableBufferPointer<input_event>) throws(Errno) -> Int {
        while true {
            let n = cevdev_read(fd.rawValue, events.baseAddress, events.count * MemoryLayout<input_event>.stride)
            if n >= 0 { return n / MemoryLayout<input_event>.stride }
            switch Errno(rawValue: Int32(-n)) {
            case .interrupted: continue
            case .resourceTemporarilyUnavailable: return 0
            case let error: throw error
            }
        }
    }

    /// The device number (`st_rdev`) of what `fd` is open on.
    static func deviceNumber(_ fd: FileDescriptor) throws(Errno) -> UInt64 {
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0 else { throw Errno.last }
        return UInt64(info.st_rdev)
    }

    // MARK: evdev

    static func newDevice(fd: FileDescriptor) throws(Errno) -> OpaquePointer {
        var dev: OpaquePointer?
        try Errno.check(libevdev_new_from_fd(fd.rawValue, &dev))
        guard let dev else { throw Errno(rawValue: ENOMEM) }
        return dev
    }

    static func free(_ dev: OpaquePointer) {
        libevdev_free(dev)
    }

    /// `ioctl(EVIOCGPHYS)` on the fd, before libevdev reads the device; nil if it has none.
    static func phys(fd: FileDescriptor) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let length = buffer.withUnsafeMutableBufferPointer { cevdev_phys(fd.rawValue, $0.baseAddress, $0.count) }
        guard length > 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func grab(fd: FileDescriptor, _ on: Bool) throws(Errno) {
        try Errno.check(cevdev_grab(fd.rawValue, on ? 1 : 0))
    }

    static func setClockID(_ dev: OpaquePointer, _ clock: clockid_t) throws(Errno) {
        try Errno.check(libevdev_set_clock_id(dev, clock))
    }

    /// `libevdev_next_event` with `LIBEVDEV_READ_FLAG_FORCE_SYNC`: libevdev treats the device as
    /// if its buffer had overflowed. The sync reads (``nextEvent(_:sync:)`` with `sync: true`)
    /// that follow drain what the kernel still holds and bring libevdev's copy of the state up
    /// to date through ioctls.
    static func forceSync(_ dev: OpaquePointer) throws(Errno) {
        var event = input_event()
        let flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue | LIBEVDEV_READ_FLAG_FORCE_SYNC.rawValue
        let rc = libevdev_next_event(dev, flags, &event)
        if rc < 0 { try Errno.check(rc) }
    }

    /// What `libevdev_next_event` returned.
    enum Next {
        case event(input_event)
        /// `SYN_DROPPED`: the device is in sync mode until `.empty` with `sync: true`.
        case dropped(input_event)
        case empty
    }

    /// The next event; `.empty` when libevdev holds none and the (non-blocking) fd has none.
    ///
    /// Outside sync mode the flags are `NORMAL | BLOCKING` although the fd is `O_NONBLOCK`:
    /// with `NORMAL` alone libevdev calls `read(2)` on every call, even with events of the last
    /// read still queued (4 reads for a 3-event frame); with `BLOCKING` it reads only when its
    /// queue is empty, and on a non-blocking fd that read returns `EAGAIN` when nothing is
    /// pending, which comes back as `.empty`, so nothing ever blocks.
    static func nextEvent(_ dev: OpaquePointer, sync: Bool) throws(Errno) -> Next {
        var event = input_event()
        let normal = LIBEVDEV_READ_FLAG_NORMAL.rawValue | LIBEVDEV_READ_FLAG_BLOCKING.rawValue
        let flags = sync ? LIBEVDEV_READ_FLAG_SYNC.rawValue : normal
        let rc = libevdev_next_event(dev, flags, &event)
        switch rc {
        case Int32(LIBEVDEV_READ_STATUS_SUCCESS.rawValue): return .event(event)
        case Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue): return sync ? .event(event) : .dropped(event)
        case -EAGAIN: return .empty
        default:
            try Errno.check(rc)
            return .empty
        }
    }

    static func setLED(_ dev: OpaquePointer, code: UInt32, on: Bool) throws(Errno) {
        try Errno.check(libevdev_kernel_set_led_value(dev, code, on ? LIBEVDEV_LED_ON : LIBEVDEV_LED_OFF))
    }

    static func string(_ cString: UnsafePointer<CChar>?) -> String? {
        cString.map { String(cString: $0) }
    }

    // MARK: evdev: what libevdev read of the device

    static func name(_ dev: OpaquePointer) -> String { string(libevdev_get_name(dev)) ?? "" }
    static func phys(_ dev: OpaquePointer) -> String? { string(libevdev_get_phys(dev)) }
    static func uniq(_ dev: OpaquePointer) -> String? { string(libevdev_get_uniq(dev)) }

    static func id(_ dev: OpaquePointer) -> DeviceDescription.ID {
        DeviceDescription.ID(
            bus: UInt16(truncatingIfNeeded: libevdev_get_id_bustype(dev)),
            vendor: UInt16(truncatingIfNeeded: libevdev_get_id_vendor(dev)),
            product: UInt16(truncatingIfNeeded: libevdev_get_id_product(dev)),
            version: UInt16(truncatingIfNeeded: libevdev_get_id_version(dev)))
    }

    static func hasType(_ dev: OpaquePointer, _ type: UInt16) -> Bool {
        libevdev_has_event_type(dev, UInt32(type)) != 0
    }

    static func hasCode(_ dev: OpaquePointer, type: UInt16, code: UInt16) -> Bool {
        libevdev_has_event_code(dev, UInt32(type), UInt32(code)) != 0
    }

    static func hasProperty(_ dev: OpaquePointer, _ property: UInt16) -> Bool {
        libevdev_has_property(dev, UInt32(property)) != 0
    }

    /// The highest code of an event type, or nil for a type libevdev does not know.
    static func maxCode(type: UInt16) -> UInt16? {
        let max = libevdev_event_type_get_max(UInt32(type))
        return max >= 0 ? UInt16(max) : nil
    }

    /// An absolute axis's range and current value, or nil if the device has no such axis.
    static func absInfo(_ dev: OpaquePointer, code: UInt16) -> (info: DeviceDescription.AbsInfo, value: Int32)? {
        guard let abs = libevdev_get_abs_info(dev, UInt32(code))?.pointee else { return nil }
        let info = DeviceDescription.AbsInfo(
            minimum: abs.minimum, maximum: abs.maximum, fuzz: abs.fuzz, flat: abs.flat, resolution: abs.resolution)
        return (info, abs.value)
    }

    static func value(_ dev: OpaquePointer, type: UInt16, code: UInt16) -> Int32 {
        libevdev_get_event_value(dev, UInt32(type), UInt32(code))
    }

    /// The number of multitouch slots; 0 for a device without `ABS_MT_SLOT`.
    static func slotCount(_ dev: OpaquePointer) -> Int {
        Int(max(0, libevdev_get_num_slots(dev)))
    }

    static func slotValue(_ dev: OpaquePointer, slot: Int, code: UInt16) -> Int32 {
        libevdev_get_slot_value(dev, UInt32(slot), UInt32(code))
    }

    static func currentSlot(_ dev: OpaquePointer) -> Int {
        Int(max(0, libevdev_get_current_slot(dev)))
    }

    // MARK: uinput

    /// A libevdev description to fill in and hand to `createUInput`; freed by the caller.
    static func newBlankDevice() throws(Errno) -> OpaquePointer {
        guard let dev = libevdev_new() else { throw Errno(rawValue: ENOMEM) }
        return dev
    }

    /// uinput's name limit (`UINPUT_MAX_NAME_SIZE`), the NUL included.
    static var uinputMaxNameSize: Int { cevdev_uinput_max_name_size() }

    static func setName(_ dev: OpaquePointer, _ name: String) { libevdev_set_name(dev, name) }
    static func setPhys(_ dev: OpaquePointer, _ phys: String) { libevdev_set_phys(dev, phys) }

    static func setID(_ dev: OpaquePointer, _ id: DeviceDescription.ID) {
        libevdev_set_id_bustype(dev, Int32(id.bus))
        libevdev_set_id_vendor(dev, Int32(id.vendor))
        libevdev_set_id_product(dev, Int32(id.product))
        libevdev_set_id_version(dev, Int32(id.version))
    }

    static func enable(_ dev: OpaquePointer, type: UInt32, code: UInt32, data: UnsafeRawPointer?) throws(Errno) {
        try Errno.check(libevdev_enable_event_code(dev, type, code, data))
    }

    static func enable(_ dev: OpaquePointer, property: UInt32) throws(Errno) {
        try Errno.check(libevdev_enable_property(dev, property))
    }

    /// `libevdev_uinput_create_from_device` does not pass on the phys, but keeps
    /// what was set on the fd before it creates the device.
    static func setUInputPhys(_ uinputFD: FileDescriptor, _ phys: String) throws(Errno) {
        try Errno.check(cevdev_uinput_set_phys(uinputFD.rawValue, phys))
    }

    static func createUInput(from dev: OpaquePointer, uinputFD: FileDescriptor) throws(Errno) -> OpaquePointer {
        var uidev: OpaquePointer?
        try Errno.check(libevdev_uinput_create_from_device(dev, uinputFD.rawValue, &uidev))
        guard let uidev else { throw Errno(rawValue: ENOMEM) }
        return uidev
    }

    static func devnode(_ uidev: OpaquePointer) -> String? { string(libevdev_uinput_get_devnode(uidev)) }
    static func syspath(_ uidev: OpaquePointer) -> String? { string(libevdev_uinput_get_syspath(uidev)) }

    /// `UI_DEV_DESTROY`; does not close the uinput fd.
    static func destroyUInput(_ uidev: OpaquePointer) { libevdev_uinput_destroy(uidev) }

    // MARK: The kernel's uevents (netlink)

    /// `socket(AF_NETLINK, …, NETLINK_KOBJECT_UEVENT)` bound to the kernel's group.
    static func ueventSocket(receiveBufferSize: Int) throws(Errno) -> FileDescriptor {
        let fd = cevdev_uevent_socket(Int32(clamping: receiveBufferSize))
        guard fd >= 0 else { throw Errno(rawValue: -fd) }
        return FileDescriptor(rawValue: fd)
    }

    /// The next datagram the kernel sent (nil when none is left); others are skipped.
    static func receiveUevent(_ fd: FileDescriptor, into buffer: inout [UInt8]) throws(Errno) -> Int? {
        while true {
            let length = buffer.withUnsafeMutableBytes { cevdev_uevent_receive(fd.rawValue, $0.baseAddress, $0.count) }
            if length > 0 { return length }
            if length == 0 { continue }
            let error = Errno(rawValue: Int32(-length))
            if error == .resourceTemporarilyUnavailable { return nil }
            if error == .interrupted { continue }
            throw error
        }
    }

    /// `clock_gettime(CLOCK_MONOTONIC)` in µs.
    static func monotonicMicroseconds() -> UInt64 { UInt64(cevdev_monotonic_usec()) }
}
