import KioskInput

// Tests spell codes the way the kernel does: code("KEY_POWER"), type("EV_KEY").

public func code(_ name: String) -> UInt16 { EventCodes.code(named: name)!.code }
public func type(_ name: String) -> UInt16 { EventCodes.type(named: name)! }

public func event(_ typeName: String, _ codeName: String, _ value: Int32) -> InputEvent {
    InputEvent(type: type(typeName), code: code(codeName), value: value)
}

/// A key press or release as one frame's events.
public func key(_ name: String, _ value: Int32) -> [InputEvent] { [event("EV_KEY", name, value)] }
