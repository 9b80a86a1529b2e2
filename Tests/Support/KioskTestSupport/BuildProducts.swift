import Foundation

/// Finds executables built by SwiftPM next to the running test bundle.
public enum BuildProducts {
    /// The sanitizers' options of this test process (`ASAN_OPTIONS`, `LSAN_OPTIONS`,
    /// `TSAN_OPTIONS`, as `make test-asan` and `make test-tsan` set them), for a test that runs a
    /// built tool with an environment of its own: under a sanitizer the tool is instrumented too,
    /// and without them its report at exit would land in the output the test compares.
    public static var sanitizerEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.filter {
            ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"].contains($0.key)
        }
    }

    public static func path(of executable: String) -> String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(executable).path),
            directory.path != "/"
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent(executable).path
    }

    /// Runs an executable to completion, returning its exit status, stdout and stderr.
    public static func run(
        _ executable: String, _ arguments: [String], stdin: String? = nil
    ) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path(of: executable))
        process.arguments = arguments
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Drain stderr on another thread while reading stdout, so neither pipe fills up.
        nonisolated(unsafe) var stderrData = Data()
        let drained = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            stderrData = err.fileHandleForReading.readDataToEndOfFile()
            drained.signal()
        }
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: stdoutData, as: UTF8.self),
            String(decoding: stderrData, as: UTF8.self)
        )
    }
}
