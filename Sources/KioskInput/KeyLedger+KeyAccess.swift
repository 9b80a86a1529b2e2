// The keyboard access features (docs/profiles.md#keyboard-access-features) in front of the
// ledger: bounce keys, then slow keys, then sticky keys turn a device's physical key events into
// the events the ledger decides, as if the person had typed them so: a sticky modifier goes
// down just before the next key and up just after it, so the ledger sees the chord whole and
// judges it as any chord (locks, locked combos, escape chords, allowed combos). Nothing here
// forwards anything the ledger did not pass. The exit gesture, kioskd's prompt and the offer of
// more time read the physical presses, before any feature: staff's way out never depends on a
// visitor's setting.

extension KeyLedger {
    /// The key path with a feature on, from `decide(_:synthetic:gate:shared:into:)`: `event` (a
    /// key or button of this device) through the features, if they apply to it, and the ledger. Returns whether the
    /// event itself goes to the clone now, as `decide` does (the caller sends it with its
    /// `MSC_SCAN`); whatever else they pass on (a sticky modifier before it or after it, a press
    /// whose wait ended) goes to `output` here. The state is moved out while it runs (its arrays
    /// stay uniquely referenced, no copy), so that `decide`, called back for what the features
    /// pass on, sees none and decides as without them. Out of line, so that `decide` stays as
    /// small as without the features.
    @inline(never)
    mutating func decideWithAccess(
        _ event: InputEvent, synthetic: Bool, gate: DeviceGate, shared: inout SharedState,
        into output: inout OutputBuffer
    ) -> Bool {
        var taken: KeyAccess?
        swap(&taken, &access)
        let forward =
            KeyAccess.applies(to: event.code)
            ? physical(&taken!, event, synthetic: synthetic, gate: gate, shared: &shared, into: &output)
            : decide(event, synthetic: synthetic, gate: gate, shared: &shared, into: &output)
        swap(&taken, &access)
        return forward
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
                _ = pass(
                    time.with(type: EV.key, code: code, value: 0), own: false, gate: gate, shared: &shared,
                    into: &output)
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
    /// resync's: state, not timing) skips both, and counts toward nothing physical. Returns
    /// whether the event itself goes on to the clone (``decideWithAccess``).
    private mutating func physical(
        _ access: inout KeyAccess, _ event: InputEvent, synthetic: Bool, gate: DeviceGate,
        shared: inout SharedState, into output: inout OutputBuffer
    ) -> Bool {
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
            guard access.presses[key] == .up else { return false }  // down already: no second press
            if !synthetic {
                shared.notePress(of: code, at: event.time)
                shared.notePromptPress(of: code)
                shared.noteOfferKey(code, down: true)
                if access.bounces(code, at: event.time) {
                    access.presses[key] = .dropped
                    return false
                }
                if access.settings.slowKeys > 0 {
                    access.wait(code, at: event.time)
                    return false
                }
            }
            access.presses[key] = .counted
            return sticky(&access, event, own: true, gate: gate, shared: &shared, into: &output)
        case 0:
            let press = access.presses[key]
            access.presses[key] = .up
            if !synthetic { shared.noteOfferKey(code, down: false) }
            switch press {
            case .dropped:
                return false
            case .waiting:  // let go before its time (one that came was counted above)
                access.stopWaiting(code)
                return false
            case .counted:
                if !synthetic { access.releasedAt[key] = event.time }
                return sticky(&access, event, own: true, gate: gate, shared: &shared, into: &output)
            case .up:  // down since before the features knew it: its release goes on
                return sticky(&access, event, own: true, gate: gate, shared: &shared, into: &output)
            }
        default:  // autorepeat: of a counted press (or one the features did not see) only
            let press = access.presses[key]
            guard press == .counted || press == .up else { return false }
            return sticky(&access, event, own: true, gate: gate, shared: &shared, into: &output)
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
        _ = sticky(&access, press, own: false, gate: gate, shared: &shared, into: &output)
        return press
    }

    /// Sticky keys: a modifier is held back when it goes down. A key pressed next brings down
    /// every modifier held, latched or locked, just before it; a latched one goes up just after
    /// the key's release. A modifier let go without a key in between latches, a latched one
    /// locks, a locked one (pressed again) goes up; one held while a key was pressed goes up when
    /// let go, as without sticky keys. `own`: `event` is the physical event itself (see
    /// ``pass(_:own:gate:shared:into:)``).
    private mutating func sticky(
        _ access: inout KeyAccess, _ event: InputEvent, own: Bool, gate: DeviceGate, shared: inout SharedState,
        into output: inout OutputBuffer
    ) -> Bool {
        guard access.settings.stickyKeys else {
            return pass(event, own: own, gate: gate, shared: &shared, into: &output)
        }
        if let index = KeyAccess.modifierIndex(event.code) {
            switch event.value {
            case 1:
                access.held[index] = true
                access.used[index] = false
                return false
            case 0:
                // Down before sticky keys knew it: its release goes on.
                guard access.held[index] else {
                    return pass(event, own: own, gate: gate, shared: &shared, into: &output)
                }
                access.held[index] = false
                let used = access.used[index]
                access.used[index] = false
                var goesUp = false
                switch access.latch[index] {
                case .locked:
                    access.latch[index] = .none
                    goesUp = true
                case .latched:
                    if used { goesUp = true } else { access.latch[index] = .locked }
                case .none:
                    // Held for a chord: up now, or with the key a latch brought it down for.
                    if used { goesUp = access.releaseAfter[index] == 0 } else { access.latch[index] = .latched }
                }
                guard goesUp && keyDown[Int(event.code)] else { return false }
                return pass(event, own: own, gate: gate, shared: &shared, into: &output)
            default:  // a modifier's autorepeat: the ledger passes it only for one sent down
                return pass(event, own: own, gate: gate, shared: &shared, into: &output)
            }
        }
        switch event.value {
        case 1:
            for index in KeyAccess.modifiers.indices
            where (access.held[index] || access.latch[index] != .none) && !keyDown[Int(KeyAccess.modifiers[index])] {
                _ = pass(
                    event.with(type: EV.key, code: KeyAccess.modifiers[index], value: 1), own: false, gate: gate,
                    shared: &shared, into: &output)
            }
            for index in KeyAccess.modifiers.indices {
                if access.held[index] { access.used[index] = true }
                if access.latch[index] == .latched {
                    access.latch[index] = .none
                    access.releaseAfter[index] = event.code
                }
            }
            return pass(event, own: own, gate: gate, shared: &shared, into: &output)
        case 0:
            guard event.code != 0 && access.releaseAfter.contains(event.code) else {
                return pass(event, own: own, gate: gate, shared: &shared, into: &output)
            }
            // The latched modifiers go up after the key: the key's release is sent here, before
            // them (without its MSC_SCAN).
            _ = pass(event, own: false, gate: gate, shared: &shared, into: &output)
            for index in KeyAccess.modifiers.indices where access.releaseAfter[index] == event.code {
                access.releaseAfter[index] = 0
                let modifier = KeyAccess.modifiers[index]
                if !access.held[index] && access.latch[index] == .none && keyDown[Int(modifier)] {
                    _ = pass(
                        event.with(type: EV.key, code: modifier, value: 0), own: false, gate: gate, shared: &shared,
                        into: &output)
                }
            }
            return false
        default:
            return pass(event, own: own, gate: gate, shared: &shared, into: &output)
        }
    }

    /// One event as the features pass it on, decided by the ledger like a key typed so. The
    /// physical event itself (`own`) is left to the caller, which sends it with its `MSC_SCAN`
    /// when this returns true; any other that passes goes to `output` here.
    private mutating func pass(
        _ event: InputEvent, own: Bool, gate: DeviceGate, shared: inout SharedState, into output: inout OutputBuffer
    ) -> Bool {
        // `synthetic`: the presses counting toward the exit gesture, the prompt and the offer
        // were noted as they physically came.
        let forward = decide(event, synthetic: true, gate: gate, shared: &shared, into: &output)
        if forward && !own { output.append(event) }
        return forward && own
    }
}
