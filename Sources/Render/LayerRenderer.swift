import CMoonPangoCairo
import MoonreelComposition
import MoonreelMedia

/// Draws `LayerSnapshot` trees, as `AVVideoCompositionCoreAnimationTool` does with a
/// CALayer tree: the composed video frame fills the video layer's bounds (placed by its
/// `contentsGravity`, `resize` by default) and every other layer is drawn around it.
///
/// Two ways to use it per output frame:
/// - `overlaySprites(for:)` (fast path): when the video layer is opaque, covers the whole
///   output and nothing under it can show, the layers above it become a few cached
///   `Sprite`s that `blend(_:onto:)` puts straight onto the decoded yuv420p frame,
///   touching only their rectangles. Returns nil when the tree does not qualify.
/// - `render(_:video:into:)` (general path): the whole tree, with any transforms, drawn
///   with cairo onto a full-frame BGRA canvas over opaque black.
///
/// Cost: text is laid out once per distinct style and box size (a karaoke line twice, sung
/// and unsung, whatever its progress: see `KaraokeText`), images are decoded once, and each
/// overlay subtree is drawn once per distinct look (position, translation and opacity are
/// applied when blending, so moving and fading layers reuse their sprite; a group that
/// only holds its sublayers gives theirs, so one changing line does not redraw the rest);
/// all in LRU caches bounded by `cacheBytes`, which also drop what no frame has used for
/// `framesKept` frames when each frame starts with `beginFrame()` (memory follows what is
/// on screen). Work per frame depends only on the layers in the snapshot given.
///
/// Confinement: a renderer holds cairo/pango state and unlocked caches; it belongs to one
/// thread at a time. Give each render thread its own.
package final class LayerRenderer {
    package let renderSize: Size
    /// Pixel size of canvases and frames; layer coordinates are scaled from `renderSize`.
    package let outputWidth: Int
    package let outputHeight: Int
    private let scale: (x: Double, y: Double)
    private let rasterizer: TextRasterizer
    private let texts: LRUCache<TextKey, DrawnText>
    private let images: LRUCache<String, RGBAImage>
    private let sprites: LRUCache<LayerSnapshot, RasterizedText>
    private let blender: SpriteBlender
    private let filterRenderer = FilterRenderer()

    private struct TextKey: Hashable {
        let style: TextStyle
        let box: Size
    }

    /// A text as cached: one drawing, or a karaoke line's two (nil: no ink), whatever its progress.
    private enum DrawnText {
        case plain(RasterizedText)
        case karaoke(KaraokeText?)
    }

    package init(renderSize: Size, outputWidth: Int? = nil, outputHeight: Int? = nil, cacheBytes: Int = 256 << 20) throws {
        guard renderSize.width.isFinite, renderSize.height.isFinite, renderSize.width >= 1, renderSize.height >= 1 else {
            throw EngineError("render size \(renderSize) is not a drawable size")
        }
        let width = outputWidth ?? Int(renderSize.width.rounded()), height = outputHeight ?? Int(renderSize.height.rounded())
        try PixelLimits.check(width: width, height: height, what: "output size")
        (self.renderSize, self.outputWidth, self.outputHeight) = (renderSize, width, height)
        scale = (Double(width) / renderSize.width, Double(height) / renderSize.height)
        rasterizer = try TextRasterizer()
        // Budget shares: text and flattened overlays are what lyric jobs accumulate.
        texts = LRUCache(budget: cacheBytes / 4)
        images = LRUCache(budget: cacheBytes / 4)
        sprites = LRUCache(budget: cacheBytes / 4)
        blender = SpriteBlender(cacheBytes: cacheBytes / 4)
    }

    /// Frames a cached drawing outlives its last use: a layer hidden for up to a second (at
    /// 30 fps) comes back without being drawn again, while lyric lines and karaoke steps that
    /// are over free their memory instead of filling the budget.
    private static let framesKept: UInt64 = 30

    /// Bytes the caches hold now (drawings, images, text, prepared sprites).
    package var cachedBytes: Int { texts.totalBytes + images.totalBytes + sprites.totalBytes + blender.cachedBytes }

    /// Starts an output frame: call it once per frame, before drawing it, so the caches
    /// age by frames (a frame drawn by `overlaySprites` and then `render` is still one).
    package func beginFrame() {
        texts.startRound(droppingUnusedFor: Self.framesKept)
        images.startRound(droppingUnusedFor: Self.framesKept)
        sprites.startRound(droppingUnusedFor: Self.framesKept)
        blender.startRound(droppingUnusedFor: Self.framesKept)
    }

    // MARK: General path

    /// Draws the whole tree onto `canvas` (premultiplied BGRA of the output size), which is
    /// first filled with opaque black. `video` is the composed frame for the video layer
    /// (opaque; any size, placed by the layer's `contentsGravity`); nil leaves it empty.
    package func render(_ root: LayerSnapshot, video: BGRAPixels?, into canvas: BGRAPixels) throws {
        guard canvas.width == outputWidth, canvas.height == outputHeight else {
            throw EngineError("canvas is \(canvas.width)×\(canvas.height), expected \(outputWidth)×\(outputHeight)", kind: .internal)
        }
        try CairoContext(drawingInto: canvas).draw { cr in
            cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
            cairo_set_source_rgba(cr, 0, 0, 0, 1)
            cairo_paint(cr)
            cairo_set_operator(cr, CAIRO_OPERATOR_OVER)
            cairo_scale(cr, scale.x, scale.y)
            try draw(root, on: cr, video: video)
        }
    }

    /// The tree drawn alone over transparency, at the output size: a mask's alpha.
    package func renderAlone(_ root: LayerSnapshot) throws -> RGBAImage {
        let canvas = try RGBAImage(width: outputWidth, height: outputHeight)
        try CairoContext(drawingInto: canvas.view).draw { cr in
            cairo_scale(cr, scale.x, scale.y)
            try draw(root, on: cr, video: nil)
        }
        return canvas
    }

    // MARK: Fast path

    /// The layers drawn above the video layer, as sprites in output pixels, or nil when
    /// something other than the opaque, full-frame video layer could show underneath them
    /// (then use `render`). Sprites sit on whole output pixels.
    package func overlaySprites(for root: LayerSnapshot) throws -> [Sprite]? {
        var overlays: [(layer: LayerSnapshot, parentOrigin: Point)] = []
        guard Self.findFullFrameVideo(in: root, parentOrigin: .zero, renderSize: renderSize, overlays: &overlays) == .found else { return nil }
        var result: [Sprite] = []
        for (layer, parentOrigin) in overlays {
            let origin = Point(x: parentOrigin.x + layer.frame.x + layer.transform.tx, y: parentOrigin.y + layer.frame.y + layer.transform.ty)
            let anchor = Point(x: (origin.x * scale.x).rounded(), y: (origin.y * scale.y).rounded())
            try appendSprites(for: layer, anchor: anchor, offset: .zero, to: &result)
        }
        return result
    }

    /// The sprites of one overlay subtree. A group that only holds its sublayers in place
    /// (see `isPassThrough`) gives theirs instead of a drawing of its own: what changes
    /// (a karaoke line) is then drawn apart from what does not (a logo, a translation).
    /// `anchor` is where its top-level overlay's origin lies (output pixels, rounded, as a
    /// top-level overlay is placed); `offset`, where the layer lies from there (layer units).
    private func appendSprites(for layer: LayerSnapshot, anchor: Point, offset: Point, to result: inout [Sprite]) throws {
        guard layer.opacity > 0 else { return }
        guard isPassThrough(layer) else { return result += try sprites(for: layer, anchor: anchor, offset: offset) }
        for sublayer in layer.sublayers {
            let position = Point(x: offset.x + sublayer.frame.x + sublayer.transform.tx, y: offset.y + sublayer.frame.y + sublayer.transform.ty)
            try appendSprites(for: sublayer, anchor: anchor, offset: position, to: &result)
        }
    }

    /// A group that draws nothing of its own, only moves its sublayers and neither fades,
    /// clips nor filters them: its drawing is theirs, blended one after another (none when
    /// it has none: a lyrics group between two lines).
    private func isPassThrough(_ layer: LayerSnapshot) -> Bool {
        let t = layer.transform
        return layer.text == nil && layer.contents == nil && layer.sound == nil && !layer.isVideoLayer
            && layer.backgroundColor.alpha <= 0 && layer.borderWidth <= 0 && !layer.masksToBounds && layer.filters.isEmpty
            && layer.mask == nil && layer.opacity >= 1 && t.a == 1 && t.b == 0 && t.c == 0 && t.d == 1
    }

    /// Blends sprites, in order, onto a decoded frame of the output size.
    package func blend(_ sprites: [Sprite], onto frame: PlanarYUVImage) {
        for sprite in sprites { blender.blend(sprite, onto: frame) }
    }

    /// Whether the tree shows the composed video as it is: the video layer fills the output,
    /// opaque and unwarped, and nothing over it draws a pixel (smart rendering copies such frames).
    package static func showsVideoUntouched(_ root: LayerSnapshot, renderSize: Size) -> Bool {
        var overlays: [(layer: LayerSnapshot, parentOrigin: Point)] = []
        return findFullFrameVideo(in: root, parentOrigin: .zero, renderSize: renderSize, overlays: &overlays) == .found
            && overlays.allSatisfy(\.layer.drawsNothing)
    }

    private enum VideoSearch { case notHere, found, disqualified }

    /// Walks down to the video layer through layers that only translate and are fully
    /// opaque; everything drawn after the video layer is collected as an overlay, everything
    /// before it is hidden by the video.
    private static func findFullFrameVideo(in layer: LayerSnapshot, parentOrigin: Point, renderSize: Size,
                                           overlays: inout [(layer: LayerSnapshot, parentOrigin: Point)]) -> VideoSearch {
        let t = layer.transform
        let origin = Point(x: parentOrigin.x + layer.frame.x + t.tx, y: parentOrigin.y + layer.frame.y + t.ty)
        let translatesOnly = t.a == 1 && t.b == 0 && t.c == 0 && t.d == 1
        if layer.isVideoLayer {
            let fillsOutput = abs(origin.x) < 0.01 && abs(origin.y) < 0.01
                && abs(layer.frame.width - renderSize.width) < 0.01 && abs(layer.frame.height - renderSize.height) < 0.01
            guard translatesOnly, layer.opacity >= 1, fillsOutput, layer.borderWidth <= 0, layer.text == nil, layer.filters.isEmpty, layer.mask == nil,
                  !(layer.masksToBounds && layer.cornerRadius > 0) else { return .disqualified }
            overlays += layer.sublayers.map { ($0, origin) }
            return .found
        }
        var state = VideoSearch.notHere
        for sublayer in layer.sublayers {
            if state == .found {
                overlays.append((sublayer, origin))
                continue
            }
            state = findFullFrameVideo(in: sublayer, parentOrigin: origin, renderSize: renderSize, overlays: &overlays)
            if state == .disqualified { return .disqualified }
        }
        guard state == .found else { return state }
        // An ancestor of the video must not fade it, warp it, clip it, filter it or draw a border over it.
        let clipsOutput = layer.masksToBounds && !(origin.x <= 0 && origin.y <= 0 && layer.frame.width + origin.x >= renderSize.width
                                                   && layer.frame.height + origin.y >= renderSize.height && layer.cornerRadius <= 0)
        return translatesOnly && layer.opacity >= 1 && layer.borderWidth <= 0 && !clipsOutput && layer.filters.isEmpty && layer.mask == nil
            ? .found : .disqualified
    }

    /// One overlay subtree as sprites (one, or a karaoke line's parts). The drawing is cached
    /// under the layer with its position, translation and opacity taken out, which are
    /// applied here and when blending; a layer `offset` a fraction of a pixel from its
    /// anchor keeps that fraction in its drawing, as when its group was drawn whole.
    private func sprites(for layer: LayerSnapshot, anchor: Point, offset: Point) throws -> [Sprite] {
        var key = layer
        key.transform.tx = 0
        key.transform.ty = 0
        key.opacity = 1
        let (across, down) = (wholeAndFraction(offset.x * scale.x), wholeAndFraction(offset.y * scale.y))
        key.frame.origin = Point(x: across.fraction / scale.x, y: down.fraction / scale.y)
        let x = anchor.x + across.whole, y = anchor.y + down.whole
        guard x.isFinite, y.isFinite else { return [] }
        if abs(x) >= 1e7 || abs(y) >= 1e7 {
            // Far off the output, so not drawn; but a drawing too large to draw is refused
            // wherever it is, as on the output (one rule for every size).
            if let bounds = try drawnBounds(key, parent: .scale(scale.x, scale.y)), !isDrawable(across: bounds.width, down: bounds.height) {
                throw tooLarge(across: bounds.width, down: bounds.height)
            }
            return []
        }
        let opacity = min(layer.opacity, 1)
        let drawing: RasterizedText
        if let style = key.text, key.frame.origin == .zero, isPlainText(key) {
            // The text raster itself, not a copy; a karaoke line as parts of its two drawings.
            switch try drawnText(style, box: key.frame.size, deviceScale: scale.x) {
            case .plain(let text): drawing = text
            case .karaoke(nil): return []
            case .karaoke(let karaoke?):
                return try karaoke.sprites(sung: style.highlightedScalars, fraction: style.highlightFraction,
                                           atX: Int(x) + karaoke.x, y: Int(y) + karaoke.y, opacity: opacity)
            }
        } else if key.showsSound {
            // Drawn anew each frame: caching it would only push out drawings that come back.
            drawing = try drawSubtree(key)
        } else {
            drawing = try sprites.value(for: key) {
                let drawn = try drawSubtree(key)
                return (drawn, drawn.image?.byteCount ?? 0)
            }
        }
        guard let image = drawing.image else { return [] }
        return [Sprite(image: image, x: Int(x) + drawing.x, y: Int(y) + drawing.y, opacity: opacity)]
    }

    /// A length in output pixels as whole pixels and the fraction left (0 when it is within
    /// rounding error of a whole pixel).
    private func wholeAndFraction(_ value: Double) -> (whole: Double, fraction: Double) {
        let nearest = value.rounded()
        if abs(value - nearest) < 1e-6 { return (nearest, 0) }
        let whole = value.rounded(.down)
        return (whole, value - whole)
    }

    /// A leaf that only shows text, unscaled: its sprite is the cached text raster.
    private func isPlainText(_ layer: LayerSnapshot) -> Bool {
        layer.sublayers.isEmpty && layer.contents == nil && layer.sound == nil && !layer.isVideoLayer && layer.backgroundColor.alpha <= 0
            && layer.borderWidth <= 0 && !layer.masksToBounds && layer.transform.isIdentity && scale.x == scale.y && layer.filters.isEmpty
            && layer.mask == nil
    }

    /// The one rule for drawings: at most four times the output's pixels (and a size a
    /// picture can have), wherever the layer is.
    private func isDrawable(across: Double, down: Double) -> Bool {
        across.isFinite && down.isFinite && across < 1e7 && down < 1e7 && across * down <= 4 * Double(outputWidth) * Double(outputHeight)
    }

    private func tooLarge(across: Double, down: Double, filtered: Bool = false) -> EngineError {
        EngineError("a \(filtered ? "filtered " : "")layer's drawing (\(shortNumber(across))×\(shortNumber(down)) px) is far larger than the output (\(outputWidth)×\(outputHeight))", kind: .limit)
    }

    /// Draws a subtree placed at the origin into an image just large enough for it, then
    /// trims it to its ink. Subtrees reaching far beyond the output are refused.
    private func drawSubtree(_ layer: LayerSnapshot) throws -> RasterizedText {
        guard let bounds = try drawnBounds(layer, parent: .scale(scale.x, scale.y)) else { return RasterizedText(image: nil, x: 0, y: 0) }
        // Measured in floating point first: a script may scale a layer a trillion times.
        let left = bounds.x.rounded(.down) - 1, top = bounds.y.rounded(.down) - 1
        let across = bounds.maxX.rounded(.up) + 1 - left, down = bounds.maxY.rounded(.up) + 1 - top
        guard left.isFinite, top.isFinite, abs(left) < 1e7, abs(top) < 1e7, isDrawable(across: across, down: down) else {
            throw tooLarge(across: across, down: down)
        }
        let (x0, y0, width, height) = (Int(left), Int(top), Int(across), Int(down))
        let image = try RGBAImage(width: width, height: height)
        try CairoContext(drawingInto: image.view).draw { cr in
            cairo_translate(cr, -Double(x0), -Double(y0))
            cairo_scale(cr, scale.x, scale.y)
            try draw(layer, on: cr, video: nil)
        }
        guard let trimmed = try image.trimmedToInk() else { return RasterizedText(image: nil, x: 0, y: 0) }
        return RasterizedText(image: trimmed.image, x: x0 + trimmed.x, y: y0 + trimmed.y)
    }

    /// Where a subtree can put ink, in the coordinates `parent` maps to; nil if nowhere.
    private func drawnBounds(_ layer: LayerSnapshot, parent: AffineTransform) throws -> Rect? {
        guard layer.opacity > 0, let local = localTransform(layer) else { return nil }
        let toTarget = local.concatenating(parent)
        let box = Rect(x: 0, y: 0, width: layer.frame.width, height: layer.frame.height)
        var parts = [box]
        if let contents = layer.contents {
            let picture = try image(contents) // its real size, which is what gets drawn
            let size = Size(width: Double(picture.width), height: Double(picture.height))
            parts.append(LayerRenderer.contentsRect(layer.contentsGravity, content: size, bounds: box.size))
        }
        if let style = layer.text {
            let s = deviceScale(toTarget.a, toTarget.b, toTarget.c, toTarget.d)
            if let text = try textBox(style, box: box.size, deviceScale: s) {
                parts.append(Rect(x: Double(text.x) / s, y: Double(text.y) / s, width: Double(text.width) / s, height: Double(text.height) / s))
            }
        }
        var result = parts.map { toTarget.apply($0) }.reduce(Rect?.none) { union($0, $1) }
        for sublayer in layer.sublayers {
            guard let child = try drawnBounds(sublayer, parent: toTarget) else { continue }
            result = union(result, layer.masksToBounds ? intersection(child, toTarget.apply(box)) : child)
        }
        if let mask = layer.mask, !mask.isInverted {
            // Nothing shows outside the mask's ink.
            guard let drawn = result, let shown = try drawnBounds(mask.layer, parent: toTarget) else { return nil }
            result = intersection(drawn, shown)
        }
        // A blur spreads the drawing past its edges.
        let spread = (layer.filters.map(\.spread).max() ?? 0) * deviceScale(toTarget.a, toTarget.b, toTarget.c, toTarget.d)
        return result.map { Rect(x: $0.x - spread, y: $0.y - spread, width: $0.width + 2 * spread, height: $0.height + 2 * spread) }
    }

    // MARK: Drawing with cairo

    /// Maps a layer's own coordinates (bounds, origin top-left) into its parent's:
    /// `transform` acts about the anchor point, as in Core Animation. Nil when the layer
    /// cannot be drawn (singular or non-finite), which would break the cairo context.
    private func localTransform(_ layer: LayerSnapshot) -> AffineTransform? {
        let anchor = Point(x: layer.anchorPoint.x * layer.frame.width, y: layer.anchorPoint.y * layer.frame.height)
        let position = Point(x: layer.frame.x + anchor.x, y: layer.frame.y + anchor.y)
        let m = AffineTransform.translation(-anchor.x, -anchor.y).concatenating(layer.transform)
            .concatenating(.translation(position.x, position.y))
        guard [m.a, m.b, m.c, m.d, m.tx, m.ty].allSatisfy(\.isFinite), m.inverted() != nil,
              layer.frame.width.isFinite, layer.frame.height.isFinite, layer.frame.width >= 0, layer.frame.height >= 0 else { return nil }
        return m
    }

    /// Draws one layer and its sublayers in Core Animation's order: background, contents
    /// (or video), text, sublayers, border; the whole subtree faded as a group.
    private func draw(_ layer: LayerSnapshot, on cr: OpaquePointer, video: BGRAPixels?) throws {
        guard layer.opacity > 0, let local = localTransform(layer) else { return }
        if !layer.filters.isEmpty { return try drawFiltered(layer, on: cr, video: video) }
        cairo_save(cr)
        defer { cairo_restore(cr) }
        var matrix = cairo_matrix_t(xx: local.a, yx: local.b, xy: local.c, yy: local.d, x0: local.tx, y0: local.ty)
        cairo_transform(cr, &matrix)
        let grouped = layer.opacity < 1 || layer.mask != nil
        if grouped { cairo_push_group(cr) }

        let bounds = Rect(x: 0, y: 0, width: layer.frame.width, height: layer.frame.height)
        let radius = min(max(layer.cornerRadius.isFinite ? layer.cornerRadius : 0, 0), min(bounds.width, bounds.height) / 2)
        if layer.masksToBounds {
            roundedRectangle(cr, bounds, radius: radius)
            cairo_clip(cr)
        }
        if layer.backgroundColor.alpha > 0 {
            roundedRectangle(cr, bounds, radius: radius)
            setSource(cr, layer.backgroundColor)
            cairo_fill(cr)
        }
        if layer.isVideoLayer {
            if let video { try drawPixels(video, opaque: true, gravity: layer.contentsGravity, in: bounds.size, on: cr) }
        } else if let contents = layer.contents {
            let picture = try image(contents)
            try withExtendedLifetime(picture) { // until cairo has drawn its pixels
                try drawPixels(picture.view, opaque: false, gravity: layer.contentsGravity, in: bounds.size, on: cr)
            }
        }
        if let sound = layer.sound { draw(sound, in: bounds.size, on: cr) }
        if let style = layer.text {
            var device = cairo_matrix_t()
            cairo_get_matrix(cr, &device)
            let s = deviceScale(device.xx, device.yx, device.xy, device.yy)
            let text = try rasterizedText(style, box: bounds.size, deviceScale: s)
            if let image = text.image {
                let surface = try CairoSurface(drawingInto: image.view)
                withExtendedLifetime(image) { // until cairo has drawn its pixels
                    cairo_save(cr)
                    defer { cairo_restore(cr) }
                    cairo_scale(cr, 1 / s, 1 / s)
                    cairo_set_source_surface(cr, surface.pointer, Double(text.x), Double(text.y))
                    cairo_rectangle(cr, Double(text.x), Double(text.y), Double(image.width), Double(image.height))
                    cairo_fill(cr)
                }
            }
        }
        for sublayer in layer.sublayers { try draw(sublayer, on: cr, video: video) }
        if layer.borderWidth > 0, layer.borderWidth.isFinite, layer.borderColor.alpha > 0 {
            // Core Animation draws the border inside the bounds.
            let width = min(layer.borderWidth, min(bounds.width, bounds.height) / 2)
            let inset = Rect(x: width / 2, y: width / 2, width: bounds.width - width, height: bounds.height - width)
            roundedRectangle(cr, inset, radius: max(radius - width / 2, 0))
            setSource(cr, layer.borderColor)
            cairo_set_line_width(cr, width)
            cairo_stroke(cr)
        }
        guard grouped else { return }
        guard let mask = layer.mask else {
            cairo_pop_group_to_source(cr)
            return cairo_paint_with_alpha(cr, layer.opacity)
        }
        // Core Animation's mask: the group shown through the mask's alpha, then faded.
        guard let content = cairo_pop_group(cr) else { return }
        defer { cairo_pattern_destroy(content) }
        cairo_push_group(cr)
        try draw(mask.layer, on: cr, video: nil)
        if mask.isInverted {
            // Opaque where the mask is transparent: white with the mask's drawing taken out.
            guard let drawn = cairo_pop_group(cr) else { return }
            defer { cairo_pattern_destroy(drawn) }
            cairo_push_group(cr)
            cairo_set_source_rgba(cr, 1, 1, 1, 1)
            cairo_paint(cr)
            cairo_set_operator(cr, CAIRO_OPERATOR_DEST_OUT)
            cairo_set_source(cr, drawn)
            cairo_paint(cr)
        }
        guard let shape = cairo_pop_group(cr) else { return }
        defer { cairo_pattern_destroy(shape) }
        if layer.opacity < 1 { cairo_push_group(cr) }
        cairo_set_source(cr, content)
        cairo_mask(cr, shape)
        if layer.opacity < 1 {
            cairo_pop_group_to_source(cr)
            cairo_paint_with_alpha(cr, layer.opacity)
        }
    }

    /// A sound layer's bars (rising from the bottom, or from the middle both ways for
    /// `mirror`) or its waveform line (through the middle), across its bounds.
    private func draw(_ sound: SoundPicture, in size: Size, on cr: OpaquePointer) {
        let count = sound.values.count
        guard count > 0, size.width > 0, size.height > 0 else { return }
        cairo_save(cr)
        defer { cairo_restore(cr) }
        if sound.style == .line {
            let step = size.width / Double(max(count - 1, 1))
            for (index, value) in sound.values.enumerated() {
                let y = size.height / 2 * (1 - Double(min(max(value, -1), 1)))
                if index == 0 { cairo_move_to(cr, 0, y) } else { cairo_line_to(cr, Double(index) * step, y) }
            }
            cairo_set_line_width(cr, max(size.height / 60, 1.5))
            cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
            setSource(cr, sound.color(at: 0.5))
            cairo_stroke(cr)
            return
        }
        // A fifth of each bar's slot is the gap between bars.
        let slot = size.width / Double(count), width = slot * 0.8
        for (index, value) in sound.values.enumerated() {
            let height = size.height * Double(min(max(value, 0), 1))
            guard height > 0 else { continue }
            let x = Double(index) * slot + (slot - width) / 2
            let y = sound.style == .mirror ? (size.height - height) / 2 : size.height - height
            cairo_rectangle(cr, x, y, width, height)
            setSource(cr, sound.color(at: count > 1 ? Double(index) / Double(count - 1) : 0))
            cairo_fill(cr)
        }
    }

    /// A layer with filters, as Core Animation applies them: the layer and its sublayers are
    /// drawn alone into a picture in device pixels (grown by how far the filters spread, and
    /// kept to what can reach the clip), filtered there, and painted with the layer's opacity.
    private func drawFiltered(_ layer: LayerSnapshot, on cr: OpaquePointer, video: BGRAPixels?) throws {
        var device = cairo_matrix_t()
        cairo_get_matrix(cr, &device)
        let toDevice = AffineTransform(a: device.xx, b: device.yx, c: device.xy, d: device.yy, tx: device.x0, ty: device.y0)
        var content = layer
        (content.filters, content.opacity) = ([], 1)
        guard let drawn = try drawnBounds(content, parent: toDevice) else { return }
        var clip = (x0: 0.0, y0: 0.0, x1: 0.0, y1: 0.0)
        cairo_save(cr)
        cairo_identity_matrix(cr)
        cairo_clip_extents(cr, &clip.x0, &clip.y0, &clip.x1, &clip.y1)
        cairo_restore(cr)
        let pixelScale = deviceScale(device.xx, device.yx, device.xy, device.yy)
        let spread = (layer.filters.map(\.spread).max() ?? 0) * pixelScale
        let reach = Rect(x: clip.x0 - spread, y: clip.y0 - spread, width: clip.x1 - clip.x0 + 2 * spread, height: clip.y1 - clip.y0 + 2 * spread)
        let area = intersection(Rect(x: drawn.x - spread, y: drawn.y - spread, width: drawn.width + 2 * spread, height: drawn.height + 2 * spread), reach)
        let left = area.x.rounded(.down), top = area.y.rounded(.down)
        let across = area.maxX.rounded(.up) - left, down = area.maxY.rounded(.up) - top
        guard across >= 1, down >= 1 else { return }
        guard left.isFinite, top.isFinite, abs(left) < 1e7, abs(top) < 1e7, isDrawable(across: across, down: down) else {
            throw tooLarge(across: across, down: down, filtered: true)
        }
        let image = try RGBAImage(width: Int(across), height: Int(down))
        try CairoContext(drawingInto: image.view).draw { offscreen in
            cairo_translate(offscreen, -left, -top)
            cairo_transform(offscreen, &device)
            try draw(content, on: offscreen, video: video)
        }
        try filterRenderer.apply(layer.filters, to: image.view, pixelScale: pixelScale)
        let surface = try CairoSurface(drawingInto: image.view)
        withExtendedLifetime(image) { // until cairo has drawn its pixels
            cairo_save(cr)
            defer { cairo_restore(cr) }
            cairo_identity_matrix(cr)
            cairo_set_source_surface(cr, surface.pointer, left, top)
            cairo_paint_with_alpha(cr, layer.opacity)
        }
    }

    /// Draws pixels into `contentsRect` with bilinear filtering (a better filter when
    /// shrinking more than 2×); edges are padded so they stay sharp instead of fading.
    private func drawPixels(_ pixels: BGRAPixels, opaque: Bool, gravity: ContentsGravity, in bounds: Size, on cr: OpaquePointer) throws {
        let content = Size(width: Double(pixels.width), height: Double(pixels.height))
        let target = LayerRenderer.contentsRect(gravity, content: content, bounds: bounds)
        guard target.width > 0, target.height > 0 else { return }
        let surface = try CairoSurface(drawingInto: pixels, format: opaque ? CAIRO_FORMAT_RGB24 : CAIRO_FORMAT_ARGB32)
        cairo_save(cr)
        defer { cairo_restore(cr) }
        cairo_translate(cr, target.x, target.y)
        cairo_scale(cr, target.width / content.width, target.height / content.height)
        cairo_set_source_surface(cr, surface.pointer, 0, 0)
        let pattern = cairo_get_source(cr)
        cairo_pattern_set_extend(pattern, CAIRO_EXTEND_PAD)
        let shrinks = target.width < content.width / 2 || target.height < content.height / 2
        cairo_pattern_set_filter(pattern, shrinks ? CAIRO_FILTER_GOOD : CAIRO_FILTER_BILINEAR)
        cairo_rectangle(cr, 0, 0, content.width, content.height)
        cairo_fill(cr)
    }

    /// Where contents of `content` size go in a layer's bounds (CA's `contentsGravity`,
    /// with top meaning the top of the picture). Natural-size placements are rounded to
    /// whole pixels so the image is copied 1:1 instead of resampled half a pixel off.
    package static func contentsRect(_ gravity: ContentsGravity, content: Size, bounds: Size) -> Rect {
        guard content.width > 0, content.height > 0 else { return .zero }
        switch gravity {
        case .resize:
            return Rect(x: 0, y: 0, width: bounds.width, height: bounds.height)
        case .resizeAspect, .resizeAspectFill:
            let (sx, sy) = (bounds.width / content.width, bounds.height / content.height)
            let s = gravity == .resizeAspect ? min(sx, sy) : max(sx, sy)
            let (w, h) = (content.width * s, content.height * s)
            return Rect(x: (bounds.width - w) / 2, y: (bounds.height - h) / 2, width: w, height: h)
        case .center, .top, .bottom, .left, .right, .topLeft, .topRight, .bottomLeft, .bottomRight:
            let x: Double
            switch gravity {
            case .left, .topLeft, .bottomLeft: x = 0
            case .right, .topRight, .bottomRight: x = bounds.width - content.width
            default: x = ((bounds.width - content.width) / 2).rounded()
            }
            let y: Double
            switch gravity {
            case .top, .topLeft, .topRight: y = 0
            case .bottom, .bottomLeft, .bottomRight: y = bounds.height - content.height
            default: y = ((bounds.height - content.height) / 2).rounded()
            }
            return Rect(x: x, y: y, width: content.width, height: content.height)
        }
    }

    // MARK: Caches

    /// Text laid out in `box` (layer units) and drawn `deviceScale` times larger, so that it
    /// stays sharp on outputs smaller or larger than the render size and in scaled layers.
    /// The result is in device pixels; a karaoke line is cut at its sung edge for this call
    /// (its two drawings are what is cached).
    private func rasterizedText(_ style: TextStyle, box: Size, deviceScale s: Double) throws -> RasterizedText {
        switch try drawnText(style, box: box, deviceScale: s) {
        case .plain(let text): return text
        case .karaoke(nil): return RasterizedText(image: nil, x: 0, y: 0)
        case .karaoke(let karaoke?): return try karaoke.drawn(sung: style.highlightedScalars, fraction: style.highlightFraction)
        }
    }

    /// Where `rasterizedText` puts ink (device pixels, relative to the box), without drawing
    /// a karaoke step; nil when nowhere.
    private func textBox(_ style: TextStyle, box: Size, deviceScale s: Double) throws -> PixelBox? {
        switch try drawnText(style, box: box, deviceScale: s) {
        case .plain(let text): return text.image.map { PixelBox(x: text.x, y: text.y, width: $0.width, height: $0.height) }
        case .karaoke(let karaoke): return karaoke.map { PixelBox(x: $0.x, y: $0.y, width: $0.width, height: $0.height) }
        }
    }

    /// The cached drawing of a text (see `rasterizedText`), a karaoke line's whatever its progress.
    private func drawnText(_ style: TextStyle, box: Size, deviceScale s: Double) throws -> DrawnText {
        var scaled = style.karaokeColor == nil ? style : style.withoutKaraokeProgress
        if s != 1 {
            scaled.fontSize *= s
            scaled.lineSpacing *= s
            scaled.strokeWidth *= s
            scaled.shadowOffset = Size(width: style.shadowOffset.width * s, height: style.shadowOffset.height * s)
            scaled.shadowRadius *= s
        }
        let deviceBox = Size(width: box.width * s, height: box.height * s)
        return try texts.value(for: TextKey(style: scaled, box: deviceBox)) {
            if scaled.karaokeColor != nil {
                let karaoke = try rasterizer.rasterizeKaraoke(scaled, in: deviceBox)
                return (.karaoke(karaoke), karaoke?.byteCount ?? 0)
            }
            let text = try rasterizer.rasterize(scaled, in: deviceBox)
            return (.plain(text), text.image?.byteCount ?? 0)
        }
    }

    private func image(_ source: ImageSource) throws -> RGBAImage {
        if let pixels = source.pixels { return pixels }
        return try images.value(for: source.path) {
            let image = try ImageLoader.load(source.path)
            return (image, image.byteCount)
        }
    }
}

private func roundedRectangle(_ cr: OpaquePointer, _ r: Rect, radius: Double) {
    guard radius > 0 else {
        cairo_rectangle(cr, r.x, r.y, r.width, r.height)
        return
    }
    let halfPi = Double.pi / 2
    cairo_new_sub_path(cr)
    cairo_arc(cr, r.maxX - radius, r.y + radius, radius, -halfPi, 0)
    cairo_arc(cr, r.maxX - radius, r.maxY - radius, radius, 0, halfPi)
    cairo_arc(cr, r.x + radius, r.maxY - radius, radius, halfPi, 2 * halfPi)
    cairo_arc(cr, r.x + radius, r.y + radius, radius, 2 * halfPi, 3 * halfPi)
    cairo_close_path(cr)
}

/// How much a matrix enlarges areas, as a length factor; quantised so that the same
/// scale reached through different float paths finds the same cached text.
private func deviceScale(_ a: Double, _ b: Double, _ c: Double, _ d: Double) -> Double {
    let s = abs(a * d - b * c).squareRoot()
    guard s.isFinite, s > 0 else { return 1 }
    return min(max((s * 256).rounded() / 256, 1.0 / 64), 64)
}

private func union(_ a: Rect?, _ b: Rect) -> Rect {
    guard let a else { return b }
    let x = min(a.x, b.x), y = min(a.y, b.y)
    return Rect(x: x, y: y, width: max(a.maxX, b.maxX) - x, height: max(a.maxY, b.maxY) - y)
}

private func intersection(_ a: Rect, _ b: Rect) -> Rect {
    let x = max(a.x, b.x), y = max(a.y, b.y)
    return Rect(x: x, y: y, width: max(min(a.maxX, b.maxX) - x, 0), height: max(min(a.maxY, b.maxY) - y, 0))
}
