import CGtk
import KioskClient
import PromptScreen

/// The window shown while staff draw a profile's locked regions (docs/prompt.md § Drawing the
/// regions): full screen, see-through where the compositor blends windows (the frozen app shows
/// dimmed behind the shapes), the shapes as kioskd publishes them shaded grey with a white edge
/// (the selected one yellow), the stroke being drawn in yellow, the bar's buttons where kioskd
/// reads their taps, and at the bottom what to do and why a stroke added nothing.
///
/// Like the prompt's window it only shows: kioskd reads the touches on the devices, so nothing
/// in it takes input, and it is created when the drawing starts and destroyed when it ends
/// (cage gives the app its focus back then).
@MainActor final class DrawingWindow {
    private let window: UnsafeMutablePointer<GtkWidget>
    private let overlay: UnsafeMutablePointer<GtkWidget>
    private let area: UnsafeMutablePointer<GtkWidget>
    private let text: UnsafeMutablePointer<GtkWidget>
    private let title: UnsafeMutablePointer<GtkWidget>
    private let hint: UnsafeMutablePointer<GtkWidget>
    private let notice: UnsafeMutablePointer<GtkWidget>
    private var buttons: [(widget: UnsafeMutablePointer<GtkWidget>, button: DrawingScreen.Button)] = []
    private var shown: DrawingScreen?
    private var positionHandler: gulong = 0

    init() {
        Self.loadStyle()
        (window, overlay) = Widgets.fullScreenDialog(css: "kp-drawing")
        area = gtk_drawing_area_new()
        gtk_widget_set_can_target(area, 0)
        gtk_overlay_set_child(kp_overlay(overlay), area)
        text = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0)
        gtk_widget_add_css_class(text, "kp-drawing-text")
        title = Widgets.label(class: "kp-drawing-title")
        hint = Widgets.label(class: "kp-drawing-hint")
        notice = Widgets.label(class: "kp-drawing-notice")
        for widget in [title, hint, notice] { gtk_box_append(kp_box(text), widget) }
        gtk_overlay_add_overlay(kp_overlay(overlay), text)
        gtk_drawing_area_set_draw_func(
            kp_drawing_area(area),
            { _, cairo, width, height, data in
                let window = Unmanaged<DrawingWindow>.fromOpaque(data!).takeUnretainedValue()
                MainActor.assumeIsolated { window.paint(cairo!, Double(width), Double(height)) }
            }, Unmanaged.passUnretained(self).toOpaque(), nil)
        positionHandler = kp_connect_child_position(
            overlay,
            { _, child, allocation, data in
                let window = Unmanaged<DrawingWindow>.fromOpaque(data!).takeUnretainedValue()
                return MainActor.assumeIsolated { window.place(child!, in: allocation!) } ? 1 : 0
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    func show(_ screen: DrawingScreen) {
        if buttons.map(\.button) != screen.buttons { drawButtons(screen.buttons) }
        if screen.title != shown?.title {
            gtk_window_set_title(kp_window(window), screen.title)
            gtk_label_set_text(kp_label(title), screen.title)
        }
        kp_set_accessible_label(window, screen.title + ". " + screen.summary)
        gtk_label_set_text(kp_label(hint), screen.hint)
        gtk_widget_set_visible(notice, screen.notice == nil ? 0 : 1)
        gtk_label_set_text(kp_label(notice), screen.notice ?? "")
        if shown?.drawing != screen.drawing { gtk_widget_queue_draw(area) }
        if shown == nil {
            gtk_window_fullscreen(kp_window(window))
            gtk_window_present(kp_window(window))
        }
        shown = screen
    }

    func announce(_ message: String) -> Bool { kp_announce(window, message) != 0 }

    func destroy() {
        g_signal_handler_disconnect(overlay, positionHandler)
        gtk_drawing_area_set_draw_func(kp_drawing_area(area), nil, nil, nil)
        gtk_window_destroy(kp_window(window))
    }

    // MARK: drawing

    /// The shapes, shaded with a white edge (the selected one's edge yellow and wider), then the
    /// stroke being drawn, in yellow: fractions of the window, which is the whole screen.
    private func paint(_ cairo: OpaquePointer, _ width: Double, _ height: Double) {
        guard let drawing = shown?.drawing else { return }
        let unit = max(2, min(width, height) / 200)
        for (index, shape) in drawing.shapes.enumerated() where shape.outline.count >= 3 {
            path(cairo, shape.outline, width, height, closed: true)
            cairo_set_source_rgba(cairo, 0.55, 0.55, 0.55, 0.6)
            cairo_fill_preserve(cairo)
            if index == drawing.selected {
                cairo_set_source_rgb(cairo, 1.0, 0.843, 0.0)
                cairo_set_line_width(cairo, unit * 2)
            } else {
                cairo_set_source_rgb(cairo, 1, 1, 1)
                cairo_set_line_width(cairo, unit)
            }
            cairo_stroke(cairo)
        }
        if drawing.stroke.count >= 2 {
            path(cairo, drawing.stroke, width, height, closed: false)
            cairo_set_source_rgb(cairo, 1.0, 0.843, 0.0)
            cairo_set_line_width(cairo, unit * 1.5)
            cairo_set_line_join(cairo, CAIRO_LINE_JOIN_ROUND)
            cairo_stroke(cairo)
        }
    }

    private func path(
        _ cairo: OpaquePointer, _ points: [KioskDrawing.Point], _ width: Double, _ height: Double, closed: Bool
    ) {
        cairo_new_path(cairo)
        for (index, point) in points.enumerated() {
            let (x, y) = (point.x * width, point.y * height)
            if index == 0 { cairo_move_to(cairo, x, y) } else { cairo_line_to(cairo, x, y) }
        }
        if closed { cairo_close_path(cairo) }
    }

    // MARK: layout

    /// The text along the bottom; each button at its rectangle.
    private func place(_ child: UnsafeMutablePointer<GtkWidget>, in allocation: UnsafeMutablePointer<GdkRectangle>)
        -> Bool
    {
        let width = Double(gtk_widget_get_width(overlay))
        let height = Double(gtk_widget_get_height(overlay))
        func put(_ x: Double, _ y: Double, _ w: Double, _ h: Double) {
            allocation.pointee = GdkRectangle(
                x: Int32(x * width), y: Int32(y * height), width: Int32(w * width), height: Int32(h * height))
        }
        if child == text {
            put(0.1, 0.78, 0.8, 0.2)
            return true
        }
        guard let button = buttons.first(where: { $0.widget == child })?.button else { return false }
        put(button.x, button.y, button.width, button.height)
        return true
    }

    private func drawButtons(_ bar: [DrawingScreen.Button]) {
        for old in buttons { gtk_overlay_remove_overlay(kp_overlay(overlay), old.widget) }
        buttons = bar.map { button in
            let widget = Widgets.label(class: "kp-drawing-button", role: GTK_ACCESSIBLE_ROLE_BUTTON)
            gtk_label_set_text(kp_label(widget), button.label)
            kp_set_accessible_label(widget, button.label)
            gtk_overlay_add_overlay(kp_overlay(overlay), widget)
            return (widget, button)
        }
    }

    private static var styled = false

    /// See-through black over the app; white and yellow text on black, buttons framed in white.
    private static func loadStyle() {
        guard !styled else { return }
        styled = true
        let unit = Widgets.unit
        kp_add_css(
            """
            .kp-drawing { background-color: rgba(0, 0, 0, 0.35); }
            .kp-drawing-text { background-color: rgba(0, 0, 0, 0.8); border-radius: \(unit / 3)px; padding: \(unit / 4)px; }
            .kp-drawing-title { color: #ffffff; font-size: \(unit)px; font-weight: bold; }
            .kp-drawing-hint { color: #ffffff; font-size: \(unit * 2 / 3)px; }
            .kp-drawing-notice { color: #ffd700; font-size: \(unit * 2 / 3)px; font-weight: bold; }
            .kp-drawing-button { color: #ffffff; background-color: #202020; border: \(max(2, unit / 8))px solid #ffffff;
                                 border-radius: \(unit / 3)px; font-size: \(unit * 2 / 3)px; font-weight: bold; }
            """)
    }
}
