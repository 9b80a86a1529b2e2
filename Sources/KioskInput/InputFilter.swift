/// The input filter (docs/input-enforcement.md): a pure state machine over evdev events.
///
/// One `InputFilter` holds what all devices share (the policy, the modifiers held on any
/// keyboard for escape chords, the exit gesture's recent presses) and one `DeviceFilter` per
/// brokered device. Events go in one at a time; whole filtered frames come out into a
/// caller-owned `OutputBuffer` when the input frame's `SYN_REPORT` arrives. No fds, no clock,
/// no logging; no allocation per event once buffers have grown to the largest frame.
public final class InputFilter {
    /// Everything the per-event path touches, in one struct. The filter is used from one thread
    /// and calls nothing outside itself while it holds this, so Swift's run-time exclusivity
    /// check on it, paid on every event, is left out (docs/benchmarks.md § Latency).
    @exclusivity(unchecked) private var perEvent: PerEventState
    private var freeSlots: [Int] = []

    private var shared: SharedState {
        get { perEvent.shared }
        _modify { yield &perEvent.shared }
    }

    private var devices: [DeviceFilter?] {
        get { perEvent.devices }
        _modify { yield &perEvent.devices }
    }

    public init(policy: FilterPolicy = .passThrough) {
        perEvent = PerEventState(shared: SharedState(policy: policy))
    }

    public var policy: FilterPolicy { shared.policy }

    /// Starts filtering a device. `state` is what it holds at grab time (keys down, contacts):
    /// those were never forwarded, so their releases are swallowed and their contacts stay
    /// suppressed until lifted.
    public func addDevice(_ description: DeviceDescription, state: DeviceState? = nil) -> DeviceID {
        let index = freeSlots.popLast() ?? devices.count
        let id = DeviceID(rawValue: index)
        var filter = DeviceFilter(id: id, description: description, shared: shared)
        if let state { filter.adopt(initialState: state, shared: &shared) }
        if index == devices.count { devices.append(filter) } else { devices[index] = filter }
        return id
    }

    /// Stops filtering a device (unplugged): its held modifiers no longer count for chords.
    public func removeDevice(_ id: DeviceID) {
        guard devices.indices.contains(id.rawValue), let filter = devices[id.rawValue] else { return }
        filter.releaseSharedState(shared: &shared)
        devices[id.rawValue] = nil
        freeSlots.append(id.rawValue)
    }

    public func description(of id: DeviceID) -> DeviceDescription? {
        devices.indices.contains(id.rawValue) ? devices[id.rawValue]?.description : nil
    }

    /// The policy's allowed-device entry a device matches (the first), if any.
    public func allowance(of id: DeviceID) -> AllowedDevice? {
        devices.indices.contains(id.rawValue) ? devices[id.rawValue]?.allowance : nil
    }

    /// Feeds one event from a device. When it completes a frame, the filtered frame (if
    /// anything is left of it) is appended to `output`.
    @discardableResult
    public func process(_ event: InputEvent, device: DeviceID, into output: inout OutputBuffer) -> FilterResult {
        output.makeUnique()
        return perEvent.process(event, device: device, into: &output)
    }

    /// Feeds a run of events from one device, as one read of its node returns them: whole
    /// frames, and at either end perhaps part of one (the rest of a frame cut by the run's end
    /// comes with the next run). Decides exactly as feeding them one by one to
    /// ``process(_:device:into:)`` would, and appends the same frames to `output`; but a frame
    /// wholly inside the run is judged where it lies, not copied first. The prompt keys pressed
    /// go to `promptKeys`, in order: one per frame at most (a frame's last), as
    /// ``FilterResult/promptKey`` reports them. A `SYN_DROPPED` ends the run: the events after
    /// it are not read (``RunResult/resyncNeeded``; resync from the device's state, which stands
    /// for them, before the next run), as a caller of the event path resyncs at the drop.
    @discardableResult
    public func process(
        _ events: UnsafeBufferPointer<InputEvent>, device: DeviceID, into output: inout OutputBuffer,
        promptKeys: inout [PromptKey]
    ) -> RunResult {
        output.makeUnique()
        return perEvent.process(run: events, device: device, into: &output, promptKeys: &promptKeys)
    }

    /// Changes the policy. Keys forwarded as pressed that the new policy locks are released at
    /// once, and when touch is turned off (or all input held) forwarded contacts are ended;
    /// those frames go to `output`. Contacts keep the decision they got at touch-down otherwise.
    public func setPolicy(_ policy: FilterPolicy, into output: inout OutputBuffer) {
        shared.setPolicy(policy)
        output.makeUnique()
        perEvent.applyPolicyChange(into: &output)
    }

    /// Whether the policy's slow keys can hold a press back until a time
    /// (``KeyAccessSettings/slowKeys``): then the caller watches ``keyDeadline`` after each
    /// event or run and policy change, and calls ``advance(to:into:)`` when it comes.
    public var timesKeys: Bool { perEvent.shared.policy.keyAccess.slowKeys > 0 }

    /// The earliest time (µs, the events' clock: the broker stamps them with `CLOCK_MONOTONIC`)
    /// at which a key held down counts for slow keys, if one waits: its press reaches the kiosk
    /// then, though no event comes. A later key event of its device counts it too.
    public var keyDeadline: Int64? {
        var earliest: Int64?
        for device in devices {
            guard let due = device?.keyDeadline else { continue }
            if earliest.map({ due < $0 }) ?? true { earliest = due }
        }
        return earliest
    }

    /// Time has come to `time` (the events' clock) with no event: the presses whose wait for
    /// slow keys ended by then count, each a frame of its own (stamped with its deadline), to
    /// `output`. Nothing happens before ``keyDeadline``.
    public func advance(to time: Int64, into output: inout OutputBuffer) {
        output.makeUnique()
        perEvent.advance(to: time, into: &output)
    }

    /// After `SYN_DROPPED` (`FilterResult.resyncNeeded`): ends the dropped stretch and brings
    /// the device's state to `state`, read from the kernel after the drop.
    ///
    /// The partial frame before the drop and anything the filter was discarding since are
    /// forgotten; the differences from `state` go to `output` as whole frames, as libevdev's
    /// sync reports them: keys released or pressed meanwhile, contacts ended, moved or begun
    /// (each decided like any other). The next event starts a new frame. The caller reads the
    /// state and calls this; it builds no events of its own. Called with no drop pending, it
    /// brings the device to `state` too, and likewise drops a partial frame (events since the
    /// last `SYN_REPORT`): call it between frames.
    public func resync(device: DeviceID, to state: DeviceState, into output: inout OutputBuffer) {
        output.makeUnique()
        perEvent.resync(device: device, to: state, into: &output)
    }
}

struct PerEventState {
    var shared: SharedState
    var devices: [DeviceFilter?] = []

    @inline(__always)
    mutating func process(_ event: InputEvent, device: DeviceID, into output: inout OutputBuffer) -> FilterResult {
        guard device.rawValue >= 0, device.rawValue < devices.count, devices[device.rawValue] != nil else {
            return FilterResult()
        }
        shared.exitRequested = false
        shared.promptKey = nil
        shared.tookOffer = false
        shared.woke = false
        shared.cleaningRequested = false
        let resync = devices[device.rawValue]!.process(event, shared: &shared, into: &output)
        return FilterResult(
            exitRequested: shared.exitRequested, resyncNeeded: resync, promptKey: shared.promptKey,
            tookOffer: shared.tookOffer, woke: shared.woke, cleaningRequested: shared.cleaningRequested)
    }

    @inline(__always)
    mutating func process(
        run events: UnsafeBufferPointer<InputEvent>, device: DeviceID, into output: inout OutputBuffer,
        promptKeys: inout [PromptKey]
    ) -> RunResult {
        guard device.rawValue >= 0, device.rawValue < devices.count, devices[device.rawValue] != nil else {
            return RunResult()
        }
        shared.exitRequested = false
        shared.tookOffer = false
        shared.woke = false
        shared.cleaningRequested = false
        let resync = devices[device.rawValue]!.process(
            run: events, shared: &shared, into: &output, promptKeys: &promptKeys)
        return RunResult(
            exitRequested: shared.exitRequested, resyncNeeded: resync, tookOffer: shared.tookOffer, woke: shared.woke,
            cleaningRequested: shared.cleaningRequested)
    }

    mutating func applyPolicyChange(into output: inout OutputBuffer) {
        for index in devices.indices where devices[index] != nil {
            devices[index]!.applyPolicyChange(shared: &shared, into: &output)
        }
    }

    mutating func advance(to time: Int64, into output: inout OutputBuffer) {
        for index in devices.indices where devices[index] != nil {
            devices[index]!.advance(to: time, shared: &shared, into: &output)
        }
    }

    mutating func resync(device: DeviceID, to state: DeviceState, into output: inout OutputBuffer) {
        guard device.rawValue >= 0, device.rawValue < devices.count, devices[device.rawValue] != nil else { return }
        devices[device.rawValue]!.resync(to: state, shared: &shared, into: &output)
    }
}

/// What every device filter reads and writes: the policy in lookup form, modifiers held on
/// any keyboard, the exit gesture's recent presses.
struct SharedState {
    private(set) var policy: FilterPolicy
    private var lockedBits: [Bool]
    /// The keys some locked combo ends with: a press of any other key is not looked up.
    private var comboKeyBits: [Bool]
    /// The keys some allowed combo ends with.
    private var allowedComboKeyBits: [Bool]
    private var modifiers = ModifiersHeld()
    private var gestureTimes: [Int64] = []
    private var gesturePresses = 0
    private var tapTimes: [Int64] = []
    private var gestureTaps = 0
    var exitRequested = false
    var promptKey: PromptKey?
    /// The visitor took the offer of more time (``FilterPolicy/offersTime``), or answered "Still
    /// there?" (``FilterPolicy/asksPresence``), with this event or run.
    var tookOffer = false
    /// A press woke the dark display (``FilterPolicy/displayOff``) with this event or run.
    var woke = false
    /// A key, button or touch was pressed while the offer is up: its release takes it.
    private var offerPressed = false
    /// The contact starting now is a tap of the touch exit gesture: it takes no offer.
    private var offerSkipsTouch = false
    /// The cleaning gesture completed with this event or run (``FilterPolicy/cleaningGesture``).
    var cleaningRequested = false
    /// The keys that pass while cleaning (``FilterPolicy/cleaningPassKeys``), by code.
    private var cleaningPassBits: [Bool]
    private var cleaningPresses = GestureCounter()
    private var cleaningTaps = GestureCounter()

    init(policy: FilterPolicy) {
        self.policy = policy
        lockedBits = Array(repeating: false, count: KEY.count)
        comboKeyBits = Array(repeating: false, count: KEY.count)
        allowedComboKeyBits = Array(repeating: false, count: KEY.count)
        cleaningPassBits = Array(repeating: false, count: KEY.count)
        setPolicy(policy)
    }

    mutating func setPolicy(_ new: FilterPolicy) {
        for index in lockedBits.indices { lockedBits[index] = false }
        for key in new.lockedKeys where Int(key) < KEY.count { lockedBits[Int(key)] = true }
        for index in comboKeyBits.indices { comboKeyBits[index] = false }
        for combo in new.lockedCombos where Int(combo.key) < KEY.count { comboKeyBits[Int(combo.key)] = true }
        for index in allowedComboKeyBits.indices { allowedComboKeyBits[index] = false }
        for combo in new.allowedCombos where Int(combo.key) < KEY.count { allowedComboKeyBits[Int(combo.key)] = true }
        if new.exitGesture != policy.exitGesture || gestureTimes.isEmpty {
            gestureTimes = Array(repeating: 0, count: new.exitGesture?.presses ?? 0)
            gesturePresses = 0
        }
        if new.touchExitGesture != policy.touchExitGesture || tapTimes.isEmpty {
            tapTimes = Array(repeating: 0, count: new.touchExitGesture?.taps ?? 0)
            gestureTaps = 0
        }
        if !(new.offersTime || new.asksPresence) || new.readsPasscode || new.cleaning {
            offerPressed = false
            offerSkipsTouch = false
        }
        for index in cleaningPassBits.indices { cleaningPassBits[index] = false }
        for key in new.cleaningPassKeys where Int(key) < KEY.count { cleaningPassBits[Int(key)] = true }
        if new.cleaningGesture != policy.cleaningGesture || policy.cleaning != new.cleaning || cleaningPresses.isEmpty {
            cleaningPresses.reset(count: new.cleaningGesture?.presses ?? 0, within: new.cleaningGesture?.within ?? 0)
        }
        if new.touchCleaningGesture != policy.touchCleaningGesture || policy.cleaning != new.cleaning
            || cleaningTaps.isEmpty
        {
            cleaningTaps.reset(
                count: new.touchCleaningGesture?.taps ?? 0, within: new.touchCleaningGesture?.within ?? 0)
        }
        policy = new
        holdsAll =
            new.holdAllInput || new.readsPasscode || ((new.offersTime || new.asksPresence) && !new.cleaning)
            || new.displayOff
    }

    /// Nothing reaches the kiosk: an expired session, the passcode prompt is open, the offer
    /// of more time or "Still there?" is up (while cleaning, the cleaning's hold stands for
    /// theirs: what assistive technology needs still works, and nothing answers them), or the
    /// display is dark. Worked out once per policy (read on every event: one load, not six).
    private(set) var holdsAll = false

    /// Whether cleaning holds a key of a device whose keys are not exempt: every key but
    /// ``FilterPolicy/cleaningPassKeys``.
    @inline(__always)
    func cleaningHolds(_ code: UInt16, keysExempt: Bool) -> Bool {
        policy.cleaning && !keysExempt && !(Int(code) < KEY.count && cleaningPassBits[Int(code)])
    }

    /// A physical key, button or touch (`BTN_TOUCH`) going down or up while the offer of more
    /// time is up: pressed and let go, it takes the offer, on the release. Never the exit
    /// gesture's key (nor a tap in its corner), nor anything while the prompt reads the passcode.
    @inline(__always)
    mutating func noteOfferKey(_ code: UInt16, down: Bool) {
        if policy.displayOff {
            if down { woke = true }  // the exit gesture's key too: staff see what they do
            return
        }
        guard policy.offersTime || policy.asksPresence, !policy.readsPasscode, !policy.cleaning,
            code != policy.exitGesture?.key, code != policy.cleaningGesture?.key
        else { return }
        if down {
            if code == BTN.touch && offerSkipsTouch {
                offerSkipsTouch = false
                return
            }
            offerPressed = true
            return
        }
        // The last finger up: a corner tap that came with another finger down skips nothing later.
        if code == BTN.touch { offerSkipsTouch = false }
        if offerPressed {
            offerPressed = false
            tookOffer = true
        }
    }

    /// Whether a press of `code` is swallowed (hold, a lock, or an escape chord). A device whose
    /// keys are exempt (an allowed device) is held to the escape chords alone.
    @inline(__always)
    func swallowsPress(of code: UInt16, keysExempt: Bool) -> Bool {
        if holdsAll { return true }
        if cleaningHolds(code, keysExempt: keysExempt) { return true }
        if !keysExempt, Int(code) < KEY.count, lockedBits[Int(code)] { return true }
        return completesBlockedChord(code, keysExempt: keysExempt)
    }

    /// Whether `code`, pressed or repeated now, completes a blocked escape chord or (unless the
    /// device's keys are exempt) a locked key combination.
    @inline(__always)
    func completesBlockedChord(_ code: UInt16, keysExempt: Bool) -> Bool {
        // Chords and combos end with a keyboard key (KEY_*, below BTN_MISC): a touch or pointer
        // button (BTN_TOUCH, BTN_TOOL_*, BTN_LEFT) is not looked up at all.
        guard code < BTN.misc else { return false }
        return (policy.blockEscapeChords && isEscapeChord(code)) || (!keysExempt && completesLockedCombo(code))
    }

    /// Whether `code`, pressed now, completes a blocked escape chord.
    func completesBlockedEscapeChord(_ code: UInt16) -> Bool {
        code < BTN.misc && policy.blockEscapeChords && isEscapeChord(code)
    }

    /// Whether some allowed combo ends with `code` (the cheap test before looking them up).
    @inline(__always)
    func endsAllowedCombo(_ code: UInt16) -> Bool {
        Int(code) < KEY.count && allowedComboKeyBits[Int(code)]
    }

    private func completesLockedCombo(_ code: UInt16) -> Bool {
        guard Int(code) < KEY.count, comboKeyBits[Int(code)] else { return false }
        for combo in policy.lockedCombos where combo.key == code && modifiers.satisfy(combo) { return true }
        return false
    }

    /// Whether the profile locks a pointer button by name (`extra-locked-keys = ["BTN_RIGHT"]`),
    /// which an allowed device's pointer passes.
    @inline(__always)
    func locksButton(_ code: UInt16, pointerExempt: Bool) -> Bool {
        !pointerExempt && Int(code) < KEY.count && lockedBits[Int(code)]
    }

    /// Whether a forwarded key must be released now (it is locked or everything is held).
    func mustRelease(_ code: UInt16, keysExempt: Bool) -> Bool {
        holdsAll || cleaningHolds(code, keysExempt: keysExempt)
            || (!keysExempt && Int(code) < KEY.count && lockedBits[Int(code)])
    }

    private func isEscapeChord(_ code: UInt16) -> Bool {
        EscapeChord.completes(
            code, alt: modifiers.alt > 0, ctrl: modifiers.ctrl > 0, allowedAltChords: policy.allowedAltChords)
    }

    @inline(__always)
    mutating func physicalKeyChanged(_ code: UInt16, down: Bool) {
        if code <= KEY.rightMeta { modifiers.change(code, by: down ? 1 : -1) }  // no BTN_* is a modifier
    }

    /// A physical press while the prompt is open: the prompt key it is, if any.
    @inline(__always)
    mutating func notePromptPress(of code: UInt16) {
        guard policy.readsPasscode, let key = PromptKey.forKey(code) else { return }
        promptKey = key
    }

    /// A contact that starts at `point` (screen fractions, after calibration) at `time`: a key of
    /// the PIN pad while the prompt is open, or a tap of the touch exit gesture. Returns whether
    /// the contact is the prompt's or the gesture's (then it never reaches the kiosk).
    mutating func noteContactStart(at point: Point, time: Int64) -> Bool {
        if policy.readsPasscode {
            if let key = policy.pinPad.first(where: { $0.contains(point) }) { promptKey = key.key }
            return true
        }
        if policy.cleaning {
            // The corners are wiped too: a contact there counts toward no gesture, and stays
            // locked (even an allowed device's).
            return policy.touchExitGesture?.contains(point) == true
                || policy.touchCleaningGesture?.contains(point) == true
        }
        var inCleaningCorner = false
        if let gesture = policy.touchCleaningGesture, gesture.contains(point) {
            inCleaningCorner = true
            if policy.offersTime || policy.asksPresence { offerSkipsTouch = true }
            if cleaningTaps.note(at: time) { cleaningRequested = true }
        }
        guard let gesture = policy.touchExitGesture, gesture.contains(point), !tapTimes.isEmpty else {
            return inCleaningCorner
        }
        if policy.offersTime || policy.asksPresence { offerSkipsTouch = true }
        let count = tapTimes.count
        tapTimes[gestureTaps % count] = time
        gestureTaps += 1
        if gestureTaps >= count && time - tapTimes[gestureTaps % count] <= gesture.within {
            exitRequested = true
            gestureTaps = 0
        }
        return true
    }

    /// Whether contacts' starts need a look at where they are beyond the locks' regions (the
    /// prompt's pad, the touch gesture's corner).
    var watchesContactStarts: Bool {
        policy.readsPasscode || policy.touchExitGesture != nil || policy.touchCleaningGesture != nil
    }

    /// Counts a physical press toward the exit gesture (whatever the locks say).
    @inline(__always)
    mutating func notePress(of code: UInt16, at time: Int64) {
        if let cleaning = policy.cleaningGesture, cleaning.key == code, !policy.cleaning, !policy.readsPasscode,
            cleaningPresses.note(at: time)
        {
            cleaningRequested = true
        }
        guard let gesture = policy.exitGesture, gesture.key == code, !gestureTimes.isEmpty else { return }
        let count = gestureTimes.count
        gestureTimes[gesturePresses % count] = time
        gesturePresses += 1
        guard gesturePresses >= count else { return }
        let oldest = gestureTimes[gesturePresses % count]
        if time - oldest <= gesture.within {
            exitRequested = true
            gesturePresses = 0
        }
    }
}
