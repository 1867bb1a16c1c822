import CMoonPangoCairo

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
    /// Blurred shadow masks of the last few texts. A karaoke fill changes colours, not
    /// shapes: each frame of a sung line reuses its mask instead of blurring again.
    private var shadowMasks: [(key: ShadowKey, mask: CairoSurface)] = []

    private struct ShadowKey: Hashable {
        let style: TextStyle
        let box: Size
    }
    /// Longest string drawn, in UTF-8 bytes: layout time grows with it, so it is bounded.
    package static let maxStringBytes = 64 * 1024

    package init() throws { layouts = try TextLayout() }

    /// Draws `style` laid out in a box of `box` pixels.
    package func rasterize(_ style: TextStyle, in box: Size) throws -> RasterizedText {
        guard box.width.isFinite, box.height.isFinite, box.width >= 0, box.height >= 0,
              box.width <= Double(PixelLimits.maxSide), box.height <= Double(PixelLimits.maxSide) else {
            throw EngineError("text box \(box) is not a drawable size")
        }
        // Narrower than a pixel: nothing fits (and Pango would take width 0 as "unbounded").
        guard box.width >= 1, !style.string.isEmpty else { return RasterizedText(image: nil, x: 0, y: 0) }
        guard style.fontSize.isFinite, style.fontSize > 0, style.fontSize <= 4096 else {
            throw EngineError("font size \(style.fontSize) is out of range (0 < size ≤ 4096)")
        }
        guard style.string.utf8.count <= TextRasterizer.maxStringBytes else {
            throw EngineError("text of \(style.string.utf8.count) bytes is longer than the limit (\(TextRasterizer.maxStringBytes))", kind: .limit)
        }
        let layout = try layouts.make(style, box: box)
        let pango = layout.opaque

        var ink = PangoRectangle(), logical = PangoRectangle()
        pango_layout_get_pixel_extents(pango, &ink, &logical)
        guard ink.width > 0, ink.height > 0 else { return RasterizedText(image: nil, x: 0, y: 0) }
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
        let width = Int(canvasBox.x1.rounded(.up)) - originX, height = Int(canvasBox.y1.rounded(.up)) - originY
        let image = try RGBAImage(width: width, height: height)

        let drawText = { (cr: OpaquePointer) in
            cairo_translate(cr, layoutX - Double(originX), -Double(originY))
            if let visibleBottom {
                let far = Double(PixelLimits.maxSide) // every x, and everything above the cut
                cairo_rectangle(cr, -far, -far, 2 * far, far + visibleBottom + stroke)
                cairo_clip(cr)
            }
            pango_cairo_update_layout(cr, pango)
            if stroke > 0 {
                pango_cairo_layout_path(cr, pango)
                setSource(cr, style.strokeColor)
                cairo_set_line_width(cr, 2 * stroke) // the fill covers the inner half
                cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
                cairo_stroke(cr)
            }
            setSource(cr, style.foregroundColor)
            pango_cairo_show_layout(cr, pango)
            if let partial = self.partlySung(style, layout: pango) {
                // The scalar being sung, filled from its leading edge: the text drawn again in
                // the sung colour, clipped to that part of its box.
                cairo_save(cr)
                cairo_rectangle(cr, partial.x, partial.y, partial.width, partial.height)
                cairo_clip(cr)
                setSource(cr, style.highlightColor ?? style.foregroundColor)
                pango_cairo_show_layout(cr, pango)
                cairo_restore(cr)
            }
        }

        let target = try CairoContext(drawingInto: image.view)
        if let shadow {
            let textSurface = try CairoSurface(format: CAIRO_FORMAT_ARGB32, width: width, height: height)
            try CairoContext(textSurface).draw(drawText)
            let key = ShadowKey(style: Self.shape(of: style), box: box)
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
        } else {
            target.draw(drawText)
        }
        guard let trimmed = try image.trimmedToInk() else { return RasterizedText(image: nil, x: 0, y: 0) }
        return RasterizedText(image: trimmed.image, x: originX + trimmed.x, y: originY + trimmed.y)
    }

    /// The sung part of the scalar after the highlighted ones (layout pixels), or nil.
    private func partlySung(_ style: TextStyle, layout: OpaquePointer) -> Rect? {
        guard style.highlightColor != nil, style.highlightFraction > 0,
              style.highlightedScalars < style.string.unicodeScalars.count else { return nil }
        let index = style.string.unicodeScalars.prefix(style.highlightedScalars).reduce(0) { $0 + UTF8.width($1) }
        var box = PangoRectangle()
        pango_layout_index_to_pos(layout, Int32(index), &box)
        let scale = Double(PANGO_SCALE)
        // Right-to-left scalars have a negative width: their leading edge is on the right.
        let (x, width) = (Double(box.x) / scale, Double(box.width) / scale)
        let sung = width * style.highlightFraction
        return Rect(x: sung >= 0 ? x : x + sung, y: Double(box.y) / scale, width: abs(sung), height: Double(box.height) / scale)
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

    /// What a text's alpha depends on: the style without its karaoke progress when the sung
    /// and unsung colours are equally opaque (the glyphs' coverage is then the same).
    private static func shape(of style: TextStyle) -> TextStyle {
        guard (style.highlightColor?.alpha ?? style.foregroundColor.alpha) == style.foregroundColor.alpha else { return style }
        var shape = style
        shape.highlightedScalars = 0
        shape.highlightFraction = 0
        shape.highlightColor = nil
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
