import CSystemd
import Glibc
import SystemPackage

/// An interface exported at a path: owns the `sd_bus_vtable` array, the C strings and the
/// handler boxes it points to, and the slot. Keep it while the object should be served;
/// `remove()` or releasing it (on the loop) unexports it.
public final class ExportedObject {
    public let path: String
    public let interfaceName: String
    private let vtable: UnsafeMutablePointer<sd_bus_vtable>
    private let count: Int
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    private var boxes: [AnyObject] = []
    private var slot: OpaquePointer?

    init(bus: Bus, interface: BusInterface, path: String) throws(Errno) {
        self.path = path
        interfaceName = interface.name
        count = 2 + interface.methods.count + interface.signals.count + interface.properties.count
        vtable = .allocate(capacity: count)
        var entries: [sd_bus_vtable] = [csd_vtable_start(0)]
        let absolute = csd_vtable_flag_absolute_offset()
        for m in interface.methods {
            let box = MethodBox(m)
            boxes.append(box)
            entries.append(
                csd_vtable_method(
                    cstr(m.name), cstr(m.inSignature), cstr(m.outSignature), names(m.inNames + m.outNames),
                    methodTrampoline, Int(bitPattern: Unmanaged.passUnretained(box).toOpaque()),
                    m.flags.rawValue | absolute))
        }
        for s in interface.signals {
            entries.append(csd_vtable_signal(cstr(s.name), cstr(s.signature), names(s.names), s.flags.rawValue))
        }
        for p in interface.properties {
            let box = PropertyBox(p)
            boxes.append(box)
            entries.append(
                csd_vtable_property(
                    cstr(p.name), cstr(p.signature), propertyTrampoline,
                    Int(bitPattern: Unmanaged.passUnretained(box).toOpaque()), p.flags.rawValue | absolute))
        }
        entries.append(csd_vtable_end())
        vtable.initialize(from: entries, count: count)

        do {
            slot = try CBus.addObjectVtable(bus.handle, path: path, interface: interface.name, vtable)
        } catch {
            release()
            throw error
        }
    }

    deinit { remove() }

    /// Stops serving the interface. The corresponding C call is `sd_bus_slot_unref`.
    public func remove() {
        if let s = slot {
            slot = nil
            CBus.unref(slot: s)
            release()
        }
    }

    private func release() {
        vtable.deinitialize(count: count)
        vtable.deallocate()
        cStrings.forEach { free($0) }
        cStrings = []
        boxes = []
    }

    private func cstr(_ s: String) -> UnsafePointer<CChar> {
        let p = strdup(s)!
        cStrings.append(p)
        return UnsafePointer(p)
    }

    /// The `SD_BUS_PARAM()` list: each name NUL-terminated, then one more NUL.
    private func names(_ list: [String]) -> UnsafePointer<CChar> {
        var bytes: [UInt8] = []
        for name in list { bytes += Array(name.utf8) + [0] }
        bytes.append(0)
        let p = malloc(bytes.count)!.assumingMemoryBound(to: CChar.self)
        bytes.withUnsafeBytes { _ = memcpy(p, $0.baseAddress!, bytes.count) }
        cStrings.append(p)
        return UnsafePointer(p)
    }
}

extension Bus {
    /// Serves `interface` at `path`. The corresponding C call is `sd_bus_add_object_vtable`, with a
    /// vtable built at run time (`SD_BUS_VTABLE_ABSOLUTE_OFFSET` entries, one trampoline).
    public func export(_ interface: BusInterface, at path: String) throws(Errno) -> ExportedObject {
        try ExportedObject(bus: self, interface: interface, path: path)
    }
}

private final class MethodBox {
    let method: BusMethod
    init(_ method: BusMethod) { self.method = method }
}

private final class PropertyBox {
    let property: BusProperty
    init(_ property: BusProperty) { self.property = property }
}

private let methodTrampoline: sd_bus_message_handler_t = { m, userdata, retError in
    let method = Unmanaged<MethodBox>.fromOpaque(userdata!).takeUnretainedValue().method
    let message = Message(retaining: m!)
    let call: MethodCall
    do {
        call = MethodCall(message: message, arguments: try message.readAll(within: method.limits))
    } catch let error as Errno where error == .argListTooLong {
        let limits = method.limits
        return BusError.invalidArgs(
            "The arguments to \(method.name) are larger than it takes: at most \(limits.arrayItems) items in a list and \(limits.stringBytes) bytes in a string."
        ).set(retError)
    } catch {
        return BusError.invalidArgs("Malformed arguments to \(method.name): \(Errno.reason(of: error)).").set(retError)
    }
    do {
        switch try method.handler(call) {
        case .values(let values):
            try call.reply(values)
        case .deferred:
            break
        }
        return 1
    } catch let e as BusError {
        return e.set(retError)
    } catch let e as Errno {
        return -e.rawValue
    } catch let e {
        return BusError(name: BusError.failed, message: Errno.reason(of: e)).set(retError)
    }
}

private let propertyTrampoline: sd_bus_property_get_t = { _, _, _, _, reply, userdata, retError in
    let property = Unmanaged<PropertyBox>.fromOpaque(userdata!).takeUnretainedValue().property
    do {
        let value = try property.get()
        guard value.signature == property.signature else {
            return BusError(
                name: BusError.failed,
                message:
                    "Property \(property.name) has signature '\(property.signature)', its getter gave '\(value.signature)'."
            )
            .set(retError)
        }
        try CBus.append(reply!, value)
        return 1
    } catch let e as BusError {
        return e.set(retError)
    } catch let e {
        return BusError(name: BusError.failed, message: Errno.reason(of: e)).set(retError)
    }
}
