/// Splits a state file, fed in chunks as it is read, into the elements of
/// `state.registry.applications` — handed over one by one as each ends — and the *outline*:
/// the rest of the document, with that array left empty (`"applications":[]`).
///
/// Why: decoded whole, a state of 1,000 apps × 50 restrictions holds the file's 7.5 MiB and
/// Foundation's parse of it (about 9 MiB more) while the registry is being built, which made
/// the daemon's peak memory half as large again as what it keeps. Split, `JSONDecoder` parses
/// one app at a time, and the peak is the registry plus one chunk and one app.
///
/// It parses nothing: it finds where strings, containers and the array's elements begin and
/// end, and `JSONDecoder` decodes every piece. The pieces put back together are the file, so
/// they are all valid exactly when the file is, and decode to the same values. Anything this
/// type does not recognise with certainty — a path key written with an escape or written twice,
/// `applications` not an array, an empty element, a byte outside a string that is not JSON's
/// (a byte-order mark, UTF-16, a raw control character) — throws ``Unrecognized``, and the
/// caller decodes the whole file instead, so `JSONDecoder` alone decides what is accepted.
struct ApplicationSplitter {
    /// The file is not one this type splits with certainty; decode it whole.
    struct Unrecognized: Error {}

    /// The document without the elements of the applications array (complete after ``finish()``).
    private(set) var outline: [UInt8] = []
    /// The bytes of the element being read, with the whitespace around it.
    private var element: [UInt8] = []
    private var elementHasValue = false
    private var elementCount = 0

    /// The open containers, `{` or `[`, outermost first.
    private var stack: [UInt8] = []
    /// How many of the open containers are on the path root → `state` → `registry` →
    /// `applications` (4: inside the array); the path's containers are the outermost ones.
    private var pathDepth = 0
    /// Whether the path key of each object on the path (`state`, `registry`, `applications`)
    /// was seen: a second one is a duplicate key, which this type leaves to `JSONDecoder`.
    private var pathKeySeen = [false, false, false]
    private var arrayFound = false
    private var arrayClosed = false
    /// The next value is the path's next container.
    private var pathValuePending = false
    /// In an object, the next string is a key.
    private var expectingKey = false
    private var inString = false
    private var escaped = false
    /// A key of an object on the path is being read into `key`.
    private var readingPathKey = false
    private var key: [UInt8] = []
    private var keyIsPathKey = false
    private var started = false
    private var rootClosed = false

    /// The deepest nesting split; a deeper file is decoded whole (a state file nests 8 deep).
    static let maxDepth = 64

    private static let pathKeys: [[UInt8]] = [Array("state".utf8), Array("registry".utf8), Array("applications".utf8)]

    init() {}

    /// Reads `chunk`, the next bytes of the file, calling `onElement` with each element of the
    /// applications array that ends in it (bytes that are not the whole element stay for later).
    mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>, onElement: ([UInt8]) throws -> Void) throws {
        // Bytes are copied in runs: `runStart` is where the current run began, and it goes to
        // the element while inside the array, to the outline otherwise.
        var runStart = 0
        var i = 0
        let count = chunk.count
        func flush(to end: Int) {
            guard end > runStart else { return }
            let run = UnsafeBufferPointer(rebasing: chunk[runStart..<end])
            if inArray { element.append(contentsOf: run) } else { outline.append(contentsOf: run) }
            runStart = end
        }
        while i < count {
            if inString {
                if !escaped && !readingPathKey {
                    // Most of the file is string contents: skip to the next byte that matters.
                    while i < count, chunk[i] >= 0x20, chunk[i] != UInt8(ascii: "\""), chunk[i] != UInt8(ascii: "\\") {
                        i += 1
                    }
                    if i == count { break }
                }
                let byte = chunk[i]
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if readingPathKey { readingPathKey = false; try endKey() }
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                    if readingPathKey { throw Unrecognized() }  // `JSONDecoder` unescapes keys
                } else if byte < 0x20 {
                    throw Unrecognized()
                } else if readingPathKey {
                    key.append(byte)
                }
                i += 1
                continue
            }
            let byte = chunk[i]
            if Self.isWhitespace(byte) { i += 1; continue }
            // One document, starting as this type knows one: no byte-order mark, UTF-8.
            if rootClosed { throw Unrecognized() }
            if !started {
                guard byte == UInt8(ascii: "{") else { throw Unrecognized() }
                started = true
            }
            if pathValuePending {
                pathValuePending = false
                let opensArray = pathDepth == 3
                guard byte == (opensArray ? UInt8(ascii: "[") : UInt8(ascii: "{")) else { throw Unrecognized() }
                if opensArray {
                    // The outline's run ends with the `[`; what follows is the array's.
                    flush(to: i + 1)
                    pathDepth = 4
                    arrayFound = true
                    stack.append(byte)
                    i += 1
                    continue
                }
                pathDepth += 1
            }
            let atArrayLevel = inArray && stack.count == 4
            switch byte {
            case UInt8(ascii: "\""):
                if atArrayLevel { elementHasValue = true }
                inString = true
                if stack.last == UInt8(ascii: "{") && expectingKey {
                    expectingKey = false
                    if stack.count == pathDepth && pathDepth <= 3 {
                        readingPathKey = true
                        key.removeAll(keepingCapacity: true)
                    }
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if atArrayLevel { elementHasValue = true }
                if stack.isEmpty { pathDepth = 1 }
                // `JSONDecoder` refuses deep nesting, and a piece sits 3 levels shallower than in the
                // file: past a depth no real state reaches, leave the file to it whole.
                guard stack.count < Self.maxDepth else { throw Unrecognized() }
                stack.append(byte)
                expectingKey = byte == UInt8(ascii: "{")
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard let open = stack.last, open == (byte == UInt8(ascii: "}") ? UInt8(ascii: "{") : UInt8(ascii: "["))
                else {
                    throw Unrecognized()
                }
                if atArrayLevel {
                    // The array ends: its last element too, unless it had none.
                    flush(to: i)
                    if elementHasValue || elementCount > 0 {
                        try endElement(onElement)
                    } else {
                        element.removeAll(keepingCapacity: true)
                    }
                    arrayClosed = true
                }
                if stack.count == pathDepth { pathDepth -= 1 }
                stack.removeLast()
                if stack.isEmpty { rootClosed = true }
                expectingKey = false
            case UInt8(ascii: ","):
                if atArrayLevel {
                    flush(to: i)
                    try endElement(onElement)
                    runStart = i + 1  // the comma is the array's, not an element's
                } else if stack.last == UInt8(ascii: "{") {
                    expectingKey = true
                }
            case UInt8(ascii: ":"):
                if keyIsPathKey {
                    keyIsPathKey = false
                    pathValuePending = true
                }
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
                // Numbers, `true`, `false`, `null` (and anything `JSONDecoder` will refuse).
                if atArrayLevel { elementHasValue = true }
            default:
                throw Unrecognized()
            }
            i += 1
        }
        flush(to: count)
    }

    /// Checks that the document ended and its applications array was found whole.
    mutating func finish() throws {
        guard started, stack.isEmpty, rootClosed, !inString, arrayFound, arrayClosed else { throw Unrecognized() }
    }

    // MARK: Parts

    /// Inside the applications array: its bytes are elements' (or the commas between them).
    private var inArray: Bool { pathDepth == 4 }

    private mutating func endKey() throws {
        let level = stack.count - 1  // 0: the root's keys, 1: state's, 2: registry's
        guard key == Self.pathKeys[level] else { return }
        if pathKeySeen[level] { throw Unrecognized() }
        pathKeySeen[level] = true
        keyIsPathKey = true
    }

    private mutating func endElement(_ onElement: ([UInt8]) throws -> Void) throws {
        // `[a,,b]` and `[a,]` are not JSON; whether `JSONDecoder` takes them is its call.
        guard elementHasValue else { throw Unrecognized() }
        try onElement(element)
        element.removeAll(keepingCapacity: true)
        elementHasValue = false
        elementCount += 1
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
