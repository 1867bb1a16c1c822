import CMoonFFmpeg
import CMoonPangoCairo
import MoonreelComposition
import MoonreelMedia
import MoonreelPlatform

/// Composes output frame after output frame from a `VideoPlan`: for each, the active
/// instruction's tracks are decoded at the right source time and drawn with their
/// transform, opacity and crop. Common cases skip the general warp: a frame that already
/// fills the output is scaled (or passed on untouched), a phone frame is turned by
/// rotating its planes. Owned by the video thread of one export.
final class VideoRenderer {
    let plan: VideoPlan
    private var sources: [SourceKey: (reader: VideoFrameSource, lastUsed: MediaTime)] = [:]
    /// Sources found interlaced though their tracks say not, by the decoders closed so far.
    private var turnedInterlaced: Set<String> = []
    /// A decoder unused for this long is closed (a long concatenation keeps one or two open).
    private let idleDecoderLifetime = MediaTime(value: 2, timescale: 1)
    private let scaler = Scaler()
    private let canvasScaler = Scaler(flags: SWS_BILINEAR | SWS_ACCURATE_RND)
    private var layerScalers: [Int: Scaler] = [:]
    /// Draws the animation tool's layers; made on first use, on this thread.
    private var layerRenderer: LayerRenderer?
    private let overlayScaler = Scaler(flags: SWS_BILINEAR | SWS_ACCURATE_RND)
    private let encoderScaler = Scaler()
    /// Maps render-size coordinates onto the encoded size.
    private let outputScale: AffineTransform
    /// Colours the general compositor (cairo, 8-bit) works in: the output's, or for an HDR
    /// output BT.709 SDR, converted to HDR afterwards (so SDR white is reference white).
    private let compositorColor: ColorDescription
    /// Converters to other dynamic ranges, per source (or nil: the composed picture) and
    /// target, with the last frame each converted: a held frame is converted once.
    private var converters: [ConversionKey: ColorConverter] = [:]
    private var lastConversion: [ConversionKey: (input: Frame, output: Frame)] = [:]
    private let filterRenderer = FilterRenderer()
    /// Buffers for pictures copied before they are drawn on (the decoder keeps its own as
    /// reference pictures): one copy each output frame, in recycled memory.
    private var writablePool: FramePool?
    /// Output pixels per render-size pixel (filter radii are given in the latter).
    private let outputPixelScale: Double

    private struct ConversionKey: Hashable {
        let source: SourceKey?
        let target: DynamicRange
    }

    /// One decoder per composition track and source stream: two tracks showing the same
    /// file at different times (a dissolve between two parts of one clip) each read forward
    /// instead of seeking back and forth.
    private struct SourceKey: Hashable {
        let trackID: Int
        let path: String
        let stream: Int
    }

    init(plan: VideoPlan) {
        self.plan = plan
        outputScale = .scale(Double(plan.outputWidth) / plan.renderSize.width, Double(plan.outputHeight) / plan.renderSize.height)
        outputPixelScale = abs(outputScale.determinant).squareRoot()
        compositorColor = plan.outputColor.dynamicRange.isHDR ? ColorDescription(space: AVCOL_SPC_BT709, range: AVCOL_RANGE_MPEG) : plan.outputColor
    }

    /// `frame` in the dynamic range `target` (HDR sources tone-mapped for SDR, SDR ones
    /// mapped into HDR), or `frame` itself when it already is.
    private func frame(_ frame: Frame, in target: DynamicRange, source: SourceKey?) throws -> Frame {
        guard ColorConverter.needed(from: .of(frame), to: target) else { return frame }
        let key = ConversionKey(source: source, target: target)
        if let last = lastConversion[key], last.input === frame { return last.output }
        let converter = converters[key] ?? ColorConverter(to: target)
        converters[key] = converter
        let output = try converter.convert(frame)
        lastConversion[key] = (frame, output)
        return output
    }

    /// One drawable layer at one time.
    private struct Drawable {
        let frame: Frame
        let transform: AffineTransform // stored pixels → output pixels
        let opacity: Double
        let crop: Rect?
        let trackID: Int
        let source: SourceKey
        /// The layer instruction's filters at this time.
        let filters: [Filter]
        /// Where it shows (the layer instruction's mask at this time); nil: everywhere.
        let mask: LayerSnapshot?

        /// Whether its filters can make it partly transparent.
        var isKeyed: Bool { filters.contains { $0.kind.makesTransparent && !$0.isIdentity } }
        /// Whether its picture carries alpha (a PNG with a transparent background, ProRes
        /// 4444 with alpha): the background shows through it, where its hidden colours were
        /// drawn (a logo's transparent half came out red).
        var hasAlpha: Bool { av_pix_fmt_desc_get(frame.pixelFormat).map { $0.pointee.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0 } ?? false }
        /// Partly transparent, by its filters or its picture: only the general path draws it.
        var isTransparent: Bool { isKeyed || hasAlpha }
    }

    /// The picture at `time` in the encoder's pixel format, numbered `number` (its pts).
    func renderFrame(at time: MediaTime, number: Int64) throws -> Frame {
        var output = try render(at: time)
        if let format = plan.encoderFormat, output.pixelFormat != format {
            // RGB has no matrix to tag and is full range: JPEG range marks that.
            let isRGB = av_pix_fmt_desc_get(format).map { $0.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB) != 0 } ?? false
            let color = isRGB ? ColorDescription(space: plan.outputColor.space, range: AVCOL_RANGE_JPEG) : plan.outputColor
            output = try encoderScaler.convert(output, width: output.width, height: output.height, format: format, outputColor: color)
        }
        output.pointer.pointee.pts = number
        return output
    }

    /// The composed frame at composition time `time`.
    func render(at time: MediaTime) throws -> Frame {
        let instruction = plan.instruction(at: time)
        var drawables: [Drawable] = []
        for layer in instruction?.layers ?? [] {
            guard let segment = layer.segments.first(where: { $0.targetRange.contains(time) }),
                  let source = segment.source else { continue }
            let opacity = min(max(layer.opacity.value(at: time), 0), 1)
            guard opacity > 0 else { continue }
            let mask = layer.mask?.snapshot(at: time)
            // A hidden or transparent mask shows none of the track.
            guard layer.mask == nil || mask?.drawsNothing == false else { continue }
            let key = SourceKey(trackID: layer.trackID, path: source.path, stream: source.streamIndex)
            guard let frame = try frameSource(for: source, key: key, at: time).frame(at: segment.sourceTimeShown(at: time, frameDuration: plan.frameDuration)) else { continue }
            // A preview proxy's frames are stored smaller: brought to the source's stored size first.
            let stored = frame.width == Int(source.naturalSize.width) && frame.height == Int(source.naturalSize.height)
                ? AffineTransform.identity
                : .scale(source.naturalSize.width / Double(frame.width), source.naturalSize.height / Double(frame.height))
            drawables.append(Drawable(frame: frame, transform: stored.concatenating(layer.transform.value(at: time)).concatenating(outputScale),
                                      opacity: opacity, crop: layer.crop?.crop(at: time), trackID: layer.trackID, source: key,
                                      filters: layer.filters.filters(at: time), mask: mask))
        }
        var video = try compose(drawables, background: instruction?.background ?? .black)
        if !plan.filters.isEmpty {
            video = try filterRenderer.apply(plan.filters.filters(at: time), to: video, pixelScale: outputPixelScale)
        }
        guard let tree = plan.overlay?.snapshot(at: time) else { return video }
        return try drawLayers(tree, around: video)
    }

    /// The animation tool's layers at this time, around the composed video. Overlays above
    /// a full-frame video become cached sprites blended straight onto the YUV frame; any
    /// other tree is drawn whole with cairo.
    private func drawLayers(_ tree: LayerSnapshot, around video: Frame) throws -> Frame {
        let renderer = try overlayRenderer()
        renderer.beginFrame()
        if let sprites = try renderer.overlaySprites(for: tree) {
            guard !sprites.isEmpty else { return video }
            // The decoder may still hold this picture (a held frame is shown again): copy first.
            try makeWritable(video)
            if let planes = PlanarYUVImage(frame: video.pointer) {
                renderer.blend(sprites, onto: planes)
                return video
            }
        }
        // Any other tree is drawn whole, in SDR: an HDR picture goes through SDR and back.
        let full = ColorDescription(space: compositorColor.space, range: AVCOL_RANGE_JPEG)
        let picture = try overlayScaler.convert(try frame(video, in: .sdr, source: nil), width: plan.outputWidth, height: plan.outputHeight,
                                                format: AV_PIX_FMT_BGRA, outputColor: full)
        let canvas = try Frame(width: plan.outputWidth, height: plan.outputHeight, format: AV_PIX_FMT_BGRA)
        try renderer.render(tree, video: picture.bgraPixels, into: canvas.bgraPixels)
        return try toOutput(canvasScaler.convert(canvas, width: plan.outputWidth, height: plan.outputHeight, format: AV_PIX_FMT_YUV420P,
                                                 sourceColor: full, outputColor: compositorColor))
    }

    private func overlayRenderer() throws -> LayerRenderer {
        let renderer = try layerRenderer ?? LayerRenderer(renderSize: plan.renderSize, outputWidth: plan.outputWidth,
                                                          outputHeight: plan.outputHeight)
        layerRenderer = renderer
        return renderer
    }

    /// Copies `frame` into a pooled buffer when another holder (the decoder) shares its own.
    private func makeWritable(_ frame: Frame) throws {
        if writablePool.map({ !$0.fits(frame) }) ?? true {
            // Nil for a layout the pool cannot hold: FFmpeg's own copy then.
            writablePool = try? FramePool(width: frame.width, height: frame.height, format: frame.pixelFormat)
        }
        if let pool = writablePool {
            try pool.makeWritable(frame)
        } else {
            try check(av_frame_make_writable(frame.pointer), "preparing a frame for drawing")
        }
    }

    /// A picture composed in the compositor's SDR colours, in the output's.
    private func toOutput(_ composed: Frame) throws -> Frame {
        try frame(composed, in: plan.outputColor.dynamicRange, source: nil)
    }

    private func frameSource(for source: SegmentSource, key: SourceKey, at time: MediaTime) throws -> VideoFrameSource {
        if let existing = sources[key] {
            sources[key]?.lastUsed = time
            return existing.reader
        }
        for (key, source) in sources where source.lastUsed + idleDecoderLifetime < time { noteInterlacing(key.path, source.reader) }
        sources = sources.filter { $0.value.lastUsed + idleDecoderLifetime >= time }
        let decoded = plan.proxies.decoded(for: source)
        let created = try VideoFrameSource(path: decoded.path, streamIndex: decoded.streamIndex, isStillImage: source.isStillImage,
                                           threading: plan.pace.decoderThreading)
        sources[key] = (created, time)
        return created
    }

    private func noteInterlacing(_ path: String, _ reader: VideoFrameSource) {
        if reader.turnsInterlaced { turnedInterlaced.insert(path) }
    }

    /// An `encodingChanged` note when a source whose track says it is progressive turned out
    /// interlaced and was made whole (the plan's note names the sources that say so). Where it
    /// turns is not said: a chunk of a render sees it first where the chunk starts.
    func lateInterlacingNote() -> Diagnostic? {
        for (key, source) in sources { noteInterlacing(key.path, source.reader) }
        guard let path = turnedInterlaced.min() else { return nil }
        let others = turnedInterlaced.count > 1 ? " (and \(turnedInterlaced.count - 1) more)" : ""
        return Diagnostic(.encodingChanged, .note, "\(Paths.name(of: path).quotedForMessage(limit: 60))\(others) turns interlaced partway, "
                          + "though its track says otherwise: its interlaced fields are made whole frames (bwdif), and the output is progressive")
    }

    // MARK: Composition

    private func compose(_ drawables: [Drawable], background: Color) throws -> Frame {
        // Layers hidden under an opaque full-frame layer above them are not drawn.
        let visible = drawables.prefix { !coversOutput($0) } + drawables.drop { !coversOutput($0) }.prefix(1)
        if visible.count == 1, let only = visible.first, coversOutput(only) {
            return try fastPath(only)
        }
        if visible.allSatisfy({ fillsOutput($0) && !$0.isTransparent && $0.mask == nil }), let mixed = try planePath(Array(visible), background: background) {
            return mixed
        }
        return try generalPath(Array(visible), background: background)
    }

    /// A dissolve or an opacity ramp of whole frames: each layer is brought to the output
    /// (as the fast path does) and they are mixed on the Y'CbCr planes, bottom up, over the
    /// background. Nil when the output is not a plain 4:2:0 picture (the general path then).
    private func planePath(_ drawables: [Drawable], background: Color) throws -> Frame? {
        let format = plan.outputColor.pixelFormat
        let bottomUp = Array(drawables.reversed())
        guard let first = bottomUp.first else { return nil }
        var output: Frame
        var layers = bottomUp[...]
        if first.opacity >= 1 {
            output = try fastPath(first)
            layers = layers.dropFirst()
        } else {
            // A colour under HDR video would need mapping into HDR: black needs none.
            let isBlack = background.red == 0 && background.green == 0 && background.blue == 0
            guard !plan.outputColor.dynamicRange.isHDR || isBlack else { return nil }
            output = try Frame(width: plan.outputWidth, height: plan.outputHeight, format: format)
            guard PlaneBlend.handles(output) else { return nil }
            PlaneBlend.fill(output, with: background, matrix: PlaneBlend.matrix(of: plan.outputColor),
                            fullRange: plan.outputColor.range == AVCOL_RANGE_JPEG)
            PlaneBlend.tag(output, with: plan.outputColor)
        }
        // The fast path may hand on a decoder's own picture: copy before writing.
        try makeWritable(output)
        guard PlaneBlend.handles(output) else { return nil }
        for layer in layers {
            let picture = try fastPath(layer)
            guard picture.pixelFormat == output.pixelFormat, picture.width == output.width, picture.height == output.height else { return nil }
            PlaneBlend.mix(picture, onto: output, opacity: layer.opacity)
        }
        return output
    }

    private func coversOutput(_ d: Drawable) -> Bool {
        d.opacity >= 1 && fillsOutput(d) && !d.isTransparent && d.mask == nil
    }

    /// Whether the layer, uncropped and axis-aligned, fills the output exactly.
    private func fillsOutput(_ d: Drawable) -> Bool {
        guard d.crop == nil else { return false }
        let box = d.transform.apply(Rect(x: 0, y: 0, width: Double(d.frame.width), height: Double(d.frame.height)))
        let axisAligned = (d.transform.b == 0 && d.transform.c == 0) || (d.transform.a == 0 && d.transform.d == 0)
        return axisAligned && abs(box.x) < 0.01 && abs(box.y) < 0.01
            && abs(box.maxX - Double(plan.outputWidth)) < 0.01 && abs(box.maxY - Double(plan.outputHeight)) < 0.01
    }

    /// A single axis-aligned layer filling the output: rotate planes if turned, then scale
    /// (or hand the decoded frame on untouched when nothing needs to change), then filter.
    private func fastPath(_ d: Drawable) throws -> Frame {
        guard let placed = try placedFullFrame(d) else { return try generalPath([d], background: .black) }
        return d.filters.isEmpty ? placed : try filterRenderer.apply(d.filters, to: placed, pixelScale: outputPixelScale)
    }

    /// The fast path's picture before filters, or nil when the turn is not a quarter turn.
    private func placedFullFrame(_ d: Drawable) throws -> Frame? {
        var frame = try self.frame(d.frame, in: plan.outputColor.dynamicRange, source: d.source)
        let sourceColor = ColorDescription.of(frame)
        let format = plan.outputColor.pixelFormat
        // Undo only the turn; the remaining transform is a pure scale, done by swscale.
        let turnScale = (abs(d.transform.a) + abs(d.transform.b), abs(d.transform.c) + abs(d.transform.d))
        let turn = AffineTransform(a: d.transform.a / turnScale.0, b: d.transform.b / turnScale.0,
                                   c: d.transform.c / turnScale.1, d: d.transform.d / turnScale.1, tx: 0, ty: 0)
        if !turn.isIdentity {
            var shifted = turn
            let box = turn.apply(Rect(x: 0, y: 0, width: Double(frame.width), height: Double(frame.height)))
            (shifted.tx, shifted.ty) = (-box.x, -box.y)
            guard let quarterTurn = QuarterTurn(shifted, width: frame.width, height: frame.height) else { return nil }
            // Scale and convert first, to the output size with the stored axes, then turn the
            // (usually much smaller) frame: one swscale pass, and the turn touches few pixels.
            let (width, height) = quarterTurn.swapsAxes ? (plan.outputHeight, plan.outputWidth) : (plan.outputWidth, plan.outputHeight)
            if frame.width != width || frame.height != height || frame.pixelFormat != format || sourceColor != plan.outputColor {
                frame = try scaler.convert(frame, width: width, height: height, format: format,
                                           sourceColor: sourceColor, outputColor: plan.outputColor)
            }
            return try quarterTurn.apply(to: frame)
        }
        let alreadyRight = frame.width == plan.outputWidth && frame.height == plan.outputHeight
            && frame.pixelFormat == format && sourceColor == plan.outputColor
        if alreadyRight { return try frame.reference() }
        return try scaler.convert(frame, width: plan.outputWidth, height: plan.outputHeight, format: format,
                                  sourceColor: sourceColor, outputColor: plan.outputColor)
    }

    /// Any transforms, opacities and crops: every layer is drawn with cairo (bilinear,
    /// premultiplied alpha) onto a BGRA canvas over the background, then converted.
    private func generalPath(_ drawables: [Drawable], background: Color) throws -> Frame {
        let canvas = try Frame(width: plan.outputWidth, height: plan.outputHeight, format: AV_PIX_FMT_BGRA)
        let (pixels, stride) = canvas.plane(0)
        guard let surface = cairo_image_surface_create_for_data(pixels, CAIRO_FORMAT_ARGB32, Int32(canvas.width),
                                                                Int32(canvas.height), Int32(stride)) else {
            throw EngineError("cannot create a drawing surface", kind: .limit)
        }
        defer { cairo_surface_destroy(surface) }
        guard let cr = cairo_create(surface) else { throw EngineError("cannot create a drawing context", kind: .limit) }
        defer { cairo_destroy(cr) }
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_set_source_rgba(cr, background.red, background.green, background.blue, 1)
        cairo_paint(cr)
        cairo_set_operator(cr, CAIRO_OPERATOR_OVER)
        for d in drawables.reversed() {
            try draw(d, on: cr)
        }
        cairo_surface_flush(surface)
        return try toOutput(canvasScaler.convert(canvas, width: plan.outputWidth, height: plan.outputHeight, format: AV_PIX_FMT_YUV420P,
                                                 sourceColor: ColorDescription(space: compositorColor.space, range: AVCOL_RANGE_JPEG),
                                                 outputColor: compositorColor))
    }

    /// One layer, through its mask when it has one (the mask drawn over the whole output).
    private func draw(_ d: Drawable, on cr: OpaquePointer) throws {
        guard let mask = d.mask else { return try paint(d, on: cr) }
        let shape = try overlayRenderer().renderAlone(mask)
        cairo_push_group(cr)
        try paint(d, on: cr)
        cairo_pop_group_to_source(cr)
        let surface = try CairoSurface(drawingInto: shape.view)
        withExtendedLifetime(shape) { cairo_mask_surface(cr, surface.pointer, 0, 0) }
    }

    private func paint(_ d: Drawable, on cr: OpaquePointer) throws {
        let scaler = layerScalers[d.trackID] ?? Scaler(flags: SWS_BILINEAR)
        layerScalers[d.trackID] = scaler
        let sdr = try frame(d.frame, in: .sdr, source: d.source)
        let rgb = try scaler.convert(sdr, width: sdr.width, height: sdr.height, format: AV_PIX_FMT_BGRA,
                                     outputColor: ColorDescription(space: compositorColor.space, range: AVCOL_RANGE_JPEG))
        if d.hasAlpha { rgb.bgraPixels.premultiply() }
        if !d.filters.isEmpty {
            // The picture is in stored pixels here: radii shrink by the layer's own scale.
            let storedPixelScale = outputPixelScale / max(abs(d.transform.determinant).squareRoot(), 1e-6)
            try filterRenderer.apply(d.filters, to: rgb.bgraPixels, pixelScale: storedPixelScale)
        }
        let (pixels, stride) = rgb.plane(0)
        guard let image = cairo_image_surface_create_for_data(pixels, d.isTransparent ? CAIRO_FORMAT_ARGB32 : CAIRO_FORMAT_RGB24, Int32(rgb.width),
                                                              Int32(rgb.height), Int32(stride)) else { return }
        defer { cairo_surface_destroy(image) }
        cairo_save(cr)
        defer { cairo_restore(cr) }
        var matrix = cairo_matrix_t(xx: d.transform.a, yx: d.transform.b, xy: d.transform.c,
                                    yy: d.transform.d, x0: d.transform.tx, y0: d.transform.ty)
        cairo_transform(cr, &matrix)
        let whole = Rect(x: 0, y: 0, width: Double(rgb.width), height: Double(rgb.height))
        // A crop reaching past the picture is cut to it, as AVFoundation cuts one to the clean
        // aperture: past the edge the background shows, not the edge pixels drawn out.
        let visible = (d.crop ?? whole).clamped(to: whole)
        guard visible.width > 0, visible.height > 0 else { return }
        cairo_rectangle(cr, visible.x, visible.y, visible.width, visible.height)
        cairo_clip(cr)
        // Sample only the cropped pixels, so a crop scaled up does not pick up its neighbours.
        let left = max(0, visible.x.rounded(.down)), top = max(0, visible.y.rounded(.down))
        let right = min(whole.width, visible.maxX.rounded(.up)), bottom = min(whole.height, visible.maxY.rounded(.up))
        guard right > left, bottom > top,
              let source = cairo_surface_create_for_rectangle(image, left, top, right - left, bottom - top) else { return }
        defer { cairo_surface_destroy(source) }
        cairo_set_source_surface(cr, source, left, top)
        let pattern = cairo_get_source(cr)
        // PAD: edge pixels extend under the clip instead of fading to transparent.
        cairo_pattern_set_extend(pattern, CAIRO_EXTEND_PAD)
        let shrink = abs(d.transform.determinant) < 0.5
        cairo_pattern_set_filter(pattern, shrink ? CAIRO_FILTER_GOOD : CAIRO_FILTER_BILINEAR)
        cairo_paint_with_alpha(cr, d.opacity)
    }
}

extension VideoPlan {
    /// Whether the picture at composition time `time` is the frame `source` shows then,
    /// exactly as decoded and turned upright, so smart rendering may copy it instead of
    /// encoding it: the topmost layer showing is that source, opaque, unfiltered, uncropped
    /// and placed pixel for pixel by its preferred transform on an output of its upright size
    /// and pixel format (its colours are the plan's: smart rendering makes them the source's),
    /// and nothing is drawn over it. Erring towards false only
    /// costs an encoded frame.
    package func showsUntouched(_ source: SegmentSource, at time: MediaTime, pixelFormat: AVPixelFormat) -> Bool {
        guard filters.filters(at: time).isEmpty, let instruction = instruction(at: time) else { return false }
        let showing = instruction.layers.lazy.compactMap { layer -> (layer: Layer, source: SegmentSource)? in
            guard layer.opacity.value(at: time) > 0, let shown = layer.segments.first(where: { $0.targetRange.contains(time) })?.source else { return nil }
            return (layer, shown)
        }
        guard let (top, shown) = showing.first, shown == source, top.opacity.value(at: time) >= 1, top.crop?.crop(at: time) == nil, top.mask == nil,
              top.filters.filters(at: time).isEmpty else { return false }
        let outputScale = AffineTransform.scale(Double(outputWidth) / renderSize.width, Double(outputHeight) / renderSize.height)
        let upright = source.preferredTransform.apply(Rect(x: 0, y: 0, width: source.naturalSize.width, height: source.naturalSize.height))
        guard top.transform.value(at: time).concatenating(outputScale) == source.preferredTransform,
              Double(outputWidth) == upright.width, Double(outputHeight) == upright.height,
              pixelFormat == outputColor.pixelFormat, (encoderFormat ?? pixelFormat) == pixelFormat else { return false }
        guard let tree = overlay?.snapshot(at: time) else { return true }
        return LayerRenderer.showsVideoUntouched(tree, renderSize: renderSize)
    }
}
