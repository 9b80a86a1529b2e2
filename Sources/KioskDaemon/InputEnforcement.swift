import KioskCore
import KioskInput
import LinuxInput
import Logging

/// Makes a session's locks real. `ManagerObject` tells it the state and the active profile
/// whenever either changes; it must act before returning (a reply to `StartSession` goes out
/// after the locks are on).
public protocol SessionEnforcer: AnyObject {
    func enforce(_ state: KioskState, profile: Profile?)
    /// kioskd's passcode prompt opened or closed: while it is open, nothing reaches the kiosk and
    /// the filter reads the prompt's keys.
    func setPrompt(open: Bool)
    /// kioskd's offer of more time came up with extensions left, or went: while it is up,
    /// nothing reaches the kiosk and a key or touch let go takes it (``FilterPolicy/offersTime``).
    func setTimeOffer(open: Bool)
    /// The "Still there?" screen is up (`warning`), kioskd wants the display dark
    /// (`displayOff`): while either is, nothing reaches the kiosk; a key or touch let go answers
    /// the screen (``FilterPolicy/asksPresence``), the first press wakes the display
    /// (``FilterPolicy/displayOff``).
    func setIdle(warning: Bool, displayOff: Bool)
    /// Cleaning the screen started or ended: while it runs, every touch, pointer and key is held
    /// but what assistive technology needs (``FilterPolicy/cleaning``), with or without a session.
    func setCleaning(_ on: Bool)
    /// Staff draw regions (started or ended): while they do, every key, button and touch is held
    /// from the kiosk, and the touchscreens' contacts and the keys go to kioskd
    /// (``ManagerObject/drawingInput(_:)``).
    func setDrawing(_ on: Bool)
    /// Whether a touchscreen is read at this kiosk: without one, nobody can draw.
    var canDraw: Bool { get }
    /// What the enforcer wants in force and could not put there ("" when nothing): part of
    /// `SessionProblem` while a session is active.
    var problem: String { get }
    /// What is wrong with the session's locks but does not weaken them (a `[[device]]` entry that
    /// matches no device): `SessionWarnings` while a session is active.
    var warnings: [String] { get }
    /// Called (on the loop) whenever ``problem`` or ``warnings`` change; set by `ManagerObject`.
    var onProblemChanged: (() -> Void)? { get set }
}

extension SessionEnforcer {
    public func setPrompt(open: Bool) {}
    public func setTimeOffer(open: Bool) {}
    public func setIdle(warning: Bool, displayOff: Bool) {}
    public func setCleaning(_ on: Bool) {}
    public func setDrawing(_ on: Bool) {}
    public var canDraw: Bool { false }
    public var problem: String { "" }
    public var warnings: [String] { [] }
    public var onProblemChanged: (() -> Void)? {
        get { nil }
        set {}
    }
}

/// The enforcer kioskd runs: the state's filter policy (KioskCore's mapping) goes to the input
/// broker, and logind's power-key inhibitor is held while that policy swallows the power key.
final class InputEnforcement: SessionEnforcer {
    private let broker: InputBroker?
    private let inhibitor: LogindInhibitor?
    /// logind's idle/sleep/lid-switch inhibitor, held while the session's profile asks to keep
    /// the kiosk awake.
    private let awake: LogindInhibitor?
    private let logger: Logger
    private(set) var policy = FilterPolicy.passThrough

    /// `broker` is nil with `--no-input`; the inhibitor is still taken for a locked power key.
    init(broker: InputBroker?, inhibitor: LogindInhibitor?, awake: LogindInhibitor? = nil, logger: Logger) {
        self.broker = broker
        self.inhibitor = inhibitor
        self.awake = awake
        self.logger = logger
    }

    /// logind's inhibitor, wanted (the session locks the power key) and not held.
    var problem: String {
        [inhibitor?.problem ?? "", awake?.problem ?? ""].filter { !$0.isEmpty }.joined(separator: "; ")
    }

    private(set) var warnings: [String] = []
    /// The active profile's `[[device]]` entries, and its file name for warnings.
    private var deviceEntries: [Profile.Device] = []
    private var profileFile = ""
    private var problemChanged: (() -> Void)?

    var onProblemChanged: (() -> Void)? {
        get { problemChanged }
        set {
            problemChanged = newValue
            inhibitor?.onProblemChanged = newValue
            awake?.onProblemChanged = newValue
        }
    }

    /// The last state and profile, whether the prompt is open and whether more time is offered:
    /// the policy is made of all four.
    private var last: (state: KioskState, profile: Profile?)?
    private var promptOpen = false
    private var offerOpen = false
    private var idle = (warning: false, displayOff: false)

    func setIdle(warning: Bool, displayOff: Bool) {
        guard idle != (warning, displayOff) else { return }
        idle = (warning, displayOff)
        if let last { enforce(last.state, profile: last.profile) }
    }
    private var cleaning = false

    func setPrompt(open: Bool) {
        promptOpen = open
        if let last { enforce(last.state, profile: last.profile) }
    }

    func setTimeOffer(open: Bool) {
        offerOpen = open
        if let last { enforce(last.state, profile: last.profile) }
    }

    func setCleaning(_ on: Bool) {
        cleaning = on
        enforce(last?.state ?? KioskState(), profile: last?.profile)
    }

    private var drawing = false

    func setDrawing(_ on: Bool) {
        drawing = on
        broker?.setDrawing(on)
        enforce(last?.state ?? KioskState(), profile: last?.profile)
    }

    var canDraw: Bool { broker?.brokersTouchscreen ?? false }

    func enforce(_ state: KioskState, profile: Profile?) {
        last = (state, profile)
        var next = state.filterPolicy(profile: profile)
        if promptOpen && state.session.isActive { next.readsPasscode = true }
        if offerOpen && state.session.state == .active { next.offersTime = true }
        if idle.warning && state.session.state == .active { next.asksPresence = true }
        if idle.displayOff && state.session.state == .active { next.displayOff = true }
        next.cleaning = cleaning
        if drawing { next.holdAllInput = true }
        deviceEntries = state.session.isActive ? profile?.devices ?? [] : []
        awake?.setHeld(state.session.isActive && profile?.session.keepAwake == true)
        profileFile = state.session.profileName + ".toml"
        defer { updateWarnings() }
        guard next != policy else { return }
        policy = next
        broker?.setPolicy(next)
        inhibitor?.setHeld(next.locksPowerKeys)
        logger.info(
            "Input locks changed",
            metadata: [
                "session.state": "\(state.session.state.rawValue)", "input.locked-keys": "\(next.lockedKeys.count)",
                "input.hold-all": "\(next.holdAllInput)", "input.prompt": "\(next.readsPasscode)",
                "input.offer": "\(next.offersTime)", "input.still-there": "\(next.asksPresence)",
                "input.display-off": "\(next.displayOff)", "input.cleaning": "\(next.cleaning)",
            ])
    }

    /// A device was plugged in: an entry may match now.
    func deviceBrokered() { updateWarnings() }

    /// A brokered device went away (unplugged): an entry that matched only it matches nothing now.
    func deviceGone() { updateWarnings() }

    /// Every `[[device]]` entry of the session's profile that matches no brokered device is a
    /// warning (journal, `SessionWarnings`): the device it means keeps every lock until it is
    /// plugged in, or the entry is mistyped. Without a broker (`--no-input`) nothing is judged.
    private func updateWarnings() {
        guard let broker else { return }
        let next = deviceEntries.filter { !broker.brokers($0.filterDevice.matcher) }.map { entry in
            "The [[device]] entry at line \(entry.line) of \(profileFile), \(entry.summary), matches no input device: none gets through the locks until one that matches is plugged in"
        }
        guard next != warnings else { return }
        for warning in next where !warnings.contains(warning) { logger.warning("\(warning)") }
        warnings = next
        problemChanged?()
    }
}
