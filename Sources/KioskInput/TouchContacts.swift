/// The touch part of a device filter: one type per touch protocol (`ProtocolBSlots`,
/// `ProtocolAContacts`, `SingleTouchContact`, `NoTouch`), picked by a switch on the
/// device's `TouchProtocol` once per frame and used only through generic code that the
/// compiler specializes per type, never as `any TouchContacts`: no box, no dynamic dispatch,
/// no allocation per event.
protocol TouchContacts {
    /// Whether a key code belongs to this part (not to the key ledger): `BTN_TOUCH` and the
    /// finger-count `BTN_TOOL_*` of touch devices, every pointer button of an absolute pointer.
    static func ownsKey(_ code: UInt16) -> Bool

    /// Reads the frame (`events[..<end]`, before its `SYN_REPORT`) before it is filtered:
    /// records positions and decides the contacts that start in it, with its final position,
    /// by the gate's contact rule.
    mutating func prepare(
        _ events: UnsafeBufferPointer<InputEvent>, end: Int, gate: DeviceGate, shared: inout SharedState)

    /// Filters one event of the frame that is not a key of the ledger nor `MSC_SCAN`. Returns
    /// whether it was touch's to decide; otherwise the device filter forwards it (unless all
    /// input is held).
    mutating func route(_ event: InputEvent, holding: Bool, into output: inout OutputBuffer) -> Bool

    /// Ends the frame: pointer emulation from the forwarded contacts, what the clone missed.
    mutating func finish(time: InputEvent, into output: inout OutputBuffer)

    /// Touch was turned off: ends every contact forwarded to the clone.
    mutating func endForwardedContacts(time: InputEvent, into output: inout OutputBuffer)

    /// Takes the state held at grab time: live contacts stay suppressed until lifted.
    mutating func adopt(_ state: DeviceState)
}

extension TouchContacts {
    @inline(__always)
    static func ownsKey(_ code: UInt16) -> Bool { code == BTN.touch || BTN.isFingerCountTool(code) }
}

/// A device with no touch axes: keys, buttons, relative axes only.
struct NoTouch: TouchContacts {
    @inline(__always)
    static func ownsKey(_ code: UInt16) -> Bool { false }
    func prepare(_ events: UnsafeBufferPointer<InputEvent>, end: Int, gate: DeviceGate, shared: inout SharedState) {}
    @inline(__always)
    func route(_ event: InputEvent, holding: Bool, into output: inout OutputBuffer) -> Bool { false }
    func finish(time: InputEvent, into output: inout OutputBuffer) {}
    func endForwardedContacts(time: InputEvent, into output: inout OutputBuffer) {}
    func adopt(_ state: DeviceState) {}
}
