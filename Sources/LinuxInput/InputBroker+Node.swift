import KioskInput
import Logging
import SystemdKit

import struct SystemPackage.Errno

extension InputBroker {
    /// A node kioskd has open: being taken, brokered (``clone`` and ``id`` set, watched), or held
    /// silent (grabbed, nothing else).
    final class Node {
        /// The udev device as the node was taken with (its add, or the change it was cloned again for).
        let device: Device
        let evdev: EvdevDevice
        /// What the clone is made from, as read from the node (no calibration).
        let description: DeviceDescription
        // clone, id and writeFailed are read on every input frame from the broker's loop only:
        // no run-time exclusivity check (see InputBroker's per-frame storage).
        @exclusivity(unchecked) var clone: UInputClone? {
            didSet { unmanagedClone = clone.map { Unmanaged.passUnretained($0) } }
        }
        /// ``clone`` without a reference count of its own, for the flush
        /// (``InputBroker/flush(from:)``), which holds no strong reference to it: ``clone``
        /// keeps it alive, and nothing in the flush sets ``clone``.
        @exclusivity(unchecked) private(set) var unmanagedClone: Unmanaged<UInputClone>?
        /// The matrix the filter judges the node's touches with, from ``device``; the clone
        /// carries it to libinput through file ``calibrationFile`` (``CloneCalibration``).
        var calibration: CalibrationMatrix?
        var calibrationFile: Int?
        /// Why the clone was made without the node's pointer (``FilterPolicy/pointerHiding(of:)``);
        /// nil: it has the node's pointer, as everything else of it.
        var pointerHidden: PointerHiding?
        @exclusivity(unchecked) var id: DeviceID?
        var input: EventSource?
        var feedback: EventSource?
        @exclusivity(unchecked) var writeFailed = false

        init(device: Device, evdev: EvdevDevice, description: DeviceDescription) {
            self.device = device
            self.evdev = evdev
            self.description = description
        }

        /// The node as status shows it, if it is brokered.
        var summary: BrokeredDevice? {
            guard let clone else { return nil }
            return BrokeredDevice(
                path: evdev.path, syspath: device.syspath, name: description.name, clonePath: clone.devnode)
        }

        var metadata: Logger.Metadata {
            ["device.path": "\(evdev.path)", "device.name": "\(description.name)"]
        }
    }

    /// The step a lifecycle notice is about, which words it.
    enum Step {
        case node, open, busy, grab, clone, watch, read, reload, reclone, pointerReclone, change

        /// What went wrong at this step.
        private var failure: String {
            switch self {
            case .open: "Could not open an input device"
            case .busy: "Another process holds the grab of an input device"
            case .grab: "Could not grab an input device"
            case .clone: "Could not create the clone of an input device"
            case .watch: "Could not watch an input device"
            case .read: "Could not read an input device"
            case .reload: "Could not read an input device again after a change"
            case .reclone: "Could not clone an input device again after a change"
            case .pointerReclone: "Could not clone an input device again to hide or show its pointer"
            case .node, .change: "An input device failed"
            }
        }

        /// What `notice` says at this step: its level, its words and their metadata.
        func line(
            _ notice: NodeLifecycle<Device>.Notice, _ metadata: Logger.Metadata
        )
            -> (level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata)
        {
            switch notice {
            case .escapingLocks(let reason):
                let words =
                    self == .clone
                    ? notBrokered : "\(failure); its events escape the session's locks until kioskd can take it"
                return (.error, words, metadata.retrying(reason))
            case .notBrokered(let reason): return (.warning, notBrokered, metadata.retrying(reason))
            case .stillNotBrokered(let reason):
                return (.debug, "Tried an input device again; it is still not brokered", metadata.retrying(reason))
            case .tookGrab: return (.info, "Took the grab of an input device another process had held", metadata)
            case .heldSilent: return (.error, "\(failure); it is held silent until the session ends", metadata)
            case .releasedToRetry: return (.error, "\(failure); it is released and tried again later", metadata)
            case .removed: return (.info, "Input device removed", metadata)
            case .releasedNothingToLock:
                return (.info, "Input device changed and has nothing a profile locks; released", metadata)
            case .releasedHeld(let count, let retried):
                return (
                    .warning,
                    retried
                        ? "Released the input devices held silent during the session; they are tried again"
                        : "Released the input devices held silent during the session",
                    ["device.count": "\(count)"]
                )
            }
        }

        /// Not brokered, outside a session.
        private var notBrokered: Logger.Message {
            self == .busy
                ? "\(failure); kioskd takes it once it is released"
                : "\(failure); it is not brokered, and tried again later"
        }
    }
}

extension Logger.Metadata {
    func adding(_ error: any Error) -> Logger.Metadata {
        merging(["error": "\(Errno.reason(of: error))"]) { $1 }
    }

    /// With why the node is retried (`device.retry`: `busy` or `failed`).
    func retrying(_ reason: NodeLifecycle<Device>.Retry.Reason) -> Logger.Metadata {
        merging(["device.retry": "\(reason.rawValue)"]) { $1 }
    }
}
