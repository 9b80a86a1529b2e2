import SystemPackage

/// The sockets systemd passes a socket-activated service (`sd_listen_fds(3)`).
public enum SocketActivation {
    /// The first fd systemd passes (`SD_LISTEN_FDS_START`).
    public static let firstFD: Int32 = 3

    /// The listening stream sockets systemd passed, from fd 3 on; empty when none were (the
    /// process was not socket-activated). Throws `EBADF`-like errors when a passed fd is not a
    /// listening stream socket. The corresponding C calls are `sd_listen_fds` and `sd_is_socket`.
    public static func listeningSockets() throws(Errno) -> [Int32] {
        let count = try CDaemon.listenFDs()
        var fds: [Int32] = []
        for fd in firstFD..<(firstFD + count) {
            guard try CDaemon.isListeningStreamSocket(fd) else { throw Errno.notSupported }
            fds.append(fd)
        }
        return fds
    }
}
