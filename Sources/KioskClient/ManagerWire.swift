import KioskAPI
import SystemdKit

/// How the manager's replies, properties and signals look on the wire, decoded into the
/// client's types. Anything malformed is `KioskClientError.unexpectedReply`; properties the
/// client does not know are ignored, so a newer daemon can add some.
enum ManagerWire {
    static let properties = "org.freedesktop.DBus.Properties"
    static let driver = "org.freedesktop.DBus"
    static let driverPath = "/org/freedesktop/DBus"
    /// The sender of sd-bus's own local messages (`Disconnected`); the bus refuses it from peers.
    static let local = "org.freedesktop.DBus.Local"

    // MARK: match rules (subscribe before reading a snapshot, so no change falls in between)
    //
    // `sender=` keeps other connections' broadcasts out at the bus; a signal sent to this
    // connection by name comes whatever the rules say, so `ManagerMirror` also compares each
    // signal's sender with the owner of kioskd's name.

    static func rule(
        sender: String = KioskWire.busName, path: String = KioskWire.objectPath,
        interface: String = KioskWire.managerInterface, member: String, arg0: String? = nil
    ) -> String {
        var rule = "type='signal',sender='\(sender)',path='\(path)',interface='\(interface)',member='\(member)'"
        if let arg0 { rule += ",arg0='\(arg0)'" }
        return rule
    }

    /// `RestrictionStateChanged` of one app (`arg0` = its id), or of every app.
    static func restrictionRule(app: String?) -> String {
        rule(member: KioskWire.Member.restrictionStateChanged, arg0: app)
    }

    static let propertiesRule = rule(
        interface: properties, member: "PropertiesChanged", arg0: KioskWire.managerInterface)
    static let exitRequestedRule = rule(member: KioskWire.Member.exitRequested)
    static let timeLimitWarningRule = rule(member: KioskWire.Member.timeLimitWarning)
    static let timeExtendedRule = rule(member: KioskWire.Member.timeExtended)
    static let idleResetRule = rule(member: KioskWire.Member.idleReset)
    static let promptClosedRule = rule(member: KioskWire.Member.promptClosed)
    static let cleaningStartedRule = rule(member: KioskWire.Member.cleaningStarted)
    static let cleaningEndedRule = rule(member: KioskWire.Member.cleaningEnded)
    /// The bus driver's `NameOwnerChanged` for kioskd's name: it started, stopped or restarted.
    static let ownerRule = rule(
        sender: driver, path: driverPath, interface: driver, member: "NameOwnerChanged",
        arg0: KioskWire.busName)
    /// sd-bus's local signal when the connection drops (matched locally, never sent to the bus).
    static let disconnectedRule =
        "type='signal',path='/org/freedesktop/DBus/Local',interface='org.freedesktop.DBus.Local',member='Disconnected'"

    // MARK: replies

    static func status(fromGetAll values: [DBusValue]) throws(KioskClientError) -> KioskStatus {
        guard let first = values.first, let properties = first.dictionary else {
            throw .unexpected("GetAll did not return a{sv}")
        }
        guard let state = properties[KioskWire.Member.sessionState]?.string else {
            throw .unexpected("the SessionState property is missing")
        }
        var status = KioskStatus(
            sessionState: sessionState(state), activeProfile: "", sessionDeadline: nil, version: "")
        try merge(properties, into: &status)
        return status
    }

    /// Applies the known properties of `changed` to `status`.
    static func merge(_ changed: [String: DBusValue], into status: inout KioskStatus) throws(KioskClientError) {
        for (name, value) in changed {
            switch name {
            case KioskWire.Member.sessionState:
                guard let text = value.string else { throw .unexpected("SessionState is not a string") }
                status.sessionState = sessionState(text)
            case KioskWire.Member.activeProfile:
                guard let text = value.string else { throw .unexpected("ActiveProfile is not a string") }
                status.activeProfile = text
            case KioskWire.Member.sessionDeadline:
                guard let usec = value.uint64 else { throw .unexpected("SessionDeadline is not a uint64") }
                status.sessionDeadline = wallClock(usec)
            case KioskWire.Member.version:
                guard let text = value.string else { throw .unexpected("Version is not a string") }
                status.version = text
            case KioskWire.Member.sessionProblem:
                guard let text = value.string else { throw .unexpected("SessionProblem is not a string") }
                status.sessionProblem = text.isEmpty ? nil : text
            case KioskWire.Member.sessionWarnings:
                guard let warnings = value.strings else {
                    throw .unexpected("SessionWarnings is not an array of strings")
                }
                status.sessionWarnings = warnings
            case KioskWire.Member.promptState:
                guard let text = value.string else { throw .unexpected("PromptState is not a string") }
                status.prompt.state = KioskPrompt.State(wire: text)
            case KioskWire.Member.promptLength:
                guard let count = value.uint64 else { throw .unexpected("PromptLength is not a uint32") }
                status.prompt.length = Int(clamping: count)
            case KioskWire.Member.promptDeadline:
                guard let usec = value.uint64 else { throw .unexpected("PromptDeadline is not a uint64") }
                status.prompt.deadline = wallClock(usec)
            case KioskWire.Member.promptRetryAfter:
                guard let usec = value.uint64 else { throw .unexpected("PromptRetryAfter is not a uint64") }
                status.prompt.retryAfter = wallClock(usec)
            case KioskWire.Member.activeApp:
                guard let text = value.string else { throw .unexpected("ActiveApp is not a string") }
                status.activeApp = text
            case KioskWire.Member.speakWarnings:
                guard let speak = value.bool else { throw .unexpected("SpeakWarnings is not a boolean") }
                status.speakWarnings = speak
            case KioskWire.Member.language:
                guard let text = value.string else { throw .unexpected("Language is not a string") }
                status.language = text
            case KioskWire.Member.timeOffer:
                guard let text = value.string else { throw .unexpected("TimeOffer is not a string") }
                status.timeOffer = TimeOfferState(wire: text)
            case KioskWire.Member.visitorExtensionsLeft:
                guard let count = value.uint64 else { throw .unexpected("VisitorExtensionsLeft is not a uint32") }
                status.visitorExtensionsLeft = Int(clamping: count)
            case KioskWire.Member.idleWarning:
                guard let usec = value.uint64 else { throw .unexpected("IdleWarning is not a uint64") }
                status.idleWarning = wallClock(usec)
            case KioskWire.Member.displayPower:
                guard let text = value.string else { throw .unexpected("DisplayPower is not a string") }
                status.displayPower = DisplayPower(wire: text)
            case KioskWire.Member.cleaningUntil:
                guard let usec = value.uint64 else { throw .unexpected("CleaningUntil is not a uint64") }
                status.cleaningUntil = wallClock(usec)
            case KioskWire.Member.drawing:
                guard let text = value.string else { throw .unexpected("Drawing is not a string") }
                status.drawing = text
            case KioskWire.Member.drawingState:
                guard let fields = value.fields, let drawing = drawing(fields) else {
                    throw .unexpected("DrawingState is not (a(sad)iads)")
                }
                status.drawingState = drawing
            case KioskWire.Member.lockedRegions:
                status.lockedRegions = try lockedRegions(value)
            case KioskWire.Member.browserPolicies:
                status.browserPolicies = try browserPolicies(value)
            case KioskWire.Member.passcodeSet:
                guard let set = value.bool else { throw .unexpected("PasscodeSet is not a boolean") }
                status.passcodeSet = set
            case KioskWire.Member.stateStorage:
                guard let f = value.fields, f.count == 2, let since = f[0].uint64, let problem = f[1].string else {
                    throw .unexpected("StateStorage is not (ts)")
                }
                status.stateStorage = since == 0 ? nil : StorageFailure(since: wallClock(since)!, problem: problem)
            default:
                continue  // a property this client does not know
            }
        }
    }

    /// A wall-clock time property in µs of CLOCK_REALTIME, where 0 means none.
    static func wallClock(_ usec: UInt64) -> Timestamp? {
        usec == 0 ? nil : Timestamp(microseconds: Int64(clamping: usec))
    }

    /// `PromptPad`'s `a(sdddd)`: each key's label and rectangle.
    static func promptPad(_ value: DBusValue) throws(KioskClientError) -> [KioskPrompt.Key] {
        try rectangles(value, "PromptPad").map {
            KioskPrompt.Key(label: $0.name, x: $0.x, y: $0.y, width: $0.width, height: $0.height)
        }
    }

    /// An `a(sdddd)` property (`PromptPad`, `DrawingBar`): each name and rectangle.
    private static func rectangles(
        _ value: DBusValue, _ property: String
    ) throws(KioskClientError) -> [(
        name: String, x: Double, y: Double, width: Double, height: Double
    )] {
        guard let items = value.array else { throw .unexpected("\(property) is not a(sdddd)") }
        var rectangles: [(name: String, x: Double, y: Double, width: Double, height: Double)] = []
        for item in items {
            guard let f = item.fields, f.count == 5, let name = f[0].string, let x = f[1].double,
                let y = f[2].double, let width = f[3].double, let height = f[4].double
            else {
                throw .unexpected("an item of \(property) is not (sdddd)")
            }
            rectangles.append((name, x, y, width, height))
        }
        return rectangles
    }

    /// `DrawingState`'s `(a(sad) shapes, i selected, ad stroke, s notice)`; nil when it is not.
    static func drawing(_ values: [DBusValue]) -> KioskDrawing? {
        guard values.count == 4, let shapes = values[0].array, let selected = values[1].int64,
            let stroke = values[2].array?.compactMap(\.double), let notice = values[3].string
        else { return nil }
        func points(_ numbers: [Double]) -> [KioskDrawing.Point] {
            stride(from: 0, to: numbers.count - 1, by: 2).map { KioskDrawing.Point(x: numbers[$0], y: numbers[$0 + 1]) }
        }
        var decoded: [KioskDrawing.Shape] = []
        for shape in shapes {
            guard let f = shape.fields, f.count == 2, let name = f[0].string,
                let outline = f[1].array?.compactMap(\.double)
            else { return nil }
            decoded.append(KioskDrawing.Shape(name: name, outline: points(outline)))
        }
        return KioskDrawing(
            shapes: decoded, selected: decoded.indices.contains(Int(clamping: selected)) ? Int(selected) : nil,
            stroke: points(stroke), notice: notice)
    }

    /// `DrawingBar`'s `a(sdddd)`: each button's name and rectangle.
    static func drawingBar(_ value: DBusValue) throws(KioskClientError) -> [KioskDrawing.Button] {
        try rectangles(value, "DrawingBar").map {
            KioskDrawing.Button(name: $0.name, x: $0.x, y: $0.y, width: $0.width, height: $0.height)
        }
    }

    /// `BrowserPolicies`' `a(ssss)`: browser, policy, value as JSON text, cause.
    static func browserPolicies(_ value: DBusValue) throws(KioskClientError) -> [BrowserPolicyInForce] {
        guard let items = value.array else { throw .unexpected("BrowserPolicies is not a(ssss)") }
        return try items.map { item throws(KioskClientError) in
            guard let fields = item.fields, fields.count == 4, let browser = fields[0].string,
                let policy = fields[1].string, let text = fields[2].string, let cause = fields[3].string
            else { throw .unexpected("a BrowserPolicies entry is not (ssss)") }
            return BrowserPolicyInForce(browser: browser, policy: policy, value: text, cause: cause)
        }
    }

    /// `LockedRegions`' `a(sdad)`: each region's name, shade opacity and outline.
    static func lockedRegions(_ value: DBusValue) throws(KioskClientError) -> [ShadedRegion] {
        guard let items = value.array else { throw .unexpected("LockedRegions is not a(sdad)") }
        var regions: [ShadedRegion] = []
        for item in items {
            guard let f = item.fields, f.count == 3, let name = f[0].string, let opacity = f[1].double,
                opacity.isFinite, let flat = f[2].array?.compactMap(\.double), flat.count == f[2].array?.count,
                let outline = ShadedRegion.outline(flat: flat)
            else {
                throw .unexpected("a LockedRegions region is not (sdad) with x, y pairs")
            }
            regions.append(ShadedRegion(name: name, opacity: opacity, outline: outline))
        }
        return regions
    }

    /// A newer kioskd's state this client does not know is `.unknown`, not an error, so that a
    /// new value breaks no app already shipped.
    static func sessionState(_ text: String) -> SessionState {
        SessionState(wire: text)
    }

    static func restrictionState(_ text: String) throws(KioskClientError) -> RestrictionState {
        guard let state = RestrictionState(rawValue: text) else {
            throw .unexpected("the restriction state \"\(text)\" is unknown")
        }
        return state
    }

    static func restrictions(fromList values: [DBusValue]) throws(KioskClientError) -> [RestrictionInfo] {
        guard let items = values.first?.array else { throw .unexpected("ListRestrictions did not return a(ssss)") }
        var out: [RestrictionInfo] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard let f = item.fields, f.count == 4, let id = f[0].string, let title = f[1].string,
                let detail = f[2].string, let state = f[3].string
            else {
                throw .unexpected("a restriction is not (ssss)")
            }
            out.append(RestrictionInfo(id: id, title: title, detail: detail, state: try restrictionState(state)))
        }
        return out
    }

    static func declarations(_ restrictions: [RestrictionDeclaration]) -> DBusValue {
        .array(
            elementSignature: "(sss)",
            restrictions.map {
                .structure([.string($0.id.rawValue), .string($0.title), .string($0.detail)])
            })
    }

    // MARK: signals

    /// A decoded signal of one of the rules above.
    enum Signal {
        case restriction(app: String, id: String, state: RestrictionState)
        case properties(changed: [String: DBusValue], invalidated: [String])
        case exitRequested
        case timeLimitWarning(secondsLeft: UInt64)
        case timeExtended(secondsAdded: UInt64, extensionsLeft: UInt32)
        case idleReset
        case promptClosed(KioskPrompt.CloseReason)
        case cleaningStarted(seconds: UInt64)
        case cleaningEnded
        /// kioskd's name got a new owner (non-empty) or lost it (empty).
        case owner(String)
        case disconnected
    }

    static func signal(_ message: Message) -> Signal? {
        guard let member = message.member, let values = try? message.readAll() else { return nil }
        switch (message.interface, member) {
        case (KioskWire.managerInterface, KioskWire.Member.restrictionStateChanged):
            guard values.count == 3, let app = values[0].string, let id = values[1].string,
                let text = values[2].string, let state = RestrictionState(rawValue: text)
            else { return nil }
            return .restriction(app: app, id: id, state: state)
        case (KioskWire.managerInterface, KioskWire.Member.exitRequested):
            return .exitRequested
        case (KioskWire.managerInterface, KioskWire.Member.timeLimitWarning):
            guard let seconds = values.first?.uint64 else { return nil }
            return .timeLimitWarning(secondsLeft: seconds)
        case (KioskWire.managerInterface, KioskWire.Member.timeExtended):
            guard values.count == 2, let seconds = values[0].uint64, let wide = values[1].uint64,
                let left = UInt32(exactly: wide)
            else { return nil }
            return .timeExtended(secondsAdded: seconds, extensionsLeft: left)
        case (KioskWire.managerInterface, KioskWire.Member.idleReset):
            return .idleReset
        case (KioskWire.managerInterface, KioskWire.Member.promptClosed):
            guard let text = values.first?.string, let reason = KioskPrompt.CloseReason(rawValue: text) else {
                return nil
            }
            return .promptClosed(reason)
        case (KioskWire.managerInterface, KioskWire.Member.cleaningStarted):
            guard let seconds = values.first?.uint64 else { return nil }
            return .cleaningStarted(seconds: seconds)
        case (KioskWire.managerInterface, KioskWire.Member.cleaningEnded):
            return .cleaningEnded
        case (properties, "PropertiesChanged"):
            guard values.count == 3, values[0].string == KioskWire.managerInterface,
                let changed = values[1].dictionary, let invalidated = values[2].strings
            else { return nil }
            return .properties(changed: changed, invalidated: invalidated)
        case (driver, "NameOwnerChanged"):
            guard values.count == 3, values[0].string == KioskWire.busName, let owner = values[2].string else {
                return nil
            }
            return .owner(owner)
        case (local, "Disconnected"):
            return .disconnected
        default:
            return nil
        }
    }
}
