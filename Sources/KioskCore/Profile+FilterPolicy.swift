import KioskAPI
import KioskInput

/// What each `[buttons]` group of a profile locks, by evdev name.
extension Profile.Buttons {
    /// `power = "locked"`: the power button and the keys that suspend, wake or restart.
    public static let powerKeys = ["KEY_POWER", "KEY_POWER2", "KEY_SLEEP", "KEY_SUSPEND", "KEY_WAKEUP", "KEY_RESTART"]
    /// `volume = "locked"`.
    public static let volumeKeys = ["KEY_VOLUMEUP", "KEY_VOLUMEDOWN", "KEY_MUTE"]
    /// `home = "locked"`: the home button and the Super keys compositors use as "home".
    public static let homeKeys = ["KEY_HOMEPAGE", "KEY_LEFTMETA", "KEY_RIGHTMETA"]

    /// The Alt chords `allowed-chords` may let through (a browser's Back and Forward), by the
    /// name a profile gives them, as the key pressed with Alt.
    public static let allowedAltChordCodes = ["Alt+Left": KEY.left, "Alt+Right": KEY.right]

    /// The key codes these settings lock. `keyboard = "locked"` locks every `KEY_*` code;
    /// `BTN_*` codes (touch, mouse buttons) are the touch settings' business.
    public var lockedKeyCodes: Set<UInt16> {
        var names: [String] = extraLockedKeys
        if power == .locked { names += Self.powerKeys }
        if volume == .locked { names += Self.volumeKeys }
        if home == .locked { names += Self.homeKeys }
        var codes = keyboard == .locked ? EventCodes.keyboardKeys : []
        for name in names {
            // The parser accepted only key names the kernel defines, so every name resolves.
            if let (type, code) = EventCodes.code(named: name), type == EventCodes.keyType { codes.insert(code) }
        }
        return codes
    }
}

extension Profile.ExitGesture {
    /// The gesture of a session whose profile can no longer be read: three presses of the
    /// power button within 1.5 s, the default most kiosk enclosures can reach.
    public static let fallback = Profile.ExitGesture(key: "KEY_POWER", presses: 3, within: .milliseconds(1500))

    /// The gesture in words for people ("three presses of the power button"), for messages.
    public var spokenDescription: String {
        let name = Self.spokenKeyNames[key] ?? key
        if presses == 1 { return "one press of the \(name)" }
        let count = Self.numberWords.indices.contains(presses) ? Self.numberWords[presses] : "\(presses)"
        return "\(count) presses of the \(name)"
    }

    private static let numberWords = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ]
    private static let spokenKeyNames = [
        "KEY_POWER": "power button", "KEY_VOLUMEUP": "volume-up button", "KEY_VOLUMEDOWN": "volume-down button",
        "KEY_HOMEPAGE": "home button",
    ]

    /// The gesture in the filter's terms (a key code, microseconds).
    public var filterGesture: KioskInput.ExitGesture? {
        guard let (type, code) = EventCodes.code(named: key), type == EventCodes.keyType else { return nil }
        return KioskInput.ExitGesture(key: code, presses: presses, within: within.microseconds)
    }
}

extension Profile {
    /// What a session of this profile locks, in the input filter's terms.
    public var filterPolicy: FilterPolicy {
        let touchPolicy: TouchPolicy =
            switch touch.mode {
            case .none: .none
            case .all where touch.lockedRegions.isEmpty: .all
            case .all, .regions: .regions(touch.lockedRegions.map(\.filterRegion))
            }
        var policy = FilterPolicy(
            lockedKeys: buttons.lockedKeyCodes.subtracting(
                (accessibility.allowedKeys + screenReaderKeys).compactMap { EventCodes.code(named: $0)?.code }),
            blockEscapeChords: buttons.escapeChords == .blocked,
            allowedAltChords: Set(buttons.allowedChords.compactMap { Buttons.allowedAltChordCodes[$0] }),
            lockedCombos: buttons.allLockedCombos,
            allowedCombos: (accessibility.allowedCombos + screenReaderCombos).compactMap {
                try? Profile.combo($0).get()
            },
            touch: touchPolicy,
            pointer: pointerPolicy(touch: touchPolicy),
            allowedDevices: devices.map(\.filterDevice),
            exitGesture: session.exitGesture?.filterGesture,
            touchExitGesture: session.touchExitGesture.map {
                KioskInput.TouchExitGesture(corner: $0.corner, taps: $0.taps, within: $0.within.microseconds)
            })
        policy.cleaningPassKeys = Set(
            (accessibility.allowedKeys + screenReaderKeys).compactMap { EventCodes.code(named: $0)?.code })
        policy.cleaningGesture = session.cleaningGesture?.filterGesture
        policy.touchCleaningGesture = session.touchCleaningGesture.map {
            KioskInput.TouchExitGesture(corner: $0.corner, taps: $0.taps, within: $0.within.microseconds)
        }
        policy.maxContacts = touch.maxContacts
        policy.edgeMargin = touch.edgeMargin ?? 0
        policy.keyAccess = KeyAccessSettings(
            stickyKeys: accessibility.stickyKeys, slowKeys: accessibility.slowKeys?.microseconds ?? 0,
            bounceKeys: accessibility.bounceKeys?.microseconds ?? 0)
        return policy
    }

    /// The keys `[accessibility] screen-reader` passes: its own, less those the profile locks by
    /// name (`extra-locked-keys`: meant).
    public var screenReaderKeys: [String] {
        (accessibility.screenReader?.keys ?? []).filter { !buttons.extraLockedKeys.contains($0) }
    }

    /// The combinations `[accessibility] screen-reader` passes: its own, less those a locked
    /// combo of the profile names (meant).
    public var screenReaderCombos: [String] {
        let locked = Set(buttons.allLockedCombos)
        return (accessibility.screenReader?.combos ?? []).filter {
            guard let combo = try? Profile.combo($0).get() else { return false }
            return !locked.contains(combo)
        }
    }

    /// `[pointer] mode` in the filter's terms; `follow-touch` takes the touch policy's.
    func pointerPolicy(touch: TouchPolicy) -> PointerPolicy {
        switch pointer.mode {
        case .locked: return .locked
        case .allowed: return .allowed
        case .followTouch:
            switch touch {
            case .none: return .locked
            case .all: return .allowed
            case .regions: return .regions
            }
        }
    }
}

extension Profile.Device {
    /// The entry in the filter's terms.
    public var filterDevice: AllowedDevice {
        AllowedDevice(
            role: role,
            matcher: DeviceMatcher(
                name: name, vendor: vendor.map { UInt16($0) }, product: product.map { UInt16($0) },
                udev: udev.map { ($0.key, $0.value) }),
            passesKeys: passes == .all || passes == .keys, passesPointer: passes == .all || passes == .pointer,
            hidesPointer: hidePointer)
    }
}

extension Profile.Region {
    var filterRegion: TouchRegion {
        switch shape {
        case .rect(let x, let y, let width, let height): .rect(x: x, y: y, width: width, height: height)
        case .polygon(let points): .polygon(points.map { KioskInput.Point(x: $0.x, y: $0.y) })
        }
    }
}

extension FilterPolicy {
    /// Fail closed: every key and button locked, no touch, nothing else forwarded either;
    /// only the exit gesture is still seen. For a session whose profile is missing or broken.
    public static func strictest(exitGesture: KioskInput.ExitGesture?) -> FilterPolicy {
        FilterPolicy(
            lockedKeys: EventCodes.allKeyCodes, blockEscapeChords: true, touch: .none,
            exitGesture: exitGesture, holdAllInput: true)
    }
}

extension FilterPolicy {
    /// Whether any of the power group's keys (``Profile/Buttons/powerKeys``) never reaches the
    /// kiosk under this policy, so logind must not act on them either: kioskd then holds its
    /// power-, suspend-, hibernate- and reboot-key inhibitor.
    public var locksPowerKeys: Bool {
        holdAllInput || cleaning
            || Profile.Buttons.powerKeys.contains { name in
                EventCodes.code(named: name).map { lockedKeys.contains($0.code) } ?? false
            }
    }
}

extension KioskState {
    /// `SessionProblem` for a restored session whose profile could not be loaded (`reason`
    /// says why): it runs with the strictest locks and the fallback exit gesture.
    public static func restoreProblem(profileName: String, reason: String) -> String {
        "The session's profile \(Text.quoted(profileName)) could not be loaded, so every key, button and touch stays locked until the session ends (the exit gesture is \(Profile.ExitGesture.fallback.spokenDescription)): \(reason)"
    }

    /// What the input filter enforces in this state: everything passes without a session;
    /// an active session locks what its profile says (the strictest locks when `profile` is
    /// `nil` because the file is missing or broken); an expired session holds all input and
    /// keeps only the exit gesture.
    public func filterPolicy(profile: Profile?) -> FilterPolicy {
        switch session.state {
        case .inactive:
            return .passThrough
        case .active, .expired:
            guard let profile else {
                return .strictest(exitGesture: Profile.ExitGesture.fallback.filterGesture)
            }
            var policy = profile.filterPolicy
            if session.state == .expired { policy.holdAllInput = true }
            return policy
        case .unknown:
            // Only a client decodes it (a newer kioskd's value); the state file refuses it.
            return .strictest(exitGesture: Profile.ExitGesture.fallback.filterGesture)
        }
    }
}
