import BusTestSupport
import Foundation

/// What the VM tests' disks share (`SlowDiskVMTests`, `BrokenDiskVMTests`): a shell step, and
/// the teardown of a file system mounted from an image file, on a loop device, perhaps through
/// device-mapper.
enum VMDisk {
    /// Runs `script` with `/bin/sh -c` (60 s at most); a failure throws, naming `what`.
    @discardableResult
    static func shell(_ script: String, _ what: String) throws -> String {
        let out = try runTool("/bin/sh", ["-c", script], timeout: .seconds(60))
        guard out.status == 0 else { throw HarnessError("\(what) failed: \(out)") }
        return out.stdout
    }

    /// Unmounts `directory` (lazily: a kioskd killed a moment ago may still hold it), removes
    /// the device-mapper device `name`, detaches every loop device on `image` and deletes it;
    /// whatever is not there is skipped.
    static func remove(directory: String, mapperName name: String, image: String) {
        _ = try? shell(
            """
            umount -l \(directory) 2>/dev/null
            dmsetup --noudevsync remove \(name) 2>/dev/null
            for dev in $(losetup -j \(image) | cut -d: -f1); do losetup -d "$dev"; done
            rm -f \(image)
            true
            """, "removing the disk")
    }
}
