extension Duration {
    /// Parses a duration as profiles write them: one or more `<number><unit>` parts with the
    /// units `ms`, `s`, `m`, `h` and `d` (`45m`, `1.5s`, `1h30m`, `250ms`).
    /// - Returns: `nil` when the text is not of that form.
    public init?(kioskText text: String) {
        var total: Double = 0
        var number = ""
        var scalars = text.unicodeScalars[...]
        guard !scalars.isEmpty else { return nil }
        while let c = scalars.first {
            if ("0"..."9").contains(c) || c == "." {
                number.unicodeScalars.append(c)
                scalars.removeFirst()
                continue
            }
            var unit = ""
            while let u = scalars.first, ("a"..."z").contains(u) {
                unit.unicodeScalars.append(u); scalars.removeFirst()
            }
            guard !number.isEmpty, !number.hasPrefix("."), !number.hasSuffix("."), let value = Double(number) else {
                return nil
            }
            let seconds: Double
            switch unit {
            case "ms": seconds = value / 1000
            case "s": seconds = value
            case "m": seconds = value * 60
            case "h": seconds = value * 3600
            case "d": seconds = value * 86400
            default: return nil
            }
            total += seconds
            number = ""
        }
        guard number.isEmpty, total.isFinite, total < 1e9 else { return nil }
        self = .milliseconds(Int64((total * 1000).rounded()))
    }

    /// The duration in the form profiles use (`1h30m`, `1.5s`, `250ms`).
    public var kioskText: String {
        let ms = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
        if ms == 0 { return "0s" }
        if ms % 1000 != 0 {
            return ms < 1000 ? "\(ms)ms" : "\(ms / 1000).\(String(ms % 1000).leftPadded(to: 3).trimmingTrailingZeros)s"
        }
        var s = ms / 1000
        var out = ""
        for (unit, size) in [("d", Int64(86400)), ("h", 3600), ("m", 60)] where s >= size {
            out += "\(s / size)\(unit)"
            s %= size
        }
        if s > 0 { out += "\(s)s" }
        return out
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }

    fileprivate var trimmingTrailingZeros: String {
        var s = self
        while s.hasSuffix("0") { s.removeLast() }
        return s
    }
}
