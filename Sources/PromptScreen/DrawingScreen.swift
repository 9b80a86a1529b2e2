import KioskClient

/// What kioskd-prompt shows while staff draw a profile's locked regions (`Drawing`,
/// `DrawingState`, `DrawingBar`; docs/prompt.md § Drawing the regions): pure, as
/// ``PromptScreen``, so that every text is tested without a display. The shapes, the stroke and
/// the bar are drawn where kioskd says, in fractions of the screen: kioskd reads the touches on
/// the devices, and the bar's buttons are only labels where it reads their taps.
public struct DrawingScreen: Hashable, Sendable {
    /// A button of the bar: its label and where it is.
    public struct Button: Hashable, Sendable {
        public var label: String
        public var x: Double, y: Double, width: Double, height: Double
    }

    /// The window's title and the first line of the text.
    public var title: String
    /// How to draw.
    public var hint: String
    /// Why the last stroke added nothing; nil when it did.
    public var notice: String?
    /// What a screen reader says of the shapes: how many regions, and which is selected.
    public var summary: String
    public var buttons: [Button]
    public var drawing: KioskDrawing

    /// The screen while staff draw (`status.drawing` is a profile); nil otherwise.
    public static func scene(
        status: KioskStatus?, bar: [KioskDrawing.Button], tr: Translation = .english
    ) -> DrawingScreen? {
        guard let status, !status.drawing.isEmpty else { return nil }
        let drawing = status.drawingState
        var summary = tr.plural("%d locked region", "%d locked regions", drawing.shapes.count)
        if let selected = drawing.selected, drawing.shapes.indices.contains(selected) {
            // TRANSLATORS: after the count of regions; %s is a region's name from the profile, "legend".
            summary += ", " + tr("%s selected", drawing.shapes[selected].name)
        }
        return DrawingScreen(
            // TRANSLATORS: %s is the profile's name, "museum-map".
            title: tr("Drawing the locked regions of %s", status.drawing),
            hint: tr(
                "Drag to draw a rectangle, or go round an area and back to where you started. Tap a shape to select it."
            ),
            notice: notice(drawing.notice, tr: tr), summary: summary,
            buttons: bar.map { Button(label: label(of: $0.name, tr: tr), x: $0.x, y: $0.y, width: $0.width, height: $0.height) },
            drawing: drawing)
    }

    /// A bar button's label: "Cancel", "Delete", "Done"; a name this display does not know as it is.
    static func label(of name: String, tr: Translation) -> String {
        switch name {
        case "cancel": tr("Cancel")
        case "delete": tr("Delete")
        case "done": tr("Done")
        default: name
        }
    }

    /// `DrawingState`'s notice in words; nil for none (or one this display does not know).
    static func notice(_ code: String, tr: Translation) -> String? {
        switch code {
        case "crosses": tr("The outline crosses itself. Draw it again.")
        default: nil
        }
    }

    /// What a screen reader is told when the screen changes from `previous`: the title and the
    /// count when it opens, a new notice, the count when it changes.
    public static func announcement(from previous: DrawingScreen?, to next: DrawingScreen) -> String? {
        guard let previous else { return next.title + ". " + next.summary }
        if let notice = next.notice, notice != previous.notice { return notice }
        if next.summary != previous.summary { return next.summary }
        return nil
    }
}
