import KioskClient
import PromptScreen
import Testing

/// What kioskd-prompt shows while staff draw a profile's regions (docs/prompt.md § Drawing the
/// regions), from `Drawing`, `DrawingState` and `DrawingBar`: no window without a drawing, the
/// texts (each through the translation), the bar's labels where kioskd reads them, and what a
/// screen reader is told.
@Suite struct DrawingScreenTests {
    static let bar = [
        KioskDrawing.Button(name: "cancel", x: 0.30, y: 0.02, width: 0.12, height: 0.08),
        KioskDrawing.Button(name: "delete", x: 0.44, y: 0.02, width: 0.12, height: 0.08),
        KioskDrawing.Button(name: "done", x: 0.58, y: 0.02, width: 0.12, height: 0.08),
    ]
    static let gear = KioskDrawing.Shape(
        name: "gear", outline: [.init(x: 0.9, y: 0), .init(x: 1, y: 0), .init(x: 1, y: 0.12), .init(x: 0.9, y: 0.12)])

    static func status(drawing: String, _ state: KioskDrawing = KioskDrawing()) -> KioskStatus {
        var status = KioskStatus(sessionState: .active, activeProfile: "map", sessionDeadline: nil, version: "0.1.0")
        status.drawing = drawing
        status.drawingState = state
        return status
    }

    @Test func noWindowWithoutADrawing() {
        #expect(DrawingScreen.scene(status: nil, bar: Self.bar) == nil)
        #expect(DrawingScreen.scene(status: Self.status(drawing: ""), bar: Self.bar) == nil)
    }

    @Test func theTextsTheBarAndTheShapes() throws {
        let drawing = KioskDrawing(shapes: [Self.gear, Self.gear], selected: 1, notice: "crosses")
        let screen = try #require(DrawingScreen.scene(status: Self.status(drawing: "map", drawing), bar: Self.bar))
        #expect(screen.title == "Drawing the locked regions of map")
        #expect(
            screen.hint
                == "Drag to draw a rectangle, or go round an area and back to where you started. Tap a shape to select it.")
        #expect(screen.notice == "The outline crosses itself. Draw it again.")
        #expect(screen.summary == "2 locked regions, gear selected")
        #expect(screen.buttons.map(\.label) == ["Cancel", "Delete", "Done"])
        #expect(screen.buttons.map(\.x) == [0.30, 0.44, 0.58], "where kioskd reads the taps")
        #expect(screen.drawing == drawing)
        let notices = ["crosses", "", "too-small", "a-newer-one"].map {
            DrawingScreen.scene(status: Self.status(drawing: "map", KioskDrawing(notice: $0)), bar: [])?.notice
        }
        #expect(notices == ["The outline crosses itself. Draw it again.", nil, nil, nil], "a shape too small ends the drawing")
        let one = DrawingScreen.scene(
            status: Self.status(drawing: "map", KioskDrawing(shapes: [Self.gear], selected: 5)), bar: [])
        #expect(one?.summary == "1 locked region", "a selection out of range names nothing")
    }

    @Test func everyTextGoesThroughTheTranslation() throws {
        let tr = TranslationTests.marked
        let screen = try #require(
            DrawingScreen.scene(
                status: Self.status(drawing: "map", KioskDrawing(shapes: [Self.gear], selected: 0, notice: "crosses")),
                bar: Self.bar, tr: tr))
        for text in [screen.title, screen.hint, screen.notice] + screen.buttons.map(\.label) {
            #expect(TranslationTests.isMarked(text), "\(String(describing: text))")
        }
        #expect(screen.summary == "«1 locked region», «gear selected»", "the name is the profile's own")
    }

    /// Opening says the title and the count; then each new notice, and the count when it changes;
    /// a stroke's progress says nothing.
    @Test func whatAScreenReaderIsTold() throws {
        let first = try #require(DrawingScreen.scene(status: Self.status(drawing: "map"), bar: Self.bar))
        #expect(DrawingScreen.announcement(from: nil, to: first) == "Drawing the locked regions of map. 0 locked regions")
        let stroking = try #require(
            DrawingScreen.scene(
                status: Self.status(drawing: "map", KioskDrawing(stroke: [.init(x: 0.1, y: 0.1)])), bar: Self.bar))
        #expect(DrawingScreen.announcement(from: first, to: stroking) == nil)
        let crossing = try #require(
            DrawingScreen.scene(status: Self.status(drawing: "map", KioskDrawing(notice: "crosses")), bar: Self.bar))
        #expect(DrawingScreen.announcement(from: stroking, to: crossing) == crossing.notice)
        let added = try #require(
            DrawingScreen.scene(status: Self.status(drawing: "map", KioskDrawing(shapes: [Self.gear])), bar: Self.bar))
        #expect(DrawingScreen.announcement(from: crossing, to: added) == "1 locked region")
    }
}
