import KioskAPI
import KioskInput

/// A guided-access profile: what a session locks and presets (docs/profiles.md).
///
/// Built only by ``ProfileParser``, so every value in it has been validated.
public struct Profile: Hashable, Sendable, Encodable {
    /// The most a profile file may hold, 1 MiB: far beyond any real profile (the bundled ones are
    /// under 4 KiB), small enough that a stray file cannot fill kioskd's memory. kioskd refuses a
    /// larger file, and `kioskctl profile check` says so.
    public static let maximumFileSize = 1 << 20

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

    /// Taps in a corner of the touch surface within a time, seen even while touch is locked.
    public struct TouchExitGesture: Hashable, Sendable, Encodable {
        public var corner: KioskInput.TouchExitGesture.Corner
        public var taps: Int
        public var within: Duration

        enum CodingKeys: String, CodingKey { case corner, taps, within }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(corner.rawValue, forKey: .corner)
            try c.encode(taps, forKey: .taps)
            try c.encode(DurationText(within), forKey: .within)
        }
    }

    /// The shape of a locked touch region, in fractions of the touch surface.
    public enum Shape: Hashable, Sendable, Encodable {
        case rect(x: Double, y: Double, width: Double, height: Double)
        case polygon([Point])
    }

    public struct Region: Hashable, Sendable, Encodable {
        public var name: String
        public var shape: Shape
        public init(name: String, shape: Shape) {
            self.name = name
            self.shape = shape
        }
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
        /// At most this many contacts at once reach the kiosk (1 to 10, ``maxContactsRange``);
        /// nil: no limit.
        public var maxContacts: Int?
        /// Contacts that start within this fraction of the screen's edges are dropped (0 to
        /// 0.2, ``edgeMarginRange``); nil: none.
        public var edgeMargin: Double?
        /// Whether the display shades the locked regions over the app (`show-locked`), so that a
        /// visitor sees where touch does nothing; kioskd publishes them as `LockedRegions`.
        public var showLocked = true
        /// How dark the shade is (`shade-opacity`): the opacity of the black drawn over a locked
        /// region, 0.1 (faint) to 1 (hides what is under it); ``shadeOpacityRange``.
        public var shadeOpacity = Self.defaultShadeOpacity

        public static let maxContactsRange = 1...10
        public static let edgeMarginRange = 0.0...0.2
        public static let shadeOpacityRange = 0.1...1.0
        public static let defaultShadeOpacity = 0.4

        /// Why `kioskctl profile check` warns about `max-contacts = 1`: it also takes pinch zoom,
        /// which visitors with low vision use to enlarge a page; nil otherwise.
        public var pinchWarning: String? {
            guard maxContacts == 1 else { return nil }
            return
                "touch.max-contacts = 1 also takes pinch zoom from visitors with low vision who enlarge the page with it; unless the app has its own zoom control, set 2 (two fingers still pinch, three-finger gestures are dropped)"
        }

        enum CodingKeys: String, CodingKey {
            case mode
            case lockedRegions = "locked-region"
            case maxContacts = "max-contacts"
            case edgeMargin = "edge-margin"
            case showLocked = "show-locked"
            case shadeOpacity = "shade-opacity"
        }
    }

    /// What mice, touchpads, trackballs, pens, tablets and joysticks may do.
    public enum PointerMode: String, Hashable, Sendable, Encodable {
        /// As touch: touch `none` locks pointers, `all` allows them; with locked regions,
        /// absolute pointers (pens, tablets, absolute mice) are judged like touch where they
        /// click, and pointers with no place on the screen (mice, touchpads) are locked.
        case followTouch = "follow-touch"
        case locked
        case allowed
    }

    public struct Pointer: Hashable, Sendable, Encodable {
        public var mode: PointerMode = .followTouch
    }

    /// Keys and combos that keep working for assistive technology whatever the key locks say.
    public struct Accessibility: Hashable, Sendable, Encodable {
        /// evdev key names (`KEY_SPACE`) that pass even when `keyboard` or `home` lock them.
        public var allowedKeys: [String] = []
        /// Combos (`Super+Alt+S`, a screen reader's toggle) that pass even when their keys are locked.
        public var allowedCombos: [String] = []
        /// Sticky keys: a modifier pressed and released alone applies to the next key; pressed
        /// twice, it locks (docs/profiles.md#keyboard-access-features).
        public var stickyKeys = false
        /// Slow keys: a key counts only once held this long (``accessDelays``).
        public var slowKeys: Duration?
        /// Bounce keys: a press of the key just let go, within this long, is dropped.
        public var bounceKeys: Duration?
        /// The screen reader that runs at this kiosk, whose own keys then pass every group lock
        /// (``ScreenReader/keys``, ``ScreenReader/combos``); nil: none said.
        public var screenReader: ScreenReader?

        /// A screen reader kioskd knows the keys of (docs/accessibility.md).
        public enum ScreenReader: String, Hashable, Sendable, Encodable, CaseIterable {
            case orca

            /// Keys it needs alone: the Orca key (Insert on desktop layouts, Caps Lock on laptop
            /// layouts).
            public var keys: [String] {
                switch self {
                case .orca: ["KEY_INSERT", "KEY_CAPSLOCK"]
                }
            }

            /// Combinations it needs: its on/off toggle.
            public var combos: [String] {
                switch self {
                case .orca: ["Super+Alt+S"]
                }
            }
        }

        /// The shortest and the longest `slow-keys` and `bounce-keys`: below 10 ms a keyboard's
        /// own debounce already does it; over 5 s a key held or let go that long is no longer
        /// typing (EN 301 549 5.8 asks bounce keys to reach 0.5 s).
        public static let accessDelays = Duration.milliseconds(10)...Duration.seconds(5)

        enum CodingKeys: String, CodingKey {
            case allowedKeys = "allowed-keys"
            case allowedCombos = "allowed-combos"
            case stickyKeys = "sticky-keys"
            case slowKeys = "slow-keys"
            case bounceKeys = "bounce-keys"
            case screenReader = "screen-reader"
        }

        public init() {}

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(allowedKeys, forKey: .allowedKeys)
            try c.encode(allowedCombos, forKey: .allowedCombos)
            try c.encode(stickyKeys, forKey: .stickyKeys)
            try c.encodeIfPresent(slowKeys.map(DurationText.init), forKey: .slowKeys)
            try c.encodeIfPresent(bounceKeys.map(DurationText.init), forKey: .bounceKeys)
            try c.encodeIfPresent(screenReader, forKey: .screenReader)
        }
    }

    /// A `[[device]]` entry: a device that keeps working in a session, or whose pointer is
    /// hidden from the kiosk for the session (`hide-pointer`), or both.
    public struct Device: Hashable, Sendable, Encodable {
        /// What of its events pass the locks.
        public enum Passes: String, Hashable, Sendable, Encodable {
            /// Its keys and its pointer.
            case all
            /// Its keyboard keys (a switch interface, a keypad, a barcode or card reader).
            case keys
            /// Its pointer events and touch contacts.
            case pointer
            /// Nothing: an entry with `hide-pointer = true` and no `passes`.
            case nothing
        }

        /// Why it is allowed (`accessibility`, `scanner`, `keypad`, `card-reader`…), for the journal.
        public var role: String
        public var name: String?
        public var vendor: Int?
        public var product: Int?
        /// udev properties the node must have, each with this value (`ID_PATH`, `ID_SERIAL`…).
        public var udev: [String: String] = [:]
        public var passes: Passes
        /// `hide-pointer = true`: the device's pointer never reaches the kiosk in a session, and
        /// its clone has none (docs/profiles.md § Pointers).
        public var hidePointer: Bool = false
        /// Where the entry is in its file (`line`), for warnings about it.
        public var line: Int

        /// The entry in words, for warnings: `keypad (vendor 0x1234, product 0x5678)`.
        public var summary: String {
            var parts: [String] = []
            if let name { parts.append("name \(Text.quoted(name))") }
            if let vendor { parts.append("vendor 0x" + String(vendor, radix: 16, uppercase: false)) }
            if let product { parts.append("product 0x" + String(product, radix: 16, uppercase: false)) }
            for (key, value) in udev.sorted(by: { $0.key < $1.key }) { parts.append("\(key)=\(Text.quoted(value))") }
            return "\(role) (\(parts.joined(separator: ", ")))"
        }

        enum CodingKeys: String, CodingKey {
            case role, name, vendor, product, udev, passes, line
            case hidePointer = "hide-pointer"
        }

        /// As the profile says it: `passes` only when given, `hide-pointer` only when true.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(role, forKey: .role)
            try c.encodeIfPresent(name, forKey: .name)
            try c.encodeIfPresent(vendor, forKey: .vendor)
            try c.encodeIfPresent(product, forKey: .product)
            try c.encode(udev, forKey: .udev)
            if passes != .nothing { try c.encode(passes, forKey: .passes) }
            if hidePointer { try c.encode(true, forKey: .hidePointer) }
            try c.encode(line, forKey: .line)
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
        /// Taps in a corner of the touch surface that also make the exit gesture.
        public var touchExitGesture: TouchExitGesture?
        /// Whether the time-limit warnings are to be spoken (the kioskd-prompt client does it).
        public var speakWarnings = false
        /// Whether logind's idle, sleep and lid-switch handling is inhibited during the session.
        public var keepAwake = false
        /// Whether the profile's `app` may start and end a session of it itself (exam mode).
        public var appMayRequest = false
        /// How many times the person at the kiosk may extend the time limit (10–100,
        /// ``visitorExtensionRange``); nil: they may not.
        public var visitorExtensions: Int?
        /// What each extension adds, as given; nil: ``extensionLength``'s default.
        public var extendBy: Duration?
        /// How long before the end the kiosk offers more time ("Need more time?").
        public var warnBefore: Duration = Self.defaultWarnBefore
        /// The language kioskd's own screens show and speak during the session (`de`, `pt_BR`:
        /// a gettext language); nil: the kiosk's locale.
        public var language: String?
        /// `cleaning-gesture`'s key presses: they start cleaning the screen (docs/profiles.md §
        /// Cleaning the screen).
        public var cleaningGesture: ExitGesture?
        /// `cleaning-gesture`'s corner taps.
        public var touchCleaningGesture: TouchExitGesture?
        /// How long the cleaning gesture holds input (`cleaning-time`, 5 s to 5 min).
        public var cleaningTime: Duration = Self.defaultCleaningTime

        /// The shortest and longest cleaning, by the gesture and over the bus alike.
        public static let cleaningTimeRange: ClosedRange<Duration> = .seconds(5) ... .seconds(300)
        public static let defaultCleaningTime: Duration = .seconds(30)

        /// WCAG 2.2.1's floor: at least ten extensions; at most a hundred.
        public static let visitorExtensionRange = 10...100
        /// WCAG 2.2.1's floor: at least 20 s to react to the offer.
        public static let minimumWarnBefore: Duration = .seconds(20)
        public static let defaultWarnBefore: Duration = .seconds(30)
        /// The longest single extension.
        public static let maximumExtendBy: Duration = .seconds(86400)

        /// Why `kioskctl profile check` warns about the time limit: the person at the kiosk cannot
        /// extend it (WCAG 2.2.1; a limit over 20 hours is exempt, as there); nil otherwise.
        public var extensionWarning: String? {
            guard let timeLimit, visitorExtensions == nil, timeLimit <= .seconds(20 * 3600) else { return nil }
            return
                "session.time-limit \(timeLimit.kioskText) cannot be extended by the person at the kiosk; unless the limit is staff's rather than a visitor's, add session.visitor-extensions (10 or more: WCAG 2.2.1 asks that a visitor can extend a time limit)"
        }

        /// What one extension adds: `extend-by`, else the time limit itself (at most a day).
        public var extensionLength: Duration? {
            guard visitorExtensions != nil, let timeLimit else { return nil }
            return extendBy ?? min(timeLimit, Self.maximumExtendBy)
        }

        /// The times left at which `TimeLimitWarning` comes: `warnings`, and `warn-before` when the
        /// visitor may extend (the offer's own warning), longest first, each once.
        public var warningMarks: [Duration] {
            let marks = visitorExtensions == nil || timeLimit == nil ? warnings : warnings + [warnBefore]
            return Array(Set(marks)).sorted(by: >)
        }

        enum CodingKeys: String, CodingKey {
            case timeLimit = "time-limit"
            case warnings
            case exitGesture = "exit-gesture"
            case touchExitGesture = "touch-exit-gesture"
            case speakWarnings = "speak-warnings"
            case keepAwake = "keep-awake"
            case appMayRequest = "app-may-request"
            case visitorExtensions = "visitor-extensions"
            case extendBy = "extend-by"
            case warnBefore = "warn-before"
            case language
            case cleaningGesture = "cleaning-gesture"
            case touchCleaningGesture = "touch-cleaning-gesture"
            case cleaningTime = "cleaning-time"
        }

        public init() {}

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encodeIfPresent(timeLimit.map(DurationText.init), forKey: .timeLimit)
            try c.encode(warnings.map(DurationText.init), forKey: .warnings)
            try c.encodeIfPresent(exitGesture, forKey: .exitGesture)
            try c.encodeIfPresent(touchExitGesture, forKey: .touchExitGesture)
            try c.encode(speakWarnings, forKey: .speakWarnings)
            try c.encode(keepAwake, forKey: .keepAwake)
            try c.encode(appMayRequest, forKey: .appMayRequest)
            if let visitorExtensions {
                try c.encode(visitorExtensions, forKey: .visitorExtensions)
                try c.encodeIfPresent(extensionLength.map(DurationText.init), forKey: .extendBy)
                try c.encode(DurationText(warnBefore), forKey: .warnBefore)
            }
            try c.encodeIfPresent(language, forKey: .language)
            if cleaningGesture != nil || touchCleaningGesture != nil {
                try c.encodeIfPresent(cleaningGesture, forKey: .cleaningGesture)
                try c.encodeIfPresent(touchCleaningGesture, forKey: .touchCleaningGesture)
                try c.encode(DurationText(cleaningTime), forKey: .cleaningTime)
            }
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
    /// Who may register `app` (and request a session of it): with root, the only uid that may
    /// (docs/profiles.md § app-owner). Without one, only root may: an id a profile names is
    /// never first come, first served.
    public var appOwner: AppOwner?

    /// `app-owner`: a uid, or a user name the daemon looks up when it reads the profile.
    public enum AppOwner: Hashable, Sendable, Encodable, CustomStringConvertible {
        case uid(UInt32)
        case user(String)

        /// Whether `uid` is this owner (a user name not found on this machine is nobody).
        public func isOwner(_ uid: UInt32) -> Bool {
            if case .uid(let owner) = self { return owner == uid }
            return false
        }

        public var description: String {
            switch self {
            case .uid(let uid): "uid \(uid)"
            case .user(let name): "user \(name)"
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .uid(let uid): try c.encode(uid)
            case .user(let name): try c.encode(name)
            }
        }
    }

    /// Whether `uid` may register this profile's `app` and request its sessions: root, or the
    /// profile's `app-owner`.
    public func mayOwnApp(_ uid: UInt32) -> Bool {
        uid == 0 || appOwner?.isOwner(uid) == true
    }
    public var description: String = ""
    public var buttons = Buttons()
    public var touch = Touch()
    public var pointer = Pointer()
    public var accessibility = Accessibility()
    /// `[[device]]` entries, in file order.
    public var devices: [Device] = []
    /// Presets in the order the file gives them.
    public var presets: [Preset] = []
    public var session = Session()
    /// `[idle]`: the reset, the dark screen (Profile+Idle.swift).
    public var idle = Idle()
    /// `[browser]`: what a visitor may open in the browser the profile's `app` names.
    public var browser = BrowserSettings()

    /// `[browser]` (docs/profiles.md § [browser]): only in a profile whose `app` is a built-in
    /// browser (``Browser``).
    public struct BrowserSettings: Hashable, Sendable, Encodable {
        /// `allowed-urls`: the pages a visitor may open while the browser's `navigation`
        /// restriction is denied, in Chromium's URL pattern format.
        public var allowedURLs: [BrowserURLPattern] = []
        /// At most this many patterns: Chromium reads at most 1000 in a list, and kioskd adds
        /// the bridge's origin to `URLAllowlist` when a web app is declared.
        public static let maxAllowedURLs = 999

        enum CodingKeys: String, CodingKey { case allowedURLs = "allowed-urls" }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(allowedURLs.map(\.text), forKey: .allowedURLs)
        }
    }
    /// A crypt(3) hash of the passcode that ends this profile's sessions; when `nil`, the
    /// passcode set with `kioskctl passcode set` applies.
    public var passcodeHash: String?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case app, description, buttons, touch, pointer, accessibility, presets, session, idle, browser
        case appOwner = "app-owner"
        case devices = "device"
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
