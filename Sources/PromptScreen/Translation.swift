import KioskClient

/// The display's words in the visitor's language, the GNOME way: each English text is a gettext
/// message id (extracted from this module into po/kioskd-prompt.pot, `make pot`), looked up in
/// the language's catalogue (kioskd-prompt supplies gettext's lookups; docs/prompt.md#language).
///
/// Texts with values in them are C format strings, as gettext's tools expect (`%s`, `%d`, or
/// `%1$s` when a translation reorders them), so that `msgfmt --check` refuses a translation
/// that drops or swaps one. The values are filled in here, after the lookup.
public struct Translation: Sendable {
    private let lookup: @Sendable (String) -> String
    private let lookupPlural: @Sendable (String, String, Int) -> String

    /// - Parameters:
    ///   - lookup: a message id's translation (the id itself when there is none), as `gettext`.
    ///   - plural: the translation of the form for `n` (singular id, plural id, n), as `ngettext`.
    public init(
        lookup: @escaping @Sendable (String) -> String,
        plural: @escaping @Sendable (String, String, Int) -> String
    ) {
        self.lookup = lookup
        self.lookupPlural = plural
    }

    /// English as written: no lookup.
    public static let english = Translation(lookup: { $0 }, plural: { one, other, n in n == 1 ? one : other })

    /// `message` in the language, its placeholders filled with `arguments` in turn.
    public func callAsFunction(_ message: String, _ arguments: String...) -> String {
        Self.format(lookup(message), arguments)
    }

    /// The form of `one`/`other` for `n` in the language (German has two, Polish three), its
    /// first placeholder filled with `n`, the rest with `arguments`.
    public func plural(_ one: String, _ other: String, _ n: Int, _ arguments: String...) -> String {
        Self.format(lookupPlural(one, other, n), [String(n)] + arguments)
    }

    /// A C format string's `%s` and `%d` replaced by `arguments` in turn, `%N$s` and `%N$d` by
    /// the Nth, `%%` by `%`; any other `%` is left as it is, and so is a placeholder with no
    /// argument (a broken translation shows, it does not crash).
    public static func format(_ template: String, _ arguments: [String]) -> String {
        guard template.contains("%") else { return template }
        var out = ""
        var next = 0
        var rest = Substring(template)
        while let percent = rest.firstIndex(of: "%") {
            out += rest[..<percent]
            var spec = rest[rest.index(after: percent)...]
            if spec.first == "%" {
                out += "%"
                rest = spec.dropFirst()
                continue
            }
            var index: Int?
            let digits = spec.prefix { $0 >= "0" && $0 <= "9" }
            if !digits.isEmpty, spec.dropFirst(digits.count).first == "$", let n = Int(digits), n >= 1 {
                index = n - 1
                spec = spec.dropFirst(digits.count + 1)
            }
            guard let kind = spec.first, kind == "s" || kind == "d" else {
                out += "%"
                rest = rest[rest.index(after: percent)...]
                continue
            }
            let chosen = index ?? next
            if index == nil { next += 1 }
            out +=
                chosen < arguments.count
                ? arguments[chosen] : String(rest[percent..<spec.index(after: spec.startIndex)])
            rest = spec.dropFirst()
        }
        return out + rest
    }
}

extension Translation {
    /// The language to show: the profile's (`Language`) when set and a language
    /// (``KioskWire/isLanguage(_:)``: anything else on the bus is ignored), else the kiosk's locale as
    /// gettext would read it from `environment` (`LANGUAGE`, then the first of `LC_ALL`,
    /// `LC_MESSAGES`, `LANG`, without its codeset: `de_DE.UTF-8` is `de_DE`); nil for English as
    /// written (none set, or the C or POSIX locale).
    public static func language(profile: String, environment: [String: String]) -> String? {
        if KioskWire.isLanguage(profile) { return profile }
        if let list = environment["LANGUAGE"], !list.isEmpty { return list }
        guard
            let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap({ environment[$0] }).first(where: {
                !$0.isEmpty
            })
        else { return nil }
        let modifier = locale.firstIndex(of: "@").map { locale[$0...] } ?? ""
        let name = locale.prefix { $0 != "." && $0 != "@" }
        return name.isEmpty || name == "C" || name == "POSIX" ? nil : String(name + modifier)
    }

    /// The `Language:` of a gettext catalogue's header (what gettext gives for the empty id), as
    /// a voice's language: its first part, lowercased (`pt_BR` speaks `pt`); nil without one.
    public static func headerLanguage(_ header: String) -> String? {
        for line in header.split(separator: "\n") where line.hasPrefix("Language:") {
            let value = line.dropFirst("Language:".count).drop { $0 == " " }
            let primary = value.prefix { $0 != "_" && $0 != "@" && $0 != "-" && $0 != " " }.lowercased()
            return primary.isEmpty ? nil : primary
        }
        return nil
    }
}
