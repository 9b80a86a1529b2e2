/// The keyboard access features a profile turns on (`[accessibility] sticky-keys`, `slow-keys`,
/// `bounce-keys`; docs/profiles.md#keyboard-access-features), in the filter's terms.
public struct KeyAccessSettings: Sendable, Equatable {
    /// A modifier pressed and released alone applies to the next key; pressed twice, it locks
    /// until pressed again.
    public var stickyKeys: Bool
    /// How long (µs) a key must be held before its press counts; 0: off.
    public var slowKeys: Int64
    /// How long (µs) after a key's release another press of it is dropped; 0: off.
    public var bounceKeys: Int64

    public init(stickyKeys: Bool = false, slowKeys: Int64 = 0, bounceKeys: Int64 = 0) {
        self.stickyKeys = stickyKeys; self.slowKeys = max(0, slowKeys); self.bounceKeys = max(0, bounceKeys)
    }

    /// Whether any feature is on.
    public var isOn: Bool { stickyKeys || slowKeys > 0 || bounceKeys > 0 }
}

/// The state of the keyboard access features on one device: what became of each physical press
/// (counted, waiting for slow keys, dropped), when each key was last let go (bounce keys), and
/// each modifier's sticky state. Held by the device's `KeyLedger` only while a feature is on
/// (KeyLedger+KeyAccess.swift runs it); every array is allocated when it is made, so the key
/// path allocates nothing.
struct KeyAccess {
    /// What became of a key's physical press.
    enum Press: UInt8 {
        /// Not down, or down since before the features knew it (at grab, or before they were on).
        case up
        /// Counted: it went on to the sticky stage and the ledger.
        case counted
        /// Held, not yet as long as slow keys asks.
        case waiting
        /// Dropped (bounce keys, or a policy change while it waited): its repeats and its
        /// release are dropped too.
        case dropped
    }

    /// A modifier's sticky state.
    enum Latch: UInt8 {
        case none
        /// Pressed and released alone: goes down before the next key and up after it.
        case latched
        /// Pressed and released twice: down before the next key, and stays down until pressed again.
        case locked
    }

    var settings: KeyAccessSettings
    var presses: [Press]
    /// When each waiting key was pressed (µs, the events' clock).
    var pressedAt: [Int64]
    /// When each key's last counted press was let go; `Int64.min`: never.
    var releasedAt: [Int64]
    /// The keys waiting for slow keys, in the order they were pressed (their deadlines' order:
    /// every key waits as long).
    var waiting: [UInt16]
    // By modifier (``modifiers`` order):
    /// Physically down (counted), and not yet sent unless a key came or it is locked.
    var held: [Bool]
    /// A key was pressed while it was held: it works as a held modifier, up when let go.
    var used: [Bool]
    var latch: [Latch]
    /// The key whose release lets a latched modifier go up; 0 (`KEY_RESERVED`): none.
    var releaseAfter: [UInt16]

    /// The modifiers sticky keys applies to, in the order they go down before a key (Ctrl, Alt,
    /// Shift, Super, as held-back modifiers of an allowed combo are sent).
    static let modifiers: [UInt16] = [
        KEY.leftCtrl, KEY.rightCtrl, KEY.leftAlt, KEY.rightAlt, KEY.leftShift, KEY.rightShift, KEY.leftMeta,
        KEY.rightMeta,
    ]

    init(settings: KeyAccessSettings) {
        self.settings = settings
        presses = Array(repeating: .up, count: KEY.count)
        pressedAt = Array(repeating: 0, count: KEY.count)
        releasedAt = Array(repeating: .min, count: KEY.count)
        waiting = []
        waiting.reserveCapacity(KEY.count)
        held = Array(repeating: false, count: Self.modifiers.count)
        used = held
        latch = Array(repeating: .none, count: Self.modifiers.count)
        releaseAfter = Array(repeating: 0, count: Self.modifiers.count)
    }

    /// The index of a modifier in ``modifiers``, if `code` is one.
    @inline(__always)
    static func modifierIndex(_ code: UInt16) -> Int? {
        switch code {
        case KEY.leftCtrl: 0
        case KEY.rightCtrl: 1
        case KEY.leftAlt: 2
        case KEY.rightAlt: 3
        case KEY.leftShift: 4
        case KEY.rightShift: 5
        case KEY.leftMeta: 6
        case KEY.rightMeta: 7
        default: nil
        }
    }

    /// Whether the features apply to `code`: the keyboard's keys (below `BTN_MISC`); pointer,
    /// joystick and touch buttons and the remote-control keys above them are left as they are.
    @inline(__always)
    static func applies(to code: UInt16) -> Bool { code < BTN.misc }

    /// Whether a press of `code` at `time` comes too soon after its last counted release (a
    /// time before it, a clock set back, is not).
    func bounces(_ code: UInt16, at time: Int64) -> Bool {
        let released = releasedAt[Int(code)]
        return settings.bounceKeys > 0 && released != .min && time >= released && time - released < settings.bounceKeys
    }

    /// When the first waiting key counts, if one waits.
    var nextDeadline: Int64? {
        guard let first = waiting.first else { return nil }
        return pressedAt[Int(first)] + settings.slowKeys
    }

    /// Starts `code` waiting for slow keys, pressed at `time`.
    mutating func wait(_ code: UInt16, at time: Int64) {
        presses[Int(code)] = .waiting
        pressedAt[Int(code)] = time
        waiting.append(code)
    }

    /// Takes `code` off the waiting list (let go, or counted).
    mutating func stopWaiting(_ code: UInt16) {
        if let index = waiting.firstIndex(of: code) { waiting.remove(at: index) }
    }
}
