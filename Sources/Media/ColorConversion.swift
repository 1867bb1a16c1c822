import CMoonFFmpeg
import CMoonAVShim
#if canImport(Glibc)
import Glibc
#endif

/// Standard or high dynamic range, as frames are coded: SDR in BT.709 or BT.601 (8-bit
/// here), or HDR in BT.2020 with the HLG or PQ transfer (10-bit here).
public enum DynamicRange: String, Sendable, Hashable {
    /// Standard dynamic range (BT.709 or BT.601, 8-bit).
    case sdr
    /// HDR with the hybrid log-gamma transfer (ARIB STD-B67), BT.2020, 10-bit.
    case hlg
    /// HDR with the perceptual quantizer transfer (SMPTE ST 2084, HDR10), BT.2020, 10-bit.
    case pq

    /// What a frame's transfer tag says.
    package static func of(_ frame: Frame) -> DynamicRange { of(transfer: frame.pointer.pointee.color_trc) }

    /// What a transfer tag says.
    static func of(transfer: AVColorTransferCharacteristic) -> DynamicRange {
        switch transfer {
        case AVCOL_TRC_ARIB_STD_B67: return .hlg
        case AVCOL_TRC_SMPTE2084: return .pq
        default: return .sdr
        }
    }

    package var isHDR: Bool { self != .sdr }
    /// The 4:2:0 format frames of this range are composed and encoded in.
    var pixelFormat: AVPixelFormat { isHDR ? AV_PIX_FMT_YUV420P10LE : AV_PIX_FMT_YUV420P }
    package var transfer: AVColorTransferCharacteristic {
        switch self {
        case .sdr: return AVCOL_TRC_BT709
        case .hlg: return AVCOL_TRC_ARIB_STD_B67
        case .pq: return AVCOL_TRC_SMPTE2084
        }
    }
}

/// Converts frames between dynamic ranges with libavfilter (zscale) and, for HDR → SDR, the
/// tone curve applied here between two graphs. The one documented conversion, HDR → SDR:
///
/// 1. linearise with the exact BT.2100 maths (HLG: inverse OETF and the luminance-based
///    OOTF, γ 1.2, on a 1000 cd/m² display; PQ: its EOTF), with linear 1.0 = 203 cd/m², the
///    BT.2408 reference white;
/// 2. map the BT.2020 gamut into BT.709 (3×3 matrix in linear light, out-of-gamut clipped);
/// 3. scale each pixel by `ToneCurve`'s gain for its max(R, G, B), hue kept: identity up to
///    0.8 of reference white, reference white at 0.91 of SDR white, highlights up to
///    1000 cd/m² rolled off evenly in PQ to SDR white;
/// 4. encode with BT.709's transfer (BT.1886, 2.4) into limited-range 8-bit BT.709.
///
/// SDR → HDR (an SDR clip or a composed frame in an HDR export) maps SDR white to reference
/// white (75 % HLG, 58 % PQ); HLG ↔ PQ keeps that anchor. A round trip SDR → HLG → SDR
/// keeps what is at or below reference white: 29.7 dB PSNR for a test pattern, 32.4 dB for
/// 100 % colour bars, which stay saturated (docs/color-and-hdr.md).
package final class ColorConverter {
    let target: DynamicRange
    /// The graph a frame goes through; for SDR output it ends in linear light, and `encoding`
    /// takes the picture on to BT.709 codes once the tone curve has been applied here.
    private var chain: FilterChain?
    private var encoding: FilterChain?
    private var configured: Signature?

    /// What a graph depends on: the input's size, format and colours.
    private struct Signature: Equatable {
        let width: Int, height: Int
        let format: AVPixelFormat
        let range: DynamicRange
        let matrix: AVColorSpace, primaries: AVColorPrimaries, isFullRange: Bool
    }

    package init(to target: DynamicRange) { self.target = target }

    /// Whether frames of `source` need this converter (matrix and range differences alone
    /// are swscale's job).
    package static func needed(from source: DynamicRange, to target: DynamicRange) -> Bool { source != target }

    package func convert(_ frame: Frame) throws -> Frame {
        let f = frame.pointer.pointee
        let signature = Signature(width: frame.width, height: frame.height, format: frame.pixelFormat, range: .of(frame),
                                  matrix: f.colorspace, primaries: f.color_primaries,
                                  isFullRange: ColorDescription.of(frame).range == AVCOL_RANGE_JPEG)
        if signature != configured {
            chain = try FilterChain(videoFilters: ColorConverter.graph(from: signature, to: target),
                                    width: frame.width, height: frame.height, pixelFormat: frame.pixelFormat, threads: 2)
            encoding = target == .sdr
                ? try FilterChain(videoFilters: ColorConverter.sdrEncoding, width: frame.width, height: frame.height,
                                  pixelFormat: ToneCurve.pixelFormat, threads: 2)
                : nil
            configured = signature
        }
        guard let chain else { throw EngineError("colour conversion is not set up", kind: .internal) }
        var output = try filter(frame.reference(), through: chain)
        if let encoding {
            // The curve writes in place; a no-op unless the graph kept a reference to the picture.
            try check(av_frame_make_writable(output.pointer), "preparing a frame for tone mapping")
            ToneCurve.apply(toLinear: output)
            output = try filter(output, through: encoding)
        }
        // The source's HDR and Dolby Vision metadata do not describe the converted picture.
        for type in [AV_FRAME_DATA_MASTERING_DISPLAY_METADATA, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL, AV_FRAME_DATA_DOVI_RPU_BUFFER,
                     AV_FRAME_DATA_DOVI_METADATA, AV_FRAME_DATA_DYNAMIC_HDR_PLUS] {
            av_frame_remove_side_data(output.pointer, type)
        }
        output.pointer.pointee.pts = f.pts
        return output
    }

    private func filter(_ frame: Frame, through chain: FilterChain) throws -> Frame {
        try chain.push(frame)
        guard let output = try chain.next() else { throw EngineError("colour conversion produced no frame", kind: .internal) }
        return output
    }

    /// The zscale names of the input's colours, with the untagged rule for SDR.
    private static func inputTags(_ s: Signature) -> String {
        let range = s.isFullRange ? "pc" : "tv"
        switch s.range {
        case .hlg: return "agamma=0:tin=arib-std-b67:pin=bt2020:min=bt2020nc:rin=\(range)"
        case .pq: return "tin=smpte2084:pin=bt2020:min=bt2020nc:rin=\(range)"
        case .sdr:
            let matrix = s.matrix == AVCOL_SPC_UNSPECIFIED || s.matrix == AVCOL_SPC_RGB ? VideoColor.standardMatrix(forHeight: s.height) : s.matrix
            let is709 = matrix == AVCOL_SPC_BT709
            let isBT2020 = matrix == AVCOL_SPC_BT2020_NCL || matrix == AVCOL_SPC_BT2020_CL
            let primaries = s.primaries == AVCOL_PRI_BT2020 || (isBT2020 && s.primaries == AVCOL_PRI_UNSPECIFIED) ? "bt2020"
                : s.primaries == AVCOL_PRI_BT709 || (is709 && s.primaries == AVCOL_PRI_UNSPECIFIED) ? "bt709" : "smpte170m"
            let matrixName = isBT2020 ? "bt2020nc" : is709 ? "bt709" : "smpte170m"
            return "tin=bt709:pin=\(primaries):min=\(matrixName):rin=\(range)"
        }
    }

    static private func graph(from s: Signature, to target: DynamicRange) -> String {
        let input = inputTags(s)
        switch target {
        case .sdr:
            // Linear BT.709 light for the tone curve, 1.0 = reference white.
            return "zscale=\(input):t=linear:p=bt709:m=gbr:npl=203,format=gbrpf32le"
        case .hlg, .pq:
            // zimg's exact HLG maths (agamma=0) on whichever side is HLG.
            let exact = target == .hlg && s.range != .hlg ? "agamma=0:" : ""
            return "zscale=\(exact)\(input):t=\(target == .hlg ? "arib-std-b67" : "smpte2084"):p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le"
        }
    }

    /// Tone-mapped linear light to limited-range 8-bit BT.709.
    private static let sdrEncoding = "zscale=tin=linear:pin=bt709:min=gbr:t=bt709:p=bt709:m=bt709:r=tv,format=yuv420p"
}

/// Colours of SDR overlays (text, logos) in an HDR picture, by BT.2408: SDR white is the
/// reference white (203 cd/m²: 75 % HLG, 58 % PQ). The same maths zscale applies to SDR
/// clips, done here per sprite pixel: BT.1886 decoding, the BT.709 → BT.2020 matrix, the
/// HLG inverse OOTF (γ 1.2, luminance-based) and OETF, or the PQ inverse EOTF.
package enum HDRSignal {
    static let referenceWhite = 203.0   // cd/m²

    /// Non-linear BT.2020 R'G'B' (0…1) for an SDR BT.709 R'G'B' colour (0…1).
    package static func signal(fromSDR rgb: (Double, Double, Double), in range: DynamicRange) -> (Double, Double, Double) {
        guard range.isHDR else { return rgb }
        let l = (pow(max(rgb.0, 0), 2.4), pow(max(rgb.1, 0), 2.4), pow(max(rgb.2, 0), 2.4))
        let wide = (0.6274 * l.0 + 0.3293 * l.1 + 0.0433 * l.2,
                    0.0691 * l.0 + 0.9195 * l.1 + 0.0114 * l.2,
                    0.0164 * l.0 + 0.0880 * l.1 + 0.8956 * l.2)
        switch range {
        case .pq:
            let nits = (wide.0 * referenceWhite, wide.1 * referenceWhite, wide.2 * referenceWhite)
            return (pqEncode(nits.0), pqEncode(nits.1), pqEncode(nits.2))
        default:
            // Display light relative to the 1000 cd/m² HLG display, then the inverse OOTF.
            let display = (wide.0 * referenceWhite / 1000, wide.1 * referenceWhite / 1000, wide.2 * referenceWhite / 1000)
            let luminance = 0.2627 * display.0 + 0.6780 * display.1 + 0.0593 * display.2
            let gain = luminance > 0 ? pow(luminance, -1.0 / 6) : 0
            return (hlgEncode(display.0 * gain), hlgEncode(display.1 * gain), hlgEncode(display.2 * gain))
        }
    }

    private static func hlgEncode(_ e: Double) -> Double {
        let (a, b, c) = (0.17883277, 0.28466892, 0.55991073)
        return e <= 1.0 / 12 ? (3 * max(e, 0)).squareRoot() : a * log(12 * e - b) + c
    }

    /// ST 2084's PQ constants: m1, m2, c1, c2, c3.
    private static let pqConstants = (0.1593017578125, 78.84375, 0.8359375, 18.8515625, 18.6875)

    /// PQ signal (0…1) of a luminance in cd/m² (the inverse EOTF).
    static func pqEncode(_ nits: Double) -> Double {
        let (m1, m2, c1, c2, c3) = pqConstants
        let y = pow(min(max(nits / 10_000, 0), 1), m1)
        return pow((c1 + c2 * y) / (1 + c3 * y), m2)
    }

    /// Luminance in cd/m² of a PQ signal (the EOTF).
    static func pqDecode(_ signal: Double) -> Double {
        let (m1, m2, c1, c2, c3) = pqConstants
        let p = pow(min(max(signal, 0), 1), 1 / m2)
        return 10_000 * pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
    }
}
