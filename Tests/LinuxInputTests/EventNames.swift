import KioskInput
import LinuxInput

// Tests spell codes the way the kernel does: code("KEY_POWER"), type("EV_KEY").

func code(_ name: String) -> UInt16 { EventCodes.code(named: name)!.code }
func type(_ name: String) -> UInt16 { EventCodes.type(named: name)! }

func event(_ typeName: String, _ codeName: String, _ value: Int32) -> InputEvent {
    InputEvent(type: type(typeName), code: code(codeName), value: value)
}
