import CMoonPangoCairo
import MoonreelComposition
import MoonreelMedia

/// Text drawn for one layer box: the image and where its top-left corner lies relative to
/// the box's top-left corner (negative when an outline or shadow reaches outside the box).
/// The image is trimmed to its ink; `image` is nil when nothing is visible.
package struct RasterizedText: Sendable {
    package let image: RGBAImage?
    package let x: Int
    package let y: Int
}

/// Draws `TextStyle`s with Pango + Cairo, laid out by `TextLayout`. The outline
/// (`strokeWidth` pixels outside the glyph edge) is drawn under the fill, the shadow (a
/// triple box blur of the text's alpha, σ ≈ shadowRadius / 2) under both; shadow offsets
/// are in pixels with y down, so the default (0, -3) lifts the shadow as on iOS.
///
/// Confinement: pango layouts, contexts and font maps are not thread-safe. A rasteriser
/// has its own `TextLayout` and must be used by one thread at a time; give each render
/// thread its own (`LayerRenderer` does).
package final class TextRasterizer {
    private let layouts: TextLayout
    /// Blurred shadow masks of the last few texts. A colour change keeps the shapes: a
    /// karaoke line's sung drawing, or a text whose colour animates, reuses the mask instead
    /// of blurring again.
    private var shadowMasks: [(key: ShadowKey, mask: CairoSurface)] = []

    private struct ShadowKey: Hashable {
        let style: TextStyle
        let box: Size
    }
    /// Longest string drawn, in UTF-8 bytes: layout time grows with it, so it is bounded.
    package static let maxStringBytes = 64 * 1024

    package init() throws { layouts = try TextLayout() }

    /// Draws `style` laid out in a box of `box` pixels. A karaoke style (a `highlightColor`
    /// other than the foreground) is its `KaraokeText` cut at its sung edge.
    package func rasterize(_ style: TextStyle, in box: Size) throws -> RasterizedText {
        if style.karaokeColor != nil {
            guard let karaoke = try rasterizeKaraoke(style, in: box) else { return RasterizedText(image: nil, x: 0, y: 0) }
            return try karaoke.drawn(sung: style.highlightedScalars, fraction: style.highlightFraction)
        }
        guard let canvas = try canvas(for: style, in: box) else { return RasterizedText(image: nil, x: 0, y: 0) }
        let image = try draw(canvas, canvas.style, fill: style.foregroundColor)
        guard let trimmed = try image.trimmedToInk() else { return RasterizedText(image: nil, x: 0, y: 0) }
        return RasterizedText(image: trimmed.image, x: canvas.originX + trimmed.x, y: canvas.originY + trimmed.y)
    }

    /// Draws a karaoke line (`style.karaokeColor` set; its progress is ignored) twice, all
    /// unsung and all sung, on one canvas, with where each scalar and line lies: every step
    /// of its fill is cut from these two. Nil when nothing is visible.
    package func rasterizeKaraoke(_ style: TextStyle, in box: Size) throws -> KaraokeText? {
        guard let sungColor = style.karaokeColor, let canvas = try canvas(for: style, in: box) else { return nil }
        let unsung = try draw(canvas, canvas.style, fill: style.foregroundColor)
        let sung = try draw(canvas, canvas.style, fill: sungColor)
        let ink: PixelBox
        switch (unsung.inkBox(), sung.inkBox()) {
        case (nil, nil): return nil
        case let (a?, b?): ink = a.union(b)
        case let (a?, nil), let (nil, a?): ink = a
        }
        let (x, y) = (canvas.originX + ink.x, canvas.originY + ink.y)
        let geometry = try KaraokeGeometry(measuring: canvas.style, layout: canvas.layout.opaque,
                                           origin: Point(x: canvas.layoutX - Double(x), y: -Double(y)))
        return try KaraokeText(unsung: unsung.cropped(to: ink), sung: sung.cropped(to: ink), x: x, y: y, geometry: geometry)
    }

    /// A text laid out and the canvas it is drawn on, in the box's pixels.
    private struct Canvas {
        /// The style drawn: the one asked for, its font shrunk to fit (`TextLayout.fitted`).
        let style: TextStyle
        let layout: GObjectReference
        let box: Size
        /// Where the layout's origin lies in the box.
        let layoutX: Double
        /// Where lines past `maxLines` begin (layout pixels), when they are left out.
        let visibleBottom: Double?
        let stroke: Double
        let shadow: ShadowGeometry?
        let originX: Int, originY: Int, width: Int, height: Int
    }

    /// The layout of `style` in `box` and a canvas holding its ink, outline and shadow; nil
    /// when nothing can be visible. Throws for sizes and strings out of range.
    private func canvas(for style: TextStyle, in box: Size) throws -> Canvas? {
        guard box.width.isFinite, box.height.isFinite, box.width >= 0, box.height >= 0,
              box.width <= Double(PixelLimits.maxSide), box.height <= Double(PixelLimits.maxSide) else {
            throw EngineError("text box \(box) is not a drawable size")
        }
        // Narrower than a pixel: nothing fits (and Pango would take width 0 as "unbounded").
        guard box.width >= 1, !style.string.isEmpty else { return nil }
        guard style.fontSize.isFinite, style.fontSize > 0, style.fontSize <= 4096 else {
            throw EngineError("font size \(style.fontSize) is out of range (0 < size ≤ 4096)")
        }
        guard style.string.utf8.count <= TextRasterizer.maxStringBytes else {
            throw EngineError("text of \(style.string.utf8.count) bytes is longer than the limit (\(TextRasterizer.maxStringBytes))", kind: .limit)
        }
        let style = try layouts.fitted(style, box: box)
        let layout = try layouts.make(style, box: box)
        let pango = layout.opaque

        var ink = PangoRectangle(), logical = PangoRectangle()
        pango_layout_get_pixel_extents(pango, &ink, &logical)
        guard ink.width > 0, ink.height > 0 else { return nil }
        // Unwrapped, unbounded layouts (width -1) align only among their own lines; the
        // block as a whole is placed in the box here.
        let layoutX = pango_layout_get_width(pango) < 0 ? blockOffset(style.alignment, logical: Double(logical.width), box: box.width) : 0
        let visibleBottom = try bottomOfLastVisibleLine(style, layout: pango)

        let stroke = max(0, style.strokeWidth.isFinite ? style.strokeWidth : 0)
        let shadow = ShadowGeometry(style)
        var inkBox = Box(x0: layoutX + Double(ink.x), y0: Double(ink.y),
                         x1: layoutX + Double(ink.x + ink.width), y1: min(Double(ink.y + ink.height), visibleBottom ?? .infinity))
        inkBox = inkBox.insetBy(-(stroke + 1))
        var canvasBox = inkBox
        if let shadow { canvasBox = canvasBox.union(inkBox.offsetBy(shadow.dx, shadow.dy).insetBy(-Double(shadow.extent + 1))) }
        let (originX, originY) = (Int(canvasBox.x0.rounded(.down)), Int(canvasBox.y0.rounded(.down)))
        return Canvas(style: style, layout: layout, box: box, layoutX: layoutX, visibleBottom: visibleBottom, stroke: stroke, shadow: shadow,
                      originX: originX, originY: originY,
                      width: Int(canvasBox.x1.rounded(.up)) - originX, height: Int(canvasBox.y1.rounded(.up)) - originY)
    }

    /// The whole canvas: shadow, outline, then the glyphs filled with `fill`.
    private func draw(_ canvas: Canvas, _ style: TextStyle, fill: Color) throws -> RGBAImage {
        let pango = canvas.layout.opaque
        let (width, height) = (canvas.width, canvas.height)
        let image = try RGBAImage(width: width, height: height)
        let drawText = { (cr: OpaquePointer) in
            cairo_translate(cr, canvas.layoutX - Double(canvas.originX), -Double(canvas.originY))
            if let visibleBottom = canvas.visibleBottom {
                let far = Double(PixelLimits.maxSide) // every x, and everything above the cut
                cairo_rectangle(cr, -far, -far, 2 * far, far + visibleBottom + canvas.stroke)
                cairo_clip(cr)
            }
            pango_cairo_update_layout(cr, pango)
            if canvas.stroke > 0 {
                pango_cairo_layout_path(cr, pango)
                setSource(cr, style.strokeColor)
                cairo_set_line_width(cr, 2 * canvas.stroke) // the fill covers the inner half
                cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
                cairo_stroke(cr)
            }
            setSource(cr, fill)
            pango_cairo_show_layout(cr, pango)
        }

        let target = try CairoContext(drawingInto: image.view)
        guard let shadow = canvas.shadow else {
            target.draw(drawText)
            return image
        }
        let textSurface = try CairoSurface(format: CAIRO_FORMAT_ARGB32, width: width, height: height)
        try CairoContext(textSurface).draw(drawText)
        let key = ShadowKey(style: Self.shape(of: style, fill: fill), box: canvas.box)
        let mask: CairoSurface
        if let cached = shadowMasks.first(where: { $0.key == key })?.mask {
            mask = cached
        } else {
            mask = try blurredAlpha(of: textSurface, width: width, height: height, radius: shadow.boxRadius)
            shadowMasks.append((key, mask))
            if shadowMasks.count > 8 { shadowMasks.removeFirst() }
        }
        target.draw { cr in
            setSource(cr, style.shadowColor, alphaScale: min(max(style.shadowOpacity, 0), 1))
            cairo_mask_surface(cr, mask.pointer, shadow.dx, shadow.dy)
            cairo_set_source_surface(cr, textSurface.pointer, 0, 0)
            cairo_paint(cr)
        }
        return image
    }

    /// With `maxLines` but no truncation mode, lines past the limit are simply not drawn:
    /// the y where they start (layout pixels), or nil when every line is drawn.
    private func bottomOfLastVisibleLine(_ style: TextStyle, layout: OpaquePointer) throws -> Double? {
        guard style.maxLines > 0, style.truncationMode == .none,
              Int(pango_layout_get_line_count(layout)) > style.maxLines else { return nil }
        guard let iterator = pango_layout_get_iter(layout) else { throw EngineError("cannot walk a text layout", kind: .internal) }
        defer { pango_layout_iter_free(iterator) }
        for _ in 1..<style.maxLines { pango_layout_iter_next_line(iterator) }
        var top: Int32 = 0, bottom: Int32 = 0
        pango_layout_iter_get_line_yrange(iterator, &top, &bottom)
        return Double(bottom) / Double(PANGO_SCALE)
    }

    private func blockOffset(_ alignment: TextAlignment, logical: Double, box: Double) -> Double {
        switch alignment {
        case .center: return ((box - logical) / 2).rounded()
        case .right: return (box - logical).rounded()
        case .left, .justified, .natural: return 0
        }
    }

    /// What a text's alpha depends on: its shapes, outline and the alpha of its fill, not
    /// the colours or a karaoke line's progress (the sung and unsung drawings of a line share
    /// one blurred shadow when their colours are equally opaque).
    private static func shape(of style: TextStyle, fill: Color) -> TextStyle {
        var shape = style
        shape.foregroundColor = Color(red: 0, green: 0, blue: 0, alpha: fill.alpha)
        shape.strokeColor = Color(red: 0, green: 0, blue: 0, alpha: style.strokeColor.alpha)
        (shape.shadowColor, shape.shadowOpacity) = (.black, 1)
        (shape.highlightedScalars, shape.highlightFraction, shape.highlightColor) = (0, 0, nil)
        return shape
    }

    /// The alpha of `surface`, blurred, as an A8 surface of the same size.
    private func blurredAlpha(of surface: CairoSurface, width: Int, height: Int, radius: Int) throws -> CairoSurface {
        let mask = try CairoSurface(format: CAIRO_FORMAT_A8, width: width, height: height)
        surface.withRows { source, sourceStride in
            mask.withRows { alpha, alphaStride in
                for y in 0..<height {
                    for x in 0..<width { alpha[y * alphaStride + x] = source[y * sourceStride + x * 4 + 3] }
                }
                boxBlur(alpha, width: width, height: height, stride: alphaStride, radius: radius, passes: 3)
            }
        }
        return mask
    }
}

/// Where the shadow lies and how far its blur spreads, or nil when it is invisible.
private struct ShadowGeometry {
    let dx: Double, dy: Double
    /// Half-width of each of the three box passes; three passes approximate a Gaussian
    /// with variance boxRadius·(boxRadius + 1).
    let boxRadius: Int
    var extent: Int { 3 * boxRadius }

    init?(_ style: TextStyle) {
        guard style.shadowOpacity > 0, style.shadowColor.alpha > 0,
              style.shadowOffset.width.isFinite, style.shadowOffset.height.isFinite else { return nil }
        dx = min(max(style.shadowOffset.width, -1000), 1000)
        dy = min(max(style.shadowOffset.height, -1000), 1000)
        let sigma = min(max(style.shadowRadius.isFinite ? style.shadowRadius : 0, 0), 200) / 2
        boxRadius = Int((((4 * sigma * sigma + 1).squareRoot() - 1) / 2).rounded())
    }
}

/// An axis-aligned box in fractional pixels.
private struct Box {
    var x0, y0, x1, y1: Double
    func insetBy(_ d: Double) -> Box { Box(x0: x0 + d, y0: y0 + d, x1: x1 - d, y1: y1 - d) }
    func offsetBy(_ dx: Double, _ dy: Double) -> Box { Box(x0: x0 + dx, y0: y0 + dy, x1: x1 + dx, y1: y1 + dy) }
    func union(_ o: Box) -> Box { Box(x0: min(x0, o.x0), y0: min(y0, o.y0), x1: max(x1, o.x1), y1: max(y1, o.y1)) }
}

/// Repeated box blur of an 8-bit plane in place (outside counts as 0), horizontally then
/// vertically; three passes are close to a Gaussian.
func boxBlur(_ plane: UnsafeMutablePointer<UInt8>, width: Int, height: Int, stride: Int, radius: Int, passes: Int) {
    guard radius > 0, width > 0, height > 0 else { return }
    let span = 2 * radius + 1
    var line = [Int](repeating: 0, count: max(width, height))
    var blurred = line
    func blurLine(start: UnsafeMutablePointer<UInt8>, count: Int, step: Int) {
        for i in 0..<count { line[i] = Int(start[i * step]) }
        for _ in 0..<passes {
            var sum = 0
            for i in 0..<min(radius, count) { sum += line[i] }
            for i in 0..<count {
                if i + radius < count { sum += line[i + radius] }
                if i - radius - 1 >= 0 { sum -= line[i - radius - 1] }
                blurred[i] = sum
            }
            for i in 0..<count { line[i] = (blurred[i] + span / 2) / span }
        }
        for i in 0..<count { start[i * step] = UInt8(line[i]) }
    }
    for y in 0..<height { blurLine(start: plane + y * stride, count: width, step: 1) }
    for x in 0..<width { blurLine(start: plane + x, count: height, step: stride) }
}

func setSource(_ cr: OpaquePointer, _ color: Color, alphaScale: Double = 1) {
    let clamp = { (v: Double) in v.isFinite ? min(max(v, 0), 1) : 0 }
    cairo_set_source_rgba(cr, clamp(color.red), clamp(color.green), clamp(color.blue), clamp(color.alpha) * alphaScale)
}
