import CGtk
import Glibc
import KioskClient
import PromptScreen

/// The locked touch regions shaded over the app (`LockedRegions`, docs/prompt.md § Seeing
/// locked regions): a window over everything that takes no input and no focus, in which each
/// region is filled with black at its opacity, where `LockedShade` says.
///
/// It runs in a process of its own (`kioskd-prompt --locked-regions`, started by the prompt's
/// process), so that gtk4-layer-shell, which must be loaded before libwayland-client and shims
/// its calls, is never in the process that draws the passcode prompt: a fault in it can cost
/// the shade, never the prompt. Under X11 it is an override-redirect window (no window manager
/// frames, places or focuses it) with an empty input shape, translucent where a compositing
/// manager runs. Where it cannot be drawn so (cage 0.1.4 has no layer-shell; X11 without a
/// compositor has no translucency, and a full-screen window would black out the app) it is not
/// drawn at all: a toplevel there would be raised, focused and maximized over the app.
@MainActor final class LockedRegionsLayer {
    /// Whether the layer can be drawn here, decided once after `gtk_init`: nil when it can, or
    /// the sentence the journal gets when it cannot.
    static func unavailable() -> String? {
        switch String(cString: kp_display_type_name()) {
        case "GdkWaylandDisplay":
            guard kp_layer_shell_loaded() != 0 else {
                return
                    "gtk4-layer-shell is not loaded (libgtk4-layer-shell0, Debian 13 and later): locked regions are not shaded."
            }
            guard kp_layer_shell_supported() != 0 else {
                return
                    "The compositor has no layer-shell protocol (cage): locked regions cannot be shaded over the app, and are not."
            }
            return nil
        case "GdkX11Display":
            guard kp_display_is_composited() != 0 else {
                return
                    "Under X11 without a compositing manager a window cannot be translucent: locked regions are not shaded."
            }
            return nil
        case let other:
            return "The display (\(other)) has no way to shade locked regions over the app: they are not."
        }
    }

    private var window: UnsafeMutablePointer<GtkWidget>?
    private var area: UnsafeMutablePointer<GtkWidget>?
    /// X11: raises the window twice a second. An override-redirect window has no "above" state:
    /// a window mapped or raised later (the app, after a restart) would cover it.
    private var raiser: Ticker?
    private var status: KioskStatus?

    /// Shows the layer for `status` (nil: kioskd is gone), creating or destroying its window.
    func show(_ status: KioskStatus?) {
        self.status = status
        // The fills' existence does not depend on the size: any size tells whether there is a layer.
        guard LockedShade.layer(status: status, width: 1, height: 1) != nil else {
            if window != nil { log("Locked regions: layer removed.") }
            destroy()
            return
        }
        if window == nil {
            create()
            log("Locked regions: layer shown (\(status?.lockedRegions.count ?? 0) regions).")
        }
        if let area { gtk_widget_queue_draw(area) }
    }

    private func create() {
        Self.loadStyle()
        let window = gtk_window_new()!
        gtk_window_set_title(kp_window(window), "Locked regions")
        gtk_window_set_decorated(kp_window(window), 0)
        gtk_widget_add_css_class(window, "kp-shade")
        gtk_widget_set_can_target(window, 0)
        gtk_widget_set_focusable(window, 0)
        let x11 = String(cString: kp_display_type_name()) == "GdkX11Display"
        if x11 {
            // The whole screen, placed by nobody: override-redirect, set before it is mapped.
            var width: Int32 = 0
            var height: Int32 = 0
            kp_monitor_size(&width, &height)
            if width > 0, height > 0 { gtk_window_set_default_size(kp_window(window), width, height) }
        } else if kp_layer_shell_overlay(kp_window(window), "kioskd-locked-regions") == 0 {
            // Before the window is realized, as gtk4-layer-shell requires.
            log("gtk4-layer-shell lacks a function kioskd-prompt needs: locked regions are not shaded.")
            gtk_window_destroy(kp_window(window))
            return
        }
        let area = gtk_drawing_area_new()!
        gtk_widget_set_can_target(area, 0)
        gtk_widget_set_hexpand(area, 1)
        gtk_widget_set_vexpand(area, 1)
        gtk_drawing_area_set_draw_func(
            kp_drawing_area(area),
            { _, cairo, width, height, data in
                guard let cairo, let data else { return }
                let layer = Unmanaged<LockedRegionsLayer>.fromOpaque(data).takeUnretainedValue()
                MainActor.assumeIsolated { layer.draw(cairo, width: Double(width), height: Double(height)) }
            }, Unmanaged.passUnretained(self).toOpaque(), nil)
        gtk_window_set_child(kp_window(window), area)
        gtk_widget_realize(window)
        if x11, kp_x11_override_redirect(window) == 0 {
            log("Could not make the locked regions' window override-redirect: locked regions are not shaded.")
            gtk_window_destroy(kp_window(window))
            return
        }
        kp_set_empty_input_region(window)
        gtk_window_present(kp_window(window))
        self.window = window
        self.area = area
        if x11 { raiser = Ticker(every: 500) { kp_x11_raise(window) } }
    }

    /// Fills each region (even-odd, as kioskd's filter judges a touch) in black at its opacity.
    private func draw(_ cairo: OpaquePointer, width: Double, height: Double) {
        guard let shade = LockedShade.layer(status: status, width: width, height: height) else { return }
        cairo_set_fill_rule(cairo, CAIRO_FILL_RULE_EVEN_ODD)
        for fill in shade.fills {
            guard let first = fill.outline.first else { continue }
            cairo_new_path(cairo)
            cairo_move_to(cairo, first.x, first.y)
            for corner in fill.outline.dropFirst() { cairo_line_to(cairo, corner.x, corner.y) }
            cairo_close_path(cairo)
            cairo_set_source_rgba(cairo, 0, 0, 0, fill.opacity)
            cairo_fill(cairo)
        }
    }

    private func destroy() {
        raiser?.cancel()
        raiser = nil
        if let window { gtk_window_destroy(kp_window(window)) }
        window = nil
        area = nil
    }

    private static var styled = false
    /// The window itself is clear: only the fills are drawn.
    private static func loadStyle() {
        guard !styled else { return }
        styled = true
        kp_add_css("window.kp-shade { background: none; box-shadow: none; }")
    }
}
