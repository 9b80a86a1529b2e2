#if canImport(Glibc)
import Glibc
#endif

/// What a harness does with one input: return normally, or stop the process (`fatalError`,
/// a sanitizer's report) when the input breaks something. Set once, by ``runFuzzer(_:)``.
nonisolated(unsafe) private var harnessBody: ([UInt8]) -> Void = { _ in }

#if KIOSKD_FUZZING
/// libFuzzer's driver (`-sanitize=fuzzer` links it): parses libFuzzer's flags from argv and
/// calls `callback` with each input it makes. The harness owns `main`, so libFuzzer's own
/// `main` is not linked.
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The harness's entry for libFuzzer: one input, handed to the harness's body. Under the name
/// libFuzzer's own `main` would call, because that `main` is linked too (the link resolves it
/// before SwiftPM's `--defsym main=…` puts the harness's `main` in its place) and needs it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    harnessBody(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
#endif

/// Runs a harness: under libFuzzer (built with `-D KIOSKD_FUZZING` and `-sanitize=fuzzer`, as
/// `make fuzz` does) libFuzzer's driver feeds `body` with inputs of its making, and takes its
/// usual flags and corpus directories; in a plain build, each file (or each file of each
/// directory) named on the command line is fed to `body` once, which replays a corpus or a
/// crash input without the sanitizers (docs/testing.md § Fuzzing).
public func runFuzzer(_ body: @escaping ([UInt8]) -> Void) -> Never {
    harnessBody = body
    #if KIOSKD_FUZZING
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
    #else
    var count = 0
    for path in CommandLine.arguments.dropFirst() {
        for file in files(at: path) {
            guard let bytes = readFile(file) else {
                print("cannot read \(file)")
                exit(2)
            }
            body(bytes)
            count += 1
        }
    }
    print("replayed \(count) inputs")
    exit(0)
    #endif
}

/// Whether `FUZZ_VERBOSE` is set: a harness then prints what it decoded from its input and what
/// came out, to turn a failing input into a regression test (docs/testing.md § Fuzzing).
public let fuzzVerbose = getenv("FUZZ_VERBOSE") != nil

/// Writes a line to standard error at once (unbuffered: a failing check stops the process right
/// after), when ``fuzzVerbose``.
public func trace(_ line: @autoclosure () -> String) {
    guard fuzzVerbose else { return }
    let text = line() + "\n"
    _ = text.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
}

/// The regular files at `path`: itself, or the files directly in it (sorted), for a directory.
private func files(at path: String) -> [String] {
    guard let dir = opendir(path) else { return [path] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { names.append(path + "/" + name) }
    }
    return names.sorted()
}

/// The whole content of a file, or nil when it cannot be read.
private func readFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n > 0 { bytes += buffer[..<n] }
        if n < buffer.count { return ferror(file) == 0 ? bytes : nil }
    }
}

/// Reads typed values off the front of a fuzz input; past its end every read gives zero, so a
/// harness decodes any input, however short, into a case.
public struct FuzzInput {
    private let bytes: [UInt8]
    private var position = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte has been read.
    public var isEmpty: Bool { position >= bytes.count }

    /// The bytes not read yet.
    public var remaining: ArraySlice<UInt8> { bytes[min(position, bytes.count)...] }

    /// The next byte, or 0.
    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// The next two bytes, little-endian.
    public mutating func uint16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    /// The next four bytes, little-endian.
    public mutating func uint32() -> UInt32 { UInt32(uint16()) | UInt32(uint16()) << 16 }

    /// The next four bytes as a signed number.
    public mutating func int32() -> Int32 { Int32(bitPattern: uint32()) }

    /// The next byte's lowest bit.
    public mutating func bool() -> Bool { byte() & 1 == 1 }

    /// A number in `0..<count` (`count` > 0) from the next byte.
    public mutating func choose(_ count: Int) -> Int { Int(byte()) % count }

    /// A fraction from the next byte: −0.5 … 1.5 in steps of 1/128, so regions reach past the
    /// screen's edges too.
    public mutating func fraction() -> Double { Double(byte()) / 128 - 0.5 }

    /// Up to `limit` bytes as text, read as UTF-8 with invalid bytes replaced.
    public mutating func text(limit: Int) -> String {
        let count = min(choose(limit + 1), max(0, bytes.count - position))
        defer { position += count }
        return String(decoding: bytes[position..<position + count], as: UTF8.self)
    }
}
