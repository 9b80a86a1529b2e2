import CGtk
import Glibc
import PromptScreen

/// The display's language: gettext's catalogues of the `kioskd-prompt` domain, the language the
/// profile names (`Language`) while a session runs, else the kiosk's locale
/// (docs/prompt.md#language).
///
/// The language is given to gettext through `LANGUAGE`, which it reads before the locale's own
/// `LC_MESSAGES`, so that a kiosk whose `LANG` names a locale nobody generated (no `locales`
/// package: the locale stays "C") is still shown its language. gettext ignores `LANGUAGE` in the
/// "C" locale, so messages are put in C.UTF-8 (glibc's own, always there) in that case.
@MainActor final class Language {
    nonisolated static let domain = "kioskd-prompt"

    /// The kiosk's own language (its locale), from the environment kioskd-prompt started with.
    let kiosk: String?
    /// The language in use now; nil: English as written.
    private(set) var current: String?

    init(localeDirectory: String, environment: [String: String]) {
        kiosk = Translation.language(profile: "", environment: environment)
        bindtextdomain(Self.domain, localeDirectory)
        bind_textdomain_codeset(Self.domain, "UTF-8")
        if let messages = setlocale(LC_MESSAGES, nil).map({ String(cString: $0) }),
            messages == "C" || messages == "POSIX"
        {
            setlocale(LC_MESSAGES, "C.UTF-8")
        }
        use(kiosk)
    }

    /// The profile's language for the session ("" or nil: the kiosk's). Says whether it changed.
    @discardableResult func follow(profile: String?) -> Bool {
        let wanted = Translation.language(profile: profile ?? "", environment: [:]) ?? kiosk
        guard wanted != current else { return false }
        use(wanted)
        return true
    }

    private func use(_ language: String?) {
        if let language { setenv("LANGUAGE", language, 1) } else { unsetenv("LANGUAGE") }
        kp_gettext_language_changed()
        current = language
    }

    /// Lookups in the domain's catalogue for the language in use. gettext hands back the id's
    /// own pointer when there is no translation: it is read while the id's C string still lives.
    let translation = Translation(
        lookup: { message in message.withCString { String(cString: dgettext(Language.domain, $0)) } },
        plural: { one, other, n in
            one.withCString { one in
                other.withCString { other in
                    String(cString: dngettext(Language.domain, one, other, UInt(clamping: n)))
                }
            }
        })

    /// The language of the catalogue in use (its header's `Language:`, "de"), nil when there is
    /// none (English as written): the voice that speaks what it shows.
    var voice: String? {
        // gettext's translation of the empty message id is the catalogue's header; without a
        // catalogue it is the id's own pointer, read while the id's C string still lives.
        let header = "".withCString { String(cString: dgettext(Self.domain, $0)) }
        return Translation.headerLanguage(header)
    }
}
