import KioskCore
import KioskInput
import Logging
import SystemPackage
import SystemdKit

/// Drawing a profile's locked regions at the kiosk (docs/dbus-api.md § Drawing the regions):
/// `DrawRegions`, answered when staff press Done (with the regions) or the drawing ends
/// otherwise (with why), `Drawing`, `DrawingState` for the display and the bar's `DrawingBar`.
/// The phase's rules are the session machine's (`SessionMachine+Drawing.swift`), what each
/// stroke draws is `RegionDrawing`'s; here they are authorized, fed the touches the broker reads
/// and timed on the kiosk clock. kioskd writes no profile: the caller (`kioskctl regions draw`)
/// edits the file with the regions the reply carries. Nothing of it is saved: a restart ends it
/// (the caller's call fails) with the profile untouched.
extension ManagerObject {
    /// `DrawRegions(s profile) → a(isad) regions`: staff draw `profile`'s locked regions at the
    /// kiosk; the reply comes when they press Done. Under the polkit action `manage-session`.
    func drawRegions(_ call: MethodCall) throws -> MethodReply {
        guard call.arguments.count == 1, let name = call.arguments[0].string else {
            throw KioskError(.invalidArgument, "DrawRegions takes (s profile).")
        }
        try Profile.validateName(name)
        try identify(call) { [unowned self] caller in
            try authorize(
                call, caller: caller, action: KioskWire.Action.manageSession, doing: "draw a profile's touch regions"
            ) { [unowned self] in
                loadProfile(call, name) { [unowned self] loaded in
                    try startDrawing(call, caller: caller, name: name, profile: loaded.profile)
                }
            }
        }
        return .deferred
    }

    private func startDrawing(_ call: MethodCall, caller: Caller, name: String, profile: Profile) throws {
        if profile.touch.mode == .none {
            throw KioskError(
                .invalidArgument,
                "The profile \(Text.quoted(name)) locks all touch (touch.mode = \"none\"); drawing regions would unlock the rest of the screen, so none can be drawn."
            )
        }
        guard enforcer?.canDraw == true else {
            throw KioskError(
                .failed,
                "kioskd reads no touchscreen at this kiosk, so nobody can draw on it; write the regions in the profile (docs/profiles.md)."
            )
        }
        change(call, .privileged) { [unowned self] in
            let effects = try machine.apply(.startDrawing(name), at: clock.now())
            drawingCall = call
            drawingCaller = caller
            regionDrawing = RegionDrawing(regions: profile.touch.lockedRegions)
            // The call is answered when the drawing ends (`drawingEnded`), not by the step.
            return try plan(
                machine, effects,
                MachineStep(caller: caller, change: .startDrawing(name), profileName: state.session.profileName))
        }
    }

    /// The touches and keys the broker read while staff draw.
    public func drawingInput(_ events: [DrawingTouches.Event]) {
        guard machine.drawing != nil, let before = regionDrawing else { return }
        var drawing = before
        var changed = false
        var ended: RegionDrawing.Outcome?
        for event in events {
            let outcome: RegionDrawing.Outcome
            switch event {
            case .down(let contact, let at):
                outcome = drawing.touchDown(contact: contact, at: Profile.Point(x: at.x, y: at.y))
            case .move(let contact, let to):
                outcome = drawing.touchMove(contact: contact, to: Profile.Point(x: to.x, y: to.y))
            case .up(let contact):
                outcome = drawing.touchUp(contact: contact)
            case .key(let code):
                switch code {
                case 28, 96: outcome = drawing.press(.done)  // KEY_ENTER, KEY_KPENTER
                case 1: outcome = drawing.press(.cancel)  // KEY_ESC
                case 14, 111: outcome = drawing.press(.delete)  // KEY_BACKSPACE, KEY_DELETE
                default: outcome = .none
                }
            }
            switch outcome {
            case .none: break
            case .changed: changed = true
            case .done, .cancelled, .refused: ended = outcome
            }
            if ended != nil { break }
        }
        regionDrawing = drawing
        kiosk(.drawingActivity)
        armDrawingTimer()
        // A stroke on its way is sent every 4th point it keeps (each message carries the whole
        // stroke); anything else at once.
        let onlyTheStroke =
            drawing.shapes == before.shapes && drawing.selected == before.selected && drawing.notice == before.notice
            && !drawing.stroke.isEmpty && drawing.stroke.count - drawingStrokeSent < 4
        if changed && !onlyTheStroke {
            drawingStrokeSent = drawing.stroke.count
            emitPropertiesChanged([Member.drawingState])
        }
        switch ended {
        case .done: endDrawing(.done)
        case .cancelled: endDrawing(.cancelled)
        case .refused(let reason): endDrawing(reason)
        default: break
        }
    }

    /// Ends the drawing now for `reason` (on the live machine: nothing is saved).
    func endDrawing(_ reason: DrawingEndReason) {
        try? perform(machine.apply(.endDrawing(reason), at: clock.now()), MachineStep(adopted: false))
    }

    /// `drawingStarted`: the hold in force, the touches read, the timer set, the admin's
    /// connection watched, the journal, the display told.
    func performDrawingStarted(_ step: MachineStep) {
        drawingStrokeSent = 0  // a drawing that ended mid-stroke left its count
        enforcer?.setDrawing(true)
        armDrawingTimer()
        if let caller = drawingCaller {
            let rule =
                "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(caller.busName)'"
            drawingWatch = try? bus.addMatch(rule: rule) { [weak self] message in
                guard let values = try? message.readAll(), values.count == 3, values[2].string == "" else { return }
                self?.endDrawing(.abandoned)
            }
        }
        logger.notice(
            "Drawing touch regions at the kiosk: input is held",
            metadata: step.caller.metadata.merging([
                "drawing.profile": "\(machine.drawing?.profileName ?? "")",
                "session.profile": "\(state.session.profileName)",
            ]) { $1 })
        emitPropertiesChanged([Member.drawing, Member.drawingState])
    }

    /// `drawingEnded`: the hold lifted, the timer and the watch off, the admin's call answered —
    /// with the regions on Done, with why otherwise.
    func performDrawingEnded(_ reason: DrawingEndReason) {
        try? drawingTimer?.setEnabled(.off)
        drawingWatch = nil
        enforcer?.setDrawing(false)
        let call = drawingCall
        let regions = regionDrawing?.regions ?? []
        let shapes = regionDrawing?.shapes ?? []
        drawingCall = nil
        drawingCaller = nil
        regionDrawing = nil
        logger.notice(
            "Drawing touch regions ended: input flows as the locks say",
            metadata: ["drawing.reason": "\(reason.rawValue)", "drawing.regions": "\(regions.count)"])
        emitPropertiesChanged([Member.drawing, Member.drawingState])
        guard let call else { return }
        switch reason {
        case .done:
            let values = zip(regions, shapes).map { region, shape -> DBusValue in
                let kept: Int32 = if case .kept(let index) = region { Int32(index) } else { -1 }
                return .structure([
                    .int32(kept), .string(shape.region.name),
                    .array(elementSignature: "d", Self.numbers(shape.region.shape).map(DBusValue.double)),
                ])
            }
            try? call.reply([.array(elementSignature: "(isad)", values)])
        case .cancelled:
            try? call.replyError(
                Self.busError(KioskError(.failed, "The drawing was cancelled at the kiosk; the profile was not changed.")))
        case .timeout:
            try? call.replyError(
                Self.busError(
                    KioskError(
                        .failed,
                        "Nobody drew for \(SessionMachine.drawingIdleLimit.kioskText); the drawing ended and the profile was not changed."
                    )))
        case .prompt:
            try? call.replyError(
                Self.busError(
                    KioskError(
                        .failed, "The passcode prompt opened at the kiosk; the drawing ended and the profile was not changed.")))
        case .abandoned:
            try? call.replyError(
                Self.busError(KioskError(.failed, "The drawing ended; the profile was not changed.")))
        case .tooSmall:
            try? call.replyError(
                Self.busError(
                    KioskError(
                        .failed,
                        "A shape smaller than a fingertip was drawn (each side must be at least \(RegionDrawing.minSide) of the screen); the drawing ended and the profile was not changed."
                    )))
        case .tooMany:
            try? call.replyError(
                Self.busError(
                    KioskError(
                        .failed,
                        "More regions were drawn than a profile holds (\(RegionDrawing.maxShapes)); the drawing ended and the profile was not changed."
                    )))
        }
    }

    /// A rect as `x, y, width, height`; an outline as its corners' `x, y` in order (6 numbers
    /// or more, so the two never mix up).
    static func numbers(_ shape: Profile.Shape) -> [Double] {
        switch shape {
        case .rect(let x, let y, let width, let height): [x, y, width, height]
        case .polygon(let points): points.flatMap { [$0.x, $0.y] }
        }
    }

    /// `DrawingState` `(a(sad) shapes, i selected, ad stroke, s notice)`: the shapes as outlines
    /// (a rect's 4 corners), the selected one's index or -1, the stroke being drawn, and why the
    /// last stroke added nothing ("" when it did); all empty when nobody draws.
    var drawingState: DBusValue {
        let drawing = regionDrawing ?? RegionDrawing(regions: [])
        let shapes = drawing.shapes.map { shape -> DBusValue in
            let outline = shape.region.shape.outline.flatMap { [$0.x, $0.y] }
            return .structure([
                .string(shape.region.name), .array(elementSignature: "d", outline.map(DBusValue.double)),
            ])
        }
        return .structure([
            .array(elementSignature: "(sad)", shapes), .int32(Int32(drawing.selected ?? -1)),
            .array(elementSignature: "d", drawing.stroke.flatMap { [DBusValue.double($0.x), .double($0.y)] }),
            .string(drawing.notice.rawValue),
        ])
    }

    /// Arms the drawing's timer for when it waits no longer (kiosk clock), or ends the drawing
    /// now when the timer cannot be armed: a hold nothing would lift must not stay.
    func armDrawingTimer() {
        guard let until = machine.drawing?.until else {
            try? drawingTimer?.setEnabled(.off)
            return
        }
        let delay = max(.zero, Timestamp(microseconds: until) - clock.now())
        do {
            if let drawingTimer {
                try drawingTimer.rearm(after: delay)
            } else {
                drawingTimer = try loop.addTimer(clock: .boottime, after: delay, accuracy: .milliseconds(100)) {
                    [unowned self] in
                    if machine.drawingIsIdle(at: clock.now()) { kiosk(.clock) } else { armDrawingTimer() }
                }
            }
        } catch {
            logger.error("Could not arm the drawing's timer", metadata: ["error": "\(Errno.reason(of: error))"])
            endDrawing(.timeout)
        }
    }

    var drawingProperties: [BusProperty] {
        [
            BusProperty(Member.drawing, "s") { [unowned self] in .string(machine.drawing?.profileName ?? "") },
            BusProperty(Member.drawingState, "(a(sad)iads)") { [unowned self] in drawingState },
            BusProperty(Member.drawingBar, "a(sdddd)", flags: [.const]) {
                .array(
                    elementSignature: "(sdddd)",
                    RegionDrawing.buttons.map {
                        .structure([.string($0.button.rawValue), .double($0.x), .double($0.y), .double($0.width), .double($0.height)])
                    })
            },
        ]
    }

    var drawingMethods: [BusMethod] {
        [
            method(Member.drawRegions, in: [("s", "profile")], out: [("a(isad)", "regions")]) { [unowned self] in
                try drawRegions($0)
            }
        ]
    }
}
