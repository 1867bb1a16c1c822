import CMoonAVShim
import CMoonFFmpeg
import MoonreelMedia

/// GIF colours made as ffmpeg's `palettegen`/`paletteuse` make them: a first pass over
/// every frame builds one 256-colour palette for the whole clip (`palettegen`, which keeps
/// only a colour histogram, so memory stays flat), and the second maps each frame onto it
/// with error-diffusion dithering (`paletteuse`). Frames come in as BGRA.
final class GIFPalette {
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private let input: UnsafeMutablePointer<AVFilterContext>
    private let sink: UnsafeMutablePointer<AVFilterContext>

    /// The first pass: `frames` yields every frame of the clip (nil at the end).
    static func palette(width: Int, height: Int, frames: () throws -> Frame?) throws -> Frame {
        let generator = try FilterChain(videoFilters: "palettegen=stats_mode=full", width: width, height: height,
                                        pixelFormat: AV_PIX_FMT_BGRA, threads: 1)
        while let frame = try frames() { try generator.push(frame) }
        try generator.push(nil)
        guard let palette = try generator.next() else { throw EngineError("the GIF palette could not be made (no frames)", kind: .encode) }
        return palette
    }

    /// The second pass, for frames of this size whose timestamps count `frameDuration`s.
    init(palette: Frame, width: Int, height: Int, frameDuration: MediaTime) throws {
        graph = avfilter_graph_alloc()
        guard let graph else { throw EngineError("out of memory", kind: .limit) }
        let timeBase = frameDuration.reduced()
        func filter(_ name: String, _ label: String, _ arguments: String?) throws -> UnsafeMutablePointer<AVFilterContext> {
            var context: UnsafeMutablePointer<AVFilterContext>? = nil
            try check(avfilter_graph_create_filter(&context, avfilter_get_by_name(name), label, arguments, nil, graph),
                      "creating the GIF \(name) filter")
            guard let context else { throw EngineError("cannot create the GIF \(name) filter", kind: .internal) }
            return context
        }
        let bgra = AV_PIX_FMT_BGRA.rawValue
        input = try filter("buffer", "in", "video_size=\(width)x\(height):pix_fmt=\(bgra):time_base=\(timeBase.value)/\(timeBase.timescale):pixel_aspect=1/1")
        let paletteInput = try filter("buffer", "palette", "video_size=\(palette.width)x\(palette.height):pix_fmt=\(palette.pointer.pointee.format):time_base=1/1:pixel_aspect=1/1")
        let mapper = try filter("paletteuse", "use", nil)
        sink = try filter("buffersink", "out", nil)
        try check(avfilter_link(input, 0, mapper, 0), "linking the GIF filters")
        try check(avfilter_link(paletteInput, 0, mapper, 1), "linking the GIF filters")
        try check(avfilter_link(mapper, 0, sink, 0), "linking the GIF filters")
        try check(avfilter_graph_config(graph, nil), "configuring the GIF filters")
        // paletteuse holds its one palette frame for every frame that follows.
        palette.pointer.pointee.pts = 0
        try check(av_buffersrc_add_frame_flags(paletteInput, palette.pointer, Int32(AV_BUFFERSRC_FLAG_KEEP_REF)), "feeding the GIF palette")
        try check(av_buffersrc_add_frame_flags(paletteInput, nil, 0), "feeding the GIF palette")
    }

    deinit { avfilter_graph_free(&graph) }

    /// The palette-mapped (PAL8) frames ready after feeding `frame` (nil: the end).
    func map(_ frame: Frame?) throws -> [Frame] {
        try check(av_buffersrc_add_frame_flags(input, frame?.pointer, 0), "feeding the GIF filters")
        var mapped: [Frame] = []
        while true {
            let output = try Frame()
            let status = av_buffersink_get_frame(sink, output.pointer)
            if status == MOON_AVERROR_EOF || status == MOON_AVERROR_EAGAIN { return mapped }
            try check(status, "mapping GIF colours")
            mapped.append(output)
        }
    }
}
