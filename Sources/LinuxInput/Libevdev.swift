// The one file of LinuxInput that calls C. Every function returns Swift values
// and throws SystemdKit's `Errno` for a failed call (libevdev reports `-errno`,
// syscalls set `errno`), so the typed API above never compares raw integers.

import CEvdev
import Glibc
import SystemdKit

enum Libevdev {
    // MARK: File descriptors

    static func open(_ path: String, flags: Int32) throws(Errno) -> Int32 {
        let fd = Glibc.open(path, flags)
        if fd < 0 { throw Errno.current }
        return fd
    }

    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)  // the fd is gone even on EINTR (Linux); nothing to retry
    }

    /// One `write(2)` of the whole buffer (retried on `EINTR`; continued only if the
    /// kernel took part of it, which uinput does only when an event fails mid-way).
    static func write(_ fd: Int32, _ events: UnsafeBufferPointer<input_event>) throws(Errno) {
        guard var base = UnsafeRawPointer(events.baseAddress) else { return }
        var left = events.count * MemoryLayout<input_event>.stride
        while left > 0 {
            let n = Glibc.write(fd, base, left)
            if n < 0 {
                if errno == EINTR { continue }
                throw Errno.current
            }
            left -= n
            base += n
        }
    }

    /// `read(2)` of whole `input_event`s; 0 when nothing is pending (`EAGAIN`).
    static func read(_ fd: Int32, into events: UnsafeMutableBufferPointer<input_event>) throws(Errno) -> Int {
        while true {
            let n = Glibc.read(fd, events.baseAddress, events.count * MemoryLayout<input_event>.stride)
            if n >= 0 { return n / MemoryLayout<input_event>.stride }
            switch errno {
            case EINTR: continue
            case EAGAIN: return 0
            default: throw Errno.current
            }
        }
    }

    // MARK: evdev

    static func newDevice(fd: Int32) throws(Errno) -> OpaquePointer {
        var dev: OpaquePointer?
        try Errno.check(libevdev_new_from_fd(fd, &dev))
        guard let dev else { throw Errno(rawValue: ENOMEM) }
        return dev
    }

    static func grab(fd: Int32, _ on: Bool) throws(Errno) {
        try Errno.check(cevdev_grab(fd, on ? 1 : 0))
    }

    static func setClockID(_ dev: OpaquePointer, _ clock: clockid_t) throws(Errno) {
        try Errno.check(libevdev_set_clock_id(dev, clock))
    }

    /// What `libevdev_next_event` returned.
    enum Next {
        case event(input_event)
        /// `SYN_DROPPED`: the device is in sync mode until `.empty` with `sync: true`.
        case dropped(input_event)
        case empty
    }

    static func nextEvent(_ dev: OpaquePointer, sync: Bool) throws(Errno) -> Next {
        var event = input_event()
        let flags = sync ? LIBEVDEV_READ_FLAG_SYNC.rawValue : LIBEVDEV_READ_FLAG_NORMAL.rawValue
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

    // MARK: uinput

    /// A libevdev description to fill in and hand to `createUInput`; freed by the caller.
    static func newBlankDevice() throws(Errno) -> OpaquePointer {
        guard let dev = libevdev_new() else { throw Errno(rawValue: ENOMEM) }
        return dev
    }

    static func enable(_ dev: OpaquePointer, type: UInt32, code: UInt32, data: UnsafeRawPointer?) throws(Errno) {
        try Errno.check(libevdev_enable_event_code(dev, type, code, data))
    }

    static func enable(_ dev: OpaquePointer, property: UInt32) throws(Errno) {
        try Errno.check(libevdev_enable_property(dev, property))
    }

    /// `libevdev_uinput_create_from_device` does not pass on the phys, but keeps
    /// what was set on the fd before it creates the device.
    static func setUInputPhys(_ uinputFD: Int32, _ phys: String) throws(Errno) {
        try Errno.check(cevdev_uinput_set_phys(uinputFD, phys))
    }

    static func createUInput(from dev: OpaquePointer, uinputFD: Int32) throws(Errno) -> OpaquePointer {
        var uidev: OpaquePointer?
        try Errno.check(libevdev_uinput_create_from_device(dev, uinputFD, &uidev))
        guard let uidev else { throw Errno(rawValue: ENOMEM) }
        return uidev
    }
}
