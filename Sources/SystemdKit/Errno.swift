import Glibc

/// A POSIX error number from a libsystemd call (which returns `-errno`) or a syscall.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The positive errno value, e.g. `ENOENT`.
    public var rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The current thread's `errno`.
    public static var current: Errno { Errno(rawValue: errno) }

    public var description: String {
        "\(String(cString: strerror(rawValue))) (errno \(rawValue))"
    }

    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let notConnected = Errno(rawValue: ENOTCONN)
    public static let cancelled = Errno(rawValue: ECANCELED)
}

extension Errno {
    /// Turns a `-errno`-on-failure return value (libsystemd's, libevdev's) into a thrown
    /// `Errno`; passes the non-negative value through.
    @inline(__always) @discardableResult
    public static func check(_ result: Int32) throws(Errno) -> Int32 {
        if result < 0 { throw Errno(rawValue: -result) }
        return result
    }
}
