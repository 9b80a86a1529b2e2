import KioskInput
import KioskTraces
import Testing

/// The broker's path, `InputFilter.process(_:device:into:promptKeys:)`, fed a run of events per
/// read, against the event-by-event path on the same streams: real recordings and synthetic
/// ones, under sessions whose locks the streams hit, split into runs every way a read can cut
/// them (whole frames, frames cut at a run's end, one event a run, two devices taking turns
/// with frames cut on both), with `SYN_DROPPED` inside frames (where a run stops), with and
/// without a resync. After
/// every run, both must have written the same frames and asked for the same things.
@Suite struct RunFeedTests {
    /// What the caller has after one run: the frames to write, by device, and what to act on.
    struct Outcome: Equatable, CustomStringConvertible {
        var frames: [Frame] = []
        var exitRequested = false
        var resyncNeeded = false
        var promptKeys: [PromptKey] = []

        struct Frame: Equatable {
            var device: Int
            var events: [InputEvent]
        }

        var description: String {
            "\(frames.count) frames, exit \(exitRequested), resync \(resyncNeeded), keys \(promptKeys)"
        }
    }

    struct Run {
        var device: Int
        var events: [InputEvent]
    }

    /// Feeds `runs` to a fresh filter, each run whole (`inRuns`) or event by event, and returns
    /// the outcome of each. `resync(i)`: the state to resync the run's device to after run i.
    static func feed(
        _ descriptions: [DeviceDescription], policy: FilterPolicy, _ runs: [Run], inRuns: Bool,
        resync: (Int) -> DeviceState? = { _ in nil }
    ) -> [Outcome] {
        let filter = InputFilter(policy: policy)
        let ids = descriptions.map { filter.addDevice($0) }
        var output = OutputBuffer()
        var outcomes: [Outcome] = []
        for (index, run) in runs.enumerated() {
            var outcome = Outcome()
            if inRuns {
                let result = run.events.withUnsafeBufferPointer {
                    filter.process($0, device: ids[run.device], into: &output, promptKeys: &outcome.promptKeys)
                }
                outcome.exitRequested = result.exitRequested
                outcome.resyncNeeded = result.resyncNeeded
            } else {
                for event in run.events {
                    let result = filter.process(event, device: ids[run.device], into: &output)
                    outcome.exitRequested = outcome.exitRequested || result.exitRequested
                    outcome.resyncNeeded = outcome.resyncNeeded || result.resyncNeeded
                    if let key = result.promptKey { outcome.promptKeys.append(key) }
                }
            }
            if let state = resync(index) { filter.resync(device: ids[run.device], to: state, into: &output) }
            for frame in output.frames {
                let device = ids.firstIndex(of: frame.device) ?? -1
                outcome.frames.append(Outcome.Frame(device: device, events: Array(output.events(of: frame))))
            }
            output.removeAll()
            outcomes.append(outcome)
        }
        return outcomes
    }

    /// Both paths on the same runs: equal outcomes, run by run. Returns the outcomes.
    @discardableResult
    /// `byEvent`: the runs the event path is fed (by default `runs`).
    static func expectSame(
        _ descriptions: [DeviceDescription], policy: FilterPolicy, _ runs: [Run], _ label: String,
        byEvent eventRuns: [Run]? = nil, resync: (Int) -> DeviceState? = { _ in nil }
    ) -> [Outcome] {
        let byEvent = feed(descriptions, policy: policy, eventRuns ?? runs, inRuns: false, resync: resync)
        let byRun = feed(descriptions, policy: policy, runs, inRuns: true, resync: resync)
        #expect(byRun.count == byEvent.count)
        if let first = byRun.indices.first(where: { $0 < byEvent.count && byRun[$0] != byEvent[$0] }) {
            let (a, b) = (byRun[first], byEvent[first])
            let frame = a.frames.indices.first { $0 >= b.frames.count || a.frames[$0] != b.frames[$0] }
            let detail = frame.map {
                "frame \($0): \(a.frames[$0]) vs \($0 < b.frames.count ? "\(b.frames[$0])" : "none")"
            }
            Issue.record("\(label): run \(first) differs\nin runs:  \(a)\nby event: \(b)\n\(detail ?? "")")
        }
        return byEvent
    }

    /// A small deterministic generator (the splits must be the same on every run of the test).
    struct Generator {
        var state: UInt64
        mutating func next(_ range: ClosedRange<Int>) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return range.lowerBound + Int((state >> 33) % UInt64(range.count))
        }
    }

    /// The ways one device's stream is cut into reads.
    static func splits(_ events: [InputEvent], seed: UInt64) -> [(String, [Run])] {
        func cut(_ lengths: (inout Generator) -> Int) -> [Run] {
            var generator = Generator(state: seed)
            var runs: [Run] = []
            var start = 0
            while start < events.count {
                let end = min(events.count, start + max(1, lengths(&generator)))
                runs.append(Run(device: 0, events: Array(events[start..<end])))
                start = end
            }
            return runs
        }
        var byFrame: [Run] = []
        var start = 0
        for (index, event) in events.enumerated() where event.isSynReport {
            byFrame.append(Run(device: 0, events: Array(events[start...index])))
            start = index + 1
        }
        if start < events.count { byFrame.append(Run(device: 0, events: Array(events[start...]))) }
        return [
            ("one run", [Run(device: 0, events: events)]),
            ("a frame a run", byFrame),
            ("runs of 64", cut { _ in 64 }),
            ("runs of 1 to 40", cut { $0.next(1...40) }),
            ("runs of 1 to 5", cut { $0.next(1...5) }),
            ("an event a run", cut { _ in 1 }),
        ]
    }

    static let traces =
        Fixtures.touchTraces + [
            "saitek-cyborg-rat5-mouse.motion-and-clicks.evemu", "cypress-trackpad.two-finger-tap.evemu",
            "wacom-cintiq-13hd-pen.strokes.evemu",
        ]

    /// Sessions whose locks the recordings hit: regions over part of the screen (left strip,
    /// top half, right half), touch and pointer locked, all input held, the prompt open (its
    /// pad), the touch exit gesture's corner.
    static let policies: [(String, FilterPolicy)] = [
        ("no session", .passThrough),
        ("left strip", FilterPolicy(touch: .regions([.rect(x: 0, y: 0, width: 0.1, height: 1)]), pointer: .regions)),
        ("top half", FilterPolicy(touch: .regions([.rect(x: 0, y: 0, width: 1, height: 0.5)]), pointer: .regions)),
        ("right half", FilterPolicy(touch: .regions([.rect(x: 0.5, y: 0, width: 0.5, height: 1)]), pointer: .regions)),
        ("touch and pointer locked", FilterPolicy(touch: .none, pointer: .locked)),
        ("hold all", FilterPolicy(holdAllInput: true)),
        ("prompt open", FilterPolicy(readsPasscode: true)),
        (
            "touch gesture",
            FilterPolicy(touchExitGesture: TouchExitGesture(corner: .topLeft, taps: 2, within: 5_000_000))
        ),
    ]

    @Test("real recordings: the same frames in runs as event by event", arguments: traces)
    func recordings(name: String) throws {
        let device = try Fixtures.trace(name).devices[0]
        for (policyName, policy) in Self.policies {
            for (splitName, runs) in Self.splits(device.events, seed: UInt64(name.utf8.count)) {
                Self.expectSame([device.description], policy: policy, runs, "\(name), \(policyName), \(splitName)")
            }
        }
    }

    @Test("the locks are hit: each touch recording loses contacts to some region, and all to a locked touch")
    func locksAreHit() throws {
        // Otherwise the comparisons above would prove little about the locks.
        for name in Fixtures.touchTraces {
            let device = try Fixtures.trace(name).devices[0]
            let runs = [Run(device: 0, events: device.events)]
            func forwarded(_ policy: FilterPolicy) -> Int {
                Self.feed([device.description], policy: policy, runs, inRuns: true).flatMap(\.frames)
                    .flatMap(\.events).count { $0.type == EV.abs && $0.code == ABS.mtTrackingID && $0.value >= 0 }
            }
            let open = forwarded(.passThrough)
            let regions = Self.policies.filter { ["left strip", "top half", "right half"].contains($0.0) }
            #expect(open > 0)
            #expect(regions.contains { forwarded($0.1) < open }, "\(name): no region locks a contact")
            #expect(forwarded(FilterPolicy(touch: .none)) == 0)
        }
    }

    /// A keyboard's typing, one frame per key event (`MSC_SCAN`, the key, `SYN_REPORT`): letters,
    /// Ctrl+W and Ctrl+Alt+Del, locked keys, a held key's autorepeat, the exit gesture (three
    /// presses of KEY_POWER), digits and Enter for the prompt.
    static func typing() -> [InputEvent] {
        var events: [InputEvent] = []
        var time = 0
        func frame(_ code: UInt16, _ value: Int32) {
            time += 7_000
            let (s, us) = (time / 1_000_000, time % 1_000_000)
            events.append(InputEvent(seconds: s, microseconds: us, type: 4, code: 4, value: 0x70000 + Int32(code)))
            events.append(InputEvent(seconds: s, microseconds: us, type: 1, code: code, value: value))
            events.append(InputEvent(seconds: s, microseconds: us, type: 0, code: 0, value: 0))
        }
        func tap(_ code: UInt16) { frame(code, 1); frame(code, 0) }
        for code: UInt16 in [30, 48, 46, 2, 3, 28] { tap(code) }
        frame(29, 1); tap(17); frame(56, 1); tap(111); frame(56, 0); frame(29, 0)  // Ctrl+W, Ctrl+Alt+Del
        tap(125); tap(102)  // locked: Super, Home
        frame(32, 1); frame(32, 2); frame(32, 2); frame(32, 0)  // autorepeat
        frame(56, 1); tap(62); frame(56, 0)  // Alt+F4
        tap(116); tap(116); tap(116)  // the exit gesture
        for code: UInt16 in [2, 3, 4, 14, 28, 1] { tap(code) }
        return events
    }

    static let keyboard = DeviceDescription(name: "synthetic keyboard", codes: [1: Set(1..<0x100), 4: [4]])

    static let keyPolicies: [(String, FilterPolicy)] = [
        ("no session", .passThrough),
        (
            "locks, combos, chords, gesture",
            FilterPolicy(
                lockedKeys: [102, 125, 126], blockEscapeChords: true,
                lockedCombos: [KeyCombo(ctrl: .either, key: 17), KeyCombo(alt: .either, key: 62)],
                allowedCombos: [KeyCombo(ctrl: .left, key: 48)],
                exitGesture: ExitGesture(key: 116, presses: 3, within: 2_000_000))
        ),
        (
            "prompt open",
            FilterPolicy(exitGesture: ExitGesture(key: 116, presses: 3, within: 2_000_000), readsPasscode: true)
        ),
        ("hold all", FilterPolicy(holdAllInput: true)),
    ]

    @Test("typing under key locks: the same frames, exit requests and prompt keys in runs")
    func typingUnderLocks() {
        let events = Self.typing()
        var sawExit = false, sawKey = false, sawSwallowed = false
        for (policyName, policy) in Self.keyPolicies {
            for (splitName, runs) in Self.splits(events, seed: 7) {
                let outcomes = Self.expectSame(
                    [Self.keyboard], policy: policy, runs, "typing, \(policyName), \(splitName)")
                sawExit = sawExit || outcomes.contains { $0.exitRequested }
                sawKey = sawKey || outcomes.contains { !$0.promptKeys.isEmpty }
                let forwarded = outcomes.flatMap(\.frames).flatMap(\.events).filter { $0.type == 1 }.count
                sawSwallowed = sawSwallowed || forwarded < events.filter { $0.type == 1 }.count
            }
        }
        #expect(sawExit && sawKey && sawSwallowed, "the stream makes the gesture, types prompt keys, hits locks")
    }

    /// `stream` with `SYN_DROPPED` put in the middle of some frames (every `every`-th frame,
    /// after its first event); the dropped frame's rest and the next frame still follow, as
    /// they do when the kernel drops.
    static func withDrops(_ stream: [InputEvent], every: Int) -> [InputEvent] {
        var events: [InputEvent] = []
        var frame = 0
        var atFrameStart = true
        for event in stream {
            events.append(event)
            if atFrameStart && !event.isSynReport && frame % every == every - 1 {
                events.append(
                    InputEvent(seconds: event.seconds, microseconds: event.microseconds, type: 0, code: 3, value: 0))
            }
            atFrameStart = event.isSynReport
            if event.isSynReport { frame += 1 }
        }
        return events
    }

    @Test(
        "SYN_DROPPED inside frames, no resync: a run stops at the drop, as the event path fed up to it; then the same frames discarded up to the next SYN_REPORT"
    )
    func dropsWithoutResync() throws {
        let touch = try Fixtures.trace(Fixtures.touchTraces[1]).devices[0]
        let streams = [
            ("typing", Self.keyboard, Self.withDrops(Self.typing(), every: 5), Self.keyPolicies[1].1),
            ("touch", touch.description, Self.withDrops(touch.events, every: 4), Self.policies[2].1),
        ]
        for (name, description, events, policy) in streams {
            #expect(events.contains { $0.isSynDropped })
            var cut = false  // some split has events after a drop in the same run
            for (splitName, runs) in Self.splits(events, seed: 3) {
                // The run path reads no further than a SYN_DROPPED (InputFilter.process's run
                // entry): the event path is fed each run up to its first one.
                let upToDrop = runs.map { run in
                    Run(
                        device: run.device,
                        events: run.events.firstIndex(where: \.isSynDropped).map { Array(run.events[...$0]) }
                            ?? run.events)
                }
                if upToDrop.map(\.events.count).reduce(0, +) < runs.map(\.events.count).reduce(0, +) { cut = true }
                let outcomes = Self.expectSame(
                    [description], policy: policy, runs, "\(name) with drops, \(splitName)", byEvent: upToDrop)
                #expect(outcomes.contains { $0.resyncNeeded })
            }
            #expect(cut, "\(name): no split has events after a SYN_DROPPED in the same run")
        }
    }

    @Test("SYN_DROPPED, then a resync right after the read that ends with it (the broker's path)")
    func dropsWithResync() throws {
        let touch = try Fixtures.trace(Fixtures.touchTraces[1]).devices[0]
        for (name, description, stream, policy) in [
            ("typing", Self.keyboard, Self.withDrops(Self.typing(), every: 6), Self.keyPolicies[1].1),
            ("touch", touch.description, Self.withDrops(touch.events, every: 5), Self.policies[2].1),
        ] {
            // Reads as the broker's: a read ends at a SYN_DROPPED (libevdev then reads the
            // state), otherwise every 1 to 40 events.
            var generator = Generator(state: 11)
            var runs: [Run] = []
            var current: [InputEvent] = []
            var limit = generator.next(1...40)
            var states: [Int: DeviceState] = [:]
            var state = DeviceState(for: description)
            for event in stream {
                current.append(event)
                if !event.isSynDropped { state.apply(event) }
                if event.isSynDropped || current.count == limit {
                    if event.isSynDropped { states[runs.count] = state }
                    runs.append(Run(device: 0, events: current))
                    current = []
                    limit = generator.next(1...40)
                }
            }
            if !current.isEmpty { runs.append(Run(device: 0, events: current)) }
            #expect(!states.isEmpty)
            Self.expectSame([description], policy: policy, runs, "\(name) with resyncs", resync: { states[$0] })
        }
    }

    @Test("two devices taking turns, each with frames cut between its reads")
    func twoDevicesInterleaved() throws {
        let touch = try Fixtures.trace(Fixtures.touchTraces[2]).devices[0]
        let keys = Self.typing()
        for (policyName, policy) in [
            (
                "regions and key locks",
                FilterPolicy(
                    lockedKeys: [102, 125], blockEscapeChords: true,
                    touch: .regions([.rect(x: 0, y: 0, width: 1, height: 0.5)]),
                    exitGesture: ExitGesture(key: 116, presses: 3, within: 2_000_000))
            ),
            ("prompt open", FilterPolicy(readsPasscode: true)),
        ] {
            var generator = Generator(state: 5)
            var runs: [Run] = []
            var next = [0, 0]
            let streams = [keys, touch.events]
            while next[0] < streams[0].count || next[1] < streams[1].count {
                let device = next[0] >= streams[0].count ? 1 : next[1] >= streams[1].count ? 0 : generator.next(0...1)
                let end = min(streams[device].count, next[device] + generator.next(1...12))
                runs.append(Run(device: device, events: Array(streams[device][next[device]..<end])))
                next[device] = end
            }
            Self.expectSame([Self.keyboard, touch.description], policy: policy, runs, "two devices, \(policyName)")
        }
    }

    @Test("an unknown device and an empty run change nothing")
    func unknownDeviceAndEmptyRun() {
        let filter = InputFilter()
        let id = filter.addDevice(Self.keyboard)
        var output = OutputBuffer()
        var keys: [PromptKey] = []
        let events = Self.typing()
        let unknown = events.withUnsafeBufferPointer {
            filter.process($0, device: DeviceID(rawValue: 42), into: &output, promptKeys: &keys)
        }
        #expect(unknown == RunResult() && output.isEmpty && keys.isEmpty)
        let empty = [InputEvent]().withUnsafeBufferPointer {
            filter.process($0, device: id, into: &output, promptKeys: &keys)
        }
        #expect(empty == RunResult() && output.isEmpty)
        // A frame cut by the end of a run is held back until its SYN_REPORT comes.
        events[0..<2].withUnsafeBufferPointer { _ = filter.process($0, device: id, into: &output, promptKeys: &keys) }
        #expect(output.isEmpty)
        events[2..<3].withUnsafeBufferPointer { _ = filter.process($0, device: id, into: &output, promptKeys: &keys) }
        #expect(output.frames.count == 1 && Array(output.events) == Array(events[0..<3]))
    }
}
