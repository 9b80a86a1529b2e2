import Foundation
import KioskCore
import Testing

/// What staff's strokes draw (docs/profiles.md § Drawing the regions at the kiosk): rectangles,
/// outlines, taps that select and buttons, and the strokes that add nothing.
@Suite struct RegionDrawingTests {
    typealias P = Profile.Point

    static let gear = Profile.Region(name: "settings gear", shape: .rect(x: 0.9, y: 0.0, width: 0.1, height: 0.12))

    /// A stroke through `points` by contact 1; the outcome of its end.
    @discardableResult
    func stroke(_ drawing: inout RegionDrawing, _ points: [P], contact: Int = 1) -> RegionDrawing.Outcome {
        _ = drawing.touchDown(contact: contact, at: points[0])
        for point in points.dropFirst() { _ = drawing.touchMove(contact: contact, to: point) }
        return drawing.touchUp(contact: contact)
    }

    /// A straight drag from `a` to `b` in small steps.
    func drag(_ a: P, _ b: P, steps: Int = 20) -> [P] {
        (0...steps).map { i in
            let t = Double(i) / Double(steps)
            return P(x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t)
        }
    }

    /// A circle of `count` points around (cx, cy), closed back near its start.
    func circle(_ cx: Double, _ cy: Double, _ r: Double, count: Int = 400) -> [P] {
        (0...count).map { i in
            let a = Double(i) / Double(count) * 2 * Double.pi
            return P(x: cx + r * cos(a), y: cy + r * sin(a))
        }
    }

    @Test func aDragDrawsTheRectangleFromItsStartToItsEnd() {
        var drawing = RegionDrawing(regions: [])
        #expect(stroke(&drawing, drag(P(x: 0.6, y: 0.7), P(x: 0.2, y: 0.5))) == .changed)
        #expect(drawing.shapes.map(\.region) == [Profile.Region(name: "drawn 1", shape: .rect(x: 0.2, y: 0.5, width: 0.4, height: 0.2))])
        #expect(drawing.regions == [.new(Profile.Region(name: "drawn 1", shape: .rect(x: 0.2, y: 0.5, width: 0.4, height: 0.2)))])
        #expect(drawing.stroke.isEmpty)
    }

    @Test func aLoopBackToItsStartIsAnOutlineOfAtMost32Corners() throws {
        var drawing = RegionDrawing(regions: [])
        stroke(&drawing, circle(0.5, 0.5, 0.2))
        let shape = try #require(drawing.shapes.first?.region.shape)
        guard case .polygon(let points) = shape else {
            Issue.record("not an outline: \(shape)")
            return
        }
        #expect(points.count >= 8 && points.count <= RegionDrawing.maxOutlinePoints)
        // Every corner lies on the circle (within the simplification's tolerance).
        for p in points {
            let r = ((p.x - 0.5) * (p.x - 0.5) + (p.y - 0.5) * (p.y - 0.5)).squareRoot()
            #expect(abs(r - 0.2) < 0.01)
        }
        // The outline parses back as the profile would read it.
        let text = try ProfileRegionEdit.apply(drawing.regions, to: "app = \"a.b\"\n", file: "p.toml")
        #expect(try ProfileParser.parse(source: text, file: "p.toml").touch.lockedRegions == drawing.shapes.map(\.region))
    }

    @Test func anOutlineThatCrossesItselfAddsNothingAndSaysWhy() {
        var drawing = RegionDrawing(regions: [])
        // A figure eight: out along one diagonal, back across the other.
        let eight = drag(P(x: 0.2, y: 0.2), P(x: 0.6, y: 0.6)) + drag(P(x: 0.6, y: 0.6), P(x: 0.6, y: 0.2)).dropFirst()
            + drag(P(x: 0.6, y: 0.2), P(x: 0.2, y: 0.6)).dropFirst() + drag(P(x: 0.2, y: 0.6), P(x: 0.21, y: 0.21)).dropFirst()
        #expect(stroke(&drawing, Array(eight)) == .changed)
        #expect(drawing.shapes.isEmpty)
        #expect(drawing.notice == .crosses)
    }

    @Test func aShapeSmallerThanAFingertipEndsTheDrawing() {
        var drawing = RegionDrawing(regions: [])
        stroke(&drawing, drag(P(x: 0.5, y: 0.5), P(x: 0.7, y: 0.6)))
        #expect(stroke(&drawing, drag(P(x: 0.5, y: 0.7), P(x: 0.7, y: 0.72))) == .refused(.tooSmall))
        #expect(drawing.shapes.count == 1, "nothing added")
        var narrow = RegionDrawing(regions: [])
        #expect(stroke(&narrow, drag(P(x: 0.5, y: 0.2), P(x: 0.52, y: 0.6))) == .refused(.tooSmall))
        var fits = RegionDrawing(regions: [])
        #expect(stroke(&fits, drag(P(x: 0.5, y: 0.2), P(x: 0.53, y: 0.23))) == .changed, "0.03 a side is enough")
    }

    @Test func anOutlineThatCrossesItselfAfterANoticeClearsIt() {
        var drawing = RegionDrawing(regions: [])
        let eight = drag(P(x: 0.2, y: 0.2), P(x: 0.6, y: 0.6)) + drag(P(x: 0.6, y: 0.6), P(x: 0.6, y: 0.2)).dropFirst()
            + drag(P(x: 0.6, y: 0.2), P(x: 0.2, y: 0.6)).dropFirst() + drag(P(x: 0.2, y: 0.6), P(x: 0.21, y: 0.21)).dropFirst()
        stroke(&drawing, Array(eight))
        #expect(drawing.notice == .crosses)
        stroke(&drawing, drag(P(x: 0.5, y: 0.5), P(x: 0.7, y: 0.6)))
        #expect(drawing.shapes.count == 1)
        #expect(drawing.notice == .none, "the next shape clears the notice")
    }

    @Test func noMoreShapesThanAProfileHolds() {
        var drawing = RegionDrawing(regions: [])
        for i in 0..<RegionDrawing.maxShapes {
            let y = 0.1 + Double(i % 8) * 0.1, x = 0.1 + Double(i / 8) * 0.1
            stroke(&drawing, drag(P(x: x, y: y), P(x: x + 0.05, y: y + 0.05)))
        }
        #expect(drawing.shapes.count == RegionDrawing.maxShapes)
        #expect(stroke(&drawing, drag(P(x: 0.1, y: 0.1), P(x: 0.5, y: 0.5))) == .refused(.tooMany))
        #expect(drawing.shapes.count == RegionDrawing.maxShapes)
    }

    @Test func aTapSelectsTheShapeUnderItAndDeleteRemovesIt() {
        var drawing = RegionDrawing(regions: [Self.gear])
        stroke(&drawing, drag(P(x: 0.2, y: 0.5), P(x: 0.6, y: 0.7)))
        #expect(stroke(&drawing, [P(x: 0.95, y: 0.05), P(x: 0.955, y: 0.05)]) == .changed)
        #expect(drawing.selected == 0)
        // Tapped again: unselected; off every shape: nothing selected.
        stroke(&drawing, [P(x: 0.95, y: 0.05)])
        #expect(drawing.selected == nil)
        stroke(&drawing, [P(x: 0.4, y: 0.6)])
        #expect(drawing.selected == 1)
        stroke(&drawing, [P(x: 0.1, y: 0.9)])
        #expect(drawing.selected == nil)
        // Delete with nothing selected does nothing.
        #expect(drawing.press(.delete) == .none)
        stroke(&drawing, [P(x: 0.95, y: 0.05)])
        // The bar's Delete button.
        #expect(stroke(&drawing, [P(x: 0.50, y: 0.06)]) == .changed)
        #expect(drawing.shapes.map(\.region.name) == ["drawn 1"])
        #expect(drawing.regions == [.new(drawing.shapes[0].region)])
    }

    @Test func doneKeepsTheProfilesRegionsByIndexAndCancelEnds() {
        var drawing = RegionDrawing(regions: [Self.gear, Self.gear])
        stroke(&drawing, [P(x: 0.95, y: 0.05)])
        #expect(drawing.selected == 1, "the topmost of two shapes under the finger")
        _ = drawing.press(.delete)
        stroke(&drawing, drag(P(x: 0.2, y: 0.5), P(x: 0.6, y: 0.7)))
        let drawn = drawing.shapes[1].region
        #expect(stroke(&drawing, [P(x: 0.62, y: 0.05)]) == .done([.kept(0), .new(drawn)]))
        #expect(drawing.press(.done) == .done([.kept(0), .new(drawn)]))
        #expect(stroke(&drawing, [P(x: 0.35, y: 0.05)]) == .cancelled)
        #expect(drawing.press(.cancel) == .cancelled)
    }

    /// A second finger down while one draws changes nothing; the first one's stroke goes on.
    @Test func onlyTheFirstFingerDraws() {
        var drawing = RegionDrawing(regions: [])
        _ = drawing.touchDown(contact: 1, at: P(x: 0.2, y: 0.2))
        #expect(drawing.touchDown(contact: 2, at: P(x: 0.8, y: 0.8)) == .none)
        #expect(drawing.touchMove(contact: 2, to: P(x: 0.9, y: 0.9)) == .none)
        _ = drawing.touchMove(contact: 1, to: P(x: 0.5, y: 0.5))
        #expect(drawing.touchUp(contact: 2) == .none)
        _ = drawing.touchUp(contact: 1)
        #expect(drawing.shapes.map(\.region.shape) == [.rect(x: 0.2, y: 0.2, width: 0.3, height: 0.3)])
    }

    @Test func drawnNamesSkipThoseTaken() {
        var drawing = RegionDrawing(regions: [Profile.Region(name: "drawn 1", shape: .rect(x: 0, y: 0.5, width: 0.1, height: 0.1))])
        stroke(&drawing, drag(P(x: 0.2, y: 0.5), P(x: 0.6, y: 0.7)))
        #expect(drawing.shapes.last?.region.name == "drawn 2")
    }
}
