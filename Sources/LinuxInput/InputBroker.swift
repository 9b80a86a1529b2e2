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
/// whatever was held on it. Every failure is one log line naming `device.path`, never fatal;
/// while a session's locks are on, a node that fails after its grab (no clone, a read error)
/// stays grabbed and silent until the locks are lifted: a failure never unlocks it. A node
/// another process holds the grab of (`EBUSY`), or that failed outside a session, or that was
/// held silent until the session ended, is tried again on every policy change and on a timer,
/// 1 s doubling to 30 s, until kioskd has it: while the other holder has it, its events escape
/// the locks.
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
    private let monitorBufferSize: Int
    private let filter: InputFilter
    private var output = OutputBuffer()
    private var events: [InputEvent] = []
    private var feedback: [InputEvent] = []
    private var monitor: DeviceMonitor?
    private var nodes: [String: Node] = [:]  // by syspath
    private var nodesByID: [Node?] = []  // by the filter's DeviceID
    /// Nodes seen and not for the broker, by syspath: clones (this kioskd's or another's) and
    /// nodes with nothing a profile locks. Looked at again on their next `change` (or a monitor
    /// overflow), forgotten when they are removed.
    private var skipped: Set<String> = []
    /// Nodes to try again, by syspath: another process holds their grab (`EBUSY`), opening,
    /// grabbing, cloning, watching or reading them failed outside a session, or they were held
    /// silent (see ``held``) until the session ended. Tried again on every policy change and by
    /// ``retryTimer`` while any are left (see ``retryPending()``).
    private var retrying: [String: RetryNode] = [:]
    private var retryTimer: EventSource?
    private var retryDelay = InputBroker.firstRetry
    /// The retry back-off: the first retry, doubled after each until the last.
    static let firstRetry = Duration.seconds(1)
    static let lastRetry = Duration.seconds(30)
    /// Nodes that failed (no clone, no watch, a read error) while a session's locks were on:
    /// kept open and grabbed, so that their events reach no one, until the locks are lifted
    /// (then they are tried again, see ``retrying``) or the node is removed. Fail closed: a
    /// failure never unlocks a device mid-session.
    private var held: [String: (device: Device, evdev: EvdevDevice)] = [:]  // by syspath
    /// Called in ``changed(_:)`` between draining a node and re-reading its description: tests
    /// use it to put events in that window.
    var afterChangeDrain: (() -> Void)?

    /// A broker with `policy` in force from the first event. Call ``start()`` to take the devices.
    /// `monitorBufferSize` is the udev monitor's socket buffer (tests make it tiny to overflow it).
    public init(loop: EventLoop, logger: Logger, policy: FilterPolicy = .passThrough, uinputPath: String = "/dev/uinput",
                monitorBufferSize: Int = 8 << 20) {
        self.loop = loop
        self.logger = logger
        self.uinputPath = uinputPath
        self.monitorBufferSize = monitorBufferSize
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
    /// missed; a node both listed and announced is brokered once. When the monitor's buffer
    /// overflows (uevents lost), the devices are listed again and each is judged as after a
    /// `change`, so a lost `add` or `change` is made up for.
    ///
    /// The corresponding C calls are `sd_device_monitor_new` and `sd_device_enumerator_new`
    /// (see ``SystemdKit/DeviceMonitor`` and ``SystemdKit/DeviceEnumerator``).
    public func start() {
        do {
            monitor = try DeviceMonitor(subsystem: "input", loop: loop, receiveBufferSize: monitorBufferSize,
                                        onOverflow: { [unowned self] lost in monitorOverflowed(lost: lost) }) { [unowned self] device in
                deviceChanged(device)
            }
        } catch {
            logger.error("Could not monitor input devices; devices plugged in later are not brokered",
                         metadata: ["error": "\(error)"])
        }
        for device in listDevices() ?? [] { adopt(device) }
    }

    /// The input nodes udev has processed; nil (and logged) if they cannot be listed.
    private func listDevices() -> [Device]? {
        do {
            return try DeviceEnumerator(subsystems: ["input"], sysnames: ["event*"]).devices()
        } catch {
            logger.error("Could not list input devices", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// The kernel dropped uevents the monitor had no room for: list the devices again. A node
    /// whose `add` was lost is taken now, one whose `change` was lost is judged again, and the
    /// skipped nodes and those to retry whose `remove` was lost are forgotten. (A brokered node
    /// whose `remove` was lost reads `ENODEV` and is released then.)
    private func monitorOverflowed(lost: UInt32) {
        logger.warning("The udev monitor dropped input device events; listing the input devices again",
                       metadata: ["monitor.lost": "\(lost)"])
        guard let listed = listDevices() else { return }
        let present = Set(listed.map(\.syspath))
        skipped = skipped.filter(present.contains)
        retrying = retrying.filter { present.contains($0.key) }
        for device in listed { changed(device) }
        armRetry()
    }

    /// Releases every node (their clones are destroyed, the nodes ungrabbed: they deliver to
    /// everyone again) and stops monitoring. Safe to call twice.
    public func stop() {
        monitor?.stop()
        monitor = nil
        retryTimer?.cancel()
        retryTimer = nil
        let count = nodes.count
        for node in Array(nodes.values) { release(node) }
        releaseHeld(retrying: false)
        retrying.removeAll()
        if count > 0 { logger.info("Released the input devices", metadata: ["device.count": "\(count)"]) }
    }

    /// Puts `policy` in force for every node now and every node plugged in later. Keys held
    /// through their clones that the policy locks are released on the clones at once, and
    /// contacts ended when touch is turned off; their frames are written before this returns.
    public func setPolicy(_ policy: FilterPolicy) {
        guard policy != filter.policy else { return }
        filter.setPolicy(policy, into: &output)
        flush()
        if policy == .passThrough { releaseHeld(retrying: true) }
        // A session starting is when a node kioskd does not hold matters most: try at once,
        // and from the first back-off step again.
        retryDelay = Self.firstRetry
        retryPending()
    }

    /// Whether a node that failed must stay grabbed: while any lock is on.
    private var holdsFailedNodes: Bool { filter.policy != .passThrough }

    /// Keeps a failed node grabbed and silent (see ``held``).
    private func hold(_ evdev: EvdevDevice, device: Device) {
        held[device.syspath] = (device, evdev)
    }

    /// Lets the held nodes go; `retrying`: they are tried again from now on (see ``retrying``).
    private func releaseHeld(retrying retry: Bool) {
        guard !held.isEmpty else { return }
        let count = held.count
        for (syspath, node) in held {
            node.evdev.close()
            if retry { retrying[syspath] = RetryNode(device: node.device, reason: .failed, logged: true) }
        }
        held.removeAll()
        logger.warning(retry ? "Released the input devices held silent during the session; they are tried again"
                             : "Released the input devices held silent during the session",
                       metadata: ["device.count": "\(count)"])
    }

    // MARK: Nodes to retry

    /// What the broker knows of a node it tries again.
    private struct RetryNode {
        enum Reason: String {
            /// Another process holds its grab (`EBUSY`).
            case busy
            /// Opening, grabbing, cloning, watching or reading it failed.
            case failed
        }

        var device: Device
        var reason: Reason
        /// Whether its stretch was logged, and whether at error level (during a session).
        var logged = false
        var loggedAsError = false
    }

    /// Records a node to try again and makes sure it is. Logged once per node per stretch
    /// (until kioskd takes it, it fails for another reason or it is removed): `escaping` at error
    /// level during a session, when its events escape the locks, `outside` at warning level
    /// outside one; a node logged outside a session is logged again, at error level, when a
    /// session starts. Other attempts in the stretch log one debug line.
    private func retryLater(_ device: Device, _ reason: RetryNode.Reason, was previous: RetryNode?,
                            escaping: Logger.Message, outside: Logger.Message, metadata: Logger.Metadata) {
        var node = previous?.reason == reason ? previous! : RetryNode(device: device, reason: reason)
        node.device = device
        let inSession = holdsFailedNodes
        let metadata = metadata.merging(["device.retry": "\(reason.rawValue)"]) { $1 }
        if !node.logged || (inSession && !node.loggedAsError) {
            if inSession {
                logger.error(escaping, metadata: metadata)
            } else {
                logger.warning(outside, metadata: metadata)
            }
            node.logged = true
            node.loggedAsError = node.loggedAsError || inSession
        } else {
            logger.debug("Tried an input device again; it is still not brokered", metadata: metadata)
        }
        retrying[device.syspath] = node
        armRetry()
    }

    /// Tries every node to retry again (open, grab, clone), then arms the timer for the rest.
    private func retryPending() {
        for node in Array(retrying.values) where retrying[node.device.syspath] != nil {
            adopt(node.device)
        }
        armRetry()
    }

    /// Arms the retry timer `retryDelay` from now while any node is to retry; disarms it otherwise.
    private func armRetry() {
        guard !retrying.isEmpty else {
            try? retryTimer?.setEnabled(.off)
            retryDelay = Self.firstRetry
            return
        }
        do {
            if let retryTimer {
                try retryTimer.rearm(after: retryDelay)
            } else {
                retryTimer = try loop.addTimer(after: retryDelay, accuracy: .milliseconds(50)) { [unowned self] in
                    retryTimerFired()
                }
            }
        } catch {
            logger.error("Could not arm the timer that retries input devices; they are tried again on the next policy change",
                         metadata: ["error": "\(error)"])
        }
    }

    private func retryTimerFired() {
        retryDelay = min(retryDelay * 2, Self.lastRetry)
        retryPending()
    }

    // MARK: Nodes

    private final class Node {
        /// The udev device as last seen (its add, or its last change).
        let device: Device
        let evdev: EvdevDevice
        let clone: UInputClone
        let id: DeviceID
        /// What the clone was made from, as read from the node (no calibration).
        let description: DeviceDescription
        var input: EventSource?
        var feedback: EventSource?
        var writeFailed = false

        init(device: Device, evdev: EvdevDevice, clone: UInputClone, id: DeviceID, description: DeviceDescription) {
            self.device = device
            self.evdev = evdev
            self.clone = clone
            self.id = id
            self.description = description
        }

        var name: String { description.name }

        var path: String { evdev.path }

        var summary: BrokeredDevice {
            BrokeredDevice(path: evdev.path, syspath: device.syspath, name: name, clonePath: clone.devnode)
        }

        var metadata: Logger.Metadata {
            ["device.path": "\(evdev.path)", "device.name": "\(name)"]
        }
    }

    private func deviceChanged(_ device: Device) {
        logger.trace("Input device uevent", metadata: [
            "device.syspath": "\(device.syspath)", "device.action": "\(device.action?.rawValue ?? "?")",
        ])
        switch device.action {
        case .add?:
            adopt(device)
        case .remove?:
            skipped.remove(device.syspath)
            retrying.removeValue(forKey: device.syspath)
            held.removeValue(forKey: device.syspath)?.evdev.close()
            if let node = nodes[device.syspath] {
                release(node)
                logger.info("Input device removed", metadata: node.metadata)
            }
        case .change?:
            changed(device)
        default:
            break  // move, bind, …: the node stays as brokered
        }
    }

    /// A `change` uevent (`udevadm trigger`, new rules or hwdb entries applied): the node is
    /// judged again as if it were new. A brokered node is re-read on its own fd (its grab is
    /// never let go meanwhile): with nothing left a profile locks it is released; if what its
    /// clone copies (name, ids, codes, properties, axis ranges) or its calibration changed, it
    /// gets a new clone and starts afresh in the filter; otherwise nothing happens. A node not
    /// brokered (skipped, to retry, or never seen) is tried as if it were added. A node held
    /// silent stays held.
    private func changed(_ device: Device) {
        guard device.sysname.hasPrefix("event"), held[device.syspath] == nil else { return }
        guard let node = nodes[device.syspath] else {
            skipped.remove(device.syspath)
            adopt(device)
            return
        }
        readInput(node)  // what the node reported before the change goes out under the old description
        guard nodes[device.syspath] === node else { return }  // the read failed: released or held
        afterChangeDrain?()
        let metadata = node.metadata
        do {
            try node.evdev.reload()
        } catch {
            logger.error(releaseFailed(node) ? "Could not read an input device again after a change; it is held silent until the session ends"
                                             : "Could not read an input device again after a change; it is released and tried again later",
                         metadata: metadata.adding(error))
            return
        }
        let description = node.evdev.deviceDescription
        switch BrokerChange(old: node.description, oldCalibration: node.device.calibrationMatrix,
                            new: description, newCalibration: device.calibrationMatrix) {
        case .keep:
            // The new libevdev starts from the kernel's state now, which is ahead of the filter by
            // whatever came after the drain above, and drops the events already in that state as
            // duplicates (a lift's ABS_MT_TRACKING_ID -1 for a slot it sees ended): bring the filter
            // to that state, or the contact stays down on the clone.
            filter.resync(device: node.id, to: node.evdev.state, into: &output)
            flush()
            logger.debug("Input device changed; its clone still matches it", metadata: metadata)
        case .release:
            release(node)
            skipped.insert(device.syspath)
            logger.info("Input device changed and has nothing a profile locks; released", metadata: metadata)
        case .reclone:
            let clone: UInputClone
            do {
                clone = try UInputClone(cloning: node.evdev, uinputPath: uinputPath)
            } catch {
                logger.error(releaseFailed(node) ? "Could not clone an input device again after a change; it is held silent until the session ends"
                                                 : "Could not clone an input device again after a change; it is released and tried again later",
                             metadata: metadata.adding(error))
                return
            }
            // The old clone goes (the kernel releases what was held on it), the new one starts
            // from the state now: what is held was never forwarded through it.
            release(node, closing: false)
            logger.info("Input device changed; cloned it again", metadata: metadata)
            install(device: device, evdev: node.evdev, description: description, state: node.evdev.state, clone: clone,
                    metadata: metadata)
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
        // A retried node's stretch ends here unless it fails the same way again (then it goes back).
        let previous = retrying.removeValue(forKey: device.syspath)
        var metadata: Logger.Metadata = ["device.path": "\(devnode)"]
        let evdev: EvdevDevice
        do {
            evdev = try EvdevDevice(path: devnode)
        } catch {
            if error.code == .notFound || error.code == .noDevice {  // unplugged before its add arrived
                logger.debug("Input device gone before it could be opened", metadata: metadata.adding(error))
            } else {
                retryLater(device, .failed, was: previous,
                           escaping: "Could not open an input device; its events escape the session's locks until kioskd can take it",
                           outside: "Could not open an input device; it is not brokered, and tried again later",
                           metadata: metadata.adding(error))
            }
            return
        }
        if let expected = device.devnum, evdev.deviceNumber != expected {
            // A late add whose path now names a newer device: that one has its own add.
            evdev.close()
            logger.debug("Input device gone before it could be opened; its path names another device now", metadata: metadata)
            return
        }
        let description = evdev.deviceDescription
        metadata["device.name"] = "\(description.name)"
        guard description.shouldBroker else {
            skipped.insert(device.syspath)
            evdev.close()
            if !description.isKioskdClone {
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
            evdev.close()
            if error.code == .busy {
                retryLater(device, .busy, was: previous,
                           escaping: "Another process holds the grab of an input device; its events escape the session's locks until kioskd can take it",
                           outside: "Another process holds the grab of an input device; kioskd takes it once it is released",
                           metadata: metadata.adding(error))
            } else {
                retryLater(device, .failed, was: previous,
                           escaping: "Could not grab an input device; its events escape the session's locks until kioskd can take it",
                           outside: "Could not grab an input device; it is not brokered, and tried again later",
                           metadata: metadata.adding(error))
            }
            return
        }
        if previous?.reason == .busy {
            logger.info("Took the grab of an input device another process had held", metadata: metadata)
        }
        let state = evdev.state  // what is held now was never forwarded
        let clone: UInputClone
        do {
            clone = try UInputClone(cloning: evdev, uinputPath: uinputPath)
        } catch {
            if holdsFailedNodes {
                hold(evdev, device: device)
                logger.error("Could not create the clone of an input device; it is held silent until the session ends",
                             metadata: metadata.adding(error))
            } else {
                evdev.close()
                retryLater(device, .failed, was: previous,
                           escaping: "Could not create the clone of an input device; it is not brokered, and tried again later",
                           outside: "Could not create the clone of an input device; it is not brokered, and tried again later",
                           metadata: metadata.adding(error))
            }
            return
        }
        install(device: device, evdev: evdev, description: description, state: state, clone: clone, metadata: metadata)
    }

    /// Puts a grabbed node and its new clone under the filter and watches both.
    private func install(device: Device, evdev: EvdevDevice, description: DeviceDescription, state: DeviceState,
                         clone: UInputClone, metadata: Logger.Metadata) {
        var filtered = description
        filtered.calibration = calibration(of: device, metadata)
        let id = filter.addDevice(filtered, state: state)
        let node = Node(device: device, evdev: evdev, clone: clone, id: id, description: description)
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
                                             : "Could not watch an input device; it is released and tried again later",
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

    /// Releases a node that failed; while locks are on it stays grabbed and silent (``held``),
    /// otherwise it is tried again later (``retrying``; the caller logs the failure). Returns
    /// whether it is held.
    private func releaseFailed(_ node: Node) -> Bool {
        let keep = holdsFailedNodes
        release(node, closing: !keep)
        if keep {
            hold(node.evdev, device: node.device)
        } else {
            retrying[node.device.syspath] = RetryNode(device: node.device, reason: .failed, logged: true)
            armRetry()
        }
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
                    logger.error("Could not read an input device; it is released and tried again later", metadata: node.metadata.adding(error))
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
        for event in feedback where event.type == EV.led {
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
