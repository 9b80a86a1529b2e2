import CEvdev
import KioskInput
import Testing

/// LinuxInput builds devices and compares events with KioskInput's names (`EV.key`, `SYN.report`,
/// …), never with the C module's macros: each of those numbers is the kernel header's, as the
/// libevdev headers kioskd is built against spell it. Pure, runs anywhere.
@Suite struct EventCodeConstantsTests {
    @Test(
        "event types",
        arguments: [
            (EV.syn, EV_SYN), (EV.key, EV_KEY), (EV.rel, EV_REL), (EV.abs, EV_ABS), (EV.msc, EV_MSC), (EV.sw, EV_SW),
            (EV.led, EV_LED), (EV.rep, EV_REP), (EV.ff, EV_FF), (EV.ffStatus, EV_FF_STATUS), (EV.max, EV_MAX),
        ])
    func types(swift: UInt16, header: Int32) {
        #expect(Int32(swift) == header)
    }

    @Test(
        "codes and properties",
        arguments: [
            (SYN.report, SYN_REPORT), (SYN.config, SYN_CONFIG), (SYN.mtReport, SYN_MT_REPORT),
            (SYN.dropped, SYN_DROPPED),
            (MSC.scan, MSC_SCAN), (REP.delay, REP_DELAY), (REP.period, REP_PERIOD),
            (KEY.max, KEY_MAX), (KEY.backspace, KEY_BACKSPACE), (KEY.leftCtrl, KEY_LEFTCTRL),
            (KEY.leftAlt, KEY_LEFTALT),
            (KEY.f1, KEY_F1), (KEY.f10, KEY_F10), (KEY.kpDot, KEY_KPDOT), (KEY.f11, KEY_F11), (KEY.f12, KEY_F12),
            (KEY.rightCtrl, KEY_RIGHTCTRL), (KEY.sysRq, KEY_SYSRQ), (KEY.rightAlt, KEY_RIGHTALT),
            (KEY.delete, KEY_DELETE),
            (BTN.toolFinger, BTN_TOOL_FINGER), (BTN.toolQuintTap, BTN_TOOL_QUINTTAP), (BTN.touch, BTN_TOUCH),
            (BTN.toolDoubleTap, BTN_TOOL_DOUBLETAP), (BTN.toolTripleTap, BTN_TOOL_TRIPLETAP),
            (BTN.toolQuadTap, BTN_TOOL_QUADTAP), (BTN.misc, BTN_MISC), (BTN.left, BTN_LEFT), (BTN.task, BTN_TASK),
            (BTN.joystick, BTN_JOYSTICK), (BTN.toolPen, BTN_TOOL_PEN), (BTN.toolStylus3, BTN_STYLUS3),
            (BTN.stylus, BTN_STYLUS), (BTN.stylus2, BTN_STYLUS2), (BTN.gearUp, BTN_GEAR_UP),
            (BTN.dpadUp, BTN_DPAD_UP), (BTN.dpadRight, BTN_DPAD_RIGHT), (BTN.triggerHappy, BTN_TRIGGER_HAPPY1),
            (BTN.triggerHappy40, BTN_TRIGGER_HAPPY40), (REL.x, REL_X), (REL.y, REL_Y),
            (INPUT_PROP.pointer, INPUT_PROP_POINTER),
            (ABS.x, ABS_X), (ABS.y, ABS_Y), (ABS.pressure, ABS_PRESSURE), (ABS.mtSlot, ABS_MT_SLOT),
            (ABS.mtFirst, ABS_MT_TOUCH_MAJOR), (ABS.mtPositionX, ABS_MT_POSITION_X),
            (ABS.mtPositionY, ABS_MT_POSITION_Y),
            (ABS.mtTrackingID, ABS_MT_TRACKING_ID), (ABS.mtPressure, ABS_MT_PRESSURE), (ABS.mtLast, ABS_MT_TOOL_Y),
            (ABS.max, ABS_MAX), (INPUT_PROP.direct, INPUT_PROP_DIRECT), (INPUT_PROP.semiMT, INPUT_PROP_SEMI_MT),
            (INPUT_PROP.max, INPUT_PROP_MAX),
        ])
    func codes(swift: UInt16, header: Int32) {
        #expect(Int32(swift) == header)
    }

    @Test("counts")
    func counts() {
        #expect(KEY.count == Int(KEY_CNT))
        #expect(ABS.count == Int(ABS_CNT))
    }
}
