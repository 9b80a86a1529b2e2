import KioskInput
import KioskTraces
import Testing

/// `kioskctl replay` models kioskd's passcode prompt — typed, on the pad, cancelled,
/// timed out, on an expired session, wrong then right. The passcode check is a stand-in here
/// (`== "1234"`); KioskctlTests replays through the real tool and libcrypt.
@Suite struct ReplayPromptTests {
    static let keyboard = DeviceDescription(name: "kbd", codes: [1: Set(1..<0x100)])
    static let touch = DeviceDescription(
        name: "ts", properties: [1], codes: [1: [0x14a], 3: [0, 1, 0x2f, 0x35, 0x36, 0x39]],
        absInfo: [
            0: .init(minimum: 0, maximum: 999), 1: .init(minimum: 0, maximum: 999), 0x2f: .init(minimum: 0, maximum: 9),
            0x35: .init(minimum: 0, maximum: 999), 0x36: .init(minimum: 0, maximum: 999),
            0x39: .init(minimum: 0, maximum: 65535),
        ])
    /// Power (116) locked, A (30) locked, gesture: three presses of power within 1.5 s.
    static let policy = FilterPolicy(
        lockedKeys: [116, 30], exitGesture: ExitGesture(key: 116, presses: 3, within: 1_500_000))

    struct Writer {
        var keyboard: [InputEvent] = []
        var touch: [InputEvent] = []
        var time: Int64 = 1_000_000

        mutating func key(_ code: UInt16, at seconds: Double? = nil) {
            if let seconds { time = Int64(seconds * 1_000_000) }
            for value: Int32 in [1, 0] {
                time += 20_000
                keyboard += [
                    InputEvent(seconds: Int(time / 1_000_000), microseconds: Int(time % 1_000_000), type: 1, code: code, value: value),
                    InputEvent(seconds: Int(time / 1_000_000), microseconds: Int(time % 1_000_000), type: 0, code: 0, value: 0),
                ]
            }
        }

        mutating func keys(_ codes: [UInt16]) { for code in codes { key(code) } }

        /// A tap at (x, y) in 0…999 units.
        mutating func tap(_ x: Int32, _ y: Int32, id: Int32) {
            time += 20_000
            let t = (Int(time / 1_000_000), Int(time % 1_000_000))
            touch += [(0x2f, 0), (0x39, id), (0x35, x), (0x36, y)].map {
                InputEvent(seconds: t.0, microseconds: t.1, type: 3, code: UInt16($0.0), value: $0.1)
            }
            touch += [
                InputEvent(seconds: t.0, microseconds: t.1, type: 1, code: 0x14a, value: 1),
                InputEvent(seconds: t.0, microseconds: t.1, type: 0, code: 0, value: 0),
            ]
            time += 20_000
            let u = (Int(time / 1_000_000), Int(time % 1_000_000))
            touch += [
                InputEvent(seconds: u.0, microseconds: u.1, type: 3, code: 0x39, value: -1),
                InputEvent(seconds: u.0, microseconds: u.1, type: 1, code: 0x14a, value: 0),
                InputEvent(seconds: u.0, microseconds: u.1, type: 0, code: 0, value: 0),
            ]
        }

        func trace() -> Trace {
            Trace(devices: [
                Trace.Device(description: ReplayPromptTests.keyboard, events: keyboard),
                Trace.Device(description: ReplayPromptTests.touch, events: touch),
            ])
        }
    }

    static let (power, a, b, enter, esc) = (UInt16(116), UInt16(30), UInt16(48), UInt16(28), UInt16(1))
    /// KEY_1 … KEY_4 on the top row; KEY_KP4 on the keypad.
    static let (one, two, three, four) = (UInt16(2), UInt16(3), UInt16(4), UInt16(5))

    func replay(_ writer: Writer, policy: FilterPolicy = Self.policy) -> [String] {
        Replay.run(trace: writer.trace(), policy: policy, passcode: { $0 == "1234" })
            .split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
    }

    /// The keys forwarded, as `code value`, with the comments in place.
    func keysAndNotes(_ lines: [String]) -> [String] {
        lines.compactMap { line in
            if line.hasPrefix("# device") { return nil }
            if line.hasPrefix("#") { return line }
            let parts = line.split(separator: " ")
            guard parts.count == 5, parts[2] == "0001" else { return nil }
            return "\(Int(parts[3], radix: 16)!) \(Int(parts[4])!)"
        }
    }

    @Test("typed: the gesture opens the prompt, nothing typed is forwarded, the right PIN ends the session")
    func typed() {
        var w = Writer()
        w.keys([Self.power, Self.power, Self.power])
        w.keys([Self.one, Self.two, Self.three, Self.four, Self.enter])
        w.keys([Self.a])
        #expect(keysAndNotes(replay(w)) == ["# ExitRequested", "# PasscodeAccepted", "30 1", "30 0"])
    }

    @Test("wrong then right: the wrong PIN closes the prompt with the locks as before")
    func wrongThenRight() {
        var w = Writer()
        w.keys([Self.power, Self.power, Self.power, Self.four, Self.four, Self.enter])
        w.keys([Self.a, Self.b])
        w.keys([Self.power, Self.power, Self.power, Self.one, Self.two, Self.three, Self.four, Self.enter, Self.a])
        #expect(
            keysAndNotes(replay(w)) == [
                "# ExitRequested", "# PasscodeRejected", "48 1", "48 0", "# ExitRequested", "# PasscodeAccepted", "30 1",
                "30 0",
            ])
    }

    @Test("on the pad: taps on 1, 2, 3, 4 and OK; a tap off the pad does nothing")
    func pad() {
        var w = Writer()
        w.keys([Self.power, Self.power, Self.power])
        // Pad keys (0.12 × 0.14): 1 at x 0.30, y 0.30; 2 at x 0.44; 3 at x 0.58; 4 at x 0.30,
        // y 0.46; OK at x 0.58, y 0.78. In 0…999 units, their middles.
        for (x, y, id) in [(360, 370, 1), (500, 370, 2), (50, 50, 3), (640, 370, 4), (360, 530, 5), (640, 850, 6)] {
            w.tap(Int32(x), Int32(y), id: Int32(id))
        }
        w.keys([Self.a])
        let lines = replay(w)
        #expect(keysAndNotes(lines) == ["# ExitRequested", "# PasscodeAccepted", "30 1", "30 0"])
        #expect(!lines.contains { $0.contains(" 0003 0039 ") }, "a tap reached the kiosk: \(lines)")
    }

    @Test("cancelled with Esc, timed out after 30 s without a key; the locks as before each time")
    func cancelAndTimeout() {
        var w = Writer()
        w.keys([Self.power, Self.power, Self.power, Self.one, Self.esc, Self.b])
        w.keys([Self.power, Self.power, Self.power, Self.one])
        w.key(Self.b, at: 60)
        w.key(Self.a)
        #expect(
            keysAndNotes(replay(w)) == [
                "# ExitRequested", "# PromptCancelled", "48 1", "48 0", "# ExitRequested", "# PromptTimeout", "48 1",
                "48 0",
            ])
    }

    @Test("an expired session: the gesture opens the prompt too, and the right PIN ends the session")
    func expired() {
        var policy = Self.policy
        policy.holdAllInput = true
        var w = Writer()
        w.keys([Self.b, Self.power, Self.power, Self.power, Self.one, Self.two, Self.three, Self.four, Self.enter, Self.b])
        #expect(keysAndNotes(replay(w, policy: policy)) == ["# ExitRequested", "# PasscodeAccepted", "48 1", "48 0"])
    }

    @Test("without a hash to check against, the gesture is only noted")
    func noHash() {
        var w = Writer()
        w.keys([Self.power, Self.power, Self.power, Self.one, Self.enter])
        let lines = Replay.run(trace: w.trace(), policy: Self.policy).split(separator: "\n").map(String.init)
        #expect(keysAndNotes(lines.map { String($0.split(separator: "\t")[0]) }) == ["# ExitRequested", "2 1", "2 0", "28 1", "28 0"])
    }
}
