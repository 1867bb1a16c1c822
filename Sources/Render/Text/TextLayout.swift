import CMoonPangoCairo
import Foundation
import MoonreelComposition
import MoonreelMedia

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
    /// `FontFiles.generation` when the font map last looked at the fonts.
    private var fontGeneration = FontFiles.generation.load(ordering: .relaxed)

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

    /// The size `style`'s text takes as drawn (`CALayer.preferredFrameSize`): each paragraph
    /// on one line, or wrapped at `wrapWidth` when it is wrapped or truncated there. A layer
    /// of that size shows it whole (`fit` says `.whole`).
    package func measuredSize(_ style: TextStyle, wrapWidth: Double?) throws -> Size {
        guard !style.string.isEmpty else { return Size(width: 0, height: 0) }
        let side = Double(PixelLimits.maxSide)
        let layout = try make(style, box: Size(width: min(max(wrapWidth ?? side, 1), side), height: side))
        var ink = PangoRectangle(), logical = PangoRectangle()
        pango_layout_get_pixel_extents(layout.opaque, &ink, &logical)
        return Size(width: Double(logical.width), height: Double(logical.height))
    }

    /// How much of its text a style shows in a box.
    package enum Fit: Equatable {
        /// All of it, inside the box.
        case whole
        /// Cut: an ellipsis, or lines past `maxLines` left out.
        case truncated
        /// All of it, but running past the box (drawn outside it).
        case overflows
    }

    /// How `style` comes out in a box of `box` pixels.
    package func fit(_ style: TextStyle, box: Size) throws -> Fit {
        let layout = try make(style, box: box)
        let pango = layout.opaque
        if pango_layout_is_ellipsized(pango) != 0 { return .truncated }
        if style.maxLines > 0, style.truncationMode == .none, Int(pango_layout_get_line_count(pango)) > style.maxLines { return .truncated }
        var ink = PangoRectangle(), logical = PangoRectangle()
        pango_layout_get_pixel_extents(pango, &ink, &logical)
        // Past the box: the lines, and the glyphs drawn in them, not only the lines' spacing
        // (a 60 px "GO" in an 80 px box, its line 87 px high with Noto Sans CJK's spacing,
        // was said to overflow, drawn whole). Half a pixel of slack: extents are whole
        // pixels, boxes need not be.
        let past = { (rectangle: PangoRectangle) in
            Double(rectangle.x) < -0.5 || Double(rectangle.y) < -0.5
                || Double(rectangle.x + rectangle.width) > box.width + 0.5 || Double(rectangle.y + rectangle.height) > box.height + 0.5
        }
        return past(logical) && past(ink) ? .overflows : .whole
    }

    /// The characters of `style`'s text that no installed font has: Pango draws each as a
    /// box with its code in hex, so a lyric with an emoji shows a box where the emoji was.
    package func missingCharacters(_ style: TextStyle) throws -> [Unicode.Scalar] {
        let unknown = { (style: TextStyle) throws -> Int32 in
            let layout = try self.make(style, box: Size(width: 4096, height: 4096))
            return withExtendedLifetime(layout) { pango_layout_get_unknown_glyphs_count(layout.opaque) }
        }
        guard try unknown(style) > 0 else { return [] }
        // Which ones: each character laid out alone (only for the rare text that has some).
        var missing: [Unicode.Scalar] = []
        for scalar in Set(style.string.unicodeScalars).sorted(by: { $0.value < $1.value }) where !scalar.properties.isWhitespace {
            var alone = style
            alone.string = String(scalar)
            if try unknown(alone) > 0 { missing.append(scalar) }
        }
        return missing
    }

    /// The family `style`'s text is drawn in when none of the families it names (a
    /// comma-separated list, as Pango reads it) is installed, so fontconfig chose another
    /// (an iOS port's "Helvetica Neue" drawn in DejaVu Sans); nil when one is installed or the
    /// name is a generic one (sans-serif, serif, monospace), which means "whatever suits".
    package func substitutedFamily(_ style: TextStyle) throws -> String? {
        let asked = style.fontFamily.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        guard !asked.isEmpty, !asked.contains(where: Self.genericFamilies.contains) else { return nil }
        _ = try make(style, box: Size(width: 1, height: 1))   // the font map sees fonts added since
        let installed = installedFamilies()
        guard !asked.contains(where: installed.contains) else { return nil }
        if let known = families?.substitutes[style.fontFamily] { return known }
        let used = loadedFamily(style.fontFamily)
        families?.substitutes[style.fontFamily] = used
        return used
    }

    /// The weight (CSS scale) `style`'s text is drawn at when its family has no face within
    /// 100 of the one asked (Noto Sans CJK, installed Regular and Bold, draws "thin" at 400);
    /// nil when it has one, or when the family is not installed (`substitutedFamily` says so).
    package func drawnWeight(_ style: TextStyle) -> Int? {
        let asked = min(max(style.fontWeight, 100), 1000)
        _ = try? make(style, box: Size(width: 1, height: 1))   // the font map sees fonts added since
        if let known = weights[WeightKey(family: style.fontFamily, weight: asked, isItalic: style.isItalic)] { return known }
        let font = pango_font_description_new()
        defer { pango_font_description_free(font) }
        pango_font_description_set_family(font, style.fontFamily)
        pango_font_description_set_weight(font, PangoWeight(UInt32(asked)))
        pango_font_description_set_style(font, style.isItalic ? PANGO_STYLE_ITALIC : PANGO_STYLE_NORMAL)
        pango_font_description_set_absolute_size(font, 12 * Double(PANGO_SCALE))
        guard let loaded = pango_context_load_font(context.opaque, font) else { return nil }
        defer { g_object_unref(loaded) }
        let used = pango_font_describe(loaded)
        defer { pango_font_description_free(used) }
        let weight = Int(pango_font_description_get_weight(used).rawValue)
        let drawn = abs(weight - asked) >= 100 ? weight : nil
        weights[WeightKey(family: style.fontFamily, weight: asked, isItalic: style.isItalic)] = drawn
        return drawn
    }

    private struct WeightKey: Hashable {
        let family: String
        let weight: Int
        let isItalic: Bool
    }
    /// What `drawnWeight` found, per family and weight asked.
    private var weights: [WeightKey: Int?] = [:]

    /// The family fontconfig gives for `family`.
    private func loadedFamily(_ family: String) -> String {
        let font = pango_font_description_new()
        defer { pango_font_description_free(font) }
        pango_font_description_set_family(font, family)
        pango_font_description_set_absolute_size(font, 12 * Double(PANGO_SCALE))
        guard let loaded = pango_context_load_font(context.opaque, font) else { return "another font" }
        defer { g_object_unref(loaded) }
        let used = pango_font_describe(loaded)
        defer { pango_font_description_free(used) }
        return pango_font_description_get_family(used).map { String(cString: $0) } ?? "another font"
    }

    /// Names fontconfig takes as "a font of this kind", not as a family to find.
    private static let genericFamilies: Set<String> = ["sans", "sans-serif", "serif", "monospace", "mono", "system-ui", "cursive", "fantasy", "emoji"]

    /// The installed families, lowercased (read again when fonts were added).
    private func installedFamilies() -> Set<String> {
        if let known = families, known.generation == fontGeneration { return known.installed }
        var list: UnsafeMutablePointer<UnsafeMutablePointer<PangoFontFamily>?>?
        var count: Int32 = 0
        pango_font_map_list_families(fontMap.pointer.assumingMemoryBound(to: PangoFontMap.self), &list, &count)
        defer { g_free(list) }
        let names = Set((0..<Int(max(count, 0))).compactMap { index in
            list?[index].flatMap { pango_font_family_get_name($0) }.map { String(cString: $0).lowercased() }
        })
        families = (fontGeneration, names, [:])
        return names
    }
    /// The installed families (lowercased) and the family drawn for each name that is not
    /// one, for one generation of fonts.
    private var families: (generation: Int, installed: Set<String>, substitutes: [String: String])?

    /// `style` at the largest whole-pixel font size, down to `fontSize × minimumScaleFactor`,
    /// at which its text is not cut in `box` (found by halving); the style itself when it
    /// is not cut or may not shrink, the smallest size when even that is cut.
    package func fitted(_ style: TextStyle, box: Size) throws -> TextStyle {
        guard style.minimumScaleFactor < 1, box.width >= 1, !style.string.isEmpty, try fit(style, box: box) == .truncated else { return style }
        var sized = style
        sized.fontSize = max(1, (style.fontSize * max(style.minimumScaleFactor, 0.01)).rounded(.down))
        guard try fit(sized, box: box) != .truncated else { return sized }
        var (fits, cut) = (sized.fontSize, style.fontSize)
        while cut - fits > 1 {
            sized.fontSize = ((fits + cut) / 2).rounded(.down)
            if try fit(sized, box: box) == .truncated { cut = sized.fontSize } else { fits = sized.fontSize }
        }
        sized.fontSize = fits
        return sized
    }

    /// `style` laid out in a box of `box` pixels (a text taller than the box is not cut here).
    func make(_ style: TextStyle, box: Size) throws -> GObjectReference {
        let generation = FontFiles.generation.load(ordering: .relaxed)
        if generation != fontGeneration {
            // A font file was added since: the font map forgets what fonts it had found.
            pango_fc_font_map_config_changed(OpaquePointer(fontMap.pointer))
            pango_context_changed(context.opaque)
            fontGeneration = generation
            weights = [:]
        }
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
