import KioskInput
import Logging
import SystemdKit

import struct SystemPackage.Errno
import struct SystemPackage.FileDescriptor

// The window before the grab: from the kernel making an evdev node until kioskd grabs it, the
// node's events reach the kernel's own handlers (VT switching, SysRq) and any reader. udev takes
// 100–300 ms to run its rules; the kernel's own uevent comes at once. So the broker listens to
// the kernel too (a NETLINK_KOBJECT_UEVENT socket of its own on the kernel's group: sd-device's
// monitor in libsystemd 252 listens to udev only), grabs each new node it announces, and holds it
// grabbed and not forwarded until udev's record completes the decision (calibration, rules):
// fail closed. The clone waits for udev.

extension InputBroker {
    /// A node grabbed on the kernel's uevent, waiting for udev's record.
    final class EarlyNode {
        let evdev: EvdevDevice
        let description: DeviceDescription
        /// When the uevent was read and when `EVIOCGRAB` returned (CLOCK_MONOTONIC, µs).
        let receivedAt: UInt64
        let grabbedAt: UInt64
        var udevTimer: EventSource?

        init(evdev: EvdevDevice, description: DeviceDescription, receivedAt: UInt64, grabbedAt: UInt64) {
            self.evdev = evdev
            self.description = description
            self.receivedAt = receivedAt
            self.grabbedAt = grabbedAt
        }
    }

    /// An early grab, as tests and benchmarks see it: times on CLOCK_MONOTONIC, µs.
    public struct EarlyGrab: Sendable, Hashable {
        public var path: String
        public var syspath: String
        /// When the broker read the kernel's uevent.
        public var receivedAt: UInt64
        /// When `EVIOCGRAB` returned.
        public var grabbedAt: UInt64
    }

    /// The kernel's uevent socket: opened and watched at ``start()``. Failing, the broker goes on
    /// with udev's monitor alone (and says so).
    func listenToKernel() {
        do {
            let fd = try Libevdev.ueventSocket(receiveBufferSize: 1 << 20)
            kernelSocket = fd
            kernelSource = try loop.addIO(fd: fd.rawValue, events: .readable) { [unowned self] _ in readKernelUevents()
            }
            // The first uevent parsed pays the process's one-time runtime work for that code
            // (generic metadata, conformance lookups): 86 ms in the emulated VM, which the first
            // device plugged in would spend not yet grabbed. Paid here, at start.
            if KernelUevent(datagram: Self.sampleUevent)?.eventNode == nil {
                logger.debug("The sample kernel uevent did not parse")
            }
        } catch {
            logger.warning(
                "Could not listen to the kernel's input device uevents; new devices are grabbed once udev has run its rules",
                metadata: ["error": "\(Errno.reason(of: error))"])
            stopListeningToKernel()
        }
    }

    func stopListeningToKernel() {
        kernelSource?.cancel()
        kernelSource = nil
        if let kernelSocket { try? kernelSocket.close() }
        kernelSocket = nil
    }

    /// A kernel uevent as one for a new evdev node looks (parsed once at start, see above).
    static let sampleUevent = Array(
        ("add@/devices/virtual/input/input0/event0\0ACTION=add\0DEVPATH=/devices/virtual/input/input0/event0\0"
            + "SUBSYSTEM=input\0MAJOR=13\0MINOR=64\0DEVNAME=input/event0\0SEQNUM=1\0").utf8)

    private func readKernelUevents() {
        guard let kernelSocket else { return }
        while true {
            let length: Int?
            do {
                length = try Libevdev.receiveUevent(kernelSocket, into: &ueventBuffer)
            } catch {
                // ENOBUFS: uevents lost; udev's monitor (and its overflow relist) still has them.
                logger.debug("Lost kernel uevents", metadata: ["error": "\(Errno.reason(of: error))"])
                continue
            }
            guard let length else { return }
            guard let uevent = KernelUevent(datagram: ueventBuffer[..<length]), uevent.eventNode != nil else {
                continue
            }
            switch uevent.action {
            case "add": perform(lifecycle.kernelAdded(uevent))
            case "remove" where early[uevent.syspath] != nil: perform(lifecycle.removed(uevent.syspath))
            default: break
            }
        }
    }

    /// Opens the node the kernel announced and grabs it, unless it is a clone or has nothing a
    /// profile locks (then it is closed at once, never grabbed) or cannot be taken (udev's `add`
    /// tries it as ever).
    func grabEarly(_ uevent: KernelUevent) {
        let receivedAt = UInt64(loop.now(.monotonic))
        let syspath = uevent.syspath
        guard let path = uevent.eventNode else { return perform(lifecycle.earlyGrabFailed(syspath)) }
        // Grabbed before libevdev reads it (the window is one open and one ioctl long); a
        // clone of kioskd's is recognised by its phys and never grabbed.
        let evdev: EvdevDevice
        let grabbedAt: UInt64
        do {
            guard let grabbed = try EvdevDevice.grabbingFirst(path: path, skippingPhys: UInputClone.physMarker) else {
                return perform(lifecycle.earlyGrabFailed(syspath))
            }
            (evdev, grabbedAt) = grabbed
        } catch {
            // Gone, or another process holds it (udev's add says so, once it comes).
            logger.debug("Could not grab a new input device early", metadata: ["device.path": "\(path)"].adding(error))
            return perform(lifecycle.earlyGrabFailed(syspath))
        }
        let description = evdev.deviceDescription
        guard uevent.devnum == nil || evdev.deviceNumber == uevent.devnum, description.shouldBroker else {
            evdev.close()  // nothing a profile locks, or not the node announced: let go at once
            return perform(lifecycle.earlyGrabFailed(syspath))
        }
        try? evdev.useMonotonicClock()
        let node = EarlyNode(evdev: evdev, description: description, receivedAt: receivedAt, grabbedAt: grabbedAt)
        early[syspath] = node
        let metadata: Logger.Metadata = ["device.path": "\(path)", "device.name": "\(description.name)"]
        logger.debug("Grabbed a new input device on the kernel's uevent; waiting for udev", metadata: metadata)
        let wait = udevWait
        node.udevTimer = try? loop.addTimer(after: wait, accuracy: .milliseconds(100)) { [unowned self] in
            guard early[syspath] === node else { return }
            logger.error(
                "udev has not processed a new input device; it stays grabbed and silent until udev has",
                metadata: metadata.merging(["udev.wait-seconds": "\(wait.components.seconds)"]) { $1 })
        }
        onGrabbedEarly?(EarlyGrab(path: path, syspath: syspath, receivedAt: receivedAt, grabbedAt: grabbedAt))
    }

    /// The node grabbed early for udev's `device`, handed over (its timer stopped); nil if none,
    /// or if it is not the device udev means (then it is closed).
    func takeEarly(_ device: Device) -> EarlyNode? {
        guard let node = early.removeValue(forKey: device.syspath) else { return nil }
        node.udevTimer?.cancel()
        node.udevTimer = nil
        if let expected = device.devnum, node.evdev.deviceNumber != expected {
            node.evdev.close()
            return nil
        }
        return node
    }

    /// Lets go of a node grabbed early (removed, or the broker stops).
    func releaseEarly(_ syspath: String) {
        guard let node = early.removeValue(forKey: syspath) else { return }
        node.udevTimer?.cancel()
        node.evdev.close()
    }
}
