import CMoonFFmpeg

/// Renders single composed frames to PNG, like `AVAssetImageGenerator` with zero
/// tolerance: the frame at exactly the requested time, through the same renderer as export.
public final class ImageGenerator {
    public let composition: Composition
    /// Frozen into a render plan at the first `copyImage`; setting another one starts afresh.
    public var videoComposition: VideoComposition? { didSet { renderer = nil } }
    private var renderer: VideoRenderer?

    public init(composition: Composition, videoComposition: VideoComposition? = nil) {
        self.composition = composition
        self.videoComposition = videoComposition
    }

    /// Writes the composed frame at `time` as a PNG at the render size. Returns its size.
    @discardableResult
    public func copyImage(at time: MediaTime, to path: String, overwrite: Bool = true) throws -> (width: Int, height: Int) {
        guard time >= .zero, time < composition.duration else {
            throw EngineError("time \(time.seconds) s is outside the composition (0…\(composition.duration.seconds) s)")
        }
        let renderer = try currentRenderer()
        let frame = try renderer.render(at: time)
        let output = try SafeOutput(path: path, overwrite: overwrite, inputs: [])
        defer { output.discard() }
        try PNGWriter.write(frame, to: output.temporaryPath)
        try output.commit()
        return (frame.width, frame.height)
    }

    private func currentRenderer() throws -> VideoRenderer {
        if let renderer { return renderer }
        let videoComposition = self.videoComposition ?? VideoComposition.properties(of: composition)
        let size = videoComposition.renderSize
        let width = max(1, Int((size.width * videoComposition.renderScale).rounded()))
        let height = max(1, Int((size.height * videoComposition.renderScale).rounded()))
        let plan = try VideoPlan.make(composition: composition, videoComposition: videoComposition,
                                      range: TimeRange(start: .zero, duration: composition.duration),
                                      outputWidth: width, outputHeight: height)
        let made = VideoRenderer(plan: plan)
        renderer = made
        return made
    }
}

/// Encodes one frame as an RGB PNG with FFmpeg's PNG encoder.
enum PNGWriter {
    static func write(_ frame: Frame, to path: String) throws {
        let rgb = try Scaler(flags: SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT)
            .convert(frame, width: frame.width, height: frame.height, format: AV_PIX_FMT_RGB24,
                     outputColor: ColorDescription(space: ColorDescription.of(frame).space, range: AVCOL_RANGE_JPEG))
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_PNG), let context = avcodec_alloc_context3(codec) else {
            throw EngineError("this FFmpeg has no PNG encoder")
        }
        var maybeContext: UnsafeMutablePointer<AVCodecContext>? = context
        defer { avcodec_free_context(&maybeContext) }
        context.pointee.width = Int32(rgb.width)
        context.pointee.height = Int32(rgb.height)
        context.pointee.pix_fmt = AV_PIX_FMT_RGB24
        context.pointee.time_base = AVRational(num: 1, den: 1)
        try check(avcodec_open2(context, codec, nil), "opening the PNG encoder")
        try check(avcodec_send_frame(context, rgb.pointer), "encoding PNG")
        guard let packet = av_packet_alloc() else { throw EngineError("out of memory") }
        var maybePacket: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&maybePacket) }
        try check(avcodec_receive_packet(context, packet), "encoding PNG")
        var io: UnsafeMutablePointer<AVIOContext>? = nil
        try check(avio_open(&io, path, AVIO_FLAG_WRITE), "creating the file", context: "image \"\(path)\"")
        avio_write(io, packet.pointee.data, packet.pointee.size)
        try check(avio_closep(&io), "writing the file", context: "image \"\(path)\"")
    }
}
