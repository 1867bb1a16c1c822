import CMoonFFmpeg

/// The video stream an export writes, as `AVAssetWriterInput`'s output settings say it:
/// every field left nil inherits the preset's value (or the container's default codec).
/// Bit rates are in bits per second.
public struct VideoSettings: Sendable, Equatable {
    /// A video codec and the containers that hold it.
    public enum Codec: String, Sendable, CaseIterable {
        /// H.264 (libx264): mov, mp4, m4v, mkv.
        case h264
        /// HEVC, H.265 (libx265): mov, mp4, mkv.
        case hevc
        /// Apple ProRes (prores_ks), intra-only, 10-bit 4:2:2 or 4:4:4: mov, mkv.
        case prores
        /// VP9 (libvpx-vp9): webm, mp4, mkv.
        case vp9
        /// AV1 (libaom-av1): webm, mp4, mkv.
        case av1
    }
    /// How pictures are stored: FFmpeg's pixel format names.
    public enum PixelFormat: String, Sendable, CaseIterable {
        /// 8-bit 4:2:0, what players expect; SDR only.
        case yuv420p
        /// 10-bit 4:2:0: keeps HDR.
        case yuv420p10le
        /// 10-bit 4:2:2 (ProRes 422).
        case yuv422p10le
        /// 10-bit 4:4:4 (ProRes 4444).
        case yuv444p10le
    }

    /// The codec; nil: the preset's (H.264 or HEVC) where the container holds it, else the
    /// container's first (VP9 for webm).
    public var codec: Codec?
    /// Constant quality on the codec's own scale (x264/x265 0…51, VP9/AV1 0…63).
    public var crf: Int?
    /// Average bit rate; excludes `crf`.
    public var bitRate: Int?
    /// A constant quantizer, H.264 and HEVC only (0…51): every frame at this QP, with no rate
    /// control carrying state from frame to frame, so a chunked render's pieces are the single
    /// export's frames exactly. Excludes `crf` and `bitRate`; files come out larger than at the
    /// CRF of the same number.
    public var qp: Int?
    /// Speed: x264's names (ultrafast … placebo), mapped onto each encoder's own knob.
    public var preset: String?
    /// The codec's profile: H.264 baseline, main, high, high10, high422, high444; HEVC main,
    /// main10, main422-10, main444-10; ProRes proxy, lt, standard, hq, 4444, 4444xq. VP9 and
    /// AV1 take none (their profile follows `pixelFormat`). nil: the encoder's default.
    public var profile: String?
    /// nil: the profile's first format, else `yuv422p10le` for ProRes, `yuv420p10le` where HDR
    /// is kept, `yuv420p` otherwise.
    public var pixelFormat: PixelFormat?
    /// Seconds between keyframes, exactly (scene cuts add none), rounded to whole frames.
    public var keyframeInterval: Double?
    /// Peak bit rate over `bufferSize` bits (the VBV / leaky-bucket model): over `bitRate`, or
    /// over constant quality for H.264 and HEVC (capped CRF); not with `qp`.
    public var maxBitRate: Int?
    /// The VBV buffer in bits, for `maxBitRate`; needs `maxBitRate`.
    public var bufferSize: Int?
    /// H.264 only: the same frames on every run. x264's lookahead then works in step with the
    /// encode instead of on a thread of its own, whose timing otherwise changes some rate
    /// decisions from run to run (two exports of one edit can differ by a few GOPs at about
    /// 42 dB; the ffmpeg CLI's libx264 does the same). It costs about 7 % more time on two
    /// cores. With it and `keyframeInterval`, a chunked render's pieces at crf are the single
    /// export's frames exactly.
    public var deterministic: Bool?

    /// Settings with every field nil: all from the preset and the container.
    public init() {}

    package static let keys = ["codec", "crf", "qp", "bitRate", "preset", "profile", "pixelFormat", "keyframeInterval", "maxBitRate", "bufferSize",
                               "deterministic"]

    /// The values `preset` takes, fastest first.
    public static let speedNames = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]

    /// Checks what needs no container: ranges, fields that exclude or need each other, and
    /// for `codec` (these settings' own, or the one the preset gives) its quality scale,
    /// speeds, profiles and pixel formats. Messages are one line naming the key.
    public func check(for codec: Codec?) throws {
        if crf != nil && bitRate != nil {
            throw EngineError("crf and bitRate exclude each other: give constant quality (crf) or an average bit rate (bitRate), not both")
        }
        if qp != nil && (crf != nil || bitRate != nil) {
            throw EngineError("qp excludes \(crf != nil ? "crf" : "bitRate"): give a constant quantizer (qp), constant quality (crf) or an average bit rate (bitRate)")
        }
        for (key, value) in [("bitRate", bitRate), ("maxBitRate", maxBitRate), ("bufferSize", bufferSize)] {
            if let value, !(VideoSettings.bitRates).contains(value) {
                throw EngineError("\(key) must be in bits per second, \(VideoSettings.bitRates.lowerBound)…\(VideoSettings.bitRates.upperBound), got \(value)")
            }
        }
        if let maxBitRate, let bitRate, maxBitRate < bitRate {
            throw EngineError("maxBitRate (\(maxBitRate)) must be at least bitRate (\(bitRate))")
        }
        if bufferSize != nil && maxBitRate == nil { throw EngineError("bufferSize goes with maxBitRate (the peak rate the buffer smooths); set maxBitRate too") }
        if maxBitRate != nil && qp != nil {
            throw EngineError("maxBitRate caps rate control, and qp has none (every frame at one quantizer): give crf or bitRate with maxBitRate")
        }
        if let keyframeInterval, !(keyframeInterval > 0 && keyframeInterval <= 3600) {
            throw EngineError("keyframeInterval must be in seconds, more than 0 and at most 3600, got \(keyframeInterval)")
        }
        if let preset, !VideoSettings.speedNames.contains(preset) {
            throw EngineError("unknown preset \(preset.quotedForMessage()) (known: \(VideoSettings.speedNames.joined(separator: ", ")))")
        }
        guard let codec else { return }
        if let crf {
            guard let scale = codec.crfScale else {
                throw EngineError("prores has no crf: its quality is set by profile (\(codec.profiles.map(\.name).joined(separator: ", ")))")
            }
            guard scale.contains(crf) else { throw EngineError("crf for \(codec.rawValue) must be a whole number in \(scale.lowerBound)…\(scale.upperBound), got \(crf)") }
        }
        if maxBitRate != nil, bitRate == nil, codec == .vp9 || codec == .av1 {
            // libvpx and libaom read a peak only beside a target rate; at constant quality they drop it.
            throw EngineError("maxBitRate needs bitRate for \(codec.rawValue): \(codec.encoderNames[0]) caps an average bit rate, not constant quality; set bitRate too")
        }
        if deterministic == true, codec != .h264 {
            throw EngineError("deterministic is for h264 (x264's threaded lookahead); \(codec.rawValue) has no such switch")
        }
        if let qp {
            guard codec == .h264 || codec == .hevc else { throw EngineError("qp is for h264 and hevc (x264, x265); \(codec.rawValue) takes crf or bitRate") }
            guard (0...51).contains(qp) else { throw EngineError("qp must be a whole number in 0…51, got \(qp)") }
        }
        if codec == .prores {
            let reason = "prores is intra-only with a data rate set by its profile (\(codec.profiles.map(\.name).joined(separator: ", ")))"
            if bitRate != nil || maxBitRate != nil { throw EngineError("bitRate and maxBitRate do not apply: \(reason)") }
            if keyframeInterval != nil { throw EngineError("keyframeInterval does not apply: \(reason); every frame is a keyframe") }
            if preset != nil { throw EngineError("preset does not apply: \(reason)") }
        }
        if let profile {
            guard !codec.profiles.isEmpty else {
                throw EngineError("\(codec.rawValue) takes no profile: its profile follows pixelFormat")
            }
            guard let known = codec.profiles.first(where: { $0.name == profile }) else {
                throw EngineError("unknown \(codec.rawValue) profile \(profile.quotedForMessage()) (known: \(codec.profiles.map(\.name).joined(separator: ", ")))")
            }
            if let pixelFormat, !known.pixelFormats.contains(pixelFormat) {
                throw EngineError("\(codec.rawValue) profile \(profile) cannot carry \(pixelFormat.rawValue) (it takes \(known.pixelFormats.map(\.rawValue).joined(separator: ", ")))")
            }
        }
        if let pixelFormat, !codec.pixelFormats.contains(pixelFormat) {
            throw EngineError("\(codec.rawValue) cannot encode \(pixelFormat.rawValue) (it takes \(codec.pixelFormats.map(\.rawValue).joined(separator: ", ")))", kind: .unsupported)
        }
    }

    static let bitRates = 1_000...2_000_000_000

    /// The pixel format these settings ask for with `codec`: their own, or their profile's.
    package func chosenPixelFormat(for codec: Codec) -> PixelFormat? {
        pixelFormat ?? profile.flatMap { name in codec.profiles.first { $0.name == name }?.pixelFormats.first }
    }
}

extension VideoSettings.Codec {
    /// The encoders Moonreel uses, best first. AV1 uses libaom: Debian 12's SVT-AV1 1.4
    /// hangs when an encoder is closed before the end of its stream (a failed or cancelled
    /// export), and rav1e is several times slower.
    var encoderNames: [String] {
        switch self {
        case .h264: ["libx264"]
        case .hevc: ["libx265"]
        case .prores: ["prores_ks"]
        case .vp9: ["libvpx-vp9"]
        case .av1: ["libaom-av1"]
        }
    }

    var crfScale: ClosedRange<Int>? {
        switch self {
        case .h264, .hevc: 0...51
        case .vp9, .av1: 0...63
        case .prores: nil
        }
    }

    /// How far this codec's crf sits above x264's for about the same picture: the presets
    /// (written on x264's scale, or x265's for HEVC ones) are translated with it.
    package var crfOffsetFromH264: Int {
        switch self {
        case .h264, .prores: 0
        case .hevc: 2
        case .vp9: 10
        case .av1: 12
        }
    }

    var pixelFormats: [VideoSettings.PixelFormat] {
        self == .prores ? [.yuv422p10le, .yuv444p10le] : VideoSettings.PixelFormat.allCases
    }

    /// Each profile and the pixel formats it carries, the first being its default.
    var profiles: [(name: String, pixelFormats: [VideoSettings.PixelFormat])] {
        switch self {
        case .h264:
            [("baseline", [.yuv420p]), ("main", [.yuv420p]), ("high", [.yuv420p]),
             ("high10", [.yuv420p10le, .yuv420p]), ("high422", [.yuv422p10le, .yuv420p, .yuv420p10le]),
             ("high444", [.yuv444p10le, .yuv420p, .yuv420p10le, .yuv422p10le])]
        case .hevc:
            [("main", [.yuv420p]), ("main10", [.yuv420p10le]), ("main422-10", [.yuv422p10le]), ("main444-10", [.yuv444p10le])]
        case .prores:
            [("proxy", [.yuv422p10le]), ("lt", [.yuv422p10le]), ("standard", [.yuv422p10le]), ("hq", [.yuv422p10le]),
             ("4444", [.yuv444p10le]), ("4444xq", [.yuv444p10le])]
        case .vp9, .av1: []
        }
    }
}

/// The audio stream an export writes; nil fields inherit (AAC, or Opus where only Opus
/// fits; the preset's bit rate; the sources' rate and channels).
public struct AudioSettings: Sendable, Equatable {
    /// An audio codec and the containers that hold it.
    public enum Codec: String, Sendable, CaseIterable {
        /// AAC: mov, mp4, m4v, m4a, mkv.
        case aac
        /// Opus: webm, mp4, mkv.
        case opus
        /// FLAC, lossless, 16-bit (24-bit when a source has more): mkv.
        case flac
        /// PCM, uncompressed, 16-bit (24-bit when a source has more): mov, mkv.
        case pcm
        /// MP3 (LAME): mov, mp4, mkv.
        case mp3
    }

    /// The codec; nil: AAC, or Opus where the container takes no AAC (webm).
    public var codec: Codec?
    /// Bits per second: AAC 16 000…512 000, Opus 6 000…510 000, MP3 8 000…320 000; FLAC and
    /// PCM are lossless and take none. nil: the preset's `audioBitRate`.
    public var bitRate: Int?
    /// Samples per second, 7350…192 000 (AAC's lowest) and one the codec takes; nil: the sources'.
    public var sampleRate: Int?
    /// 1 (mono) or 2 (stereo); nil: the sources'.
    public var channels: Int?

    /// Settings with every field nil: all from the preset and the sources.
    public init() {}

    package static let keys = ["codec", "bitRate", "sampleRate", "channels"]
    /// From AAC's lowest rate (7350 Hz, in its encoder's list) to 192 kHz.
    static let sampleRates = 7350...192_000

    /// Checks ranges and, for `codec`, its bit rates and sample rates.
    public func check(for codec: Codec?) throws {
        if let channels, !(1...2).contains(channels) { throw EngineError("channels must be 1 (mono) or 2 (stereo), got \(channels)") }
        if let sampleRate, !AudioSettings.sampleRates.contains(sampleRate) {
            throw EngineError("sampleRate must be in \(AudioSettings.sampleRates.lowerBound)…\(AudioSettings.sampleRates.upperBound) Hz, got \(sampleRate)")
        }
        guard let codec else {
            if let bitRate, !(6_000...1_536_000).contains(bitRate) { throw EngineError("bitRate must be in 6000…1536000 bits per second, got \(bitRate)") }
            return
        }
        if let bitRate {
            guard let rates = codec.bitRates else { throw EngineError("\(codec.rawValue) is lossless: it takes no bitRate") }
            guard rates.contains(bitRate) else {
                throw EngineError("bitRate for \(codec.rawValue) must be in \(rates.lowerBound)…\(rates.upperBound) bits per second, got \(bitRate)")
            }
        }
        if let sampleRate, let supported = codec.sampleRates, !supported.contains(sampleRate) {
            throw EngineError("\(codec.rawValue) cannot encode \(sampleRate) Hz (it takes \(supported.map(String.init).joined(separator: ", ")))", kind: .unsupported)
        }
    }
}

extension AudioSettings.Codec {
    /// The encoder for lossless audio of `bits` per sample (16 unless 24).
    func encoderName(bits: Int = 16) -> String {
        switch self {
        case .aac: "aac"
        case .opus: "libopus"
        case .flac: "flac"
        case .pcm: bits > 16 ? "pcm_s24le" : "pcm_s16le"
        case .mp3: "libmp3lame"
        }
    }

    /// As people write it: "AAC", "Opus", "FLAC", "PCM", "MP3".
    package var displayName: String { self == .opus ? "Opus" : rawValue.uppercased() }

    /// nil: lossless, the rate follows the sound.
    var bitRates: ClosedRange<Int>? {
        switch self {
        case .aac: 16_000...512_000
        case .opus: 6_000...510_000
        case .mp3: 8_000...320_000
        case .flac, .pcm: nil
        }
    }

    /// The bit rates the encoder writes at `sampleRate` with `channels` (nil: lossless); one
    /// asked outside them is moved to the nearest end. AAC carries at most 6144 bits a
    /// channel per 1024 samples; LAME's MPEG-1 rates (32 kHz and up) are 32…320 kb/s, MPEG-2's
    /// (16…24 kHz) 8…160 and MPEG-2.5's (under 16 kHz) 8…64; libopus takes at most 256 kb/s
    /// a channel (FFmpeg refuses more).
    package func writtenBitRates(sampleRate: Int, channels: Int) -> ClosedRange<Int>? {
        guard let rates = bitRates else { return nil }
        let written: ClosedRange<Int>
        switch self {
        case .aac: written = rates.lowerBound...(6144 * channels * sampleRate / 1024)
        case .mp3: written = sampleRate >= 32_000 ? 32_000...320_000 : sampleRate >= 16_000 ? 8_000...160_000 : 8_000...64_000
        case .opus: written = rates.lowerBound...(256_000 * channels)
        case .flac, .pcm: return nil
        }
        return written.clamped(to: rates)
    }

    /// The rates the encoder takes (nil: any), as this FFmpeg lists them.
    var sampleRates: [Int]? {
        guard let codec = avcodec_find_encoder_by_name(encoderName()), let list = codec.pointee.supported_samplerates else { return nil }
        var rates: [Int] = []
        while rates.count < 64, list[rates.count] != 0 { rates.append(Int(list[rates.count])) }
        return rates.sorted(by: >)
    }
}
