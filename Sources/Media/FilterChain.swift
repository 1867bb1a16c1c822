import CMoonFFmpeg
import CMoonAVShim

/// A linear libavfilter chain pulled frame by frame at its sink. It starts either with a
/// source filter (`testsrc2`, `sine`) that generates on demand, or with `buffer`/`abuffer`,
/// which is fed through `push` (e.g. `abuffer → atempo → abuffersink` for time-stretching
/// audio, `buffer → zscale → … → buffersink` for colour conversion).
package final class FilterChain {
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private let head: UnsafeMutablePointer<AVFilterContext>
    private let sink: UnsafeMutablePointer<AVFilterContext>

    /// A video chain written as libavfilter's graph syntax (`zscale=…,format=yuv420p`),
    /// fed frames of one size and pixel format through `push`.
    package init(videoFilters description: String, width: Int, height: Int, pixelFormat: AVPixelFormat, threads: Int32) throws {
        graph = avfilter_graph_alloc()
        guard let graph else { throw EngineError("out of memory", kind: .limit) }
        graph.pointee.nb_threads = threads
        var source: UnsafeMutablePointer<AVFilterContext>? = nil
        let arguments = "video_size=\(width)x\(height):pix_fmt=\(pixelFormat.rawValue):time_base=1/90000:pixel_aspect=1/1"
        try check(avfilter_graph_create_filter(&source, avfilter_get_by_name("buffer"), "in", arguments, nil, graph), "creating the filter input")
        var sinkContext: UnsafeMutablePointer<AVFilterContext>? = nil
        try check(avfilter_graph_create_filter(&sinkContext, avfilter_get_by_name("buffersink"), "out", nil, nil, graph), "creating the filter output")
        guard let source, let sinkContext else { throw EngineError("cannot create a filter graph", kind: .internal) }
        // The parser's open ends: "in" feeds the chain's first filter, its last feeds "out".
        // The parser takes the lists over and leaves what it did not link, freed here.
        var outputs = avfilter_inout_alloc(), inputs = avfilter_inout_alloc()
        defer { avfilter_inout_free(&outputs); avfilter_inout_free(&inputs) }
        guard let openOutput = outputs, let openInput = inputs else { throw EngineError("out of memory", kind: .limit) }
        openOutput.pointee.name = av_strdup("in")
        openOutput.pointee.filter_ctx = source
        openInput.pointee.name = av_strdup("out")
        openInput.pointee.filter_ctx = sinkContext
        try check(avfilter_graph_parse_ptr(graph, description, &inputs, &outputs, nil), "setting up the filters \"\(description)\"")
        try check(avfilter_graph_config(graph, nil), "configuring the filters")
        head = source
        sink = sinkContext
    }

    package init(chain: [(name: String, arguments: String)], sink sinkName: String) throws {
        graph = avfilter_graph_alloc()
        guard let graph else { throw EngineError("out of memory", kind: .limit) }
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
        guard let sinkContext else { throw EngineError("cannot create a filter sink", kind: .internal) }
        try check(avfilter_link(previous, 0, sinkContext, 0), "linking the sink")
        try check(avfilter_graph_config(graph, nil), "configuring the filters")
        head = first
        sink = sinkContext
    }

    deinit { avfilter_graph_free(&graph) }

    /// Makes the sink hand out frames of exactly this many samples (an encoder's frame size).
    func setFrameSize(_ samples: Int) { av_buffersink_set_frame_size(sink, UInt32(samples)) }

    /// Changes an option of a running filter (`avfilter_graph_send_command`), for filters
    /// that take commands, such as gblur's sigma: no rebuilding when a value ramps.
    package func send(_ option: String, _ value: String, to instance: String) throws {
        try check(avfilter_graph_send_command(graph, instance, option, value, nil, 0, 0), "setting \(instance) \(option) to \(value)")
    }

    /// Feeds a chain that starts with `abuffer`; nil marks the end of the input so the
    /// filters flush what they hold.
    package func push(_ frame: Frame?) throws {
        try check(av_buffersrc_add_frame_flags(head, frame?.pointer, 0), "feeding the filters")
    }

    /// The next filtered frame, or nil when none is ready: at the end of the chain, or
    /// (for a pushed chain) until more input arrives.
    package func next() throws -> Frame? {
        let frame = try Frame()
        let status = av_buffersink_get_frame(sink, frame.pointer)
        if status == MOON_AVERROR_EOF || status == MOON_AVERROR_EAGAIN { return nil }
        try check(status, "filtering")
        return frame
    }
}
