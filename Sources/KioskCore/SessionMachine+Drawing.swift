import KioskAPI
import KioskInput

/// Drawing a profile's locked regions at the kiosk (docs/profiles.md § Drawing the regions at
/// the kiosk): while staff draw, every key, button and touch is held from the kiosk (the app
/// stays on screen, frozen, as under the prompt) and kioskd reads the touches itself
/// (``RegionDrawing``). It starts by an admin's `DrawRegions`, with or without a session, and
/// ends by Done or Cancel at the kiosk, by the admin's call going away, by ``drawingIdleLimit``
/// without a touch or a key, or when the passcode prompt opens. In memory only, like the
/// prompt: a restart comes back with the session's locks and no drawing, the profile untouched.
public struct DrawingPhase: Sendable, Equatable {
    /// The profile whose regions are drawn.
    public var profileName: String
    /// When it ends unless staff touch the screen or press a key first, in µs of the kiosk clock.
    public var until: Int64

    public init(profileName: String, until: Int64) {
        self.profileName = profileName
        self.until = until
    }
}

/// Why the drawing ended.
public enum DrawingEndReason: String, Sendable, Equatable {
    /// Done at the kiosk: the caller writes the regions.
    case done
    /// Cancel (or Esc) at the kiosk.
    case cancelled
    /// Nobody touched the screen or pressed a key for ``SessionMachine/drawingIdleLimit``.
    case timeout
    /// The passcode prompt opened (the exit gesture).
    case prompt
    /// The admin who asked for it went away (their connection closed), or kioskd stops.
    case abandoned
    /// A shape was drawn with a side under ``RegionDrawing/minSide`` (smaller than a fingertip).
    case tooSmall = "too-small"
    /// A shape was drawn past ``RegionDrawing/maxShapes`` (more than a profile holds).
    case tooMany = "too-many"
}

extension SessionMachine {
    /// How long the drawing waits for a touch or a key before it ends.
    public static let drawingIdleLimit: Duration = .seconds(180)

    /// Starts drawing `profileName`'s regions at `now`. Refused, changing nothing, while the
    /// prompt is open, while the screen is cleaned, and while regions are drawn already.
    mutating func startDrawing(_ profileName: String, at now: Timestamp) throws(KioskError) -> [Effect] {
        guard drawing == nil else {
            throw KioskError(
                .failed,
                "Regions of \(Text.quoted(drawing?.profileName ?? "")) are being drawn at the kiosk; one drawing at a time.")
        }
        guard prompt.state == .closed else {
            throw KioskError(.failed, "The passcode prompt is open at the kiosk; drawing can start once it closes.")
        }
        guard cleaning == nil else {
            throw KioskError(.failed, "The screen is being cleaned; drawing can start once the cleaning ends.")
        }
        drawing = DrawingPhase(profileName: profileName, until: now.microseconds + Self.drawingIdleLimit.microseconds)
        return [.drawingStarted]
    }

    /// Ends the drawing now, for `reason`; nothing when none runs.
    mutating func endDrawing(_ reason: DrawingEndReason) -> [Effect] {
        guard drawing != nil else { return [] }
        drawing = nil
        return [.drawingEnded(reason)]
    }

    /// Staff touched the screen or pressed a key: the drawing waits its full time again.
    mutating func drawingActivity(at now: Timestamp) -> [Effect] {
        drawing?.until = now.microseconds + Self.drawingIdleLimit.microseconds
        return []
    }

    /// Whether a drawing runs and nobody drew for its time at `now` (``Event/clock`` ends it).
    public func drawingIsIdle(at now: Timestamp) -> Bool {
        drawing.map { now.microseconds >= $0.until } ?? false
    }
}
