// The keyboard access features (docs/profiles.md#keyboard-access-features) in front of the
// ledger: bounce keys, then slow keys, then sticky keys turn a device's physical key events into
// the events the ledger decides, as if the person had typed them so: a sticky modifier goes
// down just before the next key and up just after it, so the ledger sees the chord whole and
// judges it as any chord (locks, locked combos, escape chords, allowed combos). Nothing here
// forwards anything the ledger did not pass. The exit gesture, kioskd's prompt and the offer of
// more time read the physical presses, before any feature: staff's way out never depends on a
// visitor's setting.

extension KeyLedger {
    /// Whether the keyboard access features are on for this device (the frame loop's one test).
    var hasAccess: Bool {
        @inline(__always) get { access != nil }
    }

    /// The key path with a feature on: `event` (a key of this device) through the features and
    /// the ledger; what passes goes to `output`, the event's `scan` just before the event itself.
    /// Out of line: profiles without the features never come here.
    @inline(never)
    mutating func decideWithAccess(
        _ event: InputEvent, scan: InputEvent?, synthetic: Bool, gate: DeviceGate, shared: inout SharedState,
        into output: inout OutputBuffer
    ) {
        guard KeyAccess.applies(to: event.code) else {
            if decide(event, synthetic: synthetic, gate: gate, shared: &shared, into: &output) {
                if let scan { output.append(scan) }
                output.append(event)
            }
            return
        }
        // Moved out while it runs, so that its arrays stay uniquely referenced (no copy) while
        // the ledger is mutated beside it.
        var taken: KeyAccess?
        swap(&taken, &access)
        guard taken != nil else { return }
        physical(&taken!, event, scan: scan, synthetic: synthetic, gate: gate, shared: &shared, into: &output)
        swap(&taken, &access)
    }

    /// When the first key waiting for slow keys counts, if one waits.
    var accessDeadline: Int64? { access?.nextDeadline }

    /// Counts every waiting key whose time came by `time` (slow keys' deadline; the broker's
    /// timer), each press its own frame of `device`, stamped with its deadline.
    mutating func advanceAccess(
        to time: Int64, device: DeviceID, gate: DeviceGate, shared: inout SharedState,
        into output: inout OutputBuffer
    ) {
        guard let due = access?.nextDeadline, due <= time else { return }
        var taken: KeyAccess?
        swap(&taken, &access)
        while let next = taken!.nextDeadline, next <= time {
            let start = output.count
            let press = countFirstWaiting(&taken!, gate: gate, shared: &shared, into: &output)
            output.commitFrame(device: device, from: start, time: press)
        }
        swap(&taken, &access)
    }

    /// Ends what the features hold on a policy change (the new policy judges from here): every
    /// latched or locked modifier goes up (through the ledger, so the kiosk sees the release of
    /// what it saw pressed), and keys still waiting for slow keys are dropped (their release
    /// too). A modifier held for a chord stays down until let go. With `forget`, the features also
    /// forget which keys are down (a resync: the device's state comes next, and each key down in
    /// it comes as a press of its own).
    mutating func settleAccess(
        time: InputEvent, forget: Bool, gate: DeviceGate, shared: inout SharedState, into output: inout OutputBuffer
    ) {
        guard access != nil else { return }
        var taken: KeyAccess?
        swap(&taken, &access)
        for index in KeyAccess.modifiers.indices {
            let code = KeyAccess.modifiers[index]
            let chord = taken!.held[index] && taken!.used[index]
            taken!.latch[index] = .none
            taken!.releaseAfter[index] = 0
            if keyDown[Int(code)] && (!chord || forget) {
                pass(
                    time.with(type: EV.key, code: code, value: 0), scan: nil, gate: gate, shared: &shared, into: &output
                )
            }
            if forget {
                taken!.held[index] = false
                taken!.used[index] = false
            }
        }
        for code in taken!.waiting { taken!.presses[Int(code)] = .dropped }
        taken!.waiting.removeAll(keepingCapacity: true)
        if forget {
            for index in taken!.presses.indices { taken!.presses[index] = .up }
        }
        swap(&taken, &access)
    }

    /// Puts `settings` in force (after ``settleAccess(time:forget:gate:shared:into:)``): the
    /// features' state is made when one turns on, kept while they stay on, dropped when they turn
    /// off. A device whose keys the profile lets through (`[[device]]` `passes = "keys"` or
    /// `"all"`: a scanner types faster than any person) keeps them as they are.
    mutating func configureAccess(_ settings: KeyAccessSettings, keysExempt: Bool) {
        guard settings.isOn && !keysExempt else {
            access = nil
            return
        }
        if access == nil {
            access = KeyAccess(settings: settings)
        } else {
            access!.settings = settings
        }
    }

    // MARK: - The stages

    /// Bounce and slow keys: whether a physical event counts, and when. A synthetic event (a
    /// resync's: state, not timing) skips both, and counts toward nothing physical.
    private mutating func physical(
        _ access: inout KeyAccess, _ event: InputEvent, scan: InputEvent?, synthetic: Bool, gate: DeviceGate,
        shared: inout SharedState, into output: inout OutputBuffer
    ) {
        let code = event.code
        let key = Int(code)
        // Keys whose wait ended by now count first (the timer may not have fired yet).
        if !synthetic {
            while let due = access.nextDeadline, due <= event.time {
                _ = countFirstWaiting(&access, gate: gate, shared: &shared, into: &output)
            }
        }
        switch event.value {
        case 1:
            guard access.presses[key] == .up else { return }  // down already: no second press
            if !synthetic {
                shared.notePress(of: code, at: event.time)
                shared.notePromptPress(of: code)
                shared.noteOfferKey(code, down: true)
                if access.bounces(code, at: event.time) {
                    access.presses[key] = .dropped
                    return
                }
                if access.settings.slowKeys > 0 {
                    access.wait(code, at: event.time)
                    return
                }
            }
            access.presses[key] = .counted
            sticky(&access, event, scan: scan, gate: gate, shared: &shared, into: &output)
        case 0:
            let press = access.presses[key]
            access.presses[key] = .up
            if !synthetic { shared.noteOfferKey(code, down: false) }
            switch press {
            case .dropped:
                return
            case .waiting:  // let go before its time (one that came was counted above)
                access.stopWaiting(code)
                return
            case .counted:
                if !synthetic { access.releasedAt[key] = event.time }
                sticky(&access, event, scan: scan, gate: gate, shared: &shared, into: &output)
            case .up:  // down since before the features knew it: its release goes on
                sticky(&access, event, scan: scan, gate: gate, shared: &shared, into: &output)
            }
        default:  // autorepeat: of a counted press (or one the features did not see) only
            let press = access.presses[key]
            guard press == .counted || press == .up else { return }
            sticky(&access, event, scan: scan, gate: gate, shared: &shared, into: &output)
        }
    }

    /// Counts the first waiting key: its press, stamped with its deadline, goes on. Returns it.
    private mutating func countFirstWaiting(
        _ access: inout KeyAccess, gate: DeviceGate, shared: inout SharedState, into output: inout OutputBuffer
    ) -> InputEvent {
        let code = access.waiting.removeFirst()
        access.presses[Int(code)] = .counted
        let time = access.pressedAt[Int(code)] + access.settings.slowKeys
        let press = InputEvent(
            seconds: Int(time / 1_000_000), microseconds: Int(time % 1_000_000), type: EV.key, code: code, value: 1)
        sticky(&access, press, scan: nil, gate: gate, shared: &shared, into: &output)
        return press
    }

    /// Sticky keys: a modifier is held back when it goes down. A key pressed next brings down
    /// every modifier held, latched or locked, just before it; a latched one goes up just after
    /// the key's release. A modifier let go without a key in between latches, a latched one
    /// locks, a locked one (pressed again) goes up; one held while a key was pressed goes up when
    /// let go, as without sticky keys.
    private mutating func sticky(
        _ access: inout KeyAccess, _ event: InputEvent, scan: InputEvent?, gate: DeviceGate,
        shared: inout SharedState, into output: inout OutputBuffer
    ) {
        guard access.settings.stickyKeys else {
            pass(event, scan: scan, gate: gate, shared: &shared, into: &output)
            return
        }
        if let index = KeyAccess.modifierIndex(event.code) {
            switch event.value {
            case 1:
                access.held[index] = true
                access.used[index] = false
            case 0:
                guard access.held[index] else {  // down before sticky keys knew it
                    pass(event, scan: scan, gate: gate, shared: &shared, into: &output)
                    return
                }
                access.held[index] = false
                let used = access.used[index]
                access.used[index] = false
                switch access.latch[index] {
                case .locked:
                    access.latch[index] = .none
                    release(event.code, at: event, gate: gate, shared: &shared, into: &output)
                case .latched:
                    if used {
                        release(event.code, at: event, gate: gate, shared: &shared, into: &output)
                    } else {
                        access.latch[index] = .locked
                    }
                case .none:
                    if used {
                        if access.releaseAfter[index] == 0 {
                            release(event.code, at: event, gate: gate, shared: &shared, into: &output)
                        }
                    } else {
                        access.latch[index] = .latched
                    }
                }
            default:  // a modifier's autorepeat: the ledger passes it only for one sent down
                pass(event, scan: scan, gate: gate, shared: &shared, into: &output)
            }
            return
        }
        switch event.value {
        case 1:
            for index in KeyAccess.modifiers.indices
            where (access.held[index] || access.latch[index] != .none) && !keyDown[Int(KeyAccess.modifiers[index])] {
                pass(
                    event.with(type: EV.key, code: KeyAccess.modifiers[index], value: 1), scan: nil, gate: gate,
                    shared: &shared, into: &output)
            }
            for index in KeyAccess.modifiers.indices {
                if access.held[index] { access.used[index] = true }
                if access.latch[index] == .latched {
                    access.latch[index] = .none
                    access.releaseAfter[index] = event.code
                }
            }
            pass(event, scan: scan, gate: gate, shared: &shared, into: &output)
        case 0:
            pass(event, scan: scan, gate: gate, shared: &shared, into: &output)
            for index in KeyAccess.modifiers.indices where access.releaseAfter[index] == event.code {
                access.releaseAfter[index] = 0
                if !access.held[index] && access.latch[index] == .none {
                    release(KeyAccess.modifiers[index], at: event, gate: gate, shared: &shared, into: &output)
                }
            }
        default:
            pass(event, scan: scan, gate: gate, shared: &shared, into: &output)
        }
    }

    /// A modifier sent down goes up (through the ledger), if it is down.
    private mutating func release(
        _ code: UInt16, at time: InputEvent, gate: DeviceGate, shared: inout SharedState,
        into output: inout OutputBuffer
    ) {
        guard keyDown[Int(code)] else { return }
        pass(time.with(type: EV.key, code: code, value: 0), scan: nil, gate: gate, shared: &shared, into: &output)
    }

    /// One event as the features pass it on, decided by the ledger like a key typed so; what
    /// passes goes to `output` (`scan`, the physical event's own, just before it).
    private mutating func pass(
        _ event: InputEvent, scan: InputEvent?, gate: DeviceGate, shared: inout SharedState,
        into output: inout OutputBuffer
    ) {
        // `synthetic`: the presses counting toward the exit gesture, the prompt and the offer
        // were noted as they physically came.
        guard decide(event, synthetic: true, gate: gate, shared: &shared, into: &output) else { return }
        if let scan { output.append(scan) }
        output.append(event)
    }
}
