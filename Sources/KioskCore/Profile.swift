import KioskAPI

/// A guided-access profile: what a session locks and presets (DESIGN §2).
///
/// Built only by ``ProfileParser``, so every value in it has been validated.
public struct Profile: Hashable, Sendable, Encodable {
    /// Whether a hardware button group still works during the session.
    public enum ButtonPolicy: String, Hashable, Sendable, Encodable { case locked, allowed }
    /// Whether the escape chords (Ctrl+Alt+F1…F12, Ctrl+Alt+Backspace, Ctrl+Alt+Del, Alt+SysRq) work.
    public enum ChordPolicy: String, Hashable, Sendable, Encodable { case blocked, allowed }

    public struct Buttons: Hashable, Sendable, Encodable {
        public var power: ButtonPolicy = .locked
        public var volume: ButtonPolicy = .locked
        /// KEY_HOMEPAGE, KEY_LEFTMETA, KEY_RIGHTMETA.
        public var home: ButtonPolicy = .locked
        /// Every other key of every keyboard.
        public var keyboard: ButtonPolicy = .allowed
        public var escapeChords: ChordPolicy = .blocked
        /// Escape chords let through all the same: only ``allowableChords`` (Alt+←/→, a
        /// browser's Back and Forward, which also switch VTs on a text console).
        public var allowedChords: [String] = []
        /// Key combinations to lock, as written (`Ctrl+N`; see Profile+Combos.swift).
        public var lockedCombos: [String] = []
        /// Predefined sets of combos to lock (``Profile/comboGroups``): `browser`, `window-manager`.
        public var comboGroups: [String] = []
        /// More keys to lock, by evdev name (`KEY_F11`).
        public var extraLockedKeys: [String] = []

        /// The chords `allowed-chords` may name.
        public static let allowableChords = ["Alt+Left", "Alt+Right"]

        enum CodingKeys: String, CodingKey {
            case power, volume, home, keyboard
            case escapeChords = "escape-chords"
            case allowedChords = "allowed-chords"
            case lockedCombos = "locked-combos"
            case comboGroups = "combo-groups"
            case extraLockedKeys = "extra-locked-keys"
        }
    }

    /// A point in fractions of the touch surface (0…1 on both axes).
    public struct Point: Hashable, Sendable, Encodable {
        public var x: Double
        public var y: Double
        public init(x: Double, y: Double) { self.x = x; self.y = y }
    }

    /// The shape of a locked touch region, in fractions of the touch surface.
    public enum Shape: Hashable, Sendable, Encodable {
        case rect(x: Double, y: Double, width: Double, height: Double)
        case polygon([Point])
    }

    public struct Region: Hashable, Sendable, Encodable {
        public var name: String
        public var shape: Shape
    }

    public enum TouchMode: String, Hashable, Sendable, Encodable {
        /// Touch works (except in locked regions, when there are some).
        case all
        /// No touch at all.
        case none
        /// Touch works outside the locked regions.
        case regions
    }

    public struct Touch: Hashable, Sendable, Encodable {
        public var mode: TouchMode = .all
        public var lockedRegions: [Region] = []

        enum CodingKeys: String, CodingKey {
            case mode
            case lockedRegions = "locked-region"
        }
    }

    /// N presses of a key within a time, seen even while the key is locked.
    public struct ExitGesture: Hashable, Sendable, Encodable {
        public var key: String
        public var presses: Int
        public var within: Duration

        enum CodingKeys: String, CodingKey { case key, presses, within }

        public init(key: String, presses: Int, within: Duration) {
            self.key = key
            self.presses = presses
            self.within = within
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(key, forKey: .key)
            try c.encode(presses, forKey: .presses)
            try c.encode(DurationText(within), forKey: .within)
        }
    }

    public struct Session: Hashable, Sendable, Encodable {
        /// The longest time limit a profile may set.
        public static let maximumTimeLimit: Duration = .seconds(7 * 86400)

        public var timeLimit: Duration?
        /// Remaining times at which `TimeLimitWarning` is sent, longest first.
        public var warnings: [Duration] = []
        public var exitGesture: ExitGesture?

        enum CodingKeys: String, CodingKey {
            case timeLimit = "time-limit"
            case warnings
            case exitGesture = "exit-gesture"
        }

        public init() {}

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encodeIfPresent(timeLimit.map(DurationText.init), forKey: .timeLimit)
            try c.encode(warnings.map(DurationText.init), forKey: .warnings)
            try c.encodeIfPresent(exitGesture, forKey: .exitGesture)
        }
    }

    /// A restriction state to preset while the session is active (Codable: a session persists
    /// the presets it has yet to apply).
    public struct Preset: Hashable, Sendable, Codable {
        public var app: AppID
        public var restriction: RestrictionID
        public var state: RestrictionState
    }

    /// The app this session is for, if the profile names one.
    public var app: AppID?
    public var description: String = ""
    public var buttons = Buttons()
    public var touch = Touch()
    /// Presets in the order the file gives them.
    public var presets: [Preset] = []
    public var session = Session()
    /// A crypt(3) hash of the passcode that ends this profile's sessions; when `nil`, the
    /// passcode set with `kioskctl passcode set` applies.
    public var passcodeHash: String?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case app, description, buttons, touch, presets, session
        case passcodeHash = "passcode-hash"
    }
}

/// A duration written as profiles write it (`45m`, `1.5s`) when encoded.
struct DurationText: Encodable {
    var duration: Duration
    init(_ duration: Duration) { self.duration = duration }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(duration.kioskText)
    }
}
