/// What the filter reads for kioskd's passcode prompt while it is open (``FilterPolicy/readsPasscode``):
/// one key of the prompt, from a keyboard (by key code, so every layout types the same digits)
/// or from a touch on the PIN pad.
public enum PromptKey: Sendable, Equatable {
    case digit(UInt8)
    case backspace
    /// Enter, keypad Enter or the pad's OK: check what was typed.
    case enter
    /// Esc or the pad's Cancel: close the prompt.
    case cancel
    /// A key that a passcode at the kiosk cannot hold (a letter): refused, the prompt stays open.
    case refused

    /// The prompt key a keyboard key is: the top-row digits and the keypad's, Backspace, Enter
    /// (and keypad Enter), Esc; any other keyboard key is ``refused``; a button is nothing.
    public static func forKey(_ code: UInt16) -> PromptKey? {
        switch code {
        case 2...10: .digit(UInt8(code - 1))  // KEY_1 … KEY_9
        case 11: .digit(0)  // KEY_0
        case 82: .digit(0)  // KEY_KP0
        case 79, 80, 81: .digit(UInt8(code - 78))  // KEY_KP1 … KEY_KP3
        case 75, 76, 77: .digit(UInt8(code - 71))  // KEY_KP4 … KEY_KP6
        case 71, 72, 73: .digit(UInt8(code - 64))  // KEY_KP7 … KEY_KP9
        case 14: .backspace
        case 28, 96: .enter  // KEY_ENTER, KEY_KPENTER
        case 1: .cancel  // KEY_ESC
        case ..<BTN.misc: .refused
        default: nil
        }
    }
}

/// One key of the PIN pad: its prompt key and its rectangle in screen fractions.
public struct PadKey: Sendable, Equatable {
    public var label: String
    public var key: PromptKey
    public var x: Double, y: Double, width: Double, height: Double

    public init(label: String, key: PromptKey, x: Double, y: Double, width: Double, height: Double) {
        self.label = label; self.key = key; self.x = x; self.y = y; self.width = width; self.height = height
    }

    public func contains(_ point: Point) -> Bool {
        point.x >= x && point.x < x + width && point.y >= y && point.y < y + height
    }

    /// The pad kioskd reads: 1 2 3 / 4 5 6 / 7 8 9 / Cancel 0 OK, in the middle of the screen,
    /// below room for a title and the typed dots: keys 0.12 × 0.14 of the screen with gaps of
    /// 0.02, large enough for a fingertip on a 10-inch screen.
    public static let standardPad: [PadKey] = {
        let labels = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "Cancel", "0", "OK"]
        // Written out rather than summed, so that the published numbers are exactly these.
        let columns = [0.30, 0.44, 0.58]
        let rows = [0.30, 0.46, 0.62, 0.78]
        let (width, height) = (0.12, 0.14)
        return labels.enumerated().map { index, label in
            let key: PromptKey =
                switch label {
                case "Cancel": .cancel
                case "OK": .enter
                default: .digit(UInt8(label)!)
                }
            return PadKey(
                label: label, key: key, x: columns[index % 3], y: rows[index / 3], width: width, height: height)
        }
    }()
}

/// A touch exit gesture: `taps` touches that start in a corner of the screen within `within`
/// microseconds (from the first to the last). Touches that start in the corner never reach the
/// kiosk while the gesture is set: the corner is locked.
public struct TouchExitGesture: Sendable, Equatable {
    public enum Corner: String, Sendable, Equatable, CaseIterable {
        case topLeft = "top-left", topRight = "top-right", bottomLeft = "bottom-left", bottomRight = "bottom-right"
    }

    /// The side of the corner's square, in screen fractions.
    public static let cornerSize = 0.1

    public var corner: Corner
    public var taps: Int
    public var within: Int64

    public init(corner: Corner, taps: Int, within: Int64) {
        self.corner = corner; self.taps = max(1, taps); self.within = within
    }

    public func contains(_ point: Point) -> Bool {
        let size = Self.cornerSize
        let left = corner == .topLeft || corner == .bottomLeft
        let top = corner == .topLeft || corner == .topRight
        let inX = left ? point.x <= size : point.x >= 1 - size
        let inY = top ? point.y <= size : point.y >= 1 - size
        return inX && inY
    }
}
