import Glibc
import SystemPackage

/// Reads passcodes from the terminal without echo, or from stdin (`--passcode-stdin`); never
/// from the command line, where every user could see them in `ps`.
enum PasscodeReader {
    /// `count` lines of stdin, without their line breaks.
    static func stdinLines(_ count: Int, naming what: [String]) throws(CommandError) -> [String] {
        var lines: [String] = []
        for index in 0..<count {
            // Bytes from fd 0, not readLine: readLine repairs invalid UTF-8 into U+FFFD, which
            // would set a passcode other than the one given.
            guard let bytes = line(from: .standardInput) else {
                throw CommandError(
                    "stdin ended before \(what[index]) (expected \(count) line\(count == 1 ? "" : "s")).")
            }
            lines.append(try text(bytes, naming: what[index]))
        }
        return lines
    }

    /// One line's bytes from `fd` without its line break, read a byte at a time so nothing after
    /// it is consumed; nil at the end of input before any byte. A line ends at `\n` (a `\r`
    /// before it is dropped), or at `\r` too with `endsAtReturn` (a terminal that does not turn
    /// Return into `\n`).
    /// A read error other than EINTR (retried) ends the input too.
    private static func line(from fd: FileDescriptor, endsAtReturn: Bool = false) -> [UInt8]? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = (try? withUnsafeMutableBytes(of: &byte) { try fd.read(into: $0) }) ?? -1
            if n <= 0 { return bytes.isEmpty ? nil : bytes }
            if byte == UInt8(ascii: "\n") || (endsAtReturn && byte == UInt8(ascii: "\r")) { break }
            bytes.append(byte)
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return bytes
    }

    /// The passcode `bytes` spell, refused rather than changed: not UTF-8, or with a NUL (which a
    /// D-Bus string cannot hold).
    static func text(_ bytes: [UInt8], naming what: String) throws(CommandError) -> String {
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
            throw CommandError("\(what) is not UTF-8 text without NUL bytes; kioskctl would not send what was typed.")
        }
        return text
    }

    /// Prompts on /dev/tty and reads one line with echo off, as readpassphrase(3) does; the
    /// terminal is restored even when a signal interrupts the read.
    static func prompt(_ prompt: String) throws(CommandError) -> String {
        let tty: FileDescriptor
        do {
            // swift-system has no name for O_NOCTTY.
            tty = try FileDescriptor.open(
                "/dev/tty", .readWrite, options: [.init(rawValue: O_NOCTTY), .closeOnExec], retryOnInterrupt: false)
        } catch {
            throw CommandError(
                "there is no terminal to read the passcode from; pass it on stdin with --passcode-stdin.")
        }
        defer { try? tty.close() }
        write(tty, prompt)
        var saved = termios()
        let isTerminal = tcgetattr(tty.rawValue, &saved) == 0
        if isTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO | ECHONL)
            TerminalRestore.arm(fd: tty.rawValue, saved: saved)
            _ = tcsetattr(tty.rawValue, TCSAFLUSH, &quiet)
        }
        let bytes = line(from: tty, endsAtReturn: true)
        if isTerminal {
            _ = tcsetattr(tty.rawValue, TCSAFLUSH, &saved)
            TerminalRestore.disarm()
        }
        write(tty, "\n")
        guard let bytes else { throw CommandError("the terminal closed before a passcode was entered.") }
        return try text(bytes, naming: "the passcode")
    }

    /// One `write(2)`, not retried: a prompt the terminal did not take is not worth an error.
    private static func write(_ fd: FileDescriptor, _ text: String) {
        var text = text
        _ = text.withUTF8 { try? fd.write(UnsafeRawBufferPointer($0), retryOnInterrupt: false) }
    }
}

/// Restores the terminal's echo if SIGINT, SIGTERM or SIGHUP arrives while a passcode is read,
/// then lets the signal do what it would have done.
private enum TerminalRestore {
    // Read by the signal handler, so plain globals (set before the handler is installed).
    nonisolated(unsafe) static var fd: Int32 = -1
    nonisolated(unsafe) static var saved = termios()
    static let signals = [SIGINT, SIGTERM, SIGHUP]

    static func arm(fd: Int32, saved: termios) {
        Self.fd = fd
        Self.saved = saved
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                _ = tcsetattr(TerminalRestore.fd, TCSAFLUSH, &TerminalRestore.saved)
                Glibc.signal(signal, SIG_DFL)
                raise(signal)
            }
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
    }

    static func disarm() {
        for signal in signals { Glibc.signal(signal, SIG_DFL) }
        fd = -1
    }
}
