extension Duration {
    /// Whole microseconds, as the bus carries deadlines.
    /// Clamped to `Int64`'s range rather than trapping (a `Duration` can hold more).
    public var microseconds: Int64 {
        let (whole, overflow) = components.seconds.multipliedReportingOverflow(by: 1_000_000)
        if overflow { return components.seconds < 0 ? Int64.min : Int64.max }
        return Timestamp.saturating(whole, plus: components.attoseconds / 1_000_000_000_000)
    }
}
