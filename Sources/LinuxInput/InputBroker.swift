import CEvdev
import KioskInput
import Logging
import SystemdKit

/// The input broker of DESIGN §4: every input node with keys, buttons or touch goes through
/// kioskd's filter on its way to the kiosk.
///
/// For each such node, found at ``start()`` (sd-device enumeration) or plugged in later (the
/// udev monitor's `add`), the broker opens it, reads its state, takes its grab (`EVIOCGRAB`),
/// creates its 1:1 uinput clone and registers it with the `InputFilter`; from then on every
/// frame the node reports goes through the filter and what is left reaches the clone in one
/// `write`. LEDs the kiosk sets on a clone go back to the node. A node that vanishes (monitor
/// `remove`, or `ENODEV` on read) leaves the filter and its clone is destroyed, which releases
/// whatever was held on it. Every failure is one log line naming `device.path`; a node that
/// cannot be brokered (another process holds its grab, no uinput) is skipped, never fatal;
/// but while a session's locks are on, a node that fails after its grab (no clone, a read
/// error) stays grabbed and silent until the locks are lifted: a failure never unlocks it.
///
/// The broker decides nothing: what passes is the filter's policy (``setPolicy(_:)``). A
/// device plugged in during a session is under the current policy before its first event.
///
/// Everything runs on the daemon's one `sd_event` loop thread: create, call and release the
/// broker there. Nothing it does blocks.
public final class InputBroker {
    /// A node the broker holds, as status and tests see it.
    public struct BrokeredDevice: Hashable, Sendable {
        /// The physical node, e.g. `/dev/input/event3`.
        public var path: String
        public var syspath: String
        public var name: String
        /// The clone's node, e.g. `/dev/input/event9`.
        public var clonePath: String?
    }

    /// Called on the loop when the exit gesture completes (the daemon emits `ExitRequested`).
    public var onExitRequested: (() -> Void)?
    /// Called on the loop once a node is grabbed, cloned and filtered.
    public var onDeviceBrokered: ((BrokeredDevice) -> Void)?

    private let loop: EventLoop
    private let logger: Logger
    private let uinputPath: String
    private let filter: InputFilter
    private var output = OutputBuffer()
    private var events: [InputEvent] = []
    private var feedback: [InputEvent] = []
    private var monitor: DeviceMonitor?
    private var nodes: [String: Node] = [:]  // by syspath
    private var nodesByID: [Node?] = []  // by the filter's DeviceID
    /// Nodes seen and not brokered (clones, nothing to lock, grabbed elsewhere): not looked at
    /// again until they are removed.
    private var skipped: Set<String> = []
    /// Nodes that failed (no clone, no watch, a read error) while a session's locks were on:
    /// kept open and grabbed, so that their events reach no one, until the locks are lifted or
    /// the node is removed. Fail closed: a failure never unlocks a device mid-session.
    private var held: [String: EvdevDevice] = [:]  // by syspath

    /// A broker with `policy` in force from the first event. Call ``start()`` to take the devices.
    public init(loop: EventLoop, logger: Logger, policy: FilterPolicy = .passThrough, uinputPath: String = "/dev/uinput") {
        self.loop = loop
        self.logger = logger
        self.uinputPath = uinputPath
        filter = InputFilter(policy: policy)
        events.reserveCapacity(512)
        feedback.reserveCapacity(16)
    }

    deinit { stop() }

    /// The policy in force.
    public var policy: FilterPolicy { filter.policy }

    /// The nodes brokered now.
    public var devices: [BrokeredDevice] { nodes.values.map(\.summary).sorted { $0.path < $1.path } }

    /// Starts monitoring input devices (udev's source: after rules ran), then brokers every
    /// node that exists. The monitor comes first so that no node plugged in meanwhile is
    /// missed; a node both listed and announced is brokered once.
    ///
    /// The corresponding C calls are `sd_device_monitor_new` and `sd_device_enumerator_new`
    /// (see ``SystemdKit/DeviceMonitor`` and ``SystemdKit/DeviceEnumerator``).
    public func start() {
        do {
            monitor = try DeviceMonitor(subsystem: "input", loop: loop) { [unowned self] device in
                deviceChanged(device)
            }
        } catch {
            logger.error("Could not monitor input devices; devices plugged in later are not brokered",
                         metadata: ["error": "\(error)"])
        }
        do {
            for device in try DeviceEnumerator(subsystems: ["input"], sysnames: ["event*"]).devices() {
                adopt(device)
            }
        } catch {
            logger.error("Could not list input devices", metadata: ["error": "\(error)"])
        }
    }

    /// Releases every node (their clones are destroyed, the nodes ungrabbed: they deliver to
    /// everyone again) and stops monitoring. Safe to call twice.
    public func stop() {
        monitor?.stop()
        monitor = nil
        let count = nodes.count
        for node in Array(nodes.values) { release(node) }
        releaseHeld()
        if count > 0 { logger.info("Released the input devices", metadata: ["device.count": "\(count)"]) }
    }

    /// Puts `policy` in force for every node now and every node plugged in later. Keys held
    /// through their clones that the policy locks are released on the clones at once, and
    /// contacts ended when touch is turned off; their frames are written before this returns.
    public func setPolicy(_ policy: FilterPolicy) {
        guard policy != filter.policy else { return }
        filter.setPolicy(policy, into: &output)
        flush()
        if policy == .passThrough { releaseHeld() }
    }

    /// Whether a node that failed must stay grabbed: while any lock is on.
    private var holdsFailedNodes: Bool { filter.policy != .passThrough }

    /// Keeps a failed node grabbed and silent (see ``held``).
    private func hold(_ evdev: EvdevDevice, syspath: String) {
        held[syspath] = evdev
    }

    private func releaseHeld() {
        guard !held.isEmpty else { return }
        let count = held.count
        for evdev in held.values { evdev.close() }
        held.removeAll()
        logger.warning("Released the input devices held silent during the session; they are not brokered",
                       metadata: ["device.count": "\(count)"])
    }

    // MARK: Nodes

    private final class Node {
        let device: Device
        let evdev: EvdevDevice
        let clone: UInputClone
        let id: DeviceID
        let name: String
        var input: EventSource?
        var feedback: EventSource?
        var writeFailed = false

        init(device: Device, evdev: EvdevDevice, clone: UInputClone, id: DeviceID, name: String) {
            self.device = device
            self.evdev = evdev
            self.clone = clone
            self.id = id
            self.name = name
        }

        var path: String { evdev.path }

        var summary: BrokeredDevice {
            BrokeredDevice(path: evdev.path, syspath: device.syspath, name: name, clonePath: clone.devnode)
        }

        var metadata: Logger.Metadata {
            ["device.path": "\(evdev.path)", "device.name": "\(name)"]
        }
    }

    private func deviceChanged(_ device: Device) {
        switch device.action {
        case .add?:
            adopt(device)
        case .remove?:
            skipped.remove(device.syspath)
            held.removeValue(forKey: device.syspath)?.close()
            if let node = nodes[device.syspath] {
                release(node)
                logger.info("Input device removed", metadata: node.metadata)
            }
        default:
            break  // change, bind, …: the node stays as brokered
        }
    }

    /// Opens, grabs, clones and filters one node, unless it is not one to broker.
    private func adopt(_ device: Device) {
        guard device.sysname.hasPrefix("event"), let devnode = device.devnode, nodes[device.syspath] == nil,
              held[device.syspath] == nil, !skipped.contains(device.syspath) else { return }
        if isOwnClone(device) {
            skipped.insert(device.syspath)
            return
        }
        var metadata: Logger.Metadata = ["device.path": "\(devnode)"]
        let evdev: EvdevDevice
        do {
            evdev = try EvdevDevice(path: devnode)
        } catch {
            if error.code == .notFound || error.code == .noDevice {  // unplugged before its add arrived
                logger.debug("Input device gone before it could be opened", metadata: metadata.adding(error))
            } else {
                logger.warning("Could not open an input device; it is not brokered", metadata: metadata.adding(error))
            }
            return
        }
        if let expected = device.devnum, evdev.deviceNumber != expected {
            // A late add whose path now names a newer device: that one has its own add.
            evdev.close()
            logger.debug("Input device gone before it could be opened; its path names another device now", metadata: metadata)
            return
        }
        let info = evdev.info
        metadata["device.name"] = "\(info.name)"
        guard info.shouldBroker else {
            skipped.insert(device.syspath)
            evdev.close()
            if !info.isKioskdClone {
                logger.debug("Input device has nothing a profile locks; not brokered", metadata: metadata)
            }
            return
        }
        do {
            try evdev.useMonotonicClock()  // the clock uinput compares forwarded timestamps with
        } catch {
            logger.debug("Could not stamp an input device's events with the monotonic clock", metadata: metadata.adding(error))
        }
        do {
            try evdev.grab()
        } catch {
            skipped.insert(device.syspath)
            evdev.close()
            if error.code == .busy {
                logger.error("Another process holds the grab of an input device; kioskd cannot enforce locks on it",
                             metadata: metadata.adding(error))
            } else {
                logger.error("Could not grab an input device; it is not brokered", metadata: metadata.adding(error))
            }
            return
        }
        let state = evdev.state  // what is held now was never forwarded
        let clone: UInputClone
        do {
            clone = try UInputClone(cloning: evdev, uinputPath: uinputPath)
        } catch {
            if holdsFailedNodes {
                hold(evdev, syspath: device.syspath)
                logger.error("Could not create the clone of an input device; it is held silent until the session ends",
                             metadata: metadata.adding(error))
            } else {
                evdev.close()
                logger.error("Could not create the clone of an input device; it is left unbrokered", metadata: metadata.adding(error))
            }
            return
        }
        let id = filter.addDevice(DeviceDescription(info, calibration: calibration(of: device, metadata)), state: state)
        let node = Node(device: device, evdev: evdev, clone: clone, id: id, name: info.name)
        nodes[device.syspath] = node
        while nodesByID.count <= id.rawValue { nodesByID.append(nil) }
        nodesByID[id.rawValue] = node
        do {
            node.input = try loop.addIO(fd: evdev.fileDescriptor, events: .readable) { [unowned self, unowned node] _ in
                readInput(node)
            }
            node.feedback = try loop.addIO(fd: clone.fileDescriptor, events: .readable) { [unowned self, unowned node] _ in
                readFeedback(node)
            }
        } catch {
            logger.error(releaseFailed(node) ? "Could not watch an input device; it is held silent until the session ends"
                                             : "Could not watch an input device; it is left unbrokered",
                         metadata: metadata.adding(error))
            return
        }
        logger.info("Brokering an input device", metadata: metadata.merging(["device.clone": "\(clone.devnode ?? "?")"]) { $1 })
        onDeviceBrokered?(node.summary)
    }

    /// Stops filtering a node, destroys its clone (the kernel releases what was held on it)
    /// and closes it (which releases the grab).
    private func release(_ node: Node, closing: Bool = true) {
        node.input?.cancel()
        node.feedback?.cancel()
        node.input = nil
        node.feedback = nil
        filter.removeDevice(node.id)
        node.clone.destroy()
        if closing { node.evdev.close() }
        nodes[node.device.syspath] = nil
        if nodesByID.indices.contains(node.id.rawValue) { nodesByID[node.id.rawValue] = nil }
    }

    /// Releases a node that failed; while locks are on it stays grabbed and silent (``held``).
    /// Returns whether it is held.
    private func releaseFailed(_ node: Node) -> Bool {
        let keep = holdsFailedNodes
        release(node, closing: !keep)
        if keep { hold(node.evdev, syspath: node.device.syspath) }
        return keep
    }

    /// Whether the node belongs to one of this broker's clones (cheaper than opening it; the
    /// phys marker catches any other kioskd's).
    private func isOwnClone(_ device: Device) -> Bool {
        nodes.values.contains { node in
            node.clone.syspath.map { device.syspath.hasPrefix($0 + "/") } ?? false
        }
    }

    private func calibration(of device: Device, _ metadata: Logger.Metadata) -> CalibrationMatrix? {
        guard let text = device.calibrationMatrix else { return nil }
        guard let matrix = CalibrationMatrix(udevProperty: text) else {
            logger.warning("Ignoring an input device's LIBINPUT_CALIBRATION_MATRIX: it is not six numbers",
                           metadata: metadata.merging(["device.calibration": "\(text)"]) { $1 })
            return nil
        }
        return matrix
    }

    // MARK: Events

    /// Everything the node has: through the filter, whole frames to the clone.
    private func readInput(_ node: Node) {
        while true {
            events.removeAll(keepingCapacity: true)
            let status: EvdevDevice.ReadStatus
            do {
                status = try node.evdev.readEvents(into: &events)
            } catch {
                if error.code == .noDevice {
                    release(node)
                    logger.info("Input device removed", metadata: node.metadata)
                } else if releaseFailed(node) {
                    logger.error("Could not read an input device; it is held silent until the session ends",
                                 metadata: node.metadata.adding(error))
                } else {
                    logger.error("Could not read an input device; it is released", metadata: node.metadata.adding(error))
                }
                return
            }
            var exitRequested = false
            for event in events where filter.process(event, device: node.id, into: &output).exitRequested {
                exitRequested = true
            }
            if status == .dropped {
                // The events end with SYN_DROPPED; libevdev consumed what followed it and read
                // the device's state, which ends the dropped stretch in the filter.
                filter.resync(device: node.id, to: node.evdev.state, into: &output)
                logger.info("The kernel dropped input events; resynced from the device's state", metadata: node.metadata)
            }
            flush()
            if exitRequested { onExitRequested?() }
            if status == .drained { return }
        }
    }

    /// Writes each filtered frame to its node's clone with one `write(2)`.
    private func flush() {
        for frame in output.frames {
            guard nodesByID.indices.contains(frame.device.rawValue), let node = nodesByID[frame.device.rawValue] else {
                continue
            }
            do {
                try node.clone.write(frame: output.events(of: frame))
            } catch {
                if !node.writeFailed {  // once per node: the next frames would fail the same way
                    node.writeFailed = true
                    logger.error("Could not write to an input device's clone", metadata: node.metadata.adding(error))
                }
            }
        }
        output.removeAll()
    }

    /// What the kiosk wrote to a clone: LEDs go on to the physical node.
    private func readFeedback(_ node: Node) {
        feedback.removeAll(keepingCapacity: true)
        do {
            try node.clone.readFeedback(into: &feedback)
        } catch {
            node.feedback?.cancel()
            node.feedback = nil
            logger.error("Could not read LED requests from an input device's clone; LEDs stay as they are",
                         metadata: node.metadata.adding(error))
            return
        }
        for event in feedback where event.type == UInt16(EV_LED) {
            do {
                try node.evdev.setLED(event.code, on: event.value != 0)
            } catch {
                logger.warning("Could not set an LED of an input device", metadata: node.metadata.adding(error))
            }
        }
    }
}

extension Logger.Metadata {
    fileprivate func adding(_ error: any Error) -> Logger.Metadata {
        merging(["error": "\(error)"]) { $1 }
    }
}
