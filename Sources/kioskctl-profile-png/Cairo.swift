import CCairo

/// What cairo said went wrong: `cairo_status_to_string(3)`'s words.
struct CairoError: Error, CustomStringConvertible {
    var status: cairo_status_t
    var description: String { String(cString: cairo_status_to_string(status)) }
}

/// An ARGB32 or RGB24 image surface, owned (destroyed with this value's last reference).
final class ImageSurface {
    let surface: OpaquePointer

    private init(_ surface: OpaquePointer) throws(CairoError) {
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            throw CairoError(status: status)
        }
        self.surface = surface
    }

    deinit { cairo_surface_destroy(surface) }

    /// A blank ARGB32 surface. The corresponding C call is `cairo_image_surface_create`.
    convenience init(width: Int, height: Int) throws(CairoError) {
        try self.init(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)))
    }

    /// The PNG image in `bytes`, decoded by cairo (libpng). Anything but a PNG is an error
    /// (`CAIRO_STATUS_READ_ERROR` or `CAIRO_STATUS_PNG_ERROR`). The corresponding C call is
    /// `cairo_image_surface_create_from_png_stream`.
    convenience init(png bytes: [UInt8]) throws(CairoError) {
        let source = ByteSource(bytes)
        let surface = cairo_image_surface_create_from_png_stream(
            { closure, data, length in
                let source = Unmanaged<ByteSource>.fromOpaque(closure!).takeUnretainedValue()
                return source.read(into: data!, count: Int(length))
            }, Unmanaged.passUnretained(source).toOpaque())
        withExtendedLifetime(source) {}
        try self.init(surface!)
    }

    var width: Int { Int(cairo_image_surface_get_width(surface)) }
    var height: Int { Int(cairo_image_surface_get_height(surface)) }

    /// The surface encoded as PNG. The corresponding C call is `cairo_surface_write_to_png_stream`.
    func png() throws(CairoError) -> [UInt8] {
        let sink = ByteSink()
        let status = cairo_surface_write_to_png_stream(
            surface,
            { closure, data, length in
                let sink = Unmanaged<ByteSink>.fromOpaque(closure!).takeUnretainedValue()
                sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
                return CAIRO_STATUS_SUCCESS
            }, Unmanaged.passUnretained(sink).toOpaque())
        guard status == CAIRO_STATUS_SUCCESS else { throw CairoError(status: status) }
        return withExtendedLifetime(sink) { sink.bytes }
    }
}

/// The bytes cairo's PNG reader pulls from.
private final class ByteSource {
    let bytes: [UInt8]
    var offset = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func read(into data: UnsafeMutablePointer<UInt8>, count: Int) -> cairo_status_t {
        guard count <= bytes.count - offset else { return CAIRO_STATUS_READ_ERROR }
        bytes.withUnsafeBufferPointer { data.update(from: $0.baseAddress! + offset, count: count) }
        offset += count
        return CAIRO_STATUS_SUCCESS
    }
}

/// The bytes cairo's PNG writer pushes.
private final class ByteSink {
    var bytes: [UInt8] = []
}

/// A drawing context on an ``ImageSurface``. The corresponding C calls are cairo_*(cr, …).
final class DrawingContext {
    let cr: OpaquePointer
    let target: ImageSurface

    init(_ target: ImageSurface) throws(CairoError) {
        let cr = cairo_create(target.surface)!
        let status = cairo_status(cr)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_destroy(cr)
            throw CairoError(status: status)
        }
        self.cr = cr
        self.target = target
    }

    deinit { cairo_destroy(cr) }

    func setColour(_ red: Double, _ green: Double, _ blue: Double, _ alpha: Double) {
        cairo_set_source_rgba(cr, red, green, blue, alpha)
    }

    func paint() { cairo_paint(cr) }

    /// The closed polygons as one path (`cairo_move_to`, `cairo_line_to`, `cairo_close_path`).
    func path(_ polygons: [[(x: Double, y: Double)]]) {
        cairo_new_path(cr)
        for polygon in polygons {
            guard let first = polygon.first else { continue }
            cairo_move_to(cr, first.x, first.y)
            for point in polygon.dropFirst() { cairo_line_to(cr, point.x, point.y) }
            cairo_close_path(cr)
        }
    }

    /// Fills the path with the even-odd rule and keeps it (`cairo_fill_preserve`).
    func fillEvenOddPreserve() {
        cairo_set_fill_rule(cr, CAIRO_FILL_RULE_EVEN_ODD)
        cairo_fill_preserve(cr)
    }

    func stroke(width: Double) {
        cairo_set_line_width(cr, width)
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_MITER)
        cairo_stroke(cr)
    }

    /// Bold sans-serif at `size` pixels (cairo's toy text API, through fontconfig).
    func font(size: Double) {
        cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        cairo_set_font_size(cr, size)
    }

    /// How far `text` advances in the current font (`cairo_text_extents`).
    func advance(of text: String) -> Double {
        var extents = cairo_text_extents_t()
        cairo_text_extents(cr, text, &extents)
        return extents.x_advance
    }

    /// `text` as a path at (x, y), its baseline's left end (`cairo_text_path`).
    func textPath(_ text: String, x: Double, y: Double) {
        cairo_new_path(cr)
        cairo_move_to(cr, x, y)
        cairo_text_path(cr, text)
    }

    func fill() {
        cairo_set_fill_rule(cr, CAIRO_FILL_RULE_WINDING)
        cairo_fill(cr)
    }

    func strokePreserve(width: Double) {
        cairo_set_line_width(cr, width)
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
        cairo_stroke_preserve(cr)
    }

    /// What went wrong while drawing, if anything (`cairo_status`).
    func check() throws(CairoError) {
        let status = cairo_status(cr)
        guard status == CAIRO_STATUS_SUCCESS else { throw CairoError(status: status) }
    }
}
