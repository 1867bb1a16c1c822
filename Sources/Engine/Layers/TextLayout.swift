import CMoonPangoCairo

/// Pango layouts of `TextStyle`s: how every text is laid out, for drawing it
/// (`TextRasterizer`) and for measuring it (a title card's block of lines).
///
/// Layout rules: text starts at the top of the box (as `CATextLayer` draws it) and is
/// aligned horizontally inside the box width; wrapped text breaks at words, then between
/// characters where a word does not fit (CJK has no spaces), `PANGO_WRAP_WORD_CHAR`.
/// Missing glyphs fall back to other installed fonts through fontconfig.
///
/// Confinement: pango layouts, contexts and font maps are not thread-safe; a `TextLayout`
/// has its own font map and context and must be used by one thread at a time.
package final class TextLayout {
    private let fontMap: GObjectReference
    private let context: GObjectReference

    package init() throws {
        fontMap = try GObjectReference(UnsafeMutableRawPointer(pango_cairo_font_map_new()), what: "a font map")
        context = try GObjectReference(UnsafeMutableRawPointer(pango_font_map_create_context(fontMap.pointer.assumingMemoryBound(to: PangoFontMap.self))),
                                       what: "a text context")
        // Grey antialiasing, no hinting: glyphs keep their shapes and positions at any size,
        // which suits video (no subpixel colour fringes, no snapping that jitters when scaled).
        let options = cairo_font_options_create()
        defer { cairo_font_options_destroy(options) }
        cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
        pango_cairo_context_set_font_options(context.opaque, options)
    }

    /// How tall `style` lays out in a box `width` pixels wide (wrapped lines included):
    /// what a block of several text layers needs to stack them without overlap.
    package func measuredHeight(_ style: TextStyle, width: Double) throws -> Double {
        guard width >= 1, width <= Double(PixelLimits.maxSide), !style.string.isEmpty else { return 0 }
        let layout = try make(style, box: Size(width: width, height: Double(PixelLimits.maxSide)))
        var ink = PangoRectangle(), logical = PangoRectangle()
        pango_layout_get_pixel_extents(layout.opaque, &ink, &logical)
        return Double(logical.height)
    }

    /// `style` laid out in a box of `box` pixels (a text taller than the box is not cut here).
    func make(_ style: TextStyle, box: Size) throws -> GObjectReference {
        let layout = try GObjectReference(UnsafeMutableRawPointer(pango_layout_new(context.opaque)), what: "a text layout")
        let pango = layout.opaque

        let font = pango_font_description_new()
        defer { pango_font_description_free(font) }
        pango_font_description_set_family(font, style.fontFamily)
        pango_font_description_set_weight(font, PangoWeight(UInt32(min(max(style.fontWeight, 100), 1000))))
        pango_font_description_set_style(font, style.isItalic ? PANGO_STYLE_ITALIC : PANGO_STYLE_NORMAL)
        pango_font_description_set_absolute_size(font, style.fontSize * Double(PANGO_SCALE))
        pango_layout_set_font_description(pango, font)
        pango_layout_set_text(pango, style.string, -1)

        let truncates = style.truncationMode != .none
        // Unwrapped text that is not truncated keeps its natural width (it may overflow
        // the box, as CATextLayer's does); otherwise Pango works inside the box width.
        if style.isWrapped || truncates {
            pango_layout_set_width(pango, Int32(box.width * Double(PANGO_SCALE)))
        }
        pango_layout_set_wrap(pango, PANGO_WRAP_WORD_CHAR)
        pango_layout_set_ellipsize(pango, ellipsizeMode(style.truncationMode))
        if truncates {
            // Negative height: at most that many lines (per paragraph); positive: fit the box.
            let lines = style.maxLines > 0 ? -Int32(min(style.maxLines, 10_000)) : (style.isWrapped ? Int32(box.height * Double(PANGO_SCALE)) : -1)
            pango_layout_set_height(pango, lines)
        }
        pango_layout_set_alignment(pango, pangoAlignment(style.alignment))
        pango_layout_set_justify(pango, style.alignment == .justified ? 1 : 0)
        // "natural" follows the paragraph's direction (right for Arabic or Hebrew); the
        // explicit alignments do not.
        pango_layout_set_auto_dir(pango, style.alignment == .natural ? 1 : 0)
        if style.lineSpacing.isFinite, style.lineSpacing != 0 {
            pango_layout_set_spacing(pango, Int32(max(min(style.lineSpacing, 4096), -4096) * Double(PANGO_SCALE)))
        }
        return layout
    }

    private func pangoAlignment(_ alignment: TextAlignment) -> PangoAlignment {
        switch alignment {
        case .center: return PANGO_ALIGN_CENTER
        case .right: return PANGO_ALIGN_RIGHT
        case .left, .justified, .natural: return PANGO_ALIGN_LEFT
        }
    }

    private func ellipsizeMode(_ mode: TruncationMode) -> PangoEllipsizeMode {
        switch mode {
        case .none: return PANGO_ELLIPSIZE_NONE
        case .start: return PANGO_ELLIPSIZE_START
        case .middle: return PANGO_ELLIPSIZE_MIDDLE
        case .end: return PANGO_ELLIPSIZE_END
        }
    }
}
