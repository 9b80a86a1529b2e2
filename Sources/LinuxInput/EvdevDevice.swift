import CEvdev
import KioskInput
import Glibc

/// An open evdev node (`/dev/input/eventN`) with libevdev's copy of its state.
///
/// The fd is non-blocking; a loop polls ``fileDescriptor`` for input and calls
/// ``readEvents(into:)``. The device is grabbed only after ``grab()``; closing
/// (``close()`` or deinit) releases the grab. Not thread-safe: one loop owns it.
public final class EvdevDevice {
    /// How the node is opened. Writing LED state back needs `.readWrite`
    /// (`write(2)` on a read-only fd fails with `EBADF`).
    public enum Access: Sendable {
        case readOnly
        case readWrite
    }

    public let path: String
    /// The evdev fd to poll for `POLLIN`; -1 once closed.
    public private(set) var fileDescriptor: Int32
    /// Whether this fd holds the grab (``grab()`` succeeded and ``ungrab()`` was not called since).
    public private(set) var isGrabbed = false
    private var dev: OpaquePointer?

    /// Opens `path` with `O_NONBLOCK | O_CLOEXEC` and reads the device's full
    /// state (name, ids, bits, properties, axes, key and slot state).
    ///
    /// The corresponding C calls are `open(2)` and `libevdev_new_from_fd`.
    public init(path: String, access: Access = .readWrite) throws(EvdevError) {
        self.path = path
        let mode = access == .readWrite ? O_RDWR : O_RDONLY
        do {
            fileDescriptor = try Libevdev.open(path, flags: mode | O_NONBLOCK | O_CLOEXEC)
        } catch {
            throw EvdevError(error, path: path, operation: "open")
        }
        do {
            dev = try Libevdev.newDevice(fd: fileDescriptor)
        } catch {
            Libevdev.close(fileDescriptor)
            throw EvdevError(error, path: path, operation: "libevdev_new_from_fd")
        }
    }

    deinit { close() }

    /// Frees libevdev's state and closes the fd, which also releases the grab.
    /// Safe to call twice.
    ///
    /// The corresponding C calls are `libevdev_free` and `close(2)`.
    public func close() {
        if let dev { libevdev_free(dev) }
        dev = nil
        if fileDescriptor >= 0 { Libevdev.close(fileDescriptor) }
        fileDescriptor = -1
        isGrabbed = false
    }

    // MARK: Identity and capabilities

    /// Name, phys, uniq, ids and capabilities, as read at open time.
    public var info: DeviceInfo {
        guard let dev else { return DeviceInfo(name: "", id: InputDeviceID(bustype: 0, vendor: 0, product: 0, version: 0), capabilities: DeviceCapabilities()) }
        return DeviceInfo(
            name: Libevdev.string(libevdev_get_name(dev)) ?? "",
            phys: Libevdev.string(libevdev_get_phys(dev)),
            uniq: Libevdev.string(libevdev_get_uniq(dev)),
            id: InputDeviceID(
                bustype: UInt16(truncatingIfNeeded: libevdev_get_id_bustype(dev)),
                vendor: UInt16(truncatingIfNeeded: libevdev_get_id_vendor(dev)),
                product: UInt16(truncatingIfNeeded: libevdev_get_id_product(dev)),
                version: UInt16(truncatingIfNeeded: libevdev_get_id_version(dev))),
            capabilities: capabilities)
    }

    /// The device's event codes, properties and axis ranges.
    ///
    /// The corresponding C calls are `libevdev_has_event_code`,
    /// `libevdev_has_property` and `libevdev_get_abs_info`.
    public var capabilities: DeviceCapabilities {
        var caps = DeviceCapabilities()
        guard let dev else { return caps }
        for type in 1...UInt32(EV_MAX) where libevdev_has_event_type(dev, type) != 0 {
            let max = libevdev_event_type_get_max(type)
            guard max >= 0 else { continue }
            var codes = Set<UInt16>()
            for code in 0...UInt32(max) where libevdev_has_event_code(dev, type, code) != 0 {
                codes.insert(UInt16(code))
                if type == UInt32(EV_ABS), let info = libevdev_get_abs_info(dev, code) {
                    caps.axes[UInt16(code)] = AbsoluteAxis(
                        value: info.pointee.value, minimum: info.pointee.minimum, maximum: info.pointee.maximum,
                        fuzz: info.pointee.fuzz, flat: info.pointee.flat, resolution: info.pointee.resolution)
                }
            }
            caps.codes[UInt16(type)] = codes
        }
        for prop in 0...UInt32(INPUT_PROP_MAX) where libevdev_has_property(dev, prop) != 0 {
            caps.properties.insert(UInt16(prop))
        }
        return caps
    }

    /// The current value of a code as libevdev tracks it (a key's 0/1, an axis
    /// value), or nil if the device lacks the code.
    ///
    /// The corresponding C call is `libevdev_fetch_event_value`.
    public func value(type: UInt16, code: UInt16) -> Int32? {
        guard let dev else { return nil }
        var value: Int32 = 0
        return libevdev_fetch_event_value(dev, UInt32(type), UInt32(code), &value) != 0 ? value : nil
    }

    /// The number of multitouch slots, or nil for a device without `ABS_MT_SLOT`.
    ///
    /// The corresponding C call is `libevdev_get_num_slots`.
    public var slotCount: Int? {
        guard let dev else { return nil }
        let n = libevdev_get_num_slots(dev)
        return n < 0 ? nil : Int(n)
    }

    /// The value of an `ABS_MT_*` code in a slot (e.g. its tracking id, -1 if empty).
    ///
    /// The corresponding C call is `libevdev_fetch_slot_value`.
    public func slotValue(slot: Int, code: UInt16) -> Int32? {
        guard let dev else { return nil }
        var value: Int32 = 0
        return libevdev_fetch_slot_value(dev, UInt32(slot), UInt32(code), &value) != 0 ? value : nil
    }

    // MARK: Grab

    /// Takes the device for this fd alone: while grabbed, no other reader (the
    /// compositor, logind, the VT keyboard handler, SysRq) sees its events.
    /// Throws ``EvdevError/Code-swift.struct/busy`` if another fd holds the grab.
    ///
    /// The corresponding C call is `ioctl(EVIOCGRAB, 1)`.
    public func grab() throws(EvdevError) {
        do {
            try Libevdev.grab(fd: fileDescriptor, true)
            isGrabbed = true
        } catch {
            throw EvdevError(error, path: path, operation: "ioctl(EVIOCGRAB)")
        }
    }

    /// Gives the device back to every reader.
    ///
    /// The corresponding C call is `ioctl(EVIOCGRAB, 0)`.
    public func ungrab() throws(EvdevError) {
        do {
            try Libevdev.grab(fd: fileDescriptor, false)
            isGrabbed = false
        } catch {
            throw EvdevError(error, path: path, operation: "ioctl(EVIOCGRAB)")
        }
    }

    /// Stamps this fd's events with `CLOCK_MONOTONIC` (the evdev default is
    /// `CLOCK_REALTIME`), the clock uinput compares forwarded timestamps against.
    ///
    /// The corresponding C call is `ioctl(EVIOCSCLOCKID)` (via `libevdev_set_clock_id`).
    public func useMonotonicClock() throws(EvdevError) {
        guard let dev else { return }
        do {
            try Libevdev.setClockID(dev, CLOCK_MONOTONIC)
        } catch {
            throw EvdevError(error, path: path, operation: "ioctl(EVIOCSCLOCKID)")
        }
    }

    // MARK: Events

    /// Appends every pending event to `events` and returns how many it appended;
    /// 0 when nothing is pending. Reads until the kernel has nothing more, so the
    /// loop never has to ask libevdev whether it still holds events.
    ///
    /// Events arrive in whole frames ending in `SYN_REPORT`. When the kernel's
    /// buffer overflowed, the appended events contain `SYN_DROPPED`
    /// (``KioskInput/InputEvent/isSynDropped``) followed by libevdev's sync frames: the
    /// changes between the last state seen and the device's state now (keys
    /// released or pressed meanwhile, touches that ended or began), each frame
    /// ending in `SYN_REPORT`. The events of the dropped partial frame are
    /// discarded. Throws ``EvdevError/Code-swift.struct/noDevice`` when the
    /// device is gone.
    ///
    /// The corresponding C call is `libevdev_next_event`, in
    /// `LIBEVDEV_READ_FLAG_SYNC` mode after `LIBEVDEV_READ_STATUS_SYNC`.
    @discardableResult
    public func readEvents(into events: inout [InputEvent]) throws(EvdevError) -> Int {
        guard let dev else { return 0 }
        let start = events.count
        do {
            var syncing = false
            while true {
                switch try Libevdev.nextEvent(dev, sync: syncing) {
                case .event(let event):
                    events.append(InputEvent(event))
                case .dropped(let event):
                    events.append(InputEvent(event))
                    syncing = true
                case .empty:
                    if !syncing { return events.count - start }
                    syncing = false
                }
            }
        } catch {
            throw EvdevError(error, path: path, operation: "libevdev_next_event")
        }
    }

    /// Sets an LED of the physical device (Caps Lock, Num Lock, …), as a
    /// compositor asked on the clone. Needs ``Access/readWrite``.
    ///
    /// The corresponding C call is `libevdev_kernel_set_led_value` (a `write(2)`
    /// of `EV_LED` + `SYN_REPORT`).
    public func setLED(_ code: UInt16, on: Bool) throws(EvdevError) {
        guard let dev else { return }
        do {
            try Libevdev.setLED(dev, code: UInt32(code), on: on)
        } catch {
            throw EvdevError(error, path: path, operation: "write(EV_LED)")
        }
    }
}
