import CEvdev
import KioskInput
import Logging
import SystemdKit

// The event pump: each brokered node's events through the filter to its clone, whole frames in
// one write each, and LEDs back from the clone to the node.

extension InputBroker {
    /// Everything the node has: through the filter, whole frames to the clone.
    ///
    /// A batch at a time (``EvdevDevice/readBatch()``), then back to the loop: reading
    /// and writing a frame at a time until the node is empty starved every other source of the
    /// loop (udev, the bus) while a device kept sending faster than kioskd forwarded, which a
    /// slow machine reaches (BrokerTests' udev change under a stream of taps, in the VM).
    ///
    /// It runs as a direct source of the loop (``EventLoop/addDirectIO(fd:_:)``): while sd-event
    /// waits. Every step here that may reach sd-event or the bus — a node's end, the callbacks —
    /// asks for sd-event's turn (``EventLoop/requestCycle()``); a plain frame does not.
    func readInput(_ node: Node) {
        guard let id = node.id else { return }
        while true {
            let batch: (events: UnsafeBufferPointer<input_event>, status: EvdevDevice.ReadStatus)
            do {
                batch = try node.evdev.readBatch()
            } catch {
                return readFailed(node, error)
            }
            if !promptKeys.isEmpty { promptKeys.removeAll(keepingCapacity: true) }
            if let last = batch.events.last {
                // Idle time (`[idle]`): the last physical input, swallowed or not, on the
                // events' clock (CLOCK_MONOTONIC); one store a read.
                lastInput = Int64(last.time.tv_sec) &* 1_000_000 &+ Int64(last.time.tv_usec)
            }
            let result = filter.process(batch.events, device: id, into: &output, promptKeys: &promptKeys)
            if drawingOn { drawingRead(batch.events, device: id) }
            if result.resyncNeeded && !resync(node, id) { return }
            flush(from: node)
            if timesKeys { armKeyTimer() }
            if result.exitRequested || result.tookOffer || result.woke || result.cleaningRequested
                || !promptKeys.isEmpty
            {
                handOver(
                    exitRequested: result.exitRequested, tookOffer: result.tookOffer, woke: result.woke,
                    cleaningRequested: result.cleaningRequested)
            }
            if batch.status == .drained { return }
        }
    }

    // The rare steps of a frame live in functions of their own (never inlined): inlined, the
    // compiler hoisted their reads of the logger and of the callbacks to the top of
    // readInput, each a run-time exclusivity check paid on every frame.

    /// After a read that held SYN_DROPPED (the filter says so, and read no further): libevdev
    /// consumes what the kernel still holds and reads the device's state, which ends the dropped
    /// stretch in the filter and stands for the rest of the read. False when the node is gone
    /// or failed meanwhile.
    @inline(never)
    private func resync(_ node: Node, _ id: DeviceID) -> Bool {
        loop.requestCycle()
        do {
            try node.evdev.syncAfterDrop()
        } catch {
            readFailed(node, error)
            flush()  // what the read gave before the drop, to a clone the node still has
            return false
        }
        filter.resync(device: id, to: node.evdev.state, into: &output)
        logger.info("The kernel dropped input events; resynced from the device's state", metadata: node.metadata)
        return true
    }

    /// A read of the node (or libevdev's after a drop) failed: the node is gone, or it failed
    /// and is tried again later (NodeLifecycle decides).
    @inline(never)
    private func readFailed(_ node: Node, _ error: EvdevError) {
        loop.requestCycle()
        let syspath = node.device.syspath
        if error.code == .noDevice {
            perform(lifecycle.removed(syspath), .node, node.metadata)
        } else {
            perform(lifecycle.failed(syspath, at: now), .read, node.metadata.adding(error))
        }
    }

    /// The exit gesture, the prompt's keys and the offer of more time taken, to whoever
    /// listens, once the batch's frames are out.
    @inline(never)
    private func handOver(exitRequested: Bool, tookOffer: Bool, woke: Bool, cleaningRequested: Bool) {
        loop.requestCycle()  // the callbacks send on the bus and set timers
        if woke { onWoke?() }
        if cleaningRequested { onCleaningRequested?() }
        if exitRequested { onExitRequested?() }
        for key in promptKeys { onPromptKey?(key) }
        if tookOffer { onTookOffer?() }
    }

    /// Writes each filtered frame to its node's clone with one `write(2)`, and takes back at
    /// once what the kernel echoed of it (``UInputClone/echoes(_:)``).
    func flush() {
        output.drain { frame, events in
            guard nodesByID.indices.contains(frame.device.rawValue), let node = nodesByID[frame.device.rawValue]
            else { return }
            write(events, to: node)
        }
    }

    /// ``flush()`` after a read of `node`, whose frames are all the output holds then: written
    /// to it without looking it up (a lookup in ``nodesByID`` retained and released the node
    /// on every frame); any other device's frame is looked up as ``flush()`` does.
    func flush(from node: Node) {
        let id = node.id
        output.drain { frame, events in
            if frame.device == id {
                write(events, to: node)
            } else if nodesByID.indices.contains(frame.device.rawValue), let other = nodesByID[frame.device.rawValue] {
                write(events, to: other)
            }
        }
    }

    /// One frame to the node's clone, and the clone's echo of it read back.
    ///
    /// The clone is lent without a reference count (``Node/unmanagedClone``): `node.clone`
    /// holds it throughout, since nothing here sets it (a failed write or read is logged, a
    /// failed read cancels the feedback source), and the caller holds `node`. A strong
    /// reference cost a retain and a release on every frame.
    @inline(__always)
    private func write(_ frame: UnsafeBufferPointer<InputEvent>, to node: Node) {
        guard let unmanaged = node.unmanagedClone else { return }
        let failure: EvdevError? = unmanaged._withUnsafeGuaranteedRef { clone in
            do throws(EvdevError) {
                try clone.write(frame: frame)
            } catch {
                return error
            }
            // The echo is on the clone's fd by the time write(2) returns: one read here, and the
            // next epoll_wait finds the fd empty, instead of a wake-up of its own for it. A clone
            // without the types echoed has none to look for (UInputClone.mayEcho).
            if clone.mayEcho && frame.contains(where: UInputClone.echoes) { readFeedback(node, from: clone) }
            return nil
        }
        if let failure { writeFailed(node, failure) }
    }

    /// Once per node: the next frames would fail the same way.
    @inline(never)
    private func writeFailed(_ node: Node, _ error: EvdevError) {
        guard !node.writeFailed else { return }
        node.writeFailed = true
        logger.error("Could not write to an input device's clone", metadata: node.metadata.adding(error))
    }

    /// What the kiosk wrote to a clone: LEDs go on to the physical node; the kernel's echo of
    /// what kioskd wrote itself (`MSC_SCAN` and the like) is dropped.
    func readFeedback(_ node: Node) {
        guard let clone = node.clone else { return }
        readFeedback(node, from: clone)
    }

    @inline(__always)
    private func readFeedback(_ node: Node, from clone: UInputClone) {
        do {
            try clone.readFeedback { event in
                if event.type == EV.led { setLED(node, event) }
            }
        } catch {
            feedbackFailed(node, error)
        }
    }

    @inline(never)
    private func setLED(_ node: Node, _ event: InputEvent) {
        do {
            try node.evdev.setLED(event.code, on: event.value != 0)
        } catch {
            logger.warning("Could not set an LED of an input device", metadata: node.metadata.adding(error))
        }
    }

    @inline(never)
    private func feedbackFailed(_ node: Node, _ error: EvdevError) {
        node.feedback?.cancel()
        node.feedback = nil
        logger.error(
            "Could not read LED requests from an input device's clone; LEDs stay as they are",
            metadata: node.metadata.adding(error))
    }
}
