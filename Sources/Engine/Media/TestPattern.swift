import CMoonFFmpeg
import CMoonAVShim

/// Makes a test clip with FFmpeg's own generators (libavfilter `testsrc2`: colour bars with
/// a moving element and a frame counter; `sine`: a tone), encoded to H.264 + AAC. Used by
/// the built-in demo so Moonreel runs with no media of the user's.
public enum TestPattern {
    public static func write(to path: String, seconds: Int = 8, width: Int = 1280, height: Int = 720,
                             rate: Int = 30, toneFrequency: Int = 440) throws {
        let output = try SafeOutput(path: path, overwrite: true, inputs: [])
        defer { output.discard() }
        let preset = ExportPreset(name: "test pattern", video: .h264, boundingBox: nil, crf: 23, speed: "veryfast", audioBitRate: 128_000)
        let muxer = try Muxer(path: output.temporaryPath, fileType: "mp4")
        let format = AudioFormat(sampleRate: 48000, channels: 2)
        let color = ColorDescription.forOutput(width: width, height: height)
        let video = try Encoder.video(preset, width: width, height: height,
                                      frameDuration: MediaTime(value: 1, timescale: Int32(rate)), color: color, muxer: muxer)
        let audio = try Encoder.audio(preset, format: format, muxer: muxer)
        try muxer.writeHeader(metadata: ["title": "Moonreel test pattern"], fastStart: true)
        let pictures = try FilterChain(chain: [("testsrc2", "size=\(width)x\(height):rate=\(rate):duration=\(seconds)"),
                                                ("format", "pix_fmts=yuv420p")], sink: "buffersink")
        let tone = try FilterChain(chain: [("sine", "frequency=\(toneFrequency):sample_rate=48000:duration=\(seconds)"),
                                            ("aformat", "sample_fmts=fltp:channel_layouts=stereo")], sink: "abuffersink")
        tone.setFrameSize(audio.frameSize)
        var videoDone = false, audioDone = false
        var videoTime = MediaTime.zero, audioTime = MediaTime.zero
        while !videoDone || !audioDone {
            if !videoDone && (audioDone || videoTime <= audioTime) {
                if let frame = try pictures.next() {
                    frame.pointer.pointee.colorspace = color.space
                    frame.pointer.pointee.color_range = color.range
                    videoTime = MediaTime(value: frame.pointer.pointee.pts, timescale: Int32(rate))
                    try video.encode(frame)
                } else { videoDone = true }
            } else if let frame = try tone.next() {
                audioTime = MediaTime(value: frame.pointer.pointee.pts, timescale: 48000)
                try audio.encode(frame)
            } else { audioDone = true }
        }
        try video.encode(nil)
        try audio.encode(nil)
        try muxer.finish()
        try output.commit()
    }
}

/// A linear libavfilter chain pulled frame by frame at its sink. It starts either with a
/// source filter (`testsrc2`, `sine`) that generates on demand, or with `abuffer`, which is
/// fed through `push` (e.g. `abuffer → atempo → abuffersink` for time-stretching audio).
final class FilterChain {
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private let head: UnsafeMutablePointer<AVFilterContext>
    private let sink: UnsafeMutablePointer<AVFilterContext>

    init(chain: [(name: String, arguments: String)], sink sinkName: String) throws {
        graph = avfilter_graph_alloc()
        guard let graph else { throw EngineError("out of memory") }
        var first: UnsafeMutablePointer<AVFilterContext>? = nil
        var previous: UnsafeMutablePointer<AVFilterContext>? = nil
        for (index, (name, arguments)) in chain.enumerated() {
            var context: UnsafeMutablePointer<AVFilterContext>? = nil
            try check(avfilter_graph_create_filter(&context, avfilter_get_by_name(name), "f\(index)", arguments, nil, graph),
                      "creating the \(name) filter")
            if let previous { try check(avfilter_link(previous, 0, context, 0), "linking the \(name) filter") }
            first = first ?? context
            previous = context
        }
        guard let first else { throw EngineError("a filter chain needs at least one filter") }
        var sinkContext: UnsafeMutablePointer<AVFilterContext>? = nil
        try check(avfilter_graph_create_filter(&sinkContext, avfilter_get_by_name(sinkName), "sink", nil, nil, graph), "creating the sink")
        guard let sinkContext else { throw EngineError("cannot create a filter sink") }
        try check(avfilter_link(previous, 0, sinkContext, 0), "linking the sink")
        try check(avfilter_graph_config(graph, nil), "configuring the filters")
        head = first
        sink = sinkContext
    }

    deinit { avfilter_graph_free(&graph) }

    /// Makes the sink hand out frames of exactly this many samples (an encoder's frame size).
    func setFrameSize(_ samples: Int) { av_buffersink_set_frame_size(sink, UInt32(samples)) }

    /// Feeds a chain that starts with `abuffer`; nil marks the end of the input so the
    /// filters flush what they hold.
    func push(_ frame: Frame?) throws {
        try check(av_buffersrc_add_frame_flags(head, frame?.pointer, 0), "feeding the filters")
    }

    /// The next filtered frame, or nil when none is ready: at the end of the chain, or
    /// (for a pushed chain) until more input arrives.
    func next() throws -> Frame? {
        let frame = try Frame()
        let status = av_buffersink_get_frame(sink, frame.pointer)
        if status == MOON_AVERROR_EOF || status == MOON_AVERROR_EAGAIN { return nil }
        try check(status, "filtering")
        return frame
    }
}
