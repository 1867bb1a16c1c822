import CMoonFFmpeg

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
            throw EngineError("image \"\(path)\": cannot tell the format from the name; use a .png, .jpg or .webp name", kind: .unsupported, subject: path)
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

/// Encodes one frame as a PNG, JPEG or WebP image with FFmpeg's encoders.
package enum StillImageWriter {
    package static func write(_ frame: Frame, as format: StillImageFormat, to path: String) throws {
        let bytes = try encode(frame, as: format)
        var io: UnsafeMutablePointer<AVIOContext>? = nil
        try check(avio_open(&io, path, AVIO_FLAG_WRITE), "creating the file", context: "image \"\(path)\"")
        bytes.withUnsafeBufferPointer { avio_write(io, $0.baseAddress, Int32($0.count)) }
        try check(avio_closep(&io), "writing the file", context: "image \"\(path)\"")
    }

    /// The image file's bytes. `jpegQuality`: FFmpeg's qscale, 2 (visually lossless) to 31.
    /// With `size` (a preview), the picture is scaled and turned into colour in one bicubic
    /// step, as `ffmpeg -vf scale=W:H` and players show a picture smaller, and a JPEG keeps
    /// every pixel's colour (4:4:4).
    /// `scalers` lets a caller that encodes frame after frame (a preview) keep the swscale
    /// contexts instead of making two per picture.
    package static func encode(_ frame: Frame, as format: StillImageFormat, size: (width: Int, height: Int)? = nil,
                               jpegQuality: Int32 = 2, scalers: StillImageScalers = StillImageScalers()) throws -> [UInt8] {
        var source = frame
        let sourceSpace = ColorDescription.of(frame).space
        if let size {
            source = try scalers.resize.convert(frame, width: size.width, height: size.height, format: AV_PIX_FMT_RGB24,
                                                            outputColor: ColorDescription(space: sourceSpace, range: AVCOL_RANGE_JPEG))
        }
        let pixelFormat = format == .jpeg && size != nil ? AV_PIX_FMT_YUVJ444P : format.pixelFormat
        let outputColor = format == .jpeg ? ColorDescription(space: AVCOL_SPC_SMPTE170M, range: AVCOL_RANGE_JPEG)
                                          : ColorDescription(space: sourceSpace, range: AVCOL_RANGE_JPEG)
        let picture = try scalers.convert
            .convert(source, width: source.width, height: source.height, format: pixelFormat,
                     sourceColor: size == nil ? nil : ColorDescription(space: sourceSpace, range: AVCOL_RANGE_JPEG), outputColor: outputColor)
        guard let codec = avcodec_find_encoder(format.codec), let context = avcodec_alloc_context3(codec) else {
            throw EngineError("this FFmpeg has no \(format.rawValue.uppercased()) encoder", kind: .unsupported)
        }
        var maybeContext: UnsafeMutablePointer<AVCodecContext>? = context
        defer { avcodec_free_context(&maybeContext) }
        context.pointee.width = Int32(picture.width)
        context.pointee.height = Int32(picture.height)
        context.pointee.pix_fmt = pixelFormat
        context.pointee.time_base = AVRational(num: 1, den: 1)
        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        switch format {
        case .png: break
        case .jpeg:
            context.pointee.color_range = AVCOL_RANGE_JPEG
            context.pointee.flags |= AV_CODEC_FLAG_QSCALE
            context.pointee.global_quality = max(2, min(31, jpegQuality)) * 118 // FF_QP2LAMBDA × q
            picture.pointer.pointee.quality = context.pointee.global_quality
        case .webp:
            av_dict_set(&options, "quality", "90", 0)
        }
        try check(avcodec_open2(context, codec, &options), "opening the \(format.rawValue.uppercased()) encoder")
        try check(avcodec_send_frame(context, picture.pointer), "encoding \(format.rawValue.uppercased())")
        try check(avcodec_send_frame(context, nil), "encoding \(format.rawValue.uppercased())")
        guard let packet = av_packet_alloc() else { throw EngineError("out of memory", kind: .limit) }
        var maybePacket: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&maybePacket) }
        try check(avcodec_receive_packet(context, packet), "encoding \(format.rawValue.uppercased())")
        return Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
    }
}

/// The two conversions a still image goes through: scaling to a preview's size (bicubic, as
/// `ffmpeg -vf scale` does) and into the encoder's pixel format.
package struct StillImageScalers {
    let resize = Scaler(flags: SWS_BICUBIC)
    let convert = Scaler(flags: SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT)

    package init() {}
}
