import KioskAPI

/// One app's restrictions, packed so that the registry stays small: kioskd keeps up to 1,024
/// apps × 512 restrictions in memory for as long as it runs (docs/benchmarks.md § Bus: 1,000 × 50
/// fit in 30 MB with everything else). As `Restriction` values each one would cost about 320 bytes
/// (the struct plus three heap strings with their headers and malloc overhead); packed, it
/// costs its text plus one 12-byte ``Entry``, in two allocations per app:
///
/// - `text`: every restriction's id, title and detail as UTF-8, back to back, in entry order;
/// - `entries`: one ``Entry`` per restriction in presentation order: where its text starts,
///   the three lengths, its state and whether it is retired.
///
/// The layout is canonical: `text` holds exactly the entries' strings in entry order, with no
/// gaps and nothing else, so two tables hold the same restrictions exactly when they are equal
/// as values (the synthesized `Hashable` is the model's equality). Every string was validated
/// before it was appended (ids by ``ReverseDNSIdentifier``, titles and details against
/// ``KioskWire/Limits``), so reading one back checks nothing.
///
/// Looking an id up compares UTF-8 bytes in place and allocates nothing; listing materializes
/// `Restriction` values.
struct RestrictionTable: Hashable, Sendable {
    /// One restriction: 11 bytes, 12 with padding. The lengths fit the limits: ids are at most
    /// 255 bytes, titles 256, details 4,096; an app's text is at most 512 × 4,607 bytes.
    struct Entry: Hashable, Sendable {
        /// Where the id starts in `text`; the title follows it, then the detail.
        var offset: UInt32
        var titleCount: UInt16
        var detailCount: UInt16
        var idCount: UInt8
        var state: RestrictionState
        var retired: Bool

        var idRange: Range<Int> { Int(offset)..<Int(offset) + Int(idCount) }
        var titleRange: Range<Int> { idRange.upperBound..<idRange.upperBound + Int(titleCount) }
        var detailRange: Range<Int> { titleRange.upperBound..<titleRange.upperBound + Int(detailCount) }
        var textCount: Int { Int(idCount) + Int(titleCount) + Int(detailCount) }
    }

    private(set) var text: [UInt8] = []
    private(set) var entries: [Entry] = []

    init() {}

    var indices: Range<Int> { entries.indices }

    /// The restriction at `index`, as a value of its own.
    subscript(index: Int) -> Restriction {
        let entry = entries[index]
        return Restriction(
            id: id(at: index), title: string(entry.titleRange), detail: string(entry.detailRange),
            state: entry.state, retired: entry.retired)
    }

    func id(at index: Int) -> RestrictionID {
        RestrictionID(validated: string(entries[index].idRange))
    }

    /// The index of the restriction with this id, comparing bytes in place: no allocation.
    func index(of id: RestrictionID) -> Int? {
        var raw = id.rawValue  // shares the storage; withUTF8 copies only a non-contiguous string
        return raw.withUTF8 { index(ofUTF8: $0) }
    }

    private func index(ofUTF8 id: UnsafeBufferPointer<UInt8>) -> Int? {
        text.withUnsafeBufferPointer { text in
            entries.firstIndex { entry in
                guard Int(entry.idCount) == id.count else { return false }
                // From the end: an app's ids usually share its own id as their prefix.
                var i = id.count, j = Int(entry.offset) + id.count
                while i > 0 {
                    i -= 1; j -= 1
                    if text[j] != id[i] { return false }
                }
                return true
            }
        }
    }

    mutating func setState(_ state: RestrictionState, at index: Int) {
        entries[index].state = state
    }

    /// Room for `entries` more restrictions and `textBytes` more bytes of text, so that a table
    /// built to a known size is allocated once and holds no spare capacity.
    mutating func reserveCapacity(entries: Int, textBytes: Int) {
        self.entries.reserveCapacity(self.entries.count + entries)
        text.reserveCapacity(text.count + textBytes)
    }

    /// Appends a restriction whose strings were validated (see the type's documentation).
    mutating func append(id: RestrictionID, title: String, detail: String, state: RestrictionState, retired: Bool) {
        let offset = text.count
        text += id.rawValue.utf8
        text += title.utf8
        text += detail.utf8
        appendEntry(
            offset: offset, idCount: id.rawValue.utf8.count, titleCount: title.utf8.count,
            detailCount: detail.utf8.count, state: state, retired: retired)
    }

    /// Appends `other`'s restriction at `index`, copying its bytes, retired or not as `retired` says.
    mutating func append(_ index: Int, of other: RestrictionTable, retired: Bool) {
        let entry = other.entries[index]
        let offset = text.count
        text += other.text[entry.idRange.lowerBound..<entry.detailRange.upperBound]
        appendEntry(
            offset: offset, idCount: Int(entry.idCount), titleCount: Int(entry.titleCount),
            detailCount: Int(entry.detailCount), state: entry.state, retired: retired)
    }

    private mutating func appendEntry(
        offset: Int, idCount: Int, titleCount: Int, detailCount: Int,
        state: RestrictionState, retired: Bool
    ) {
        // The limits are checked before a string gets here; past them this is a bug, not input.
        precondition(
            idCount <= KioskWire.Limits.idBytes && titleCount <= KioskWire.Limits.titleBytes
                && detailCount <= KioskWire.Limits.detailBytes && text.count <= UInt32.max,
            "a restriction's text exceeds the limits it was validated against")
        entries.append(
            Entry(
                offset: UInt32(offset), titleCount: UInt16(titleCount), detailCount: UInt16(detailCount),
                idCount: UInt8(idCount), state: state, retired: retired))
    }

    /// Gives back the spare capacity that growing left, for a table built without knowing its
    /// size in advance (one read from the state file): it is kept for as long as kioskd runs.
    mutating func trimCapacity() {
        if text.capacity - text.count > 32 { text = Self.exactCopy(text) }
        if entries.capacity - entries.count > 2 { entries = Self.exactCopy(entries) }
    }

    private static func exactCopy<Element>(_ array: [Element]) -> [Element] {
        // `Array(array)` and `Array(array[...])` would share the old buffer, spare room and all.
        [Element](unsafeUninitializedCapacity: array.count) { buffer, initialized in
            initialized = array.withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
        }
    }

    private func string(_ range: Range<Int>) -> String {
        text.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }
}
