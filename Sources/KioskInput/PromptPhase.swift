import KioskAPI

/// kioskd's passcode prompt at the kiosk, as a pure state machine: the exit gesture opens it,
/// prompt keys (``PromptKey``, read by the filter from the brokered devices, never forwarded)
/// type into it, Enter hands what was typed to the passcode check, Esc or the timeout close it.
/// What is typed lives only here and is dropped when the prompt closes; nothing of it is ever
/// published but its length. Times are microseconds of the kiosk's clock (the daemon's) or of the
/// events (a replay).
public struct PromptPhase: Sendable, Equatable {
    public typealias State = PromptState
    /// Why the prompt closed (`PromptClosed`'s reason).
    public typealias Reason = PromptCloseReason

    /// What a key press asks of the daemon.
    public enum Effect: Sendable, Equatable {
        case none
        /// What a display shows changed (the length, the deadline).
        case changed
        /// Check this passcode (the prompt is now ``State/checking``).
        case check(String)
        case close(Reason)
    }

    /// How long the prompt waits for the next key, in microseconds (30 s).
    public var timeout: Int64 = 30_000_000
    /// The most digits the prompt holds; more are refused (a passcode's limit is far above).
    public static let maximumLength = 64

    public private(set) var state = State.closed
    private var digits: [UInt8] = []
    /// When the prompt closes unless a key comes (µs); nil when closed or checking.
    public private(set) var deadline: Int64?

    public init() {}

    /// How many characters are typed (a display's dots).
    public var length: Int { digits.count }

    /// Opens the prompt at `now`; false when it is open already (the gesture made again).
    public mutating func open(at now: Int64) -> Bool {
        guard state == .closed else { return false }
        state = .open
        digits = []
        deadline = now + timeout
        return true
    }

    /// A key of the prompt at `now`. Every key moves the deadline on; a letter is refused
    /// without closing the prompt, Enter with nothing typed does nothing.
    public mutating func press(_ key: PromptKey, at now: Int64) -> Effect {
        guard state == .open else { return .none }
        deadline = now + timeout
        switch key {
        case .digit(let digit):
            if digits.count < Self.maximumLength { digits.append(digit) }
            return .changed
        case .backspace:
            if !digits.isEmpty { digits.removeLast() }
            return .changed
        case .refused:
            return .changed
        case .cancel:
            return .close(.cancelled)
        case .enter:
            guard !digits.isEmpty else { return .changed }
            state = .checking
            deadline = nil
            return .check(String(digits.map { Character(String($0)) }))
        }
    }

    /// Whether the prompt is open and its deadline has passed at `now`.
    public func timedOut(at now: Int64) -> Bool {
        guard state == .open, let deadline else { return false }
        return now >= deadline
    }

    public mutating func close() {
        state = .closed
        for index in digits.indices { digits[index] = 0 }
        digits = []
        deadline = nil
    }
}
