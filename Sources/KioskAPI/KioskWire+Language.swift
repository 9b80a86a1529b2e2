extension KioskWire {
    /// Whether `text` is a language as gettext's `LANGUAGE` takes it, the form of a profile's
    /// `[session] language` and of the `Language` property: two or three lowercase letters, then
    /// optionally `_` and a territory (two capitals or three digits) and `@` and a variant (`de`,
    /// `pt_BR`, `es_419`, `sr@latin`). No codeset (kioskd's screens are UTF-8) and nothing that
    /// could name a path: kioskd refuses anything else at its line, and kioskd-prompt ignores
    /// anything else on the bus.
    public static func isLanguage(_ text: String) -> Bool {
        var rest = Substring(text)
        func take(_ allowed: (Character) -> Bool) -> Int {
            let run = rest.prefix(while: allowed)
            rest = rest.dropFirst(run.count)
            return run.count
        }
        func isLower(_ c: Character) -> Bool { c >= "a" && c <= "z" }
        guard (2...3).contains(take(isLower)) else { return false }
        if rest.first == "_" {
            rest = rest.dropFirst()
            let letters = take { $0 >= "A" && $0 <= "Z" }
            let digits = letters == 0 ? take { $0 >= "0" && $0 <= "9" } : 0
            guard letters == 2 || digits == 3 else { return false }
        }
        if rest.first == "@" {
            rest = rest.dropFirst()
            guard (1...16).contains(take(isLower)) else { return false }
        }
        return rest.isEmpty
    }
}
