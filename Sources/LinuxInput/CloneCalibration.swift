import KioskFiles
import KioskInput
import SystemPackage

/// The calibration a clone carries to libinput: the very matrix the filter judges the physical
/// node's touches with.
///
/// libinput reads `LIBINPUT_CALIBRATION_MATRIX` from udev, per device. An admin's rule that sets
/// it by the touchscreen's place (`ENV{ID_PATH}`, `ATTRS{phys}`, `KERNELS`) matches the physical
/// node only: a uinput clone is virtual, has no `ID_PATH` and a phys of kioskd's own. So the
/// filter would judge regions with one matrix and libinput place the touch with another (a
/// touch judged outside a locked region lands inside it). kioskd cannot set udev properties
/// itself (its sandbox), so it leaves a file for udev: before `UI_DEV_CREATE` it writes
/// `<directory>/<n>`, one line, `LIBINPUT_CALIBRATION_MATRIX=a b c d e f`, and names `n` at the
/// end of the clone's phys (``UInputClone/phys(forSource:calibration:)``). For any clone whose
/// phys names one, `99-zz-kioskd-calibration.rules` has `kioskd-clone-calibration` print that
/// file after every other rule, so the clone's property is the file's whatever the admin's
/// rules matched. The file lives as long as the clone: a `udevadm trigger` on the clone imports
/// it again.
///
/// Only a node whose udev record has a valid matrix gets a file and a numbered phys; without
/// one both sides use the identity, or the same matrix from a rule that matches both (by name).
/// The numbers start at 1 with each kioskd: a file a crashed kioskd left behind is written
/// again before a new clone names it, and no clone names one that was not.
struct CloneCalibration {
    /// Where the files go: `/run/kioskd/calibration` (kioskd's `RuntimeDirectory=`), the
    /// directory `99-zz-kioskd-calibration.rules` hands the helper.
    let directory: String
    /// The number of the next file: one per clone, never reused while kioskd runs, so a clone
    /// made again after a `change` never shares a file with the one it replaces.
    private var next = 1

    init(directory: String) {
        self.directory = directory
    }

    /// The text of the file for `matrix`: plain decimal numbers that read back the same
    /// (`-1.0`, `0.00001`, never an exponent libinput would refuse), which libinput reads as the
    /// filter does.
    static func line(_ matrix: CalibrationMatrix) -> String {
        "LIBINPUT_CALIBRATION_MATRIX=" + matrix.udevProperty + "\n"
    }

    /// Writes the file for a new clone's `matrix` (creating ``directory``, 0700, if missing) and
    /// returns its number; a failure throws with the path, and no clone must be made then.
    mutating func write(_ matrix: CalibrationMatrix) throws(EvdevError) -> Int {
        let number = next
        next += 1
        let path = path(of: number)
        // Written whole under another name and renamed: udev never reads half a line.
        do {
            try Files.makePrivateDirectory(directory)
            try Files.replace(path, with: Array(Self.line(matrix).utf8), durable: false)
        } catch {
            throw EvdevError(error.errno, path: error.path, operation: error.operation)
        }
        return number
    }

    /// Removes file `number`, once its clone is gone (or was never made).
    func remove(_ number: Int) {
        Files.remove(path(of: number))
    }

    private func path(of number: Int) -> String { directory + "/\(number)" }
}
