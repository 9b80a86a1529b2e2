import BusTestSupport
import Foundation
import Glibc
import InputTestSupport
import KioskCore
import KioskTestSupport
import KioskdProcessTestSupport
import Testing

/// kioskd with its state directory on a disk that breaks (docs/state-store.md § When the disk
/// fails): a 64 KiB tmpfs filled up, an ext4 remounted read-only, an ext4 on device-mapper whose
/// table becomes the `error` target (every I/O fails with EIO). Each scenario checks, printing
/// what the bus caller saw at each step: a change is refused with the disk's error;
/// `StateStorage` says so from the failure on (and from the start of a restarted kioskd); wrong
/// passcodes survive a restart (the seventh waits; with reads failing too, from the runtime
/// copy); an expired session comes back expired after a power cut with the disk still broken
/// (with reads failing: kioskd does not start until the disk is repaired, then fails closed),
/// and no free guess is left; once the disk is repaired kioskd's retries save
/// the state, `StateStorage` is empty again, and the journal said each once. VM only: root,
/// mounts, loop and device-mapper.
@Suite(
    "Real kernel: kioskd on a disk that fills up, goes read-only or fails (VM, root, tmpfs, loop, dm)",
    .serialized, .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct BrokenDiskVMTests {
    static let app = "org.example.MuseumMap"
    static let controls = "org.example.MuseumMap.controls"

    /// How a disk breaks and is repaired.
    enum Kind: String, CaseIterable, CustomStringConvertible {
        case fullTmpfs = "full tmpfs"
        case readOnlyExt4 = "ext4 remounted read-only"
        case eioDeviceMapper = "dm error target (EIO)"
        var description: String { rawValue }
    }

    /// The state directory's file system, mounted at `directory`.
    final class Disk {
        let kind: Kind
        let directory: String
        private let name = "kioskd-broken-\(getpid())"
        private var image: String { "/tmp/\(name).img" }

        init(_ kind: Kind, mountedAt directory: String) throws {
            self.kind = kind
            self.directory = directory
            switch kind {
            case .fullTmpfs:
                try Self.shell("mount -t tmpfs -o size=64k,mode=0700 kioskd-broken \(directory)")
            case .readOnlyExt4:
                try Self.shell(
                    """
                    set -e
                    modprobe loop; modprobe ext4
                    truncate -s 16M \(image)
                    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 \(image)
                    mount -t ext4 -o loop \(image) \(directory)
                    """)
            case .eioDeviceMapper:
                try Self.shell(
                    """
                    set -e
                    modprobe loop; modprobe dm_mod; modprobe ext4
                    truncate -s 16M \(image)
                    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 \(image)
                    dev=$(losetup --find --show \(image))
                    size=$(blockdev --getsz "$dev")
                    dmsetup --noudevsync create \(name) --table "0 $size linear $dev 0"
                    dmsetup --noudevsync mknodes \(name)
                    mount -t ext4 -o errors=continue /dev/mapper/\(name) \(directory)
                    """)
            }
        }

        /// Breaks it: fills it, remounts it read-only, or makes every I/O fail (the cache dropped,
        /// so that reading the state file fails too).
        func breakIt() throws {
            switch kind {
            case .fullTmpfs:
                try Self.shell("dd if=/dev/zero of=\(directory)/filler bs=4k 2>/dev/null; sync; true")
            case .readOnlyExt4:
                try Self.shell("mount -o remount,ro \(directory)")
            case .eioDeviceMapper:
                try Self.shell(
                    """
                    set -e
                    size=$(blockdev --getsz /dev/mapper/\(name))
                    dmsetup --noudevsync suspend --noflush \(name)
                    dmsetup --noudevsync reload \(name) --table "0 $size error"
                    dmsetup --noudevsync resume \(name)
                    echo 3 > /proc/sys/vm/drop_caches
                    if cat \(directory)/state.json >/dev/null 2>&1; then
                        echo "the state file still reads from the cache" >&2; exit 1
                    fi
                    """)
            }
        }

        /// Whether the state file no longer reads once broken (the `error` target, the page
        /// cache dropped), so that a start meets the read's I/O error, not only the write's.
        var readsFail: Bool { kind == .eioDeviceMapper }

        /// Repairs it: frees the space, remounts it writable, or puts the device back (the file
        /// system unmounted, checked and mounted again, as an admin replacing a failed path would).
        func repair() throws {
            switch kind {
            case .fullTmpfs:
                try Self.shell("rm -f \(directory)/filler")
            case .readOnlyExt4:
                try Self.shell("mount -o remount,rw \(directory)")
            case .eioDeviceMapper:
                try Self.shell(
                    """
                    set -e
                    umount -l \(directory)
                    dev=$(losetup -j \(image) | cut -d: -f1)
                    size=$(blockdev --getsz "$dev")
                    dmsetup --noudevsync reload \(name) --table "0 $size linear $dev 0"
                    dmsetup --noudevsync resume \(name)
                    e2fsck -p /dev/mapper/\(name) >/dev/null 2>&1 || e2fsck -y /dev/mapper/\(name) >/dev/null 2>&1 || true
                    mount -t ext4 /dev/mapper/\(name) \(directory)
                    """)
            }
        }

        func remove() { VMDisk.remove(directory: directory, mapperName: name, image: image) }

        deinit { remove() }

        @discardableResult
        static func shell(_ script: String) throws -> String { try VMDisk.shell(script, "the broken disk's step") }
    }

    /// A call as the bus caller sees it: its reply, or its error's message.
    static func attempt(
        _ kioskd: KioskdUnderTest, _ member: String, _ signature: String = "", _ args: [String] = []
    )
        -> String
    {
        do {
            let reply = try kioskd.call(member, signature, args).trimmingCharacters(in: .whitespacesAndNewlines)
            return "reply \(reply.isEmpty ? "()" : reply)"
        } catch {
            return "error \(error)"
        }
    }

    /// Prints and returns one step of what the bus caller saw.
    @discardableResult
    static func saw(_ kind: Kind, _ step: String, _ what: String) -> String {
        print("[\(kind)] \(step): \(what)")
        return what
    }

    /// `kioskctl status` (and with `--json`) as an admin at the kiosk sees it.
    static func status(_ kioskd: KioskdUnderTest, json: Bool = false) -> String {
        let out = try? runTool(
            BuildProducts.path(of: "kioskctl"), json ? ["status", "--json"] : ["status"],
            environment: kioskd.bus.environment, timeout: .seconds(30))
        return out.map { $0.status == 0 ? $0.stdout : "\($0)" } ?? "kioskctl did not run"
    }

    static func storage(_ kioskd: KioskdUnderTest) -> String {
        (try? kioskd.property("StateStorage")) ?? "unreadable"
    }

    @Test("the four promises hold when the state directory breaks", arguments: Kind.allCases)
    func theFourPromisesHold(_ kind: Kind) throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try KioskdUnderTest(bus: bus)
        let disk = try Disk(kind, mountedAt: kioskd.stateDirectory.path)
        defer {
            kioskd.stop(SIGKILL)
            disk.remove()
        }
        try kioskd.writeTestProfile("museum", app: Self.app, timeLimit: "8s")
        try kioskd.start()
        try kioskd.call("RegisterApplication", "sa(sss)", [Self.app, "1", Self.controls, "Map controls", "Pan"])
        try kioskd.call("StartSession", "s", ["museum"])
        #expect(Self.saw(kind, "StateStorage before", Self.storage(kioskd)) == #"(ts) 0 """#)

        // 1. The disk breaks: a change is refused with the disk's error; StateStorage says so.
        try disk.breakIt()
        let refused = Self.saw(
            kind, "SetRestrictionState deny",
            Self.attempt(kioskd, "SetRestrictionState", "sss", [Self.app, Self.controls, "deny"]))
        #expect(refused.contains("The change was not made"), "\(refused)\n\(kioskd.log)")
        let failing = Self.saw(kind, "StateStorage after the refusal", Self.storage(kioskd))
        #expect(failing.contains("The state cannot be saved"), "\(failing)")
        #expect(!failing.hasPrefix("(ts) 0 "), "\(failing)")
        let text = Self.saw(kind, "kioskctl status", "\n" + Self.status(kioskd))
        #expect(text.contains("storage      failing since"), "\(text)")
        let json = Self.saw(kind, "kioskctl status --json", Self.status(kioskd, json: true))
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let storageJSON = object?["state_storage"] as? [String: Any]
        #expect((storageJSON?["failing_since_usec"] as? Int ?? 0) > 0, "\(json)")
        #expect((storageJSON?["problem"] as? String)?.hasPrefix("The state cannot be saved") == true, "\(json)")

        // 2. Five wrong passcodes, counted although not saved; a kill -9 and a restart keep them:
        // the sixth is the last free one and the seventh waits (a restart that forgot them
        // would let both through).
        for n in 1...5 {
            let wrong = Self.saw(kind, "EndSession wrong #\(n)", Self.attempt(kioskd, "EndSession", "s", ["0000"]))
            #expect(wrong.contains("The passcode is wrong"), "\(wrong)")
        }
        let kept = Self.saw(kind, "StateStorage after the wrong passcodes", Self.storage(kioskd))
        #expect(kept.contains("kept in the runtime directory"), "\(kept)")
        kioskd.stop(SIGKILL)
        try kioskd.start()
        let afterRestart = Self.saw(kind, "StateStorage after kill -9 and restart", Self.storage(kioskd))
        #expect(afterRestart.contains("The state cannot be saved"), "\(afterRestart)\n\(kioskd.log)")
        if disk.readsFail {
            // The state file does not read: the runtime copy is served.
            #expect(
                kioskd.log.contains("serving the unsaved state this boot kept in the runtime directory"),
                "\(kioskd.log)")
        }
        let sixth = Self.saw(
            kind, "EndSession wrong #6 after the restart", Self.attempt(kioskd, "EndSession", "s", ["0000"]))
        #expect(sixth.contains("The passcode is wrong"), "\(sixth)")
        let seventh = Self.saw(
            kind, "EndSession #7 after the restart", Self.attempt(kioskd, "EndSession", "s", ["0000"]))
        #expect(seventh.contains("Too many wrong passcodes (6 in a row)"), "the seventh must wait: \(seventh)")

        // 3. The session's time runs out while the disk is broken; a power cut (kill -9, /run
        // emptied) with the disk still broken brings it back expired.
        let expired = try eventually(timeout: .seconds(30)) {
            try kioskd.property("SessionState")
        } until: {
            $0 == #"s "expired""#
        }
        Self.saw(kind, "SessionState once the time ran out", expired)
        #expect(expired == #"s "expired""#)
        kioskd.stop(SIGKILL)
        try kioskd.simulateReboot()
        if disk.readsFail {
            // Nothing to start from: no runtime copy, and the state file does not read. kioskd
            // does not start (its input stays hidden) until the disk reads again; the start
            // then cannot know what happened after the last save and fails closed.
            try kioskd.start(waitForName: false)
            let status = kioskd.waitForExit()
            Self.saw(kind, "kioskd after a power cut, the state file unreadable", "exit status \(status)")
            #expect(status == 1, "\(kioskd.log)")
            #expect(kioskd.log.contains("Could not read the state file; kioskd starts once it reads"), "\(kioskd.log)")
            #expect(FileManager.default.fileExists(atPath: kioskd.runtimeDirectory.path + "/state-unreadable"))
            try disk.repair()
        }
        try kioskd.start()
        let afterReboot = Self.saw(
            kind,
            disk.readsFail
                ? "SessionState after a power cut, a failed start and the repair"
                : "SessionState after a power cut, disk still broken", try kioskd.property("SessionState"))
        #expect(afterReboot == #"s "expired""#, "fail closed: \(afterReboot)\n\(kioskd.log)")
        // By the rule, not by time: the kiosk clock resumed from the start's save, 8 s before
        // the deadline.
        #expect(kioskd.log.contains("comes back expired"), "\(kioskd.log)")
        Self.saw(kind, "StateStorage after the power cut", Self.storage(kioskd))
        // Its deadline shows as passed: the kiosk clock moved on to it.
        let shown = Self.saw(kind, "kioskctl status after the power cut", "\n" + Self.status(kioskd))
        #expect(shown.contains(", passed"), "\(shown)")
        // The counts went with /run: no free guess is left, the next wrong one makes the one
        // after it wait.
        let first = Self.saw(
            kind, "EndSession wrong after the power cut", Self.attempt(kioskd, "EndSession", "s", ["0000"]))
        #expect(first.contains("The passcode is wrong"), "\(first)")
        let second = Self.saw(
            kind, "EndSession again after the power cut", Self.attempt(kioskd, "EndSession", "s", ["0000"]))
        #expect(second.contains("Too many wrong passcodes"), "\(second)\n\(kioskd.log)")

        // 4. The disk is repaired: kioskd's retries save the state; StateStorage is empty again.
        if !disk.readsFail { try disk.repair() }
        let recovered = eventually(timeout: .seconds(90), every: .milliseconds(200)) {
            Self.storage(kioskd)
        } until: {
            $0 == #"(ts) 0 """#
        }
        Self.saw(kind, "StateStorage after the repair", recovered)
        #expect(recovered == #"(ts) 0 """#, "\(kioskd.log)")
        Self.saw(kind, "kioskctl status after the repair", "\n" + Self.status(kioskd))
        // Once each way per kioskd: three were started on the broken disk (the first saw it
        // break, then the restart and the power cut), however many saves and retries failed.
        // With reads failing, the one after the power cut started on the repaired disk.
        let log = kioskd.log
        let starts = disk.readsFail ? 2 : 3
        #expect(log.components(separatedBy: "Saving the state fails;").count - 1 == starts, "\(log)")
        #expect(
            log.components(separatedBy: "Saving the state works again").count - 1 == (disk.readsFail ? 0 : 1), "\(log)")
        #expect(!FileManager.default.fileExists(atPath: kioskd.runtimeDirectory.path + "/state-unreadable"))
        let allowed = Self.saw(
            kind, "SetRestrictionState deny after the repair",
            Self.attempt(kioskd, "SetRestrictionState", "sss", [Self.app, Self.controls, "deny"]))
        #expect(allowed == "reply ()", "\(allowed)")
        let onDisk = String(decoding: kioskd.stateBytes ?? Data(), as: UTF8.self)
        #expect(onDisk.contains(#""state":"expired""#), "the expired session is on disk: \(onDisk.prefix(400))")
        kioskd.stop()
        try kioskd.start()
        let restarted = Self.saw(kind, "SessionState after a clean restart", try kioskd.property("SessionState"))
        #expect(restarted == #"s "expired""#)
        #expect(Self.storage(kioskd) == #"(ts) 0 """#)
    }

    @Test(
        "with the runtime directory full too, the counts are kept in memory and StateStorage says so; each directory's failure and recovery is logged once"
    )
    func aFullRuntimeDirectoryIsSaidAndRecovered() throws {
        let kind = Kind.fullTmpfs
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try KioskdUnderTest(bus: bus)
        let disk = try Disk(kind, mountedAt: kioskd.stateDirectory.path)
        let run = kioskd.runtimeDirectory.path
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        try Disk.shell("mount -t tmpfs -o size=64k,mode=0700 kioskd-run \(run)")
        defer {
            kioskd.stop(SIGKILL)
            _ = try? Disk.shell("umount -l \(run)")
            disk.remove()
        }
        try kioskd.writeTestProfile("museum", app: Self.app)
        try kioskd.start()
        try kioskd.call("StartSession", "s", ["museum"])
        try disk.breakIt()
        try Disk.shell("dd if=/dev/zero of=\(run)/filler bs=4k 2>/dev/null; true")
        let wrong = Self.saw(kind, "run full: EndSession wrong #1", Self.attempt(kioskd, "EndSession", "s", ["0000"]))
        #expect(wrong.contains("The passcode is wrong"), "\(wrong)")
        let memoryOnly = Self.saw(kind, "run full: StateStorage", Self.storage(kioskd))
        #expect(memoryOnly.contains("in memory only (Could not write \(run)/"), "\(memoryOnly)")
        #expect(memoryOnly.contains("No space left on device"), "\(memoryOnly)")
        Self.saw(kind, "run full: EndSession wrong #2", Self.attempt(kioskd, "EndSession", "s", ["0000"]))
        // The runtime directory has room again: the next kept change is copied there.
        try Disk.shell("rm -f \(run)/filler")
        Self.saw(kind, "run freed: EndSession wrong #3", Self.attempt(kioskd, "EndSession", "s", ["0000"]))
        let kept = Self.saw(kind, "run freed: StateStorage", Self.storage(kioskd))
        #expect(kept.contains("kept in the runtime directory until they are saved"), "\(kept)")
        #expect(FileManager.default.fileExists(atPath: run + "/pending-state.json"))
        try disk.repair()
        let recovered = eventually(timeout: .seconds(90), every: .milliseconds(200)) {
            Self.storage(kioskd)
        } until: {
            $0 == #"(ts) 0 """#
        }
        Self.saw(kind, "both repaired: StateStorage", recovered)
        #expect(recovered == #"(ts) 0 """#, "\(kioskd.log)")
        #expect(!FileManager.default.fileExists(atPath: run + "/pending-state.json"), "the copy is removed once saved")
        let log = kioskd.log
        let count = { (line: String) in log.components(separatedBy: line).count - 1 }
        #expect(count("Could not keep the unsaved state in the runtime directory") == 1, "\(log)")
        #expect(count("The runtime directory keeps the unsaved state again") == 1, "\(log)")
        #expect(count("Saving the state fails;") == 1 && count("Saving the state works again") == 1, "\(log)")
        let onDisk = String(decoding: kioskd.stateBytes ?? Data(), as: UTF8.self)
        #expect(onDisk.contains(#""uid 0":{"failures":3"#), "three wrong passcodes on disk: \(onDisk.prefix(600))")
    }
}
