extension Registry.Application {
    /// Hands `body` each restriction as the packed table holds it — its id, title and detail as
    /// UTF-8 bytes in place (valid during the call only), its state, whether it is retired — in
    /// order, without making a `Restriction` (or any `String`) per restriction. The state file's
    /// writer (KioskStore, which owns the format) reads the registry this way: going through
    /// `JSONEncoder` was most of a save of 50,000 restrictions.
    package func forEachPacked(
        _ body: (
            _ id: UnsafeBufferPointer<UInt8>, _ title: UnsafeBufferPointer<UInt8>, _ detail: UnsafeBufferPointer<UInt8>,
            _ state: RestrictionState, _ retired: Bool
        ) -> Void
    ) {
        table.text.withUnsafeBufferPointer { text in
            for entry in table.entries {
                body(
                    UnsafeBufferPointer(rebasing: text[entry.idRange]), UnsafeBufferPointer(rebasing: text[entry.titleRange]),
                    UnsafeBufferPointer(rebasing: text[entry.detailRange]), entry.state, entry.retired)
            }
        }
    }
}
