/// The two string helpers kioskctl took from Foundation's NSString bridge, which
/// FoundationEssentials (what kioskctl links, without ICU) does not have.
extension StringProtocol {
    /// The text with spaces added, or characters cut, to exactly `width` characters: what
    /// `padding(toLength: width, withPad: " ", startingAt: 0)` did.
    func padded(to width: Int) -> String {
        count >= width ? String(prefix(width)) : String(self) + String(repeating: " ", count: width - count)
    }

    /// The text without leading and trailing whitespace (spaces, tabs, newlines): what
    /// `trimmingCharacters(in: .whitespacesAndNewlines)` did.
    func trimmed() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
            let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}
