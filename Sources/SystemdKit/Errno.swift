import Glibc
import SystemPackage

// The one errno vocabulary of the project is swift-system's `Errno` (SystemPackage): SystemdKit,
// LinuxInput and KioskStore throw it, and everything above them matches on it. This file adds
// what the C-calling layers (CBus, CEvent, CDevice, CDaemon, Libevdev, Passcode) need on top:
// the thread's errno after a failed call, the `-errno` convention of libsystemd and libevdev, and
// the sentence kioskd's messages have always used ("Device or resource busy (errno 16)").

extension Errno {
    /// The calling thread's `errno`: the error of the last failed system or libc call. (Not
    /// `current`: swift-system has an internal `current` that it may one day make public.)
    public static var last: Errno { Errno(rawValue: Glibc.errno) }

    /// Turns a `-errno`-on-failure return value (libsystemd's, libevdev's) into a thrown
    /// `Errno`; passes the non-negative value through.
    @inline(__always) @discardableResult
    public static func check(_ result: Int32) throws(Errno) -> Int32 {
        if result < 0 { throw Errno(rawValue: -result) }
        return result
    }

    /// Runs `body`, a call of swift-system's (`FileDescriptor.read`, `.write`, …), whose
    /// untyped throws is always an `Errno`, with that typed. (Anything else, which
    /// swift-system does not throw, would be `EIO`.)
    @inline(__always)
    public static func typed<T>(_ body: () throws -> T) throws(Errno) -> T {
        do {
            return try body()
        } catch {
            throw error as? Errno ?? .ioError
        }
    }

    /// strerror and the number, as every message of kioskd shows an errno:
    /// "Device or resource busy (errno 16)". (`description` is strerror alone.)
    public var reason: String { "\(description) (errno \(rawValue))" }

    /// `error`'s text for a message or a log: an `Errno`'s `reason`, any other error's description.
    public static func reason(of error: any Error) -> String {
        if let errno = error as? Errno { return errno.reason }
        return "\(error)"
    }
}
