import CMoonFFmpeg
#if canImport(Glibc)
import Glibc
#endif
import MoonreelMedia

/// What an export would write, from `ExportSession.plan()` (a dry run): sizes, rates, codecs
/// and a rough size.
public struct ExportSummary: Sendable, CustomStringConvertible {
    /// The video stream the export would write.
    public struct Video: Sendable {
        /// Encoded width in pixels, after the preset's box and `renderScale`.
        public let width: Int
        /// Encoded height in pixels.
        public let height: Int
        /// Time between frames (the video composition's `frameDuration`).
        public let frameDuration: MediaTime
        /// "HLG" or "PQ" when HDR is kept; nil for SDR.
        public let hdr: String?
        /// How many frames the range holds.
        public let frameCount: Int64
    }
    /// The audio stream the export would write.
    public struct Audio: Sendable {
        /// Samples per second.
        public let sampleRate: Int
        /// 1 (mono) or 2 (stereo).
        public let channels: Int
    }

    /// The output path (`outputURL`).
    public let output: String
    /// The container written: one of `ExportSession.fileTypes`.
    public let fileType: String
    /// The length of the exported range.
    public let duration: MediaTime
    /// The preset that encodes: the session's, or for a SmartCut that cannot copy, the one it
    /// falls back to.
    public let preset: ExportPreset
    /// nil: no video, or packets copied (Passthrough).
    public let video: Video?
    /// nil: no audio (none in the composition, or a file type without sound).
    public let audio: Audio?
    let videoEncoding: VideoEncoding?
    let audioEncoding: AudioEncoding?
    /// Set for an image sequence.
    let imageFormat: StillImageFormat?
    /// Bytes per video frame measured on a sample of the export's own pictures
    /// (`ExportSession.plan(samplingSize:)`); nil: the bits-per-pixel figure below.
    public internal(set) var sampledBytesPerFrame: Double?

    /// A rough guess, in bytes: bit rates as set; for constant quality what a sample of the
    /// pictures took when one was encoded (`sampledBytesPerFrame`), else a bits-per-pixel
    /// figure for the CRF (x264 at CRF 18 ≈ 0.12 bit per pixel for camera footage, half for
    /// every 6 steps up; x265 ≈ 60 % of that at the same number; VP9 and AV1 on their own
    /// scales, ≈ 70 % and 55 % of x264's at the CRF that looks alike); ProRes at Apple's
    /// published data rates for its profile; GIF, PNG, JPEG and WebP by typical bits per
    /// pixel; FLAC at 60 % of PCM. Passthrough: unknown (nil).
    public var estimatedBytes: Int64? {
        guard !preset.isPassthrough else { return nil }
        // The container: headers, and an index entry of some 12 bytes per frame (size, time, offset).
        var samples = Double(video?.frameCount ?? 0)
        var bits = 0.0
        if let audio, let encoding = audioEncoding {
            let pcm = Double(audio.sampleRate * audio.channels * max(encoding.bits, 16))
            bits += (encoding.bitRate.map(Double.init) ?? (encoding.codec == .flac ? 0.6 * pcm : pcm)) * duration.seconds
            samples += duration.seconds * Double(audio.sampleRate) / 1024
        }
        if imageFormat == nil { bits += 8 * (1024 + 12 * samples) }
        if let video {
            let pixels = Double(video.width * video.height) * Double(video.frameCount)
            if case .bitRate(let average, _) = videoEncoding?.rateControl {
                bits += Double(average) * duration.seconds
            } else {
                let unbounded = sampledBytesPerFrame.map { 8 * $0 * Double(video.frameCount) } ?? bitsPerPixel * pixels
                // Capped constant quality spends at most the peak rate.
                bits += min(unbounded, videoEncoding?.peak.map { Double($0.bitsPerSecond) * duration.seconds } ?? .infinity)
            }
        }
        return Int64(bits / 8)
    }

    private var bitsPerPixel: Double {
        switch imageFormat {
        case .png: return 10
        case .jpeg: return 3
        case .webp: return 1.5
        case nil: break
        }
        guard let encoding = videoEncoding else { return 0 }
        switch (encoding.codec, encoding.rateControl) {
        case (let codec?, .quality(let crf)), (let codec?, .quantizer(let crf)): // a QP: roughly what the CRF of its number spends
            let efficiency: [VideoSettings.Codec: Double] = [.h264: 1, .hevc: 0.6, .vp9: 0.7, .av1: 0.55]
            // x265's CRF numbers are read as they are, as the HEVC presets always were.
            let h264CRF = codec == .hevc ? crf : crf - codec.crfOffsetFromH264
            return 0.12 * pow2(Double(18 - h264CRF) / 6) * (efficiency[codec] ?? 1)
        case (.prores?, _):
            // Apple's target rates at 1920×1080, 29.97 fps: 45, 102, 147, 220, 330, 500 Mb/s.
            let rates: [String: Double] = ["proxy": 45, "lt": 102, "standard": 147, "hq": 220, "4444": 330, "4444xq": 500]
            let megabits = rates[encoding.profile ?? "hq"] ?? 220
            return megabits * 1e6 / (1920 * 1080 * 29.97)
        default:
            return 1.5 // GIF: LZW over dithered 8-bit pictures, unchanged areas left transparent
        }
    }

    public var description: String {
        var parts: [String] = []
        if let video {
            let rate = 1 / max(video.frameDuration.seconds, 1e-9)
            parts.append("\(video.width)×\(video.height) \(formatted(rate)) fps \(videoDescription)" + (video.hdr.map { " \($0)" } ?? ""))
        }
        if let audio, let encoding = audioEncoding {
            let codec = encoding.codec.displayName + (encoding.bits > 0 ? " \(encoding.bits)-bit" : "")
            parts.append(codec + (encoding.bitRate.map { " \($0 / 1000) kb/s" } ?? "") + " \(formatted(Double(audio.sampleRate) / 1000)) kHz "
                         + (audio.channels == 1 ? "mono" : audio.channels == 2 ? "stereo" : "\(audio.channels) channels"))
        }
        if preset.isPassthrough { parts.append("packets copied") }
        let size = estimatedBytes.map { ", about \(Self.bytes($0))" } ?? ""
        return "\(output) (\(fileType)): \(parts.joined(separator: " + ")), \(formatted(duration.seconds)) s\(size)"
    }

    /// "H.264 CRF 18", "VP9 2000 kb/s yuv420p10le", "ProRes hq yuv422p10le", "GIF", "PNG images".
    private var videoDescription: String {
        if let imageFormat { return "\(imageFormat.rawValue.uppercased()) images" }
        guard let encoding = videoEncoding, let codec = encoding.codec else { return "GIF" }
        var text = ["h264": "H.264", "hevc": "HEVC", "prores": "ProRes", "vp9": "VP9", "av1": "AV1"][codec.rawValue] ?? codec.rawValue
        switch encoding.rateControl {
        case .quality(let crf): text += " CRF \(crf)"
        case .quantizer(let qp): text += " QP \(qp)"
        case .bitRate(let average, _): text += " \(average / 1000) kb/s"
        case .fixed: text += encoding.profile.map { " \($0)" } ?? ""
        }
        if encoding.pixelFormat != AV_PIX_FMT_YUV420P, let name = av_get_pix_fmt_name(encoding.pixelFormat) { text += " " + String(cString: name) }
        return text
    }

    /// 2^x.
    private func pow2(_ x: Double) -> Double { pow(2, x) }

    private func formatted(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    static func bytes(_ count: Int64) -> String {
        let units: [(Int64, String)] = [(1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "KB")]
        for (size, unit) in units where count >= size {
            let value = Double(count) / Double(size)
            return value >= 10 ? "\(Int(value.rounded())) \(unit)" : "\((value * 10).rounded() / 10) \(unit)"
        }
        return "\(count) bytes"
    }
}
