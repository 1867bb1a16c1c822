import CMoonFFmpeg

/// Renders single composed frames to PNG, JPEG or WebP files, like `AVAssetImageGenerator` with zero
/// tolerance: the frame at exactly the requested time, through the same renderer as export.
public final class ImageGenerator {
    /// The composition frames are taken from (AVAssetImageGenerator's `asset`).
    public let composition: Composition
    /// Frozen into a render plan at the first `copyImage`; setting another one starts afresh.
    public var videoComposition: VideoComposition? { didSet { renderer = nil } }
    /// Whether `copyImage` may replace an existing file (never one of the inputs).
    public var overwrite = false
    /// Files that no image may replace, overwrite or not (see `InputRegistry`).
    public var readFiles: InputRegistry?
    private var renderer: VideoRenderer?

    /// A generator for `composition`, like `AVAssetImageGenerator(asset:)` with zero tolerance.
    /// `videoComposition` nil: each video track upright at the sources' size, as
    /// `VideoComposition.properties(of:)` makes it.
    public init(composition: Composition, videoComposition: VideoComposition? = nil) {
        self.composition = composition
        self.videoComposition = videoComposition
    }

    /// Writes the composed frame at `time` at the render size, in the format the file
    /// name's extension names. An existing file is replaced only when `overwrite` is set.
    /// Returns the image's size.
    @discardableResult
    public func copyImage(at time: MediaTime, to path: String) throws -> (width: Int, height: Int) {
        let format = try StillImageFormat(forPath: path)
        guard time >= .zero, time < composition.duration else {
            throw EngineError("time \(time.seconds) s is outside the composition (0…\(composition.duration.seconds) s)")
        }
        let output = try SafeOutput(path: path, overwrite: overwrite, inputs: composition.sourcePaths, readFiles: readFiles)
        defer { output.discard() }
        let frame = try currentRenderer().render(at: time)
        try StillImageWriter.write(frame, as: format, to: output.temporaryPath)
        try output.commit()
        return (frame.width, frame.height)
    }

    /// The composed frame at `time` as pixels in memory (AVAssetImageGenerator's
    /// `copyCGImage(at:actualTime:)`), e.g. for layer contents; the time is exact.
    /// With `width` (smaller than the render width), the picture is scaled down to it, its
    /// aspect kept: thumbnails.
    public func image(at time: MediaTime, width: Int? = nil) throws -> RGBAImage {
        guard time >= .zero, time < composition.duration else {
            throw EngineError("time \(time.seconds) s is outside the composition (0…\(composition.duration.seconds) s)")
        }
        let frame = try currentRenderer().render(at: time)
        let outputWidth = min(frame.width, max(1, width ?? frame.width))
        let outputHeight = max(1, Int((Double(frame.height) * Double(outputWidth) / Double(frame.width)).rounded()))
        let bgra = try Scaler(flags: SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT)
            .convert(frame, width: outputWidth, height: outputHeight, format: AV_PIX_FMT_BGRA,
                     outputColor: ColorDescription(space: ColorDescription.of(frame).space, range: AVCOL_RANGE_JPEG))
        let image = try RGBAImage(width: bgra.width, height: bgra.height)
        let (pixels, stride) = bgra.plane(0)
        for y in 0..<image.height {
            image.row(y).update(from: pixels + y * stride, count: image.width * 4)
            for x in 0..<image.width { image.row(y)[x * 4 + 3] = 255 } // opaque
        }
        return image
    }

    /// Writes pixels in memory (an `image(at:)` result) as a PNG, JPEG or WebP file.
    public static func write(_ image: RGBAImage, to path: String, overwrite: Bool, readFiles: InputRegistry? = nil) throws {
        let format = try StillImageFormat(forPath: path)
        let output = try SafeOutput(path: path, overwrite: overwrite, inputs: [], readFiles: readFiles)
        defer { output.discard() }
        let frame = try Frame(width: image.width, height: image.height, format: AV_PIX_FMT_BGRA)
        let (pixels, stride) = frame.plane(0)
        for y in 0..<image.height { (pixels + y * stride).update(from: image.row(y), count: image.width * 4) }
        frame.pointer.pointee.color_range = AVCOL_RANGE_JPEG
        try StillImageWriter.write(frame, as: format, to: output.temporaryPath)
        try output.commit()
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

/// The still-image files `copyImage` and `moonreel snapshot` write, chosen by the name's
/// extension (a JPEG name must not receive PNG bytes).
public enum StillImageFormat: String, Sendable, CaseIterable {
    /// PNG (lossless).
    case png
    /// JPEG (`.jpg` or `.jpeg`).
    case jpeg
    /// WebP.
    case webp

    /// The format a file name's extension names (.png, .jpg or .jpeg, .webp; any case).
    /// - Throws: `EngineError` for any other name.
    public init(forPath path: String) throws {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let ext = name.split(separator: ".").count > 1 ? name.split(separator: ".").last.map { $0.lowercased() } : nil
        switch ext {
        case "png": self = .png
        case "jpg", "jpeg": self = .jpeg
        case "webp": self = .webp
        default:
            throw EngineError("image \"\(path)\": cannot tell the format from the name; use a .png, .jpg or .webp name")
        }
    }

    var codec: AVCodecID {
        switch self {
        case .png: return AV_CODEC_ID_PNG
        case .jpeg: return AV_CODEC_ID_MJPEG
        case .webp: return AV_CODEC_ID_WEBP
        }
    }

    /// What the encoder is fed: RGB for PNG and WebP (libwebp converts with its own, more
    /// careful, filter), full-range BT.601 YUV for JPEG, as JFIF defines it.
    var pixelFormat: AVPixelFormat {
        switch self {
        case .png: return AV_PIX_FMT_RGB24
        case .jpeg: return AV_PIX_FMT_YUVJ420P
        case .webp: return AV_PIX_FMT_BGRA
        }
    }
}

/// Encodes one frame as a PNG, JPEG or WebP file with FFmpeg's encoders.
enum StillImageWriter {
    static func write(_ frame: Frame, as format: StillImageFormat, to path: String) throws {
        let sourceSpace = ColorDescription.of(frame).space
        let outputColor = format == .jpeg ? ColorDescription(space: AVCOL_SPC_SMPTE170M, range: AVCOL_RANGE_JPEG)
                                          : ColorDescription(space: sourceSpace, range: AVCOL_RANGE_JPEG)
        let picture = try Scaler(flags: SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT)
            .convert(frame, width: frame.width, height: frame.height, format: format.pixelFormat, outputColor: outputColor)
        guard let codec = avcodec_find_encoder(format.codec), let context = avcodec_alloc_context3(codec) else {
            throw EngineError("this FFmpeg has no \(format.rawValue.uppercased()) encoder")
        }
        var maybeContext: UnsafeMutablePointer<AVCodecContext>? = context
        defer { avcodec_free_context(&maybeContext) }
        context.pointee.width = Int32(picture.width)
        context.pointee.height = Int32(picture.height)
        context.pointee.pix_fmt = format.pixelFormat
        context.pointee.time_base = AVRational(num: 1, den: 1)
        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        switch format {
        case .png: break
        case .jpeg:
            context.pointee.color_range = AVCOL_RANGE_JPEG
            context.pointee.flags |= AV_CODEC_FLAG_QSCALE
            context.pointee.global_quality = 2 * 118 // FF_QP2LAMBDA × q 2: visually lossless
            picture.pointer.pointee.quality = context.pointee.global_quality
        case .webp:
            av_dict_set(&options, "quality", "90", 0)
        }
        try check(avcodec_open2(context, codec, &options), "opening the \(format.rawValue.uppercased()) encoder")
        try check(avcodec_send_frame(context, picture.pointer), "encoding \(format.rawValue.uppercased())")
        try check(avcodec_send_frame(context, nil), "encoding \(format.rawValue.uppercased())")
        guard let packet = av_packet_alloc() else { throw EngineError("out of memory") }
        var maybePacket: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&maybePacket) }
        try check(avcodec_receive_packet(context, packet), "encoding \(format.rawValue.uppercased())")
        var io: UnsafeMutablePointer<AVIOContext>? = nil
        try check(avio_open(&io, path, AVIO_FLAG_WRITE), "creating the file", context: "image \"\(path)\"")
        avio_write(io, packet.pointee.data, packet.pointee.size)
        try check(avio_closep(&io), "writing the file", context: "image \"\(path)\"")
    }
}
