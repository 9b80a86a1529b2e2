import Glibc
import LinuxInput
import SystemPackage
import SystemdKit
import Testing

/// EvdevError carries SystemdKit's `Errno` (one errno type for the whole project): its code is
/// derived from the errno, and its sentence names the node, the call, strerror and the number.
@Suite struct EvdevErrorTests {
    @Test(
        "codes come from the errno value",
        arguments: [
            (EBUSY, EvdevError.Code.busy), (ENODEV, .noDevice), (EACCES, .permissionDenied), (EPERM, .permissionDenied),
            (ENOENT, .notFound), (ENOTTY, .notInputDevice), (EIO, .system),
        ])
    func codes(errno: Int32, code: EvdevError.Code) {
        let error = EvdevError(Errno(rawValue: errno), path: "/dev/input/event3", operation: "ioctl(EVIOCGRAB)")
        #expect(error.code == code)
        #expect(error.errno == Errno(rawValue: errno))
    }

    @Test("EINVAL means not an evdev node only from libevdev_new_from_fd")
    func invalidArgument() {
        #expect(
            EvdevError(Errno(rawValue: EINVAL), path: "/dev/null", operation: "libevdev_new_from_fd").code
                == .notInputDevice)
        #expect(EvdevError(Errno(rawValue: EINVAL), path: "/dev/uinput", operation: "write").code == .system)
    }

    @Test("the description is a sentence with the node, the call, strerror and the errno number")
    func descriptions() {
        #expect(
            EvdevError(Errno(rawValue: EBUSY), path: "/dev/input/event3", operation: "ioctl(EVIOCGRAB)").description
                == "/dev/input/event3 is busy: ioctl(EVIOCGRAB) failed with Device or resource busy (errno 16); another process holds the grab."
        )
        #expect(
            EvdevError(Errno(rawValue: EIO), path: "/dev/uinput", operation: "write").description
                == "write on /dev/uinput failed with Input/output error (errno 5).")
        #expect(
            EvdevError(Errno(rawValue: EACCES), path: "/dev/input/event0", operation: "open").description
                == "/dev/input/event0 is not accessible: open failed with Permission denied (errno 13); kioskd needs root or the input group."
        )
    }
}
