import CMoonFFmpeg

/// The video stream an export writes, as `AVAssetWriterInput`'s output settings say it:
/// every field left nil inherits the preset's value (or the container's default codec).
/// Bit rates are in bits per second.
public struct VideoSettings: Sendable, Equatable {
    public enum Codec: String, Sendable, CaseIterable { case h264, hevc, prores, vp9, av1 }
    public enum PixelFormat: String, Sendable, CaseIterable { case yuv420p, yuv420p10le, yuv422p10le, yuv444p10le }

    public var codec: Codec?
    /// Constant quality on the codec's own scale (x264/x265 0…51, VP9/AV1 0…63).
    public var crf: Int?
    /// Average bit rate; excludes `crf`.
    public var bitRate: Int?
    /// Speed: x264's names (ultrafast … placebo), mapped onto each encoder's own knob.
    public var preset: String?
    public var profile: String?
    public var pixelFormat: PixelFormat?
    /// Seconds between keyframes, exactly (scene cuts add none), rounded to whole frames.
    public var keyframeInterval: Double?
    /// Peak bit rate over `bufferSize` bits (the VBV / leaky-bucket model).
    public var maxBitRate: Int?
    public var bufferSize: Int?

    public init() {}

    public static let keys = ["codec", "crf", "bitRate", "preset", "profile", "pixelFormat", "keyframeInterval", "maxBitRate", "bufferSize"]

    public static let speedNames = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]

    /// Checks what needs no container: ranges, fields that exclude or need each other, and
    /// for `codec` (these settings' own, or the one the preset gives) its quality scale,
    /// speeds, profiles and pixel formats. Messages are one line naming the key.
    public func check(for codec: Codec?) throws {
        if crf != nil && bitRate != nil {
            throw EngineError("crf and bitRate exclude each other: give constant quality (crf) or an average bit rate (bitRate), not both")
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
            throw EngineError("\(codec.rawValue) cannot encode \(pixelFormat.rawValue) (it takes \(codec.pixelFormats.map(\.rawValue).joined(separator: ", ")))")
        }
    }

    static let bitRates = 1_000...2_000_000_000
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
    var crfOffsetFromH264: Int {
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
    public enum Codec: String, Sendable, CaseIterable { case aac, opus, flac, pcm, mp3 }

    public var codec: Codec?
    public var bitRate: Int?
    public var sampleRate: Int?
    public var channels: Int?

    public init() {}

    public static let keys = ["codec", "bitRate", "sampleRate", "channels"]

    /// Checks ranges and, for `codec`, its bit rates and sample rates.
    public func check(for codec: Codec?) throws {
        if let channels, !(1...2).contains(channels) { throw EngineError("channels must be 1 (mono) or 2 (stereo), got \(channels)") }
        if let sampleRate, !(8000...192_000).contains(sampleRate) { throw EngineError("sampleRate must be in 8000…192000 Hz, got \(sampleRate)") }
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
            throw EngineError("\(codec.rawValue) cannot encode \(sampleRate) Hz (it takes \(supported.map(String.init).joined(separator: ", ")))")
        }
    }
}

extension AudioSettings.Codec {
    var encoderName: String {
        switch self {
        case .aac: "aac"
        case .opus: "libopus"
        case .flac: "flac"
        case .pcm: "pcm_s16le"
        case .mp3: "libmp3lame"
        }
    }

    /// nil: lossless, the rate follows the sound.
    var bitRates: ClosedRange<Int>? {
        switch self {
        case .aac: 16_000...512_000
        case .opus: 6_000...510_000
        case .mp3: 8_000...320_000
        case .flac, .pcm: nil
        }
    }

    /// The rates the encoder takes (nil: any), as this FFmpeg lists them.
    var sampleRates: [Int]? {
        guard let codec = avcodec_find_encoder_by_name(encoderName), let list = codec.pointee.supported_samplerates else { return nil }
        var rates: [Int] = []
        while rates.count < 64, list[rates.count] != 0 { rates.append(Int(list[rates.count])) }
        return rates.sorted(by: >)
    }
}
