import CMoonFFmpeg
import MoonreelMedia

/// Runs lists of filters over pictures, in order: composed or per-track video frames
/// (4:2:0 Y'CbCr, 8-bit SDR or 10-bit HDR, opaque) and layer drawings (premultiplied BGRA).
///
/// Video frames stay in Y'CbCr: blurs run in libavfilter on the planes, colour filters and
/// vignettes in place on the samples; nothing is converted to RGB and back. Filters that
/// change nothing (radius 0, saturation 1…) are skipped. On HDR frames the colour filters
/// work on the HDR signal (BT.2020 R'G'B' with its HLG or PQ curve) with the same maths.
///
/// Radii are in render-size pixels; `pixelScale` says how many of the picture's pixels one
/// of those is. Graphs and sampled cubes are kept for the next frame. One owner thread.
package final class FilterRenderer {
    private var blurGraphs: [BlurGraph.Key: BlurGraph] = [:]
    /// The last run of colour filters and its cube: a constant look is sampled once.
    private var lastCube: (run: [Filter], cube: ColorCube)?
    /// The last vignette's factors, with what they were made for.
    private var lastVignette: (filter: Filter, mask: Vignette.Mask)?
    /// Graphs kept for layer drawings of other sizes, beyond which the oldest are dropped.
    private static let maxGraphs = 8

    package init() {}

    /// `frame` through `filters`: the same frame changed in place (made writable first) or
    /// a new one. Filters that make pixels transparent cannot run here (see `makesTransparent`).
    package func apply(_ filters: [Filter], to frame: Frame, pixelScale: Double) throws -> Frame {
        var frame = frame
        try forEachStage(of: filters) { stage in
            switch stage {
            case .colors(let run):
                try check(av_frame_make_writable(frame.pointer), "preparing a frame for filters")
                let image = try planes(of: frame)
                if run.allSatisfy({ $0.kind == .colorControls }) {
                    for filter in run { ColorFilters.applyColorControls(filter, to: image) }
                } else {
                    cube(for: run).apply(to: image)
                }
            case .single(let filter):
                switch filter.kind {
                case .gaussianBlur:
                    frame = try blurGraph(for: frame, lumaOnly: false).blur(frame, sigma: filter.number("radius") * pixelScale)
                case .sharpenLuminance:
                    let blurred = try blurGraph(for: frame, lumaOnly: true).blur(frame, sigma: filter.number("radius") * pixelScale)
                    try check(av_frame_make_writable(blurred.pointer), "preparing a frame for sharpening")
                    Sharpen.combine(original: try planes(of: frame), into: try planes(of: blurred), sharpness: Float(filter.number("sharpness")))
                    frame = blurred
                case .vignette:
                    try check(av_frame_make_writable(frame.pointer), "preparing a frame for filters")
                    try vignetteMask(filter, for: frame).apply(to: try planes(of: frame))
                case .grain:
                    try check(av_frame_make_writable(frame.pointer), "preparing a frame for filters")
                    Grain(filter, pixelScale: pixelScale).apply(to: try planes(of: frame))
                case .glitch:
                    guard let glitch = Glitch(filter, width: frame.width, height: frame.height, pixelScale: pixelScale) else { break }
                    try check(av_frame_make_writable(frame.pointer), "preparing a frame for filters")
                    glitch.apply(to: try planes(of: frame))
                case .chromaKey, .lumaThreshold:
                    throw EngineError("\(filter.kind.rawValue) makes pixels transparent, which an opaque video frame cannot show", kind: .unsupported)
                case .colorControls, .exposureAdjust, .colorCube, .whitePointAdjust:
                    break // grouped into colour runs
                }
            }
        }
        return frame
    }

    /// Premultiplied BGRA `pixels` through `filters`, in place.
    package func apply(_ filters: [Filter], to pixels: BGRAPixels, pixelScale: Double) throws {
        try forEachStage(of: filters) { stage in
            switch stage {
            case .colors(let run):
                cube(for: run).apply(to: pixels)
            case .single(let filter):
                switch filter.kind {
                case .gaussianBlur:
                    let source = try Frame(copying: pixels)
                    try blurGraph(for: source, lumaOnly: false).blur(source, sigma: filter.number("radius") * pixelScale).copy(into: pixels)
                case .sharpenLuminance:
                    let source = try Frame(copying: pixels)
                    let blurred = try blurGraph(for: source, lumaOnly: false).blur(source, sigma: filter.number("radius") * pixelScale)
                    Sharpen.combine(pixels, blurred: blurred, sharpness: Float(filter.number("sharpness")))
                case .vignette:
                    Vignette(filter).apply(to: pixels)
                case .chromaKey:
                    ChromaKey(filter).apply(to: pixels)
                case .lumaThreshold:
                    LumaThreshold(filter).apply(to: pixels)
                case .grain:
                    Grain(filter, pixelScale: pixelScale).apply(to: pixels)
                case .glitch:
                    Glitch(filter, width: pixels.width, height: pixels.height, pixelScale: pixelScale)?.apply(to: pixels)
                case .colorControls, .exposureAdjust, .colorCube, .whitePointAdjust:
                    break // grouped into colour runs
                }
            }
        }
    }

    private enum Stage {
        /// Consecutive pointwise colour filters, applied as one.
        case colors([Filter])
        case single(Filter)
    }

    private func forEachStage(of filters: [Filter], _ body: (Stage) throws -> Void) throws {
        var run: [Filter] = []
        for filter in filters where !filter.isIdentity {
            if filter.kind.isPointwiseColor {
                run.append(filter)
                continue
            }
            if !run.isEmpty { try body(.colors(run)) }
            run = []
            try body(.single(filter))
        }
        if !run.isEmpty { try body(.colors(run)) }
    }

    private func cube(for run: [Filter]) -> ColorCube {
        if let last = lastCube, last.run == run { return last.cube }
        let made = ColorFilters.cube(for: run)
        lastCube = (run, made)
        return made
    }

    private func vignetteMask(_ filter: Filter, for frame: Frame) throws -> Vignette.Mask {
        if let last = lastVignette, last.filter == filter, last.mask.width == frame.width, last.mask.height == frame.height {
            return last.mask
        }
        let made = Vignette.Mask(Vignette(filter), width: frame.width, height: frame.height)
        lastVignette = (filter, made)
        return made
    }

    private func blurGraph(for frame: Frame, lumaOnly: Bool) throws -> BlurGraph {
        let key = BlurGraph.Key(width: frame.width, height: frame.height, format: frame.pixelFormat, lumaOnly: lumaOnly)
        if let graph = blurGraphs[key] { return graph }
        if blurGraphs.count >= Self.maxGraphs { blurGraphs.removeAll() }
        // Built at radius 0; `blur` sets the real one (by command, as for any later change).
        let graph = try BlurGraph(key, sigma: 0)
        blurGraphs[key] = graph
        return graph
    }

    private func planes(of frame: Frame) throws -> PlanarYUVImage {
        guard let image = PlanarYUVImage(frame: frame.pointer) else {
            throw EngineError("filters run on 4:2:0 video (8-bit, or 10-bit HDR), not on \(av_get_pix_fmt_name(frame.pixelFormat).map { String(cString: $0) } ?? "other") frames", kind: .unsupported)
        }
        return image
    }
}
