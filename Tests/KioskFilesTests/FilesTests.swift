import Foundation
import KioskFiles
import SystemPackage
import Testing

/// KioskFiles, the one file layer of the daemon and the store, on a real file system.
@Suite struct FilesTests {
    /// A fresh private directory, removed afterwards.
    func withDirectory(_ body: (String) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-files-\(UUID().uuidString)").path
        try Files.makePrivateDirectory(directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(directory)
    }

    @Test func aRegularFileIsReadWithItsModeAndOwner() throws {
        try withDirectory { directory in
            let path = directory + "/a.toml"
            try Data("hello".utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
            let read = try Files.readRegular(path, limit: 1024)
            #expect(read.bytes == Array("hello".utf8))
            #expect(read.mode & 0o7777 == 0o640 && read.mode & 0o170000 == 0o100000)
            #expect(read.owner == getuid())
        }
    }

    @Test func whatIsNotARegularFileIsRefusedAtOnce() throws {
        try withDirectory { directory in
            // A FIFO with no writer: a blocking open would wait forever.
            let fifo = directory + "/fifo.toml"
            #expect(mkfifo(fifo, 0o600) == 0)
            #expect(throws: FileError("read a regular file at", fifo, .invalidArgument)) {
                try Files.readRegular(fifo, limit: 1024)
            }
            let sub = directory + "/dir.toml"
            try Files.makePrivateDirectory(sub)
            #expect(throws: FileError("read a regular file at", sub, .isDirectory)) {
                try Files.readRegular(sub, limit: 1024)
            }
            #expect(throws: FileError("read a regular file at", "/dev/null", .invalidArgument)) {
                try Files.readRegular("/dev/null", limit: 1024)
            }
            #expect(throws: FileError("open", directory + "/absent", .noSuchFileOrDirectory)) {
                try Files.readRegular(directory + "/absent", limit: 1024)
            }
        }
    }

    @Test func aFileOverTheLimitIsRefused() throws {
        try withDirectory { directory in
            let path = directory + "/big"
            try Data(repeating: 0x41, count: 1025).write(to: URL(fileURLWithPath: path))
            #expect(throws: FileError("read", path, .fileTooLarge, limit: 1024)) { try Files.readRegular(path, limit: 1024) }
            #expect(try Files.readRegular(path, limit: 1025).bytes.count == 1025)
        }
    }

    @Test(arguments: [false, true])
    func replaceSwapsTheWholeFileAndLeavesNoTemporary(durable: Bool) throws {
        try withDirectory { directory in
            let path = directory + "/state.json"
            try Files.replace(path, with: Array("old".utf8), durable: durable)
            try Files.replace(path, with: Array("new".utf8), durable: durable)
            #expect(try Files.readRegular(path, limit: 16).bytes == Array("new".utf8))
            #expect(try Files.readRegular(path, limit: 16).mode & 0o777 == 0o600)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["state.json"])
            #expect(Files.temporaryPath(for: path) == directory + "/.state.json.tmp")
        }
    }

    struct Refused: Error {}

    @Test func aFailedWriteKeepsTheOldFileAndRemovesTheNewOne() throws {
        try withDirectory { directory in
            let path = directory + "/state.json"
            try Files.replace(path, with: Array("old".utf8), durable: true)
            #expect(throws: Refused.self) {
                try Files.replace(path, durable: true) { writer in
                    try writer.write(Array("half".utf8))
                    throw Refused()
                }
            }
            #expect(try Files.readRegular(path, limit: 16).bytes == Array("old".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["state.json"])
        }
    }

    /// The words kioskd and the command-line tools put after a refused file's path.
    @Test func aRefusalIsWordedByWhatTheFileIs() throws {
        try withDirectory { directory in
            let fifo = directory + "/fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            let big = directory + "/big"
            try Data(repeating: 0x41, count: 2049).write(to: URL(fileURLWithPath: big))
            func reason(_ path: String, _ limit: Int = 1 << 20) -> String? {
                do {
                    _ = try Files.readRegular(path, limit: limit)
                    return nil
                } catch { return error.reason }
            }
            #expect(reason(directory + "/absent") == "no such file")
            #expect(reason(directory) == "is a directory")
            #expect(reason(fifo) == "is not a regular file")
            #expect(reason(big, 1024) == "is larger than 1 KiB")
            #expect(reason(big) == nil)
        }
    }

    @Test func errorsNameTheOperationAndThePath() throws {
        let error = try #require(
            throws: FileError.self, performing: { try Files.replace("/nonexistent-dir/x", with: [1], durable: false) })
        #expect(error.errno == .noSuchFileOrDirectory)
        #expect(error.description == "Could not create /nonexistent-dir/.x.tmp: \(Errno.noSuchFileOrDirectory.description).")
    }

    @Test func aPrivateDirectoryIs0700AndAnExistingOneIsLeftAlone() throws {
        try withDirectory { directory in
            let sub = directory + "/run"
            try Files.makePrivateDirectory(sub)
            let mode = try #require(FileManager.default.attributesOfItem(atPath: sub)[.posixPermissions] as? Int)
            #expect(mode & 0o777 == 0o700 & ~Int(umaskValue()))
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: sub)
            try Files.makePrivateDirectory(sub)  // exists: no error, and its mode stays
            let kept = try #require(FileManager.default.attributesOfItem(atPath: sub)[.posixPermissions] as? Int)
            #expect(kept & 0o777 == 0o755)
        }
    }

    func umaskValue() -> mode_t {
        let old = umask(0)
        umask(old)
        return old
    }

    @Test func namesAreSortedFilteredAndCapped() throws {
        try withDirectory { directory in
            for name in ["b.toml", "a.toml", "c.txt", ".toml", "d.toml"] {
                try Data().write(to: URL(fileURLWithPath: directory + "/" + name))
            }
            #expect(Files.names(in: directory, ending: ".toml", limit: 10) == ["a", "b", "d"])
            #expect(Files.names(in: directory, ending: ".toml", limit: 2).count == 2)
            #expect(Files.names(in: directory + "/absent", ending: ".toml", limit: 10) == [])
        }
    }
}
