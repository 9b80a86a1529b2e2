import KioskCore
import KioskDaemon
import KioskInput
import Synchronization

/// A `SessionEnforcer` that keeps what the manager hands it: each state and profile, as the
/// `FilterPolicy` kioskd's own enforcer would send the input broker for them
/// (`KioskState.filterPolicy(profile:)`, KioskCore's mapping). Written on the manager's loop,
/// read from the test.
public final class RecordingEnforcer: SessionEnforcer, Sendable {
    private let handed = Mutex<[(state: KioskState, policy: FilterPolicy)]>([])
    private let idleHanded = Mutex<(warning: Bool, displayOff: Bool)>((false, false))
    private let cleaningTold = Mutex<[Bool]>([])
    private let drawingTold = Mutex<[Bool]>([])
    /// Whether it says a touchscreen is read (``SessionEnforcer/canDraw``).
    public let canDraw: Bool

    public init(canDraw: Bool = false) { self.canDraw = canDraw }

    /// Drawing started (true) or ended (false), each time the manager said so.
    public func setDrawing(_ on: Bool) {
        drawingTold.withLock { $0.append(on) }
    }

    /// What ``setDrawing(_:)`` was told, in order.
    public var drawingChanges: [Bool] { drawingTold.withLock { $0 } }

    public func enforce(_ state: KioskState, profile: Profile?) {
        let policy = state.filterPolicy(profile: profile)
        handed.withLock { $0.append((state, policy)) }
    }

    public func setIdle(warning: Bool, displayOff: Bool) {
        idleHanded.withLock { $0 = (warning, displayOff) }
    }

    /// What idle time last asked the filter for: "Still there?" up, the display dark.
    public var idle: (warning: Bool, displayOff: Bool) { idleHanded.withLock { $0 } }

    /// Cleaning started (true) or ended (false), each time the manager said so.
    public func setCleaning(_ on: Bool) {
        cleaningTold.withLock { $0.append(on) }
    }

    /// What ``setCleaning(_:)`` was told, in order.
    public var cleaningChanges: [Bool] { cleaningTold.withLock { $0 } }

    /// The policy last handed over (pass-through before the first).
    public var policy: FilterPolicy { handed.withLock { $0.last?.policy ?? .passThrough } }
    /// The state last handed over.
    public var state: KioskState? { handed.withLock { $0.last?.state } }
    /// How many times the manager handed a state over.
    public var count: Int { handed.withLock { $0.count } }
}
