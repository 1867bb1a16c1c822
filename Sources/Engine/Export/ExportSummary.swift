#if canImport(Glibc)
import Glibc
#endif

/// What an export would write, from `ExportSession.plan()` (a dry run): sizes, rates, codecs
/// and a rough size.
public struct ExportSummary: Sendable, CustomStringConvertible {
    public struct Video: Sendable {
        public let width: Int
        public let height: Int
        public let frameDuration: MediaTime
        /// "HLG" or "PQ" when HDR is kept; nil for SDR.
        public let hdr: String?
    }
    public struct Audio: Sendable {
        public let sampleRate: Int
        public let channels: Int
    }

    public let output: String
    public let fileType: String
    public let duration: MediaTime
    public let preset: ExportPreset
    /// nil: no video, or packets copied (Passthrough).
    public let video: Video?
    public let audio: Audio?

    /// A rough guess, in bytes: the audio's bit rate, and for video a bits-per-pixel figure
    /// for the preset's CRF (x264 at CRF 18 ≈ 0.12 bit per pixel for camera footage, half for
    /// every 6 steps up; x265 ≈ 60 % of that). Passthrough: unknown (nil).
    public var estimatedBytes: Int64? {
        guard !preset.isPassthrough else { return nil }
        var bits = Double(preset.audioBitRate) * (audio == nil ? 0 : duration.seconds)
        if let video {
            let bitsPerPixel = 0.12 * pow2(Double(18 - preset.crf) / 6) * (preset.video == .hevc ? 0.6 : 1)
            let frames = duration.seconds / max(video.frameDuration.seconds, 1e-6)
            bits += bitsPerPixel * Double(video.width * video.height) * frames
        }
        return Int64(bits / 8)
    }

    public var description: String {
        var parts: [String] = []
        if let video {
            let rate = 1 / max(video.frameDuration.seconds, 1e-9)
            let codec = preset.video == .hevc ? "HEVC" : "H.264"
            parts.append("\(video.width)×\(video.height) \(formatted(rate)) fps \(codec) CRF \(preset.crf)" + (video.hdr.map { " \($0)" } ?? ""))
        }
        if let audio {
            parts.append("AAC \(preset.audioBitRate / 1000) kb/s \(formatted(Double(audio.sampleRate) / 1000)) kHz "
                         + (audio.channels == 1 ? "mono" : audio.channels == 2 ? "stereo" : "\(audio.channels) channels"))
        }
        if preset.isPassthrough { parts.append("packets copied") }
        let size = estimatedBytes.map { ", about \(Self.bytes($0))" } ?? ""
        return "\(output) (\(fileType)): \(parts.joined(separator: " + ")), \(formatted(duration.seconds)) s\(size)"
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
