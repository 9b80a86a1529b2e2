import KioskInput
import Logging
import SystemdKit

import struct SystemPackage.Errno
import struct SystemPackage.FileDescriptor

/// The input broker (docs/input-enforcement.md): every input node with keys, buttons or touch goes through
/// kioskd's filter on its way to the kiosk.
///
/// For each such node, found at ``start()`` (sd-device enumeration) or plugged in later (the
/// udev monitor's `add`), the broker opens it, reads its state, takes its grab (`EVIOCGRAB`),
/// creates its 1:1 uinput clone and registers it with the `InputFilter`; from then on every
/// frame the node reports goes through the filter and what is left reaches the clone in one
/// `write`. LEDs the kiosk sets on a clone go back to the node. A node that vanishes (monitor
/// `remove`, or `ENODEV` on read) leaves the filter and its clone is destroyed, which releases
/// whatever was held on it. Every failure is one log line naming `device.path`, never fatal.
///
/// The broker is discovery (sd-device), the event pump and the hands of ``NodeLifecycle``, which
/// decides what happens to each node and when: nodes not to broker, nodes retried with a back-off
/// (another process holds the grab, or a step failed outside a session), nodes held grabbed and
/// silent through a session (a failure never unlocks a node), udev changes and monitor overflows.
/// What passes is the filter's policy (``setPolicy(_:)``); a device plugged in during a session
/// is under the current policy before its first event.
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
    /// The journal `MESSAGE_ID` of "Input device allowed through the session's locks" (the
    /// daemon's audit catalog names it).
    public var deviceAllowedMessageID = ""
    /// Called on the loop for each key of kioskd's passcode prompt the filter read
    /// (``FilterPolicy/readsPasscode``), after the frame's output is written.
    public var onPromptKey: ((PromptKey) -> Void)?
    /// Called on the loop when the visitor took the offer of more time (``FilterPolicy/offersTime``:
    /// a key, button or touch let go), after the frame's output is written.
    public var onTookOffer: (() -> Void)?
    /// Called on the loop when a press woke the dark display (``FilterPolicy/displayOff``),
    /// after the frame's output is written.
    public var onWoke: (() -> Void)?
    /// When the last physical input came from any brokered device (µs of CLOCK_MONOTONIC, the
    /// events' own stamp), swallowed or not; 0 before the first. Idle time reads it.
    @exclusivity(unchecked) public internal(set) var lastInput: Int64 = 0
    /// Called on the loop when the cleaning gesture completes (``FilterPolicy/cleaningGesture``),
    /// after the frame's output is written.
    public var onCleaningRequested: (() -> Void)?
    /// Staff draw regions (``setDrawing(_:)``): the touchscreens' contacts and the keys pressed,
    /// after each read that had some.
    public var onDrawing: (([DrawingTouches.Event]) -> Void)?
    /// The drawing's tracker while staff draw (InputBroker+Drawing.swift), and whether it runs:
    /// the one flag the event pump reads per read.
    var drawing: DrawingTouches? {
        didSet { drawingOn = drawing != nil }
    }
    @exclusivity(unchecked) var drawingOn = false
    /// Called on the loop once a node is grabbed, cloned and filtered.
    public var onDeviceBrokered: ((BrokeredDevice) -> Void)?
    /// Called on the loop once a brokered node is brokered no more: unplugged (or read `ENODEV`),
    /// or held silent, without a clone. Not for a node cloned again after a `change`.
    public var onDeviceGone: (() -> Void)?
    /// Called on the loop once a node is grabbed on the kernel's uevent, before udev's record.
    public var onGrabbedEarly: ((EarlyGrab) -> Void)?

    let loop: EventLoop
    private let uinputPath: String
    /// The files that give each clone the calibration the filter judges with; nil: clones carry none.
    private var calibrations: CloneCalibration?
    private let monitorBufferSize: Int
    private var monitor: DeviceMonitor?
    /// The nodes kioskd has open, by syspath: being taken, brokered, or held silent (no clone).
    private var open: [String: Node] = [:]
    private var retryTimer: EventSource?
    /// Slow keys' timer (InputBroker+KeyTimer.swift): armed for the filter's `keyDeadline`.
    var keyTimer: EventSource?
    /// The deadline `keyTimer` is armed for; nil: off.
    var keyTimerDue: Int64?
    /// The policy's slow keys can hold a press back (`InputFilter.timesKeys`): the event pump
    /// then arms `keyTimer` after each read. Kept here, read on every read without a check.
    @exclusivity(unchecked) var timesKeys = false
    // The kernel's uevents (InputBroker+EarlyGrab.swift).
    private let listensToKernel: Bool
    /// How long a node grabbed early waits for udev before that is logged (it stays grabbed).
    let udevWait: Duration
    var kernelSocket: FileDescriptor?
    var kernelSource: EventSource?
    var ueventBuffer = [UInt8](repeating: 0, count: 8192)
    /// Nodes grabbed on the kernel's uevent, waiting for udev's record, by syspath.
    var early: [String: EarlyNode] = [:]
    // Shared with the event pump (InputBroker+EventPump.swift).
    let logger: Logger
    let filter: InputFilter
    /// What happens to each node, and when.
    var lifecycle: NodeLifecycle<Device>
    // What every input frame reads and writes (InputBroker+EventPump.swift). The broker lives on
    // its loop's thread and hands none of these out `inout` beyond the call that uses them, so
    // Swift's run-time exclusivity check, a measurable part of a frame's cost
    // (docs/benchmarks.md § Latency), is left out for them.
    @exclusivity(unchecked) var nodesByID: [Node?] = []  // the brokered ones, by the filter's DeviceID
    @exclusivity(unchecked) var output = OutputBuffer()
    @exclusivity(unchecked) var promptKeys: [PromptKey] = []

    /// A broker with `policy` in force from the first event. Call ``start()`` to take the devices.
    /// `monitorBufferSize` is the udev monitor's socket buffer (tests make it tiny to overflow it).
    /// `grabEarly`: grab new nodes on the kernel's uevent, before udev's record (see
    /// InputBroker+EarlyGrab.swift); `udevWait`: how long such a node waits before that is logged.
    /// `calibrationDirectory`: where each calibrated clone's file for udev goes
    /// (``CloneCalibration``; kioskd's is `/run/kioskd/calibration`); without one a clone carries
    /// no calibration of kioskd's, and libinput may place touches elsewhere than the filter judges.
    public init(
        loop: EventLoop, logger: Logger, policy: FilterPolicy = .passThrough, uinputPath: String = "/dev/uinput",
        monitorBufferSize: Int = 8 << 20, grabEarly: Bool = true, udevWait: Duration = .seconds(5),
        calibrationDirectory: String? = nil
    ) {
        self.loop = loop
        calibrations = calibrationDirectory.map(CloneCalibration.init(directory:))
        self.listensToKernel = grabEarly
        self.udevWait = udevWait
        self.logger = logger
        self.uinputPath = uinputPath
        self.monitorBufferSize = monitorBufferSize
        filter = InputFilter(policy: policy)
        lifecycle = NodeLifecycle(locksOn: policy != .passThrough)
        timesKeys = filter.timesKeys
        promptKeys.reserveCapacity(8)
    }

    deinit { stop() }

    /// The policy in force.
    public var policy: FilterPolicy { filter.policy }

    /// The nodes brokered now.
    public var devices: [BrokeredDevice] { open.values.compactMap(\.summary).sorted { $0.path < $1.path } }

    /// Whether a node brokered now is this device (its name, ids and udev properties).
    public func brokers(_ matcher: DeviceMatcher) -> Bool {
        nodesByID.contains { node in
            guard let id = node?.id, let description = filter.description(of: id) else { return false }
            return matcher.matches(description)
        }
    }

    /// Starts monitoring input devices (udev's source: after rules ran), then brokers every
    /// node that exists. The monitor comes first so that no node plugged in meanwhile is
    /// missed; a node both listed and announced is brokered once. When the monitor's buffer
    /// overflows (uevents lost), the devices are listed again and each is judged as after a
    /// `change`, so a lost `add` or `change` is made up for.
    ///
    /// The corresponding C calls are `sd_device_monitor_new` and `sd_device_enumerator_new`
    /// (see ``SystemdKit/DeviceMonitor`` and ``SystemdKit/DeviceEnumerator``).
    public func start() {
        if listensToKernel { listenToKernel() }
        do {
            monitor = try DeviceMonitor(
                subsystem: "input", loop: loop, receiveBufferSize: monitorBufferSize,
                onOverflow: { [unowned self] lost in monitorOverflowed(lost: lost) }
            ) { [unowned self] device in
                deviceChanged(device)
            }
        } catch {
            logger.error(
                "Could not monitor input devices; devices plugged in later are not brokered",
                metadata: ["error": "\(Errno.reason(of: error))"])
        }
        for device in listDevices() ?? [] where isEventNode(device) { perform(lifecycle.added(device)) }
    }

    /// Releases every node (their clones are destroyed, the nodes ungrabbed: they deliver to
    /// everyone again) and stops monitoring. Safe to call twice.
    public func stop() {
        monitor?.stop()
        monitor = nil
        stopListeningToKernel()
        let count = devices.count
        perform(lifecycle.stop())
        retryTimer?.cancel()
        retryTimer = nil
        keyTimer?.cancel()
        keyTimer = nil
        keyTimerDue = nil
        if count > 0 { logger.info("Released the input devices", metadata: ["device.count": "\(count)"]) }
    }

    /// Puts `policy` in force for every node now and every node plugged in later. Keys held
    /// through their clones that the policy locks are released on the clones at once, and
    /// contacts ended when touch is turned off; their frames are written before this returns.
    public func setPolicy(_ policy: FilterPolicy) {
        guard policy != filter.policy else { return }
        filter.setPolicy(policy, into: &output)
        flush()
        timesKeys = filter.timesKeys
        armKeyTimer()
        perform(lifecycle.policyChanged(locksOn: policy != .passThrough, at: now))
        for node in nodesByID { if let node { logAllowance(of: node) } }
        // A pointer the policy now hides, or shows again: the node is cloned again, with its
        // pointer left out or back (the filter has released on the old clone what it locks).
        let recloned = nodesByID.compactMap { $0 }.filter { node in
            (policy.pointerHiding(of: judged(node)) != nil) != (node.pointerHidden != nil)
        }
        for node in recloned { reclone(node.device, node.metadata, for: .pointer) }
    }

    /// Says in the journal that a node keeps working through the session's locks (a profile's
    /// `[[device]]` entry matches it).
    private func logAllowance(of node: Node) {
        guard let id = node.id, let entry = filter.allowance(of: id), entry.passesKeys || entry.passesPointer else {
            return
        }
        let passes = entry.passesKeys && entry.passesPointer ? "all" : entry.passesKeys ? "keys" : "pointer"
        logger.notice(
            "Input device allowed through the session's locks",
            metadata: [
                "message.id": "\(deviceAllowedMessageID)",
                "device.node": "\(node.device.devnode ?? node.device.syspath)",
                "device.name": "\(node.description.name)",
                "device.role": "\(entry.role)", "device.passes": "\(passes)",
            ])
    }

    // MARK: Discovery

    /// The input nodes udev has processed; nil (and logged) if they cannot be listed.
    private func listDevices() -> [Device]? {
        do {
            return try DeviceEnumerator(subsystems: ["input"], sysnames: ["event*"]).devices()
        } catch {
            logger.error("Could not list input devices", metadata: ["error": "\(Errno.reason(of: error))"])
            return nil
        }
    }

    /// An evdev node (`eventN`, with a `/dev` node), not its parent `inputN`.
    private func isEventNode(_ device: Device) -> Bool { device.sysname.hasPrefix("event") && device.devnode != nil }

    private func deviceChanged(_ device: Device) {
        logger.trace(
            "Input device uevent",
            metadata: [
                "device.syspath": "\(device.syspath)", "device.action": "\(device.action?.rawValue ?? "?")",
            ])
        switch device.action {
        case .add? where isEventNode(device):
            perform(lifecycle.added(device))
        case .remove?:
            perform(lifecycle.removed(device.syspath), .node, open[device.syspath]?.metadata ?? [:])
        case .change? where isEventNode(device):
            perform(lifecycle.changed(device))
        default:
            break  // move, bind, …: the node stays as brokered
        }
    }

    /// The kernel dropped uevents the monitor had no room for: list the devices again (a
    /// brokered node whose `remove` was lost reads `ENODEV` and is released then).
    private func monitorOverflowed(lost: UInt32) {
        logger.warning(
            "The udev monitor dropped input device events; listing the input devices again",
            metadata: ["monitor.lost": "\(lost)"])
        guard let listed = listDevices() else { return }
        perform(lifecycle.relisted(listed.filter(isEventNode), at: now))
    }

    // MARK: The lifecycle's actions

    /// The loop's monotonic time, as the lifecycle counts it.
    var now: Duration { .microseconds(Int64(loop.now(.monotonic))) }

    /// Carries out `actions` in order; `step` and `metadata` word what they say.
    func perform(_ actions: [NodeLifecycle<Device>.Action], _ step: Step = .node, _ metadata: Logger.Metadata = [:]) {
        for action in actions {
            switch action {
            case .grabEarly(let uevent): grabEarly(uevent)
            case .attempt(let device): attempt(device)
            case .rejudge(let device): rejudge(device)
            case .resync(let syspath): resync(syspath, metadata)
            case .reclone(let device): reclone(device, metadata)
            case .release(let syspath):
                releaseEarly(syspath)
                guard let node = open.removeValue(forKey: syspath) else { continue }
                let wasBrokered = node.id != nil
                unfilter(node)
                node.evdev.close()
                if wasBrokered { onDeviceGone?() }
            case .holdSilent(let syspath):
                guard let node = open[syspath] else { continue }
                let wasBrokered = node.id != nil
                unfilter(node)
                if wasBrokered { onDeviceGone?() }
            case .armRetryTimer(let due): armRetryTimer(after: max(.zero, due - now))
            case .disarmRetryTimer: try? retryTimer?.setEnabled(.off)
            case .settleRetryTimer: perform(lifecycle.settleRetryTimer(at: now))
            case .log(let notice):
                let line = step.line(notice, metadata)
                logger.log(level: line.level, line.message, metadata: line.metadata)
            }
        }
    }

    /// Opens, grabs, clones and filters one node, telling the lifecycle how far it got.
    private func attempt(_ device: Device) {
        let syspath = device.syspath
        let taken = takeEarly(device)
        let owner = owner(ofClone: device)
        guard let devnode = device.devnode, owner == nil else {
            taken?.evdev.close()
            if let owner { checkCalibration(of: owner, clone: device) }
            return perform(lifecycle.notForBroker(syspath))
        }
        var metadata: Logger.Metadata = ["device.path": "\(devnode)"]
        if let taken {  // grabbed on the kernel's uevent: udev's record completes the decision
            // Read again on the grabbed fd: udev's rules may have changed the node meanwhile
            // (hwdb keymaps add key codes). Its queued events stay queued.
            do {
                try taken.evdev.reload()
            } catch {
                taken.evdev.close()
                return perform(lifecycle.attemptFailed(syspath, .failed, at: now), .open, metadata.adding(error))
            }
            let description = taken.evdev.deviceDescription
            metadata["device.name"] = "\(description.name)"
            guard description.shouldBroker else {
                taken.evdev.close()
                return perform(lifecycle.notForBroker(syspath))
            }
            return proceed(device, taken.evdev, description, metadata)
        }
        let evdev: EvdevDevice
        do {
            evdev = try EvdevDevice(path: devnode)
        } catch {
            guard error.code != .notFound && error.code != .noDevice else {  // unplugged before its add arrived
                logger.debug("Input device gone before it could be opened", metadata: metadata.adding(error))
                return perform(lifecycle.vanished(syspath))
            }
            return perform(lifecycle.attemptFailed(syspath, .failed, at: now), .open, metadata.adding(error))
        }
        if let expected = device.devnum, evdev.deviceNumber != expected {
            // A late add whose path now names a newer device: that one has its own add.
            evdev.close()
            logger.debug(
                "Input device gone before it could be opened; its path names another device now", metadata: metadata)
            return perform(lifecycle.vanished(syspath))
        }
        let description = evdev.deviceDescription
        metadata["device.name"] = "\(description.name)"
        guard description.shouldBroker else {
            evdev.close()
            if !description.isKioskdClone {
                logger.debug("Input device has nothing a profile locks; not brokered", metadata: metadata)
            }
            return perform(lifecycle.notForBroker(syspath))
        }
        do {
            try evdev.useMonotonicClock()  // the clock uinput compares forwarded timestamps with
        } catch {
            logger.debug(
                "Could not stamp an input device's events with the monotonic clock", metadata: metadata.adding(error))
        }
        do {
            try evdev.grab()
        } catch {
            evdev.close()
            let busy = error.code == .busy
            return perform(
                lifecycle.attemptFailed(syspath, busy ? .busy : .failed, at: now), busy ? .busy : .grab,
                metadata.adding(error))
        }
        proceed(device, evdev, description, metadata)
    }

    /// A grabbed node: cloned and put under the filter.
    private func proceed(
        _ device: Device, _ evdev: EvdevDevice, _ description: DeviceDescription, _ metadata: Logger.Metadata
    ) {
        let syspath = device.syspath
        perform(lifecycle.grabbed(syspath), .grab, metadata)
        let node = Node(device: device, evdev: evdev, description: description)
        open[syspath] = node
        let state = evdev.state  // what is held now was never forwarded
        let clone: UInputClone
        do {
            clone = try makeClone(of: node, metadata)
        } catch {
            return perform(lifecycle.cloneFailed(syspath, at: now), .clone, metadata.adding(error))
        }
        install(node, clone: clone, state: state, metadata: metadata)
    }

    /// A `change` of a brokered node: drained under its old description, re-read on its own fd
    /// (its grab is never let go meanwhile) and judged (``BrokerChange``).
    private func rejudge(_ device: Device) {
        guard drainForChange(device.syspath) else { return }
        rereadForChange(device)
    }

    /// The first step of a change: what the node reported before it goes out under the old
    /// description. False when there is nothing to re-read: no brokered node, or the read failed.
    func drainForChange(_ syspath: String) -> Bool {
        guard let node = open[syspath], node.clone != nil else { return false }
        readInput(node)
        return lifecycle.state(of: syspath) == .brokered && open[syspath] === node
    }

    /// The second step: the node re-read on its own fd and judged. Events that arrived since the
    /// drain are still queued on the fd; ``resync(_:_:)`` accounts for them.
    func rereadForChange(_ device: Device) {
        guard let node = open[device.syspath] else { return }
        do {
            try node.evdev.reload()
        } catch {
            return perform(lifecycle.failed(device.syspath, at: now), .reload, node.metadata.adding(error))
        }
        let change = BrokerChange(
            old: node.description, oldCalibration: node.device.calibrationMatrix,
            new: node.evdev.deviceDescription, newCalibration: device.calibrationMatrix)
        perform(lifecycle.judged(device, change), .change, node.metadata)
    }

    /// The udev record a node was taken with, if kioskd has it open.
    func record(ofNode syspath: String) -> Device? { open[syspath]?.device }

    /// The clone still matches the node re-read for a change.
    private func resync(_ syspath: String, _ metadata: Logger.Metadata) {
        guard let node = open[syspath], let id = node.id else { return }
        // The new libevdev starts from the kernel's state now, which is ahead of the filter by
        // whatever came after the drain, and drops the events already in that state as
        // duplicates (a lift's ABS_MT_TRACKING_ID -1 for a slot it sees ended): bring the filter
        // to that state, or the contact stays down on the clone.
        filter.resync(device: id, to: node.evdev.state, into: &output)
        flush()
        logger.debug("Input device changed; its clone still matches it", metadata: metadata)
    }

    /// Why a node is cloned again.
    enum Reclone {
        /// A `change`: the node was re-read and its clone no longer matches it.
        case change
        /// The policy hides the node's pointer, or shows it again (``FilterPolicy/pointerHiding(of:)``).
        case pointer
    }

    /// A new clone for a node re-read for a change, or whose pointer the policy now hides or
    /// shows; the old one goes (the kernel releases what was held on it) and the new one starts
    /// from the state now: what is held was never forwarded through it. If the new clone cannot
    /// be made the node fails as a whole: in a session it is held grabbed and silent, its old
    /// clone destroyed (``NodeLifecycle/failed(_:at:)``), so a pointer to hide never stays.
    private func reclone(_ device: Device, _ metadata: Logger.Metadata, for reason: Reclone = .change) {
        guard let node = open[device.syspath] else { return }
        let renewed = Node(device: device, evdev: node.evdev, description: node.evdev.deviceDescription)
        let clone: UInputClone
        do {
            clone = try makeClone(of: renewed, metadata)
        } catch {
            return perform(
                lifecycle.failed(device.syspath, at: now), reason == .change ? .reclone : .pointerReclone,
                metadata.adding(error))
        }
        unfilter(node)
        if reason == .change { logger.info("Input device changed; cloned it again", metadata: metadata) }
        open[device.syspath] = renewed
        install(renewed, clone: clone, state: renewed.evdev.state, metadata: metadata, hiddenBefore: node.pointerHidden)
    }

    /// The node as the filter judges it: with the calibration kioskd found for it and its udev
    /// properties (which allowed-device entries may match on).
    func judged(_ node: Node) -> DeviceDescription {
        var judged = node.description
        judged.calibration = node.calibration
        judged.udevProperties = node.device.properties
        return judged
    }

    /// The clone of a grabbed node, carrying to libinput the calibration the filter will judge the
    /// node's touches with (its udev record's, kept in ``Node/calibration``): when there is one,
    /// its file for udev is written before the clone exists, so udev's first run of the rules on
    /// the clone finds it (``CloneCalibration``). No file, no clone.
    private func makeClone(of node: Node, _ metadata: Logger.Metadata) throws(EvdevError) -> UInputClone {
        node.calibration = calibration(of: node.device, metadata)
        node.pointerHidden = filter.policy.pointerHiding(of: judged(node))
        if let matrix = node.calibration, calibrations != nil {
            node.calibrationFile = try calibrations?.write(matrix)
        }
        do {
            return try UInputClone(
                cloning: node.evdev, uinputPath: uinputPath, calibration: node.calibrationFile,
                withoutPointer: node.pointerHidden != nil)
        } catch {
            removeCalibrationFile(of: node)
            throw error
        }
    }

    private func removeCalibrationFile(of node: Node) {
        if let file = node.calibrationFile { calibrations?.remove(file) }
        node.calibrationFile = nil
    }

    /// Puts a grabbed node and its new clone under the filter and watches both. `hiddenBefore`:
    /// why the node's previous clone had no pointer, if it had one and none.
    private func install(
        _ node: Node, clone: UInputClone, state: DeviceState, metadata: Logger.Metadata,
        hiddenBefore: PointerHiding? = nil
    ) {
        let id = filter.addDevice(judged(node), state: state)
        node.clone = clone
        node.id = id
        while nodesByID.count <= id.rawValue { nodesByID.append(nil) }
        nodesByID[id.rawValue] = node
        drawingAdd(node)
        do {
            // A direct source: read from the loop's own epoll, without sd-event's work per
            // wake-up (EventLoop.run; docs/benchmarks.md § Instructions per frame). It holds the
            // node strongly: an unowned capture cost a strong retain and a release on every
            // frame. The loop → handler → node cycle ends when the source is cancelled, which
            // unfilter does first on every way a node goes (release, hold silent, a new clone,
            // and stop(), which the broker's deinit calls), and the node outlives a handler
            // that ends it because the loop holds the handler for the call. The broker is lent
            // to the handler without a reference count: the same cancellation in its deinit
            // means no handler runs once it is gone (the broker and its loop share one thread);
            // an `unowned` capture cost a `swift_unownedRetainStrong` and a release a frame,
            // `unowned(unsafe)` a retain and a release.
            let broker = Unmanaged.passUnretained(self)
            node.input = try loop.addDirectIO(fd: node.evdev.fileDescriptor) { [node] in
                broker._withUnsafeGuaranteedRef { $0.readInput(node) }
            }
            node.feedback = try loop.addIO(fd: clone.fileDescriptor, events: .readable) {
                [unowned self, unowned node] _ in
                readFeedback(node)
            }
        } catch {
            return perform(lifecycle.failed(node.device.syspath, at: now), .watch, metadata.adding(error))
        }
        perform(lifecycle.brokered(node.device))
        logger.info(
            "Brokering an input device", metadata: metadata.merging(["device.clone": "\(clone.devnode ?? "?")"]) { $1 })
        logAllowance(of: node)
        logPointer(of: node, hiddenBefore: hiddenBefore)
        if let summary = node.summary { onDeviceBrokered?(summary) }
    }

    /// Says in the journal that a node's clone has no pointer now (a cursor would have nowhere
    /// to go), or has it again.
    private func logPointer(of node: Node, hiddenBefore: PointerHiding?) {
        guard (node.pointerHidden != nil) != (hiddenBefore != nil) else { return }
        var metadata = node.metadata.merging(["device.clone": "\(node.clone?.devnode ?? "?")"]) { $1 }
        switch node.pointerHidden {
        case .locked?:
            metadata["pointer.reason"] = "locked"
        case .entry(let role)?:
            metadata["pointer.reason"] = "device-entry"
            metadata["device.role"] = "\(role)"
        case nil:
            metadata["pointer.reason"] = "passes"
        }
        if node.pointerHidden != nil {
            logger.notice("Input device's pointer hidden from the kiosk; its clone has none", metadata: metadata)
        } else {
            logger.notice("Input device's pointer shown to the kiosk again; its clone has it", metadata: metadata)
        }
    }

    /// Stops filtering a node and destroys its clone (the kernel releases what was held on it);
    /// the node stays open and grabbed.
    private func unfilter(_ node: Node) {
        node.input?.cancel()
        node.feedback?.cancel()
        node.input = nil
        node.feedback = nil
        if let id = node.id {
            drawingRemove(id)
            filter.removeDevice(id)
            if nodesByID.indices.contains(id.rawValue) { nodesByID[id.rawValue] = nil }
        }
        node.clone?.destroy()
        node.clone = nil
        node.id = nil
        removeCalibrationFile(of: node)  // once the clone is gone: udev never sees it without its file
    }

    /// The node one of this broker's clones belongs to, if `device` is one (cheaper than opening
    /// it; the phys marker catches any other kioskd's).
    private func owner(ofClone device: Device) -> Node? {
        open.values.first { node in
            node.clone?.syspath.map { device.syspath.hasPrefix($0 + "/") } ?? false
        }
    }

    /// udev's record of a clone: libinput places the clone's touches with its matrix, so it must be
    /// the one the filter judges the node's with. A rule that sorts after
    /// `99-zz-kioskd-calibration.rules`, or one that matches the clone alone, breaks that; kioskd
    /// cannot undo it, but says so (touch regions are then judged where the touch does not land).
    private func checkCalibration(of node: Node, clone device: Device) {
        guard calibrations != nil, node.clone != nil else { return }
        // libinput ignores a matrix it cannot read, as the filter does.
        let applied = device.calibrationMatrix.flatMap(CalibrationMatrix.init(udevProperty:)) ?? .identity
        guard applied != node.calibration ?? .identity else { return }
        logger.error(
            "An input device's clone has another LIBINPUT_CALIBRATION_MATRIX than the one kioskd judges its touch regions with; a udev rule after 99-zz-kioskd-calibration.rules sets it",
            metadata: node.metadata.merging(
                [
                    "device.clone": "\(device.devnode ?? device.syspath)",
                    "device.calibration": "\(node.device.calibrationMatrix ?? "")",
                    "device.clone-calibration": "\(device.calibrationMatrix ?? "")",
                ]
            ) { $1 })
    }

    /// The node's matrix from its udev record, if it has one the filter can judge with: one
    /// libinput reads (``CalibrationMatrix/init(udevProperty:)``: six plain decimal numbers, no
    /// hexadecimal, exponent, inf or nan). The clone carries it in decimal.
    private func calibration(of device: Device, _ metadata: Logger.Metadata) -> CalibrationMatrix? {
        guard let text = device.calibrationMatrix else { return nil }
        guard let matrix = CalibrationMatrix(udevProperty: text) else {
            logger.warning(
                "Ignoring an input device's LIBINPUT_CALIBRATION_MATRIX: libinput does not read it either (six plain decimal numbers, separated by spaces)",
                metadata: metadata.merging(["device.calibration": "\(text)"]) { $1 })
            return nil
        }
        return matrix
    }

    private func armRetryTimer(after delay: Duration) {
        do {
            if let retryTimer {
                try retryTimer.rearm(after: delay)
            } else {
                retryTimer = try loop.addTimer(after: delay, accuracy: .milliseconds(50)) { [unowned self] in
                    perform(lifecycle.retryTimerFired(at: now))
                }
            }
        } catch {
            logger.error(
                "Could not arm the timer that retries input devices; they are tried again on the next policy change",
                metadata: ["error": "\(Errno.reason(of: error))"])
        }
    }
}

extension Device: NodeRecord {}
