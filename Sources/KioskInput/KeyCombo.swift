/// A key combination to lock: modifiers and a key, by evdev code (a physical key position, as
/// named on a US keyboard). It matches a press (or autorepeat) of `key` while every one of its
/// modifiers is held on any keyboard; other modifiers may be held too (Ctrl+N covers
/// Ctrl+Shift+N).
public struct KeyCombo: Sendable, Hashable {
    /// Which side of a modifier a combo needs.
    public enum Side: UInt8, Sendable, Hashable {
        case none, either, left, right
    }

    public var ctrl: Side
    public var alt: Side
    public var shift: Side
    /// Super (the Windows or Command key, `KEY_LEFTMETA`/`KEY_RIGHTMETA`).
    public var meta: Side
    public var key: UInt16

    public init(ctrl: Side = .none, alt: Side = .none, shift: Side = .none, meta: Side = .none, key: UInt16) {
        self.ctrl = ctrl
        self.alt = alt
        self.shift = shift
        self.meta = meta
        self.key = key
    }
}

extension KeyCombo {
    /// Whether pressing this combo would complete an escape chord (``FilterPolicy/blockEscapeChords``),
    /// which an allowed combo can never let through.
    public func isEscapeChord(allowedAltChords: Set<UInt16> = []) -> Bool {
        EscapeChord.completes(key, alt: alt != .none, ctrl: ctrl != .none, allowedAltChords: allowedAltChords)
    }
}

/// The escape chords: Ctrl+Alt+Backspace, Ctrl+Alt+Del (and keypad Del), Alt+SysRq, and the
/// console's VT switches Alt+F1…F12 (Ctrl+Alt in X11, AltGr for VTs 13–24) and Alt+←/→.
enum EscapeChord {
    /// Whether `code`, pressed with Alt (and Ctrl) held or not, completes one.
    @inline(__always)
    static func completes(_ code: UInt16, alt: Bool, ctrl: Bool, allowedAltChords: Set<UInt16>) -> Bool {
        guard alt else { return false }
        if code == KEY.sysRq { return true }
        if (code >= KEY.f1 && code <= KEY.f10) || code == KEY.f11 || code == KEY.f12 { return true }
        if code == KEY.left || code == KEY.right { return !allowedAltChords.contains(code) }
        guard ctrl else { return false }
        return code == KEY.backspace || code == KEY.delete || code == KEY.kpDot
    }
}

/// The modifier keys held across every keyboard, by side: how many keyboards hold each (16 bits
/// each, so that the filter's shared state stays small: it is read on every frame).
struct ModifiersHeld {
    private(set) var leftCtrl: Int16 = 0, rightCtrl: Int16 = 0, leftAlt: Int16 = 0, rightAlt: Int16 = 0
    private(set) var leftShift: Int16 = 0, rightShift: Int16 = 0, leftMeta: Int16 = 0, rightMeta: Int16 = 0

    var ctrl: Int16 { leftCtrl &+ rightCtrl }
    var alt: Int16 { leftAlt &+ rightAlt }

    @inline(__always)
    mutating func change(_ code: UInt16, by delta: Int16) {
        switch code {
        case KEY.leftCtrl: leftCtrl &+= delta
        case KEY.rightCtrl: rightCtrl &+= delta
        case KEY.leftAlt: leftAlt &+= delta
        case KEY.rightAlt: rightAlt &+= delta
        case KEY.leftShift: leftShift &+= delta
        case KEY.rightShift: rightShift &+= delta
        case KEY.leftMeta: leftMeta &+= delta
        case KEY.rightMeta: rightMeta &+= delta
        default: break
        }
    }

    @inline(__always)
    func satisfy(_ combo: KeyCombo) -> Bool {
        Self.held(combo.ctrl, leftCtrl, rightCtrl) && Self.held(combo.alt, leftAlt, rightAlt)
            && Self.held(combo.shift, leftShift, rightShift) && Self.held(combo.meta, leftMeta, rightMeta)
    }

    @inline(__always)
    private static func held(_ side: KeyCombo.Side, _ left: Int16, _ right: Int16) -> Bool {
        switch side {
        case .none: true
        case .either: left > 0 || right > 0
        case .left: left > 0
        case .right: right > 0
        }
    }
}
