import CEvdev
import Glibc
import KioskInput
import SystemPackage
import SystemdKit

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
    public var fileDescriptor: Int32 { fd.rawValue }
    /// The evdev node, open non-blocking; -1 once closed.
    ///
    /// This and ``dev`` are read on every input frame; the class is used from one thread (the
    /// broker's loop) and never hands out `inout` access to them, so Swift's run-time
    /// exclusivity check, a measurable part of a frame's cost (docs/benchmarks.md § Latency),
    /// is left out.
    @exclusivity(unchecked) private var fd: FileDescriptor
    /// Whether this fd holds the grab (``grab()`` succeeded and ``ungrab()`` was not called since).
    public private(set) var isGrabbed = false
    @exclusivity(unchecked) private var dev: OpaquePointer?
    /// Where ``readEvents(into:)`` reads to: one batch of `readCapacity` events, allocated once.
    private let readBuffer = UnsafeMutableBufferPointer<input_event>.allocate(capacity: EvdevDevice.readCapacity)
    /// Events per `read(2)`: a full batch means the node may hold more.
    static let readCapacity = 64

    /// Opens `path` with `O_NONBLOCK | O_CLOEXEC` and reads the device's full
    /// state (name, ids, bits, properties, axes, key and slot state).
    ///
    /// The corresponding C calls are `open(2)` and `libevdev_new_from_fd`.
    public init(path: String, access: Access = .readWrite) throws(EvdevError) {
        self.path = path
        do {
            fd = try Libevdev.open(path, access == .readWrite ? .readWrite : .readOnly)
        } catch {
            throw EvdevError(error, path: path, operation: "open")
        }
        do {
            dev = try Libevdev.newDevice(fd: fd)
        } catch {
            // Every property is set, so the throw runs deinit, which closes the fd once.
            throw EvdevError(error, path: path, operation: "libevdev_new_from_fd")
        }
    }

    /// Opens `path`, takes its grab at once and only then reads its state: the shortest window
    /// between a new node and its grab. A node whose phys starts with `skippingPhys` (kioskd's
    /// clones) is closed without a grab: nil. Grabbed when returned (``isGrabbed``).
    ///
    /// The corresponding C calls are `open(2)`, `ioctl(EVIOCGPHYS)`, `ioctl(EVIOCGRAB, 1)` and
    /// `libevdev_new_from_fd`.
    /// `grabbedAt`: when `EVIOCGRAB` returned (CLOCK_MONOTONIC, µs), before libevdev read it.
    public static func grabbingFirst(
        path: String, skippingPhys prefix: String
    ) throws(EvdevError) -> (device: EvdevDevice, grabbedAt: UInt64)? {
        let fd: FileDescriptor
        do {
            fd = try Libevdev.open(path, .readWrite)
        } catch {
            throw EvdevError(error, path: path, operation: "open")
        }
        if let phys = Libevdev.phys(fd: fd), phys.hasPrefix(prefix) {
            Libevdev.close(fd)
            return nil
        }
        do {
            try Libevdev.grab(fd: fd, true)
        } catch {
            Libevdev.close(fd)
            throw EvdevError(error, path: path, operation: "ioctl(EVIOCGRAB)")
        }
        let grabbedAt = Libevdev.monotonicMicroseconds()
        let device = try EvdevDevice(path: path, fd: fd)
        device.isGrabbed = true
        return (device, grabbedAt)
    }

    private init(path: String, fd: FileDescriptor) throws(EvdevError) {
        self.path = path
        self.fd = fd
        do {
            dev = try Libevdev.newDevice(fd: fd)
        } catch {
            throw EvdevError(error, path: path, operation: "libevdev_new_from_fd")
        }
    }

    deinit {
        close()
        readBuffer.deallocate()
    }

    /// Reads the device's description and state again on the same fd (after udev changed it:
    /// new axis ranges from hwdb, a new keymap). The fd, its grab and its clock stay; events
    /// libevdev had read and not returned are dropped, so call it once ``readEvents(into:)``
    /// has drained the node.
    ///
    /// The corresponding C calls are `libevdev_free` and `libevdev_new_from_fd`.
    public func reload() throws(EvdevError) {
        guard fileDescriptor >= 0 else {
            throw EvdevError(Errno(rawValue: EBADF), path: path, operation: "libevdev_new_from_fd")
        }
        let fresh: OpaquePointer
        do {
            fresh = try Libevdev.newDevice(fd: fd)
        } catch {
            throw EvdevError(error, path: path, operation: "libevdev_new_from_fd")
        }
        if let dev { Libevdev.free(dev) }
        dev = fresh
    }

    /// Frees libevdev's state and closes the fd, which also releases the grab.
    /// Safe to call twice.
    ///
    /// The corresponding C calls are `libevdev_free` and `close(2)`.
    public func close() {
        if let dev { Libevdev.free(dev) }
        dev = nil
        if fileDescriptor >= 0 { Libevdev.close(fd) }
        fd = FileDescriptor(rawValue: -1)
        isGrabbed = false
    }

    // MARK: Identity and capabilities

    /// The device number of the open node (`st_rdev`), or nil once closed.
    ///
    /// The corresponding C call is `fstat(2)`.
    public var deviceNumber: UInt64? {
        guard fileDescriptor >= 0 else { return nil }
        return try? Libevdev.deviceNumber(fd)
    }

    /// Name, phys, uniq, ids, event codes, input properties and axis ranges, as read at open
    /// time (or at the last ``reload()``); no calibration (that is udev's).
    ///
    /// The corresponding C calls are `libevdev_get_name` (`_phys`, `_uniq`, `_id_*`),
    /// `libevdev_has_event_code`, `libevdev_has_property` and `libevdev_get_abs_info`.
    public var deviceDescription: DeviceDescription {
        guard let dev else { return DeviceDescription(name: "") }
        var description = DeviceDescription(
            name: Libevdev.name(dev), phys: Libevdev.phys(dev), uniq: Libevdev.uniq(dev), id: Libevdev.id(dev))
        for type in 1...EV.max where Libevdev.hasType(dev, type) {
            guard let max = Libevdev.maxCode(type: type) else { continue }
            var codes = Set<UInt16>()
            for code in 0...max where Libevdev.hasCode(dev, type: type, code: code) {
                codes.insert(code)
                if type == EV.abs, let abs = Libevdev.absInfo(dev, code: code) {
                    description.absInfo[code] = abs.info
                }
            }
            description.codes[type] = codes
        }
        for prop in 0...INPUT_PROP.max where Libevdev.hasProperty(dev, prop) {
            description.properties.insert(prop)
        }
        return description
    }

    /// Each absolute axis's current value as libevdev's `input_absinfo` holds it: what a clone
    /// starts from.
    ///
    /// The corresponding C call is `libevdev_get_abs_info`.
    public var axisValues: [UInt16: Int32] {
        var values: [UInt16: Int32] = [:]
        guard let dev else { return values }
        for code in 0...ABS.max where Libevdev.hasCode(dev, type: EV.abs, code: code) {
            if let abs = Libevdev.absInfo(dev, code: code) { values[code] = abs.value }
        }
        return values
    }

    // MARK: Grab

    /// Takes the device for this fd alone: while grabbed, no other reader (the
    /// compositor, logind, the VT keyboard handler, SysRq) sees its events.
    /// Throws ``EvdevError/Code-swift.struct/busy`` if another fd holds the grab.
    ///
    /// The corresponding C call is `ioctl(EVIOCGRAB, 1)`.
    public func grab() throws(EvdevError) {
        do {
            try Libevdev.grab(fd: fd, true)
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
            try Libevdev.grab(fd: fd, false)
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

    /// What ``readEvents(into:)`` ended with.
    public enum ReadStatus: Sendable, Equatable {
        /// The kernel has no more events for now.
        case drained
        /// A full batch was read: the kernel may hold more. Handle these, then read again.
        case more
        /// The kernel's buffer overflowed: the appended events end with `SYN_DROPPED`
        /// (``KioskInput/InputEvent/isSynDropped``), and libevdev has already brought its copy
        /// of the device's state up to date: ``state`` is the device as it is now. Resync from
        /// it, then read on.
        case dropped
    }

    /// Appends the events the kernel holds for this fd to `events`, one `read(2)` of up to
    /// ``readCapacity`` at a time: ``ReadStatus/drained`` when the read came back short (evdev
    /// hands out every complete frame it has, so the node held no more), ``ReadStatus/more`` when
    /// it came back full, ``ReadStatus/dropped`` at a `SYN_DROPPED`.
    ///
    /// Events arrive in whole frames ending in `SYN_REPORT`, except before a `SYN_DROPPED`,
    /// which ends a partial frame that will never be completed. After a drop, the events after
    /// it, those the kernel still held and libevdev's sync frames (the changes between the last
    /// state libevdev saw and the device's state now) are consumed here and not appended: the
    /// caller resyncs from ``state`` instead. Throws ``EvdevError/Code-swift.struct/noDevice``
    /// when the device is gone.
    ///
    /// The events are read with `read(2)` as the kernel gives them, not through libevdev, whose
    /// per-event bookkeeping (its copy of the state) cost every frame; libevdev's copy is brought
    /// up to date only when it is needed, after a drop (`LIBEVDEV_READ_FLAG_FORCE_SYNC`). So
    /// ``state`` is the device's state at open, after a reload, or after a `dropped` read.
    ///
    /// The corresponding C calls are `read(2)` and, after a drop, `libevdev_next_event` in
    /// `LIBEVDEV_READ_FLAG_FORCE_SYNC`, then `LIBEVDEV_READ_FLAG_SYNC` mode.
    @discardableResult
    public func readEvents(into events: inout [InputEvent]) throws(EvdevError) -> ReadStatus {
        let (batch, status) = try readBatch()
        for index in batch.indices where batch[index].type == EV.syn && batch[index].code == SYN.dropped {
            for event in batch[...index] { events.append(InputEvent(event)) }
            try syncAfterDrop()
            return .dropped
        }
        for event in batch { events.append(InputEvent(event)) }
        return status
    }

    /// ``readEvents(into:)`` without the copy, and without looking for a drop: the events read,
    /// as the kernel wrote them, in a buffer of this device's that the next read overwrites;
    /// ``ReadStatus/drained`` or ``ReadStatus/more``, never ``ReadStatus/dropped``. A
    /// `SYN_DROPPED` among them is the caller's to notice — the broker's input path hands the
    /// whole read to the filter, which sees every `SYN` event anyway, stops there and says so
    /// (`RunResult.resyncNeeded`) — and then to call ``syncAfterDrop()`` before the next read.
    /// Looking for one here cost a pass over every event of every frame.
    public func readBatch() throws(EvdevError) -> (events: UnsafeBufferPointer<input_event>, status: ReadStatus) {
        guard dev != nil else { return (UnsafeBufferPointer(start: nil, count: 0), .drained) }
        let count: Int
        do {
            count = try Libevdev.read(fd, into: readBuffer)
        } catch {
            throw EvdevError(error, path: path, operation: "read")
        }
        return (UnsafeBufferPointer(rebasing: readBuffer[..<count]), count < Self.readCapacity ? .drained : .more)
    }

    /// After a read that held `SYN_DROPPED`: libevdev consumes the events the kernel still
    /// holds and its sync frames, and brings its copy of the device's state up to date, so
    /// that ``state`` is the device as it is now. Resync from it, then read on.
    ///
    /// The corresponding C calls are `libevdev_next_event` in `LIBEVDEV_READ_FLAG_FORCE_SYNC`,
    /// then `LIBEVDEV_READ_FLAG_SYNC` mode.
    public func syncAfterDrop() throws(EvdevError) {
        guard let dev else { return }
        do {
            try Libevdev.forceSync(dev)
            while case .event = try Libevdev.nextEvent(dev, sync: true) {}
        } catch {
            throw EvdevError(error, path: path, operation: "libevdev_next_event")
        }
    }

    /// What the device held when libevdev last read its state: keys down, absolute axis values
    /// and multitouch slots. That is at open (the state at grab time), at ``reload()`` and at a
    /// ``ReadStatus/dropped`` read (the state after the drop); the events ``readEvents(into:)``
    /// reads in between do not move it (they bypass libevdev).
    ///
    /// The corresponding C calls are `libevdev_get_event_value`, `libevdev_get_slot_value` and
    /// `libevdev_get_current_slot`.
    public var state: DeviceState {
        var state = DeviceState()
        guard let dev else { return state }
        if Libevdev.hasType(dev, EV.key) {
            for code in 0...KEY.max
            where Libevdev.hasCode(dev, type: EV.key, code: code) && Libevdev.value(dev, type: EV.key, code: code) != 0
            {
                state.keysDown.insert(code)
            }
        }
        for code in 0..<ABS.mtSlot where Libevdev.hasCode(dev, type: EV.abs, code: code) {
            state.absValues[code] = Libevdev.value(dev, type: EV.abs, code: code)
        }
        let slots = Libevdev.slotCount(dev)
        if slots > 0 {
            let axes = (ABS.mtSlot + 1...ABS.max).filter {
                $0 != ABS.mtTrackingID && Libevdev.hasCode(dev, type: EV.abs, code: $0)
            }
            for slot in 0..<slots {
                var slotState = DeviceState.Slot(
                    trackingID: Libevdev.slotValue(dev, slot: slot, code: ABS.mtTrackingID))
                for code in axes { slotState.axes[code] = Libevdev.slotValue(dev, slot: slot, code: code) }
                state.slots.append(slotState)
            }
            state.currentSlot = Libevdev.currentSlot(dev)
        }
        return state
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
