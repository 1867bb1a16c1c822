import CMoonFFmpeg
import CMoonAVShim

/// The high-dynamic-range transfer a video uses, if any.
public enum HDRFormat: String, Sendable, CaseIterable {
    /// Hybrid log-gamma (ARIB STD-B67): what iPhones record by default since the 12.
    case hlg = "HLG"
    /// Perceptual quantizer (SMPTE ST 2084): HDR10 and Dolby Vision profile 5.
    case pq = "PQ"
}

/// How a video track's numbers are meant to be read as colours: primaries, transfer,
/// matrix, range and bit depth, as the file tags them (names as FFmpeg and ffprobe print
/// them), plus Dolby Vision's configuration when present.
public struct VideoColor: Sendable, Hashable {
    let primariesValue: AVColorPrimaries
    let transferValue: AVColorTransferCharacteristic
    let matrixValue: AVColorSpace
    /// True for full ("pc", JPEG) range, false for limited ("tv") range, the usual case.
    public let isFullRange: Bool
    /// Bits per sample of the pixel format (8, 10, 12); 8 when unknown.
    public let bitDepth: Int
    /// "8.4" for profile 8, compatibility id 4 (an HLG base layer), nil without Dolby Vision.
    public let dolbyVision: String?
    /// HDR10's mastering display and light levels, as the stream states them or, for PQ,
    /// as its first frame carries them; nil when the file gives none.
    public internal(set) var hdrMetadata: HDRStaticMetadata?
    /// Whether a PQ video carries HDR10+ dynamic metadata (SMPTE ST 2094-40: a tone-mapping
    /// curve per scene, from x265's `--dhdr10-info` or a Samsung phone), as its first frame shows.
    public internal(set) var hdr10Plus = false

    init(parameters: AVCodecParameters, stream: UnsafePointer<AVStream>) {
        primariesValue = parameters.color_primaries
        transferValue = parameters.color_trc
        matrixValue = parameters.color_space
        let format = AVPixelFormat(parameters.format)
        let fullRangeFormats: Set<AVPixelFormat> = [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P]
        isFullRange = parameters.color_range == AVCOL_RANGE_JPEG || fullRangeFormats.contains(format)
        bitDepth = av_pix_fmt_desc_get(format).map { Int($0.pointee.comp.0.depth) } ?? 8
        var size = 0
        if let data = moon_stream_side_data(stream, AV_PKT_DATA_DOVI_CONF, &size), size >= MemoryLayout<AVDOVIDecoderConfigurationRecord>.size {
            let record = UnsafeRawPointer(data).loadUnaligned(as: AVDOVIDecoderConfigurationRecord.self)
            dolbyVision = "\(record.dv_profile).\(record.dv_bl_signal_compatibility_id)"
        } else {
            dolbyVision = nil
        }
        hdrMetadata = HDRStaticMetadata(stream: stream)
    }

    /// Colour primaries as FFmpeg names them ("bt709", "bt2020"; "unknown" when untagged).
    public var primaries: String { Self.name(av_color_primaries_name(primariesValue)) }
    /// Transfer characteristic as FFmpeg names it ("bt709", "arib-std-b67", "smpte2084").
    public var transfer: String { Self.name(av_color_transfer_name(transferValue)) }
    /// Y'CbCr matrix as FFmpeg names it ("bt709", "bt2020nc", "smpte170m").
    public var matrix: String { Self.name(av_color_space_name(matrixValue)) }
    /// "full" or "limited" (see `isFullRange`).
    public var range: String { isFullRange ? "full" : "limited" }

    /// HLG or PQ when the transfer says so. Dolby Vision profile 8.4 carries an HLG base
    /// layer and profile 8.1 an HDR10 (PQ) one: both are read as their base layer.
    public var hdr: HDRFormat? {
        switch transferValue {
        case AVCOL_TRC_ARIB_STD_B67: return .hlg
        case AVCOL_TRC_SMPTE2084: return .pq
        default: return nil
        }
    }

    /// The range frames are decoded in: HLG, PQ or SDR.
    public var dynamicRange: DynamicRange {
        switch hdr {
        case .hlg: return .hlg
        case .pq: return .pq
        case nil: return .sdr
        }
    }

    /// "10-bit, bt2020 / arib-std-b67 / bt2020nc, limited range, HDR (HLG), Dolby Vision 8.4".
    public var summary: String {
        var parts = ["\(bitDepth)-bit", "\(primaries) / \(transfer) / \(matrix)", "\(range) range"]
        if let hdr { parts.append("HDR (\(hdr.rawValue))") }
        if let dolbyVision { parts.append("Dolby Vision \(dolbyVision)") }
        if hdr10Plus { parts.append("HDR10+") }
        if let hdrMetadata { parts.append(hdrMetadata.summary) }
        return parts.joined(separator: ", ")
    }

    private static func name(_ text: UnsafePointer<CChar>?) -> String {
        text.map { String(cString: $0) } ?? "unknown"
    }

    /// The one rule for untagged video, as players apply it: BT.709 from 720 lines up,
    /// BT.601 below. Used both to read untagged pixels and to tag what is written.
    static func standardMatrix(forHeight height: Int) -> AVColorSpace {
        height >= 720 ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M
    }
}
