import CGtk

/// What the display's full-screen windows (the prompt's, the drawing's) are made of.
@MainActor enum Widgets {
    /// A full-screen window with the dialog role (a screen reader reads it as one), modal to
    /// AT-SPI (nothing else gets input meanwhile: kioskd holds it), undecorated, the first
    /// monitor's size from the start (in case the compositor neither maximizes nor honours
    /// fullscreen: cage does both, X11 window managers mostly do), with CSS class `css` and an
    /// overlay as its child, which it returns too.
    static func fullScreenDialog(css: String) -> (window: UnsafeMutablePointer<GtkWidget>, overlay: UnsafeMutablePointer<GtkWidget>) {
        let window = kp_window_new_with_role(GTK_ACCESSIBLE_ROLE_DIALOG)!
        kp_set_accessible_modal(window, 1)
        gtk_window_set_decorated(kp_window(window), 0)
        var width: Int32 = 0
        var height: Int32 = 0
        kp_monitor_size(&width, &height)
        if width > 0, height > 0 { gtk_window_set_default_size(kp_window(window), width, height) }
        gtk_widget_add_css_class(window, css)
        let overlay = gtk_overlay_new()!
        // A layout container, nothing to read: GTK 4.8 would name it "GtkOverlay".
        kp_set_accessible_label(overlay, "")
        gtk_window_set_child(kp_window(window), overlay)
        return (window, overlay)
    }

    /// A label that only shows: wrapped, centred, never focused or a target of input.
    static func label(class name: String, role: GtkAccessibleRole = GTK_ACCESSIBLE_ROLE_LABEL)
        -> UnsafeMutablePointer<GtkWidget>
    {
        let label = kp_label_new_with_role(role)!
        gtk_widget_add_css_class(label, name)
        gtk_label_set_wrap(kp_label(label), 1)
        gtk_label_set_justify(kp_label(label), GTK_JUSTIFY_CENTER)
        gtk_widget_set_focusable(label, 0)
        gtk_widget_set_can_target(label, 0)
        return label
    }

    /// The type's unit in pixels, scaled to the screen's height (a 24th of it, at least 14).
    static var unit: Int {
        var width: Int32 = 0
        var height: Int32 = 0
        kp_monitor_size(&width, &height)
        return max(14, Int(min(height, width * 3 / 4)) / 24)
    }
}
