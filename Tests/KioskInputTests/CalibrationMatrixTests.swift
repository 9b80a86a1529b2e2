import Testing

@testable import KioskInput

/// `LIBINPUT_CALIBRATION_MATRIX` is read as libinput reads it (`parse_calibration_property`,
/// `safe_atod`): six space-separated plain decimal numbers; what libinput refuses, kioskd refuses,
/// so a touch is never judged with a matrix the compositor does not apply.
@Suite struct CalibrationMatrixTests {
    /// One number in the first place, the rest of the identity after it.
    static func matrix(first: String) -> CalibrationMatrix? {
        CalibrationMatrix(udevProperty: "\(first) 0 0 0 1 0")
    }

    @Test(
        "plain decimal numbers are accepted",
        arguments: [
            ("1", 1.0), ("-1", -1), ("+1", 1), ("0.5", 0.5), (".5", 0.5), ("-.5", -0.5), ("1.", 1), ("-0", 0),
            ("007", 7), ("0.0000001", 1e-7), ("123456789012345678901234567890", 123456789012345678901234567890.0),
        ])
    func accepts(text: String, value: Double) {
        #expect(Self.matrix(first: text)?.a == value, "\(text)")
    }

    @Test(
        "what libinput's safe_atod refuses is refused",
        arguments: [
            "0x10", "0x1p3", "0X1P-2", "1e3", "1E3", "1e-9", "inf", "-inf", "infinity", "nan", "NaN", "1,5", "",
            ".", "+", "-", "+-1", "--1", "1.2.3", "1-", "\u{2212}1", "١",
            // Too small for a normal double (libinput refuses subnormals) and too large for one.
            "0." + String(repeating: "0", count: 320) + "1", String(repeating: "9", count: 400),
        ])
    func refuses(text: String) {
        #expect(Self.matrix(first: text) == nil, "\(text)")
    }

    /// libinput splits on spaces only, skips runs of them, and reads the first six numbers.
    @Test func splitsOnSpacesAsLibinputDoes() {
        #expect(CalibrationMatrix(udevProperty: "  -1  0 1 0 1   0 ") == CalibrationMatrix(-1, 0, 1, 0, 1, 0))
        #expect(CalibrationMatrix(udevProperty: "-1\t0 1 0 1 0") == nil)
        #expect(CalibrationMatrix(udevProperty: "1 0 0 0 1") == nil)
        #expect(CalibrationMatrix(udevProperty: "1 0 0 0 1 0 7") == .identity)
        #expect(CalibrationMatrix(udevProperty: "1 0 0 0 1 0x2 7") == nil)
    }

    /// What kioskd writes for a clone is plain decimal libinput reads back as the same matrix,
    /// even for numbers Swift prints with an exponent.
    @Test(
        arguments: [
            CalibrationMatrix(-1, 0, 1, 0, 1, 0), CalibrationMatrix(1.0 / 3, 1e-9, -1e-5, 1e20, 0.9999999, -2.5e-300),
            CalibrationMatrix(123456789012345678901234567890.0, 1e-7, 0, -0.0001, 1, 0),
        ])
    func udevPropertyRoundTrips(matrix: CalibrationMatrix) {
        let text = matrix.udevProperty
        #expect(text.allSatisfy { "0123456789.- ".contains($0) }, "\(text)")
        #expect(CalibrationMatrix(udevProperty: text) == matrix, "\(text)")
    }
}
