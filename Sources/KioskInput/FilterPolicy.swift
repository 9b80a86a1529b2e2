/// What a guided-access session locks, in the filter's terms. `KioskCore` maps a profile onto it.
public struct FilterPolicy: Sendable, Equatable {
    /// `EV_KEY` codes whose presses are swallowed.
    public var lockedKeys: Set<UInt16>
    /// Ctrl+Alt+Backspace, Ctrl+Alt+Del (and keypad Del), Alt+SysRq, and the console's VT
    /// switches: Alt+F1…F12 (with Ctrl too, and AltGr) and Alt+←/→; with the modifiers held on
    /// any device. While a key completes one, neither its press nor its autorepeat is forwarded
    /// (a text console takes a repeat as a press).
    public var blockEscapeChords: Bool
    /// Keys that make no blocked escape chord with Alt after all: `KEY_LEFT`, `KEY_RIGHT` (Alt+←/→
    /// are also a browser's Back and Forward; a profile may let them through).
    public var allowedAltChords: Set<UInt16>
    /// Key combinations whose key is swallowed, press and autorepeat, while their modifiers are
    /// held on any keyboard (``KeyCombo``).
    public var lockedCombos: [KeyCombo]
    /// Key combinations that pass even when their keys are locked (an assistive technology's
    /// shortcut, like a screen reader's Super+Alt+S), when their modifiers are held on the same
    /// device as their key: a locked modifier of one is held back when pressed and sent just
    /// before the combo's key; pressed and released alone, it never reaches the kiosk. Escape
    /// chords stay blocked.
    public var allowedCombos: [KeyCombo]
    public var touch: TouchPolicy
    /// At most this many of a touchscreen's contacts reach the kiosk at once
    /// (`[touch] max-contacts`, 1 to 10): one that would be one more is dropped for its whole
    /// life, even when the others lift first. Nil: no limit.
    public var maxContacts: Int?
    /// A touchscreen's contacts that *start* within this fraction of the screen's edges
    /// (calibrated, as the regions) are dropped for their whole life (`[touch] edge-margin`: a
    /// browser's or compositor's edge swipe); a contact that starts inside and moves into the
    /// margin is kept. 0: none.
    public var edgeMargin: Double = 0
    /// Mice, touchpads, pens, tablets, joysticks (``PointerKind``).
    public var pointer: PointerPolicy
    /// Devices that keep working in the session (``AllowedDevice``).
    public var allowedDevices: [AllowedDevice]
    public var exitGesture: ExitGesture?
    /// Taps in a corner of the touch surface that also make the exit gesture.
    public var touchExitGesture: TouchExitGesture?
    /// An expired session: nothing reaches the kiosk; only the exit gesture is still detected.
    public var holdAllInput: Bool
    /// kioskd's passcode prompt is open: nothing reaches the kiosk (as with ``holdAllInput``),
    /// and each key press and each touch that starts on a key of ``pinPad`` is reported
    /// (``FilterResult/promptKey``).
    public var readsPasscode: Bool
    /// The PIN pad read while ``readsPasscode``.
    public var pinPad: [PadKey]
    /// kioskd offers the visitor more time (`[session] visitor-extensions`): nothing reaches the
    /// kiosk (as with ``holdAllInput``), and a key, button or touch pressed and then let go takes
    /// the offer (``RunResult/tookOffer``), on its release; never the exit gesture's key or a tap
    /// in its corner, nor anything while ``readsPasscode``.
    public var offersTime = false
    /// kioskd asks whether the visitor is still there (`[idle] reset-warning`): nothing reaches
    /// the kiosk, and a key, button or touch pressed and let go answers, as it takes the offer
    /// of more time (``RunResult/tookOffer``, the same rules).
    public var asksPresence = false
    /// kioskd wants the display dark (`[idle] blank-after`, `display-off`, `kioskctl blank`):
    /// nothing reaches the kiosk, and the first press of a key, button or touch wakes it
    /// (``RunResult/woke``); that key, button or contact is swallowed until let go, even once
    /// the display is on.
    public var displayOff = false
    /// Sticky, slow and bounce keys (``KeyAccessSettings``), on every keyboard but those an
    /// allowed device's entry lets through: off by default.
    public var keyAccess = KeyAccessSettings()
    /// Cleaning mode (docs/input-enforcement.md § Cleaning the screen): the glass is being
    /// wiped. Every touch, pointer and key of every device is held, but what the profile lets
    /// assistive technology do: an allowed device's keys or pointer (``AllowedDevice``), the keys
    /// of ``cleaningPassKeys`` and ``allowedCombos``. Keys and contacts forwarded before are
    /// released and ended on the clones; one still down when it ends stays swallowed until it is
    /// let go. The exit gesture's key still counts (it is held as any other key); the touch exit
    /// gesture does not (its corner is wiped too), nor the cleaning gestures, nor the offer of
    /// more time. The prompt and an expired session hold everything, even then.
    public var cleaning = false
    /// The keys that pass on every keyboard while ``cleaning``: `[accessibility] allowed-keys`
    /// and the screen reader's own.
    public var cleaningPassKeys: Set<UInt16> = []
    /// `[session] cleaning-gesture`'s key presses: completed, ``FilterResult/cleaningRequested``.
    public var cleaningGesture: ExitGesture?
    /// `[session] cleaning-gesture`'s corner taps; its corner is locked as the exit gesture's is.
    public var touchCleaningGesture: TouchExitGesture?

    public init(
        lockedKeys: Set<UInt16> = [], blockEscapeChords: Bool = false, allowedAltChords: Set<UInt16> = [],
        lockedCombos: [KeyCombo] = [], allowedCombos: [KeyCombo] = [], touch: TouchPolicy = .all,
        pointer: PointerPolicy = .allowed, allowedDevices: [AllowedDevice] = [], exitGesture: ExitGesture? = nil,
        touchExitGesture: TouchExitGesture? = nil, holdAllInput: Bool = false, readsPasscode: Bool = false,
        pinPad: [PadKey] = PadKey.standardPad
    ) {
        self.touchExitGesture = touchExitGesture; self.readsPasscode = readsPasscode; self.pinPad = pinPad
        self.lockedKeys = lockedKeys; self.blockEscapeChords = blockEscapeChords
        self.allowedAltChords = allowedAltChords; self.lockedCombos = lockedCombos
        self.allowedCombos = allowedCombos; self.touch = touch; self.pointer = pointer
        self.allowedDevices = allowedDevices; self.exitGesture = exitGesture; self.holdAllInput = holdAllInput
    }

    /// No session: everything passes.
    public static let passThrough = FilterPolicy()
}

public enum TouchPolicy: Sendable, Equatable {
    /// Touch works.
    case all
    /// No touch reaches the kiosk.
    case none
    /// Contacts that start inside any of these regions are never forwarded.
    case regions([TouchRegion])
}

/// What pointers may do (``PointerKind``); a profile's `[pointer] mode` resolved against its
/// touch mode.
public enum PointerPolicy: Sendable, Equatable {
    /// Every pointer works.
    case allowed
    /// No pointer event reaches the kiosk: no motion, no button, no pen near the screen.
    case locked
    /// Absolute pointers (pens, tablets, absolute mice) are judged like touch: a click, a
    /// pen's tip or button, or a wheel turn that starts in a locked touch region is swallowed
    /// until every button is up again; motion and hover pass. Pointers with no place on the
    /// screen (mice, trackballs, touchpads, joysticks) are locked.
    case regions
}

/// A device a profile names: its keys, its pointer, or both pass the locks in a session (never
/// the escape chords nor the exit gesture, and nothing passes while all input is held), or its
/// pointer is hidden from the kiosk for the session (``hidesPointer``), or both (keys pass, the
/// pointer is hidden).
public struct AllowedDevice: Sendable, Equatable {
    /// Why it is allowed, for people: `accessibility`, `scanner`, `keypad`, `card-reader`…
    public var role: String
    public var matcher: DeviceMatcher
    /// Its keyboard keys pass the key locks and locked combos.
    public var passesKeys: Bool
    /// Its pointer events and touch contacts pass the pointer and touch locks.
    public var passesPointer: Bool
    /// Its pointer never reaches the kiosk in a session, and its clone has no pointer
    /// (``FilterPolicy/pointerHiding(of:)``), whatever `[pointer]` says: a node that claims to
    /// be a pointer and is none (an HDMI-CEC adapter, a touchscreen's side node with a lone
    /// `BTN_LEFT`). It wins over any other entry that lets the device's pointer through.
    public var hidesPointer: Bool

    public init(
        role: String, matcher: DeviceMatcher, passesKeys: Bool, passesPointer: Bool, hidesPointer: Bool = false
    ) {
        self.role = role; self.matcher = matcher; self.passesKeys = passesKeys; self.passesPointer = passesPointer
        self.hidesPointer = hidesPointer
    }
}

/// What identifies a device: every part given must match.
public struct DeviceMatcher: Sendable, Equatable {
    /// The device's name, exactly (`EVIOCGNAME`, a trace's `N:` line).
    public var name: String?
    public var vendor: UInt16?
    public var product: UInt16?
    /// udev properties, each equal to its value (sorted by name).
    public var udev: [(key: String, value: String)]

    public init(name: String? = nil, vendor: UInt16? = nil, product: UInt16? = nil, udev: [(String, String)] = []) {
        self.name = name; self.vendor = vendor; self.product = product
        self.udev = udev.sorted { $0.0 < $1.0 }.map { (key: $0.0, value: $0.1) }
    }

    public static func == (a: DeviceMatcher, b: DeviceMatcher) -> Bool {
        a.name == b.name && a.vendor == b.vendor && a.product == b.product
            && a.udev.map(\.key) == b.udev.map(\.key) && a.udev.map(\.value) == b.udev.map(\.value)
    }

    /// Whether the device is this one. A udev part never matches a device whose udev
    /// properties are not known (a recording).
    public func matches(_ device: DeviceDescription) -> Bool {
        if let name, device.name != name { return false }
        if let vendor, device.id.vendor != vendor { return false }
        if let product, device.id.product != product { return false }
        if !udev.isEmpty {
            guard let properties = device.udevProperties else { return false }
            for (key, value) in udev where properties[key] != value { return false }
        }
        return true
    }
}

/// A point in screen fractions (0…1).
public struct Point: Sendable, Equatable {
    public var x: Double, y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }
}

/// A locked region in screen fractions (0…1). A point on the edge is inside.
public enum TouchRegion: Sendable, Equatable {
    case rect(x: Double, y: Double, width: Double, height: Double)
    case polygon([Point])

    public static func polygon(_ points: [(x: Double, y: Double)]) -> TouchRegion {
        .polygon(points.map { Point(x: $0.x, y: $0.y) })
    }

    /// Whether the point is inside or on the edge.
    public func contains(_ p: Point) -> Bool {
        switch self {
        case .rect(let x, let y, let width, let height):
            return p.x >= x && p.x <= x + width && p.y >= y && p.y <= y + height
        case .polygon(let points):
            return Self.polygon(points, contains: p)
        }
    }

    private static func polygon(_ points: [Point], contains p: Point) -> Bool {
        guard points.count >= 3 else {
            // A degenerate polygon is a segment or a point: inside only on it.
            if points.count == 2 { return onSegment(points[0], points[1], p) }
            return points.first == p
        }
        var inside = false
        var j = points.count - 1
        for i in points.indices {
            let a = points[i], b = points[j]
            if onSegment(a, b, p) { return true }
            if (a.y > p.y) != (b.y > p.y) {
                let crossX = a.x + (p.y - a.y) * (b.x - a.x) / (b.y - a.y)
                if p.x < crossX { inside.toggle() }
            }
            j = i
        }
        return inside
    }

    private static func onSegment(_ a: Point, _ b: Point, _ p: Point) -> Bool {
        let epsilon = 1e-12
        let cross = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
        guard abs(cross) <= epsilon else { return false }
        return p.x >= min(a.x, b.x) - epsilon && p.x <= max(a.x, b.x) + epsilon
            && p.y >= min(a.y, b.y) - epsilon && p.y <= max(a.y, b.y) + epsilon
    }
}

/// `presses` presses of `key` within `within` microseconds (from the first press to the last).
public struct ExitGesture: Sendable, Equatable {
    public var key: UInt16
    public var presses: Int
    public var within: Int64

    public init(key: UInt16, presses: Int, within: Int64) {
        self.key = key; self.presses = max(1, presses); self.within = within
    }
}
