import Glibc
import SystemPackage
import SystemdKit

/// Why an evdev or uinput operation failed, naming the device and the call.
public struct EvdevError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        /// `ENODEV`: the device was unplugged (or its uinput creator went away).
        public static let noDevice = Code(name: "noDevice")
        /// `EBUSY`: another process holds the grab (a second remapper, `evtest --grab`).
        public static let busy = Code(name: "busy")
        /// `EACCES`/`EPERM`: no permission for the node (kioskd runs as root or in group input).
        public static let permissionDenied = Code(name: "permissionDenied")
        /// `ENOENT`: there is no such node (for `/dev/uinput`: the uinput module is not loaded).
        public static let notFound = Code(name: "notFound")
        /// `ENOTTY`/`EINVAL` from the evdev ioctls: the file is not an evdev node.
        public static let notInputDevice = Code(name: "notInputDevice")
        /// Any other `errno`.
        public static let system = Code(name: "system")

        public var description: String { name }
    }

    public var code: Code
    /// The node, e.g. `/dev/input/event3` or `/dev/uinput`.
    public var path: String
    /// The failed call as the C API names it, e.g. `ioctl(EVIOCGRAB)`.
    public var operation: String
    /// Why the call failed; its description is `strerror(3)` and the number, e.g.
    /// "Device or resource busy (errno 16)".
    public var errno: Errno

    public init(code: Code, path: String, operation: String, errno: Errno) {
        self.code = code
        self.path = path
        self.operation = operation
        self.errno = errno
    }

    /// The error a failed `operation` on `path` throws, its code from the `errno` value.
    public init(_ error: Errno, path: String, operation: String) {
        let code: Code
        switch error.rawValue {
        case ENODEV: code = .noDevice
        case EBUSY: code = .busy
        case EACCES, EPERM: code = .permissionDenied
        case ENOENT: code = .notFound
        case ENOTTY: code = .notInputDevice
        case EINVAL where operation.hasPrefix("libevdev_new"): code = .notInputDevice
        default: code = .system
        }
        self.init(code: code, path: path, operation: operation, errno: error)
    }

    public var description: String {
        let reason = errno.reason  // "Device or resource busy (errno 16)"
        switch code {
        case .noDevice:
            return "\(path) is gone: \(operation) failed with \(reason); the device was unplugged."
        case .busy:
            return "\(path) is busy: \(operation) failed with \(reason); another process holds the grab."
        case .permissionDenied:
            return
                "\(path) is not accessible: \(operation) failed with \(reason); kioskd needs root or the input group."
        case .notFound:
            return "\(path) does not exist: \(operation) failed with \(reason)."
        case .notInputDevice:
            return "\(path) is not an evdev device: \(operation) failed with \(reason)."
        default:
            return "\(operation) on \(path) failed with \(reason)."
        }
    }
}
