import CMoonFFmpeg
import CMoonAVShim

/// HDR10's static metadata: the display a PQ video was graded on (SMPTE ST 2086: its
/// primaries, white point and luminance range) and how bright its content gets (CTA-861.3:
/// MaxCLL, the brightest pixel, and MaxFALL, the brightest frame's average). A TV reads it to
/// fit the picture to its own peak; without it, it guesses. Values are kept in the units
/// HEVC's SEI messages and MP4's `mdcv` box store them, so what is read is written back exactly.
public struct HDRStaticMetadata: Sendable, Hashable {
    /// A CIE 1931 colour point, x and y in units of 1/50 000.
    public struct Chromaticity: Sendable, Hashable {
        /// x, in 1/50 000.
        public var x: Int
        /// y, in 1/50 000.
        public var y: Int
    }

    /// The mastering display.
    public struct MasteringDisplay: Sendable, Hashable {
        /// Its red primary.
        public var red: Chromaticity
        /// Its green primary.
        public var green: Chromaticity
        /// Its blue primary.
        public var blue: Chromaticity
        /// Its white (D65: 15635, 16450).
        public var whitePoint: Chromaticity
        /// Its peak, in units of 1/10 000 cd/m².
        public var maxLuminance: Int
        /// Its black, in units of 1/10 000 cd/m².
        public var minLuminance: Int
    }

    /// The content's light level, in cd/m².
    public struct ContentLightLevel: Sendable, Hashable {
        /// MaxCLL: the brightest pixel.
        public var maxContent: Int
        /// MaxFALL: the brightest frame's average.
        public var maxFrameAverage: Int
    }

    /// The display it was graded on; nil when not stated.
    public var masteringDisplay: MasteringDisplay?
    /// How bright it gets; nil when not stated.
    public var contentLightLevel: ContentLightLevel?

    /// This display and light level.
    public init(masteringDisplay: MasteringDisplay?, contentLightLevel: ContentLightLevel?) {
        (self.masteringDisplay, self.contentLightLevel) = (masteringDisplay, contentLightLevel)
    }

    /// What a file's stream states (MP4 `mdcv`/`clli`, Matroska's colour element); nil when nothing.
    init?(stream: UnsafePointer<AVStream>) {
        var masteringSize = 0, lightSize = 0
        let mastering = moon_stream_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &masteringSize)
        let light = moon_stream_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &lightSize)
        self.init(mastering: mastering, masteringSize: masteringSize, light: light, lightSize: lightSize)
    }

    /// What a decoded frame carries (HEVC's SEI messages, AV1's metadata units); nil when nothing.
    init?(frame: UnsafePointer<AVFrame>) {
        let mastering = av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA)
        let light = av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL)
        self.init(mastering: mastering?.pointee.data, masteringSize: mastering.map { Int($0.pointee.size) } ?? 0,
                  light: light?.pointee.data, lightSize: light.map { Int($0.pointee.size) } ?? 0)
    }

    private init?(mastering: UnsafePointer<UInt8>?, masteringSize: Int, light: UnsafePointer<UInt8>?, lightSize: Int) {
        if let mastering, masteringSize >= MemoryLayout<AVMasteringDisplayMetadata>.size {
            masteringDisplay = MasteringDisplay(UnsafeRawPointer(mastering).loadUnaligned(as: AVMasteringDisplayMetadata.self))
        }
        if let light, lightSize >= MemoryLayout<AVContentLightMetadata>.size {
            let level = UnsafeRawPointer(light).loadUnaligned(as: AVContentLightMetadata.self)
            if level.MaxCLL > 0 || level.MaxFALL > 0 {
                contentLightLevel = ContentLightLevel(maxContent: Int(level.MaxCLL), maxFrameAverage: Int(level.MaxFALL))
            }
        }
        guard masteringDisplay != nil || contentLightLevel != nil else { return nil }
    }

    /// What the first frame of a PQ video stream carries: HDR10's static metadata (an HEVC
    /// camera file states it in its SEI only, not in the container), and whether it carries
    /// HDR10+ dynamic metadata (SMPTE ST 2094-40, x265's `--dhdr10-info`, Samsung's phones).
    /// Read once per unchanged file.
    package static func firstFrame(path: String, streamIndex: Int) throws -> (metadata: HDRStaticMetadata?, hdr10Plus: Bool) {
        let facts = try firstFrames.value(for: path, part: streamIndex) {
            let reader = try StreamReader(path: path, streamIndex: streamIndex, threading: .single)
            return try reader.nextFrame().map { frame in
                FirstFrame(metadata: HDRStaticMetadata(frame: frame.pointer),
                           hdr10Plus: av_frame_get_side_data(frame.pointer, AV_FRAME_DATA_DYNAMIC_HDR_PLUS) != nil)
            } ?? FirstFrame(metadata: nil, hdr10Plus: false)
        }
        return (facts.metadata, facts.hdr10Plus)
    }

    private struct FirstFrame: Sendable {
        let metadata: HDRStaticMetadata?
        let hdr10Plus: Bool
    }

    private static let firstFrames = FileFacts<FirstFrame>()

    /// What one PQ stream made of sources with this metadata (nil: a source gives none)
    /// can state, and where that is not what each source stated.
    package struct Combination: Equatable {
        /// Their mastering display when they share one, else the brightest; their highest
        /// MaxCLL and MaxFALL (exact for the joined stream), none when a source gives none,
        /// since that one may be the brightest.
        package let metadata: HDRStaticMetadata?
        /// The sources name more than one mastering display.
        package let displaysDiffer: Bool
        /// Sources without a mastering display, beside others with one (stated for them too).
        package let withoutDisplay: Int
        /// Sources without light levels, beside others with them (so none are stated).
        package let withoutLightLevel: Int
    }

    /// See `Combination`.
    package static func combined(_ sources: [HDRStaticMetadata?]) -> Combination {
        let displays = sources.map { $0?.masteringDisplay }, levels = sources.map { $0?.contentLightLevel }
        let (knownDisplays, knownLevels) = (displays.compactMap { $0 }, levels.compactMap { $0 })
        let withoutLightLevel = knownLevels.isEmpty ? 0 : levels.count - knownLevels.count
        let light = knownLevels.isEmpty || withoutLightLevel > 0 ? nil
            : ContentLightLevel(maxContent: knownLevels.map(\.maxContent).max() ?? 0, maxFrameAverage: knownLevels.map(\.maxFrameAverage).max() ?? 0)
        let display = knownDisplays.max { ($0.maxLuminance, $0.minLuminance) < ($1.maxLuminance, $1.minLuminance) }
        return Combination(metadata: display == nil && light == nil ? nil : HDRStaticMetadata(masteringDisplay: display, contentLightLevel: light),
                           displaysDiffer: Set(knownDisplays).count > 1,
                           withoutDisplay: knownDisplays.isEmpty ? 0 : displays.count - knownDisplays.count,
                           withoutLightLevel: withoutLightLevel)
    }

    /// `options` of the encoder `encoderName`, with x265's parameters for this metadata added
    /// to its own `x265-params` (other encoders leave it to the stream's side data).
    package func encoderOptions(_ options: [(String, String)], for encoderName: String) -> [(String, String)] {
        guard encoderName == "libx265", !x265Parameters.isEmpty else { return options }
        let own = options.first { $0.0 == "x265-params" }.map { [$0.1] } ?? []
        return options.filter { $0.0 != "x265-params" } + [("x265-params", (own + x265Parameters).joined(separator: ":"))]
    }

    /// x265's parameters that write this metadata as SEI messages.
    package var x265Parameters: [String] {
        var parameters: [String] = []
        if let display = masteringDisplay {
            let point = { (c: Chromaticity) in "(\(c.x),\(c.y))" }
            parameters.append("master-display=G\(point(display.green))B\(point(display.blue))R\(point(display.red))WP\(point(display.whitePoint))"
                              + "L(\(display.maxLuminance),\(display.minLuminance))")
        }
        if let light = contentLightLevel { parameters.append("max-cll=\(light.maxContent),\(light.maxFrameAverage)") }
        return parameters
    }

    /// Sets this metadata as the output stream's own, which MP4, MOV and Matroska write
    /// (`mdcv`, `clli`, the colour element).
    package func attach(to stream: UnsafeMutablePointer<AVStream>) throws {
        if let display = masteringDisplay {
            var metadata = display.ffmpeg
            try withUnsafeBytes(of: &metadata) { bytes in
                try check(moon_set_stream_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA,
                                                    bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count),
                          "writing the mastering display", context: "output")
            }
        }
        if let light = contentLightLevel {
            var level = AVContentLightMetadata(MaxCLL: UInt32(clamping: light.maxContent), MaxFALL: UInt32(clamping: light.maxFrameAverage))
            try withUnsafeBytes(of: &level) { bytes in
                try check(moon_set_stream_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL,
                                                    bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count),
                          "writing the content light level", context: "output")
            }
        }
    }

    /// "mastered at 1000 cd/m², MaxCLL 1000, MaxFALL 400".
    public var summary: String {
        var parts: [String] = []
        if let display = masteringDisplay { parts.append("mastered at \(Self.candelas(display.maxLuminance)) cd/m²") }
        if let light = contentLightLevel { parts.append("MaxCLL \(light.maxContent), MaxFALL \(light.maxFrameAverage)") }
        return parts.joined(separator: ", ")
    }

    private static func candelas(_ tenThousandths: Int) -> String {
        let whole = tenThousandths / 10_000, rest = tenThousandths % 10_000
        guard rest != 0 else { return "\(whole)" }
        var fraction = String(rest)
        fraction = String(repeating: "0", count: 4 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(whole).\(fraction)"
    }
}

extension HDRStaticMetadata.MasteringDisplay {
    /// From FFmpeg's rationals (a Matroska file's are decimals): rounded to the SEI's units.
    /// nil unless both the primaries and the luminance are given.
    init?(_ metadata: AVMasteringDisplayMetadata) {
        guard metadata.has_primaries != 0, metadata.has_luminance != 0 else { return nil }
        let units = { (value: AVRational, scale: Int64) -> Int in
            value.den > 0 ? Int(clamping: av_rescale(Int64(value.num), scale, Int64(value.den))) : 0
        }
        let point = { (pair: (AVRational, AVRational)) in
            HDRStaticMetadata.Chromaticity(x: units(pair.0, 50_000), y: units(pair.1, 50_000))
        }
        let primaries = metadata.display_primaries
        self.init(red: point(primaries.0), green: point(primaries.1), blue: point(primaries.2),
                  whitePoint: point(metadata.white_point),
                  maxLuminance: units(metadata.max_luminance, 10_000), minLuminance: units(metadata.min_luminance, 10_000))
    }

    /// FFmpeg's form, for a muxer.
    var ffmpeg: AVMasteringDisplayMetadata {
        var metadata = AVMasteringDisplayMetadata()
        let rational = { (value: Int, den: Int32) in AVRational(num: Int32(clamping: value), den: den) }
        let pair = { (c: HDRStaticMetadata.Chromaticity) in (rational(c.x, 50_000), rational(c.y, 50_000)) }
        metadata.display_primaries = (pair(red), pair(green), pair(blue))
        metadata.white_point = pair(whitePoint)
        metadata.max_luminance = rational(maxLuminance, 10_000)
        metadata.min_luminance = rational(minLuminance, 10_000)
        (metadata.has_primaries, metadata.has_luminance) = (1, 1)
        return metadata
    }
}
