import CGtk
import KioskClient
import PromptScreen

/// The prompt's one window, full screen, created when the prompt opens and destroyed when it
/// closes: cage 0.1.4 (no layer-shell) maximizes, raises and focuses every new toplevel, and
/// gives the kiosk app its focus back only when that toplevel is destroyed, so a hidden window
/// kept for later would keep the app from its focus.
///
/// Everything in it only shows: kioskd reads the keys and the pad's touches on the raw devices
/// before any compositor, so the pad's keys are labels drawn where `PromptPad` says, not
/// GtkButtons, and the window takes no input (nothing in it is focusable or a target).
///
/// Its accessible tree (AT-SPI, what a screen reader reads; docs/prompt.md, "The accessible
/// tree"): a modal dialog named after the screen's title; each text a label named by what it
/// says; the dots a label named by how many digits were typed ("3 digits typed"), never which;
/// the pad's keys and the offer's "More time" labels with the button role, since touching them
/// does what a button does (kioskd reads the touch).
@MainActor final class PromptWindow {
    private let window: UnsafeMutablePointer<GtkWidget>
    private let overlay: UnsafeMutablePointer<GtkWidget>
    private let text: UnsafeMutablePointer<GtkWidget>
    private let banner: UnsafeMutablePointer<GtkWidget>
    private let title: UnsafeMutablePointer<GtkWidget>
    private let dots: UnsafeMutablePointer<GtkWidget>
    private let message: UnsafeMutablePointer<GtkWidget>
    private let closing: UnsafeMutablePointer<GtkWidget>
    private let button: UnsafeMutablePointer<GtkWidget>
    /// The pad's keys drawn so far, with their rectangles (fractions of the window).
    private var keys: [(widget: UnsafeMutablePointer<GtkWidget>, key: KioskPrompt.Key)] = []
    private var shown: PromptScreen?
    /// The get-child-position handler, which holds this object unretained.
    private var positionHandler: gulong = 0
    /// The words in the display's language (the pad's "OK" and "Cancel", the keys' names).
    private let tr: Translation

    init(tr: Translation) {
        self.tr = tr
        Self.loadStyle()
        (window, overlay) = Widgets.fullScreenDialog(css: "kp-window")
        gtk_window_set_title(kp_window(window), PromptScreen.windowTitle(tr: tr))
        gtk_overlay_set_child(kp_overlay(overlay), gtk_box_new(GTK_ORIENTATION_VERTICAL, 0))

        text = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0)
        gtk_widget_set_valign(text, GTK_ALIGN_CENTER)
        banner = Widgets.label(class: "kp-banner")
        title = Widgets.label(class: "kp-title")
        dots = Widgets.label(class: "kp-dots")
        message = Widgets.label(class: "kp-message")
        closing = Widgets.label(class: "kp-message")
        button = Widgets.label(class: "kp-button", role: GTK_ACCESSIBLE_ROLE_BUTTON)
        gtk_widget_set_halign(button, GTK_ALIGN_CENTER)
        for widget in [banner, title, dots, message, closing, button] { gtk_box_append(kp_box(text), widget) }
        gtk_overlay_add_overlay(kp_overlay(overlay), text)
        positionHandler = kp_connect_child_position(
            overlay,
            { _, child, allocation, data in
                let window = Unmanaged<PromptWindow>.fromOpaque(data!).takeUnretainedValue()
                return MainActor.assumeIsolated { window.place(child!, in: allocation!) } ? 1 : 0
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Shows `screen`, and the pad's keys once they are known. Only what changed is set.
    func show(_ screen: PromptScreen, pad: [KioskPrompt.Key]) {
        let pad = screen.showsPad ? pad : []
        if keys.map(\.key) != pad { draw(pad) }
        guard screen != shown else { return }
        if screen.title != shown?.title {
            gtk_window_set_title(kp_window(window), screen.title)
            kp_set_accessible_label(window, screen.title)
        }
        set(title, screen.title)
        set(button, screen.button)
        // Shown on the passcode screen even before the first digit: its name says "No digits
        // typed" to a screen reader, and the label is there for the count's change events.
        set(dots, screen.dotsLabel.isEmpty ? nil : screen.dots, accessible: screen.dotsLabel)
        set(message, screen.message)
        set(banner, screen.banner, accessible: screen.bannerLabel)
        set(closing, screen.closing)
        if shown == nil {
            gtk_window_fullscreen(kp_window(window))
            gtk_window_present(kp_window(window))
        }
        shown = screen
    }

    /// Tells a screen reader `message` through GTK's announcement (GTK 4.14 and later); false when
    /// the GTK it runs with has none.
    func announce(_ message: String) -> Bool { kp_announce(window, message) != 0 }

    /// Destroys the window (cage gives the app its focus back now). The object is done with.
    func destroy() {
        g_signal_handler_disconnect(overlay, positionHandler)
        gtk_window_destroy(kp_window(window))
    }

    // MARK: layout

    /// `get-child-position`: the text above the pad (the whole window when there is no pad), and
    /// each key at its rectangle. The window is the whole screen, as the pad's fractions are.
    private func place(
        _ child: UnsafeMutablePointer<GtkWidget>, in allocation: UnsafeMutablePointer<GdkRectangle>
    )
        -> Bool
    {
        let width = Double(gtk_widget_get_width(overlay))
        let height = Double(gtk_widget_get_height(overlay))

        func put(_ x: Double, _ y: Double, _ w: Double, _ h: Double) {
            allocation.pointee = GdkRectangle(
                x: Int32(x * width), y: Int32(y * height), width: Int32(w * width), height: Int32(h * height))
        }
        if child == text {
            let top = keys.map(\.key.y).min() ?? 1
            put(0, 0, 1, max(top, 0.2))
            return true
        }
        guard let key = keys.first(where: { $0.widget == child })?.key else { return false }
        put(key.x, key.y, key.width, key.height)
        return true
    }

    private func draw(_ pad: [KioskPrompt.Key]) {
        for old in keys { gtk_overlay_remove_overlay(kp_overlay(overlay), old.widget) }
        keys = pad.map { key in
            let widget = Widgets.label(class: "kp-key", role: GTK_ACCESSIBLE_ROLE_BUTTON)
            let label = PromptScreen.keyLabel(key.label, tr: tr)
            // Words in smaller type, so that "Cancel" and German's "Abbrechen" fit their key.
            if label.count > 2 { gtk_widget_add_css_class(widget, label.count > 6 ? "kp-key-long" : "kp-key-word") }
            gtk_label_set_text(kp_label(widget), label)
            kp_set_accessible_label(widget, PromptScreen.keyName(key.label, tr: tr))
            kp_set_accessible_description(widget, PromptScreen.keyDescription(tr: tr))
            gtk_overlay_add_overlay(kp_overlay(overlay), widget)
            return (widget, key)
        }
    }

    // MARK: widgets

    /// Sets a label's text and its accessible name (the text itself unless told), hiding it
    /// when there is none (a hidden widget is out of the accessible tree too). Both are set only
    /// when one of them changes: each change of a name is an AT-SPI event. The name is set after
    /// the text, which GtkLabel may take as its name.
    private func set(_ label: UnsafeMutablePointer<GtkWidget>, _ text: String?, accessible: String? = nil) {
        gtk_widget_set_visible(label, text == nil ? 0 : 1)
        guard let text else { return }
        let content = [text, accessible ?? text]
        guard contents[label] != content else { return }
        contents[label] = content
        gtk_label_set_text(kp_label(label), text)
        kp_set_accessible_label(label, content[1])
    }

    /// The text and accessible name last set on each label.
    private var contents: [UnsafeMutablePointer<GtkWidget>: [String]] = [:]

    private static var styled = false

    /// High contrast, large type scaled to the screen: white and yellow on black, keys framed in
    /// white. Loaded once, for the display.
    private static func loadStyle() {
        guard !styled else { return }
        styled = true
        let unit = Widgets.unit
        kp_add_css(
            """
            .kp-window { background-color: #000000; }
            .kp-title { color: #ffffff; font-size: \(unit * 4 / 3)px; font-weight: bold; margin: \(unit / 2)px; }
            .kp-dots { color: #ffd700; font-size: \(unit * 2)px; margin: \(unit / 3)px; }
            .kp-message { color: #ffffff; font-size: \(unit)px; margin: \(unit / 4)px; }
            .kp-banner { color: #000000; background-color: #ffffff; font-size: \(unit)px; font-weight: bold;
                         padding: \(unit / 4)px \(unit / 2)px; border-radius: \(unit / 4)px; }
            .kp-key { color: #ffffff; background-color: #202020; border: \(max(2, unit / 8))px solid #ffffff;
                      border-radius: \(unit / 3)px; font-size: \(unit * 3 / 2)px; font-weight: bold; }
            .kp-key-word { font-size: \(unit)px; }
            .kp-key-long { font-size: \(unit * 2 / 3)px; }
            .kp-button { color: #000000; background-color: #ffd700; font-size: \(unit * 3 / 2)px; font-weight: bold;
                         padding: \(unit / 2)px \(unit * 2)px; margin: \(unit / 2)px; border-radius: \(unit / 2)px; }
            """)
    }
}
