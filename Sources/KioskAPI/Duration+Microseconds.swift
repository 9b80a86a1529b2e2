extension Duration {
    /// Whole microseconds, as the bus carries deadlines.
    public var microseconds: Int64 {
        components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000
    }
}
