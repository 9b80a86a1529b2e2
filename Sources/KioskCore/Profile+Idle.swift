import KioskAPI

extension Profile {
    /// `[idle]`: what happens when nobody touches the kiosk for a while during a session
    /// (docs/profiles.md § A visitor who walks away, a dark screen). Idle means no physical
    /// input on any brokered device; input kioskd swallows counts too.
    public struct Idle: Hashable, Sendable, Encodable {
        /// After this long idle, `IdleReset` (or the kiosk session restarted, ``reset``); once per
        /// idle period. Nil: no reset.
        public var resetAfter: Duration?
        public var reset: ResetMode = .signal
        /// A "Still there?" screen this long before the reset; any key or touch keeps the
        /// visitor's work. Nil: none.
        public var resetWarning: Duration?
        /// After this long idle, kioskd wants the display off (`DisplayPower`). Nil: never.
        public var blankAfter: Duration?
        /// Windows of the kiosk's local time in which the display stays dark (a touch shows it
        /// for ``blankAfter``).
        public var displayOff: [DisplayWindow] = []

        /// The shortest and longest idle time a profile may give (reset-after, blank-after).
        public static let idleRange: ClosedRange<Duration> = .seconds(10) ... .seconds(86400)
        /// The shortest "Still there?" screen; WCAG 2.2.1 asks for at least 20 s, which `kioskctl
        /// profile check` warns about below.
        public static let minimumResetWarning: Duration = .seconds(5)
        public static let accessibleResetWarning: Duration = .seconds(20)

        public enum ResetMode: String, Hashable, Sendable, Encodable {
            /// `IdleReset` on the bus: the app goes back to its start page.
            case signal
            /// `kiosk-session.service` is restarted (the compositor and its primary client, the app).
            case restartApp = "restart-app"
        }

        /// Whether the profile asks for anything on idle.
        public var isEmpty: Bool { resetAfter == nil && blankAfter == nil && displayOff.isEmpty }

        /// Why `kioskctl profile check` warns about the "Still there?" screen: shorter than the
        /// 20 s WCAG 2.2.1 gives a person to react; nil otherwise.
        public var warningWarning: String? {
            guard let resetWarning, resetWarning < Self.accessibleResetWarning else { return nil }
            return
                "idle.reset-warning \(resetWarning.kioskText) is shorter than the \(Self.accessibleResetWarning.kioskText) a person needs to react (WCAG 2.2.1); give at least \(Self.accessibleResetWarning.kioskText)"
        }

        enum CodingKeys: String, CodingKey {
            case resetAfter = "reset-after"
            case reset
            case resetWarning = "reset-warning"
            case blankAfter = "blank-after"
            case displayOff = "display-off"
        }

        public init() {}

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encodeIfPresent(resetAfter.map(DurationText.init), forKey: .resetAfter)
            if resetAfter != nil { try c.encode(reset, forKey: .reset) }
            try c.encodeIfPresent(resetWarning.map(DurationText.init), forKey: .resetWarning)
            try c.encodeIfPresent(blankAfter.map(DurationText.init), forKey: .blankAfter)
            if !displayOff.isEmpty { try c.encode(displayOff, forKey: .displayOff) }
        }
    }

    /// A window of the kiosk's local wall-clock time, `"22:00-07:00"` (it may run past
    /// midnight), by minute of the day.
    public struct DisplayWindow: Hashable, Sendable, Encodable, CustomStringConvertible {
        /// Minutes after local midnight, 0 to 1439.
        public var start: Int
        public var end: Int

        /// Reads `HH:MM-HH:MM` (24-hour clock, start and end different); nil otherwise.
        public init?(_ text: String) {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let start = Self.minute(parts[0]), let end = Self.minute(parts[1]), start != end
            else { return nil }
            self.start = start
            self.end = end
        }

        public init(start: Int, end: Int) {
            self.start = start
            self.end = end
        }

        private static func minute(_ text: Substring) -> Int? {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
                parts.allSatisfy({ $0.utf8.allSatisfy { (48...57).contains($0) } }),
                let hour = Int(parts[0]), let minute = Int(parts[1]), hour < 24, minute < 60
            else { return nil }
            return hour * 60 + minute
        }

        /// Whether `minute` (after local midnight) is in the window: from `start` up to, not
        /// including, `end`.
        public func contains(minute: Int) -> Bool {
            start < end ? (start <= minute && minute < end) : (minute >= start || minute < end)
        }

        public var description: String {
            func text(_ m: Int) -> String {
                let h = m / 60, mm = m % 60
                return (h < 10 ? "0" : "") + "\(h):" + (mm < 10 ? "0" : "") + "\(mm)"
            }
            return "\(text(start))-\(text(end))"
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(description)
        }
    }
}
