import CEvdev
import Glibc
import KioskInput
import SystemPackage
import SystemdKit

/// A uinput device that is a 1:1 copy of a physical one: same name, ids, event
/// codes, input properties (`INPUT_PROP_DIRECT` included) and axis ranges, so
/// the compositor, udev rules and per-device settings treat it as the device
/// itself. Its phys is ``phys(forSource:calibration:)``, `kioskd-clone/…`, so that kioskd never
/// grabs its own clones and `70-kioskd.rules` leaves them visible to libinput.
///
/// What the clone does not copy: `EV_FF` (kioskd would have to answer force-
/// feedback uploads), `EV_REP` (the source's own autorepeat events are
/// forwarded; the kernel's software repeat on the clone would double them), the
/// axes' fuzz (the source already filtered; the kernel would apply the
/// hysteresis twice), and uniq (uinput cannot set it).
/// Names longer than uinput's limit (79 bytes) are cut.
///
/// The device exists until ``destroy()`` or deinit; destroying it releases
/// every key still down on it. Not thread-safe: one loop owns it.
public final class UInputClone {
    /// The phys prefix of every clone: `kioskd-clone/<source phys>`, `kioskd-clone/` for a
    /// source without one. 70-kioskd.rules and 71-kioskd-power-switch.rules match
    /// `kioskd-clone/*`: one rule, so no clone can fall outside it.
    public static let physMarker = "kioskd-clone/"

    /// Whether a device with this phys is one of kioskd's clones (the rules' `kioskd-clone/*`).
    public static func isClone(phys: String?) -> Bool {
        phys?.hasPrefix(physMarker) ?? false
    }

    /// The clone's phys for a source phys: the marker, then the source's phys (if any), so
    /// that a clone can be traced back to its device. Always starts with ``physMarker``.
    /// A clone whose calibration kioskd wrote to file `calibration` (``CloneCalibration``) ends
    /// in `/input-calibration-<n>`, what `99-zz-kioskd-calibration.rules` reads: at the end, and
    /// starting with `/input`, because libinput groups devices (`LIBINPUT_DEVICE_GROUP`: a pen
    /// and the touchscreen it shares a panel with) by the phys cut at its first `/input`, so
    /// the number never splits a clone from its siblings' group.
    public static func phys(forSource sourcePhys: String?, calibration: Int? = nil) -> String {
        physMarker + (sourcePhys ?? "") + (calibration.map { "/input-calibration-\($0)" } ?? "")
    }

    /// A name cut to what uinput accepts (`UINPUT_MAX_NAME_SIZE` - 1 bytes), at a
    /// character boundary.
    public static func uinputName(_ name: String) -> String {
        let limit = Libevdev.uinputMaxNameSize - 1
        var result = ""
        var bytes = 0
        for character in name {
            let size = character.utf8.count
            if bytes + size > limit { break }
            result.append(character)
            bytes += size
        }
        return result
    }

    /// The clone's description as the source's: what ``init(cloning:uinputPath:calibration:withoutPointer:)``
    /// asks uinput to create. `withoutPointer`: the source's pointer is left out
    /// (``KioskInput/DeviceDescription/withoutPointer()``).
    public static func cloneDescription(
        of source: DeviceDescription, calibration: Int? = nil, withoutPointer: Bool = false
    ) -> DeviceDescription {
        var clone = withoutPointer ? source.withoutPointer() : source
        clone.name = uinputName(source.name)
        clone.phys = phys(forSource: source.phys, calibration: calibration)
        clone.uniq = nil
        clone.calibration = nil
        clone.codes[EV.ff] = nil
        clone.codes[EV.ffStatus] = nil
        clone.codes[EV.rep] = nil
        for code in clone.absInfo.keys { clone.absInfo[code]?.fuzz = 0 }
        return clone
    }

    /// The clone's description as created.
    public let deviceDescription: DeviceDescription
    /// The clone has a type the kernel echoes (``echoes(_:)``: `EV_MSC`, `EV_LED`, `EV_SND`,
    /// `EV_PWR`), so a frame written to it may leave an echo on its fd. A touchscreen without
    /// them leaves none but for a `SYN_CONFIG` (which the broker's feedback source reads when it
    /// comes), and the broker skips looking for one in each of its frames.
    public let mayEcho: Bool
    /// `/dev/input/eventN` of the clone, if the node could be found.
    public let devnode: String?
    /// `/sys/devices/virtual/input/inputN` of the clone.
    public let syspath: String?
    /// The uinput fd: poll it for `POLLIN` to get LED requests (``readFeedback(into:)``); -1 once destroyed.
    public var fileDescriptor: Int32 { fd.rawValue }
    /// The uinput node, open non-blocking; -1 once destroyed.
    ///
    /// Read on every frame written, from one thread: no run-time exclusivity check (as
    /// ``EvdevDevice``'s).
    @exclusivity(unchecked) private var fd: FileDescriptor
    private var uinput: OpaquePointer?
    /// Where ``write(frame:)`` lays out a frame for `write(2)`: allocated by the first write,
    /// grown when a frame needs more, never shrunk, freed with the clone.
    @exclusivity(unchecked) private var buffer = UnsafeMutableBufferPointer<input_event>(start: nil, count: 0)
    private let uinputPath: String

    /// Creates the clone of an opened device; `calibration` is the number of the file kioskd
    /// wrote its calibration to, if any (``phys(forSource:calibration:)``); `withoutPointer`:
    /// the clone presents everything of the device but its pointer
    /// (``KioskInput/DeviceDescription/withoutPointer()``).
    ///
    /// The corresponding C calls are `open("/dev/uinput")`, `ioctl(UI_SET_PHYS)`
    /// and `libevdev_uinput_create_from_device` (`UI_DEV_SETUP`, `UI_ABS_SETUP`,
    /// `UI_SET_*BIT`, `UI_SET_PROPBIT`, `UI_DEV_CREATE`).
    /// Its axes start where the source's are now.
    public convenience init(
        cloning source: EvdevDevice, uinputPath: String = "/dev/uinput", calibration: Int? = nil,
        withoutPointer: Bool = false
    ) throws(EvdevError) {
        try self.init(
            description: Self.cloneDescription(
                of: source.deviceDescription, calibration: calibration, withoutPointer: withoutPointer),
            axisValues: source.axisValues, uinputPath: uinputPath)
    }

    /// Creates a uinput device exactly as `description` describes it, its absolute axes at
    /// `axisValues` (0 for those left out). kioskd uses ``init(cloning:uinputPath:)``; tests
    /// build fake physical devices with this.
    public init(
        description: DeviceDescription, axisValues: [UInt16: Int32] = [:],
        uinputPath: String = "/dev/uinput"
    ) throws(EvdevError) {
        self.uinputPath = uinputPath
        let template: OpaquePointer
        do {
            template = try Self.template(for: description, axisValues: axisValues)
        } catch {
            throw EvdevError(error, path: uinputPath, operation: "libevdev_enable_event_code")
        }
        defer { Libevdev.free(template) }
        do {
            fd = try Libevdev.open(uinputPath, .readWrite)
        } catch {
            throw EvdevError(error, path: uinputPath, operation: "open")
        }
        do {
            if let phys = description.phys { try Libevdev.setUInputPhys(fd, phys) }
            let uinput = try Libevdev.createUInput(from: template, uinputFD: fd)
            self.uinput = uinput
            devnode = Libevdev.devnode(uinput)
            syspath = Libevdev.syspath(uinput)
        } catch {
            Libevdev.close(fd)
            throw EvdevError(error, path: uinputPath, operation: "libevdev_uinput_create_from_device")
        }
        deviceDescription = description
        mayEcho = [EV.msc, EV.led, 0x12 /* EV_SND */, 0x16 /* EV_PWR */].contains {
            !(description.codes[$0]?.isEmpty ?? true)
        }
    }

    deinit {
        destroy()
        buffer.deallocate()
    }

    /// Removes the device (the kernel releases its keys first) and closes the fd.
    /// Safe to call twice.
    ///
    /// The corresponding C calls are `libevdev_uinput_destroy` (`UI_DEV_DESTROY`) and `close(2)`.
    public func destroy() {
        if let uinput { Libevdev.destroyUInput(uinput) }
        uinput = nil
        if fileDescriptor >= 0 { Libevdev.close(fd) }
        fd = FileDescriptor(rawValue: -1)
    }

    /// Emits one frame with a single `write(2)` of an `input_event` array, so
    /// readers see all of it or nothing. A `SYN_REPORT` is appended when the
    /// frame does not end with one. The events' timestamps are passed on (kernels
    /// since about 6.5 keep them when they are recent `CLOCK_MONOTONIC` times).
    ///
    /// The corresponding C call is `write(2)` on the uinput fd
    /// (not `libevdev_uinput_write_event`, which writes one event per call).
    public func write(frame: some Collection<InputEvent>) throws(EvdevError) { try copyAndWrite(frame: frame) }

    /// ``write(frame:)`` for the broker's frames (``OutputBuffer/drain(_:)``): where
    /// `input_event` has `InputEvent`'s layout and the frame ends with its `SYN_REPORT`, as
    /// every frame of the filter does, the events are written where they lie, without a copy.
    /// Inlined into the broker's flush, which calls it on every frame.
    @inline(__always)
    public func write(frame: UnsafeBufferPointer<InputEvent>) throws(EvdevError) {
        guard InputEvent.hasKernelLayout, fileDescriptor >= 0, let last = frame.last, last.type == EV.syn,
            last.code == SYN.report
        else { return try copyAndWrite(frame: frame) }
        do {
            try frame.withMemoryRebound(to: input_event.self) { (events) throws(Errno) in try Libevdev.write(fd, events)
            }
        } catch {
            throw EvdevError(error, path: devnode ?? uinputPath, operation: "write")
        }
    }

    private func copyAndWrite(frame: some Collection<InputEvent>) throws(EvdevError) {
        guard fileDescriptor >= 0 else {
            throw EvdevError(Errno(rawValue: ENODEV), path: uinputPath, operation: "write")
        }
        let needed = frame.count + 1  // room for a SYN_REPORT
        if needed > buffer.count {
            buffer.deallocate()
            buffer = .allocate(capacity: max(needed, 64))
        }
        var count = 0
        for event in frame {
            buffer[count] = event.cValue
            count += 1
        }
        if count == 0 || buffer[count - 1].type != EV.syn || buffer[count - 1].code != SYN.report {
            let time = count > 0 ? buffer[count - 1].time : timeval()
            buffer[count] = input_event(time: time, type: EV.syn, code: SYN.report, value: 0)
            count += 1
        }
        do {
            try Libevdev.write(fd, UnsafeBufferPointer(rebasing: buffer[..<count]))
        } catch {
            throw EvdevError(error, path: devnode ?? uinputPath, operation: "write")
        }
    }

    /// Whether the kernel hands `event`, once written to a clone, back to the clone's uinput fd
    /// too, where ``readFeedback(into:)`` finds it. The input core passes `EV_MSC` (every code
    /// the device has: `MSC_SCAN` with each key, `MSC_TIMESTAMP` with each touchpad frame),
    /// `EV_LED`, `EV_SND` and `EV_PWR`, and `SYN_CONFIG`, to the device as well as to its
    /// readers (`input_get_disposition`: `INPUT_PASS_TO_ALL`; `EV_LED` and `EV_SND` only when the
    /// value changes), and uinput's `event()` handler queues each one for the fd's reader, as it
    /// does a compositor's LED request. The clone keeps `EV_MSC`: its readers (libinput,
    /// `evtest`, hwdb tooling) expect `MSC_SCAN` and `MSC_TIMESTAMP` where the source has them.
    public static func echoes(_ event: InputEvent) -> Bool {
        switch event.type {
        case EV.msc, EV.led, 0x12 /* EV_SND */, 0x16 /* EV_PWR */: true
        case EV.syn: event.code == SYN.config
        default: false
        }
    }

    /// Appends what readers wrote to the clone (`EV_LED` for Caps Lock and the
    /// like, to pass on with ``EvdevDevice/setLED(_:on:)``), and the kernel's echo of what was
    /// written to it (``echoes(_:)``), and returns how many. Reads until a read returns fewer
    /// events than asked for: uinput then has none left, so the common case is one `read(2)`.
    ///
    /// The corresponding C call is `read(2)` on the uinput fd.
    @discardableResult
    public func readFeedback(into events: inout [InputEvent]) throws(EvdevError) -> Int {
        try readFeedback { events.append($0) }
    }

    /// ``readFeedback(into:)`` handing each event to `body` instead of keeping it: the broker's
    /// path, right after every frame the kernel echoes something of.
    @discardableResult
    public func readFeedback(_ body: (InputEvent) -> Void) throws(EvdevError) -> Int {
        guard fileDescriptor >= 0 else { return 0 }
        var chunk = (
            input_event(), input_event(), input_event(), input_event(),
            input_event(), input_event(), input_event(), input_event()
        )
        var total = 0
        do {
            while true {
                let n = try withUnsafeMutableBytes(of: &chunk) { (raw) throws(Errno) in
                    let buf = raw.bindMemory(to: input_event.self)
                    let n = try Libevdev.read(fd, into: buf)
                    for event in buf[..<n] { body(InputEvent(event)) }
                    return n
                }
                total += n
                if n < 8 { return total }  // the chunk's size
            }
        } catch {
            throw EvdevError(error, path: uinputPath, operation: "read")
        }
    }

    // A libevdev description of `description` for libevdev_uinput_create_from_device.
    private static func template(
        for description: DeviceDescription, axisValues: [UInt16: Int32]
    ) throws(Errno) -> OpaquePointer {
        let dev = try Libevdev.newBlankDevice()
        do {
            Libevdev.setName(dev, uinputName(description.name))
            if let phys = description.phys { Libevdev.setPhys(dev, phys) }
            Libevdev.setID(dev, description.id)
            for (type, codes) in description.codes.sorted(by: { $0.key < $1.key }) {
                for code in codes.sorted() {
                    switch type {
                    case EV.abs:
                        let axis = description.absInfo[code] ?? DeviceDescription.AbsInfo(minimum: 0, maximum: 0)
                        var abs = input_absinfo(
                            value: axisValues[code] ?? 0, minimum: axis.minimum, maximum: axis.maximum,
                            fuzz: axis.fuzz, flat: axis.flat, resolution: axis.resolution)
                        try Libevdev.enable(dev, type: UInt32(type), code: UInt32(code), data: &abs)
                    case EV.rep:
                        var value: Int32 = code == REP.delay ? 250 : 33
                        try Libevdev.enable(dev, type: UInt32(type), code: UInt32(code), data: &value)
                    default:
                        try Libevdev.enable(dev, type: UInt32(type), code: UInt32(code), data: nil)
                    }
                }
            }
            for property in description.properties.sorted() {
                try Libevdev.enable(dev, property: UInt32(property))
            }
        } catch {
            Libevdev.free(dev)
            throw error
        }
        return dev
    }
}
