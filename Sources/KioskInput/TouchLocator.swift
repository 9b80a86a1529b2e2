/// How one device's contacts, or an absolute pointer's strokes, are decided under the policy
/// now: a touchscreen follows `[touch]`, a touchpad and a pen follow `[pointer]`, an allowed
/// device passes (``DeviceGate``). Holding all input suppresses everything whatever the rule.
enum ContactRule: Equatable {
    case forwardAll
    case suppressAll
    /// By where they start, against the policy's touch regions.
    case regions
}

/// Where a contact lands on the screen: device coordinates through the axes' ranges and the
/// device's calibration matrix to screen fractions, checked against the policy's regions.
struct TouchLocator {
    private let xAxis: DeviceDescription.AbsInfo?
    private let yAxis: DeviceDescription.AbsInfo?
    private let calibration: CalibrationMatrix?

    /// `x` and `y` are the axes the device's contacts report (`ABS_MT_POSITION_*` or `ABS_*`).
    init(description: DeviceDescription, x: UInt16, y: UInt16) {
        xAxis = description.absInfo[x]
        yAxis = description.absInfo[y]
        calibration = description.calibration
    }

    /// Whether a contact (or an absolute pointer's stroke) starting at device coordinates (x, y)
    /// at `time` must be suppressed: one on the prompt's pad or in the touch gesture's corner is
    /// read there and always is; one in the gate's edge margin (``DeviceGate/edgeMargin``, a
    /// touchscreen's only) always is; otherwise as ``isLocked(x:y:rule:shared:)`` with the gate's
    /// rule.
    func startIsLocked(x: Int32, y: Int32, time: Int64, gate: DeviceGate, shared: inout SharedState) -> Bool {
        if shared.watchesContactStarts, let point = screenPoint(x: x, y: y),
            shared.noteContactStart(at: point, time: time)
        {
            return true
        }
        if gate.edgeMargin > 0, let point = screenPoint(x: x, y: y) {
            let margin = gate.edgeMargin
            if point.x < margin || point.y < margin || point.x > 1 - margin || point.y > 1 - margin { return true }
        }
        return isLocked(x: x, y: y, rule: gate.contacts, shared: shared)
    }

    /// Where device coordinates are on the screen, in fractions after the calibration; nil for
    /// a device without both axes.
    func screenPoint(x: Int32, y: Int32) -> Point? {
        guard let xAxis, let yAxis else { return nil }
        var point = Point(x: xAxis.fraction(of: x), y: yAxis.fraction(of: y))
        if let matrix = calibration {
            let mapped = matrix.apply(x: point.x, y: point.y)
            point = Point(x: mapped.x, y: mapped.y)
        }
        return point
    }

    /// Whether a contact starting at device coordinates (x, y) must be suppressed.
    func isLocked(x: Int32, y: Int32, rule: ContactRule, shared: SharedState) -> Bool {
        if shared.holdsAll { return true }
        switch rule {
        case .forwardAll: return false
        case .suppressAll: return true
        case .regions: break
        }
        guard case .regions(let regions) = shared.policy.touch, !regions.isEmpty else { return false }
        guard let point = screenPoint(x: x, y: y) else { return false }
        // An axis whose range is empty or negative (max < min: uinput refuses it, a kernel
        // driver's bug or a hand-made device may not) puts the point nowhere, which no region
        // contains: suppressed rather than forwarded past every locked region (fail closed).
        guard point.x.isFinite, point.y.isFinite else { return true }
        for region in regions where region.contains(point) { return true }
        return false
    }
}
