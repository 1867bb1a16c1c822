import CMoonFFmpeg

/// The files an export writes and what each can hold, as FFmpeg 5.1's muxers accept them
/// without experimental flags. `png`, `jpg` and `webp` are image sequences (one file per
/// frame, named by a `%05d`-style pattern).
public enum OutputContainer: String, Sendable, CaseIterable {
    /// QuickTime movie: H.264, HEVC or ProRes video; AAC, PCM or MP3 audio.
    case mov
    /// MPEG-4: H.264, HEVC, VP9 or AV1 video; AAC, Opus or MP3 audio.
    case mp4
    /// Apple's MPEG-4 video: H.264 and AAC only.
    case m4v
    /// Apple's MPEG-4 audio: AAC only, no video.
    case m4a
    /// Matroska: every video and audio codec Moonreel encodes.
    case mkv
    /// WebM: VP9 or AV1 video, Opus audio.
    case webm
    /// An animated GIF, with a palette made from all its frames; no sound.
    case gif
    /// A PNG image sequence: one file per frame, no sound.
    case png
    /// A JPEG image sequence: one file per frame, no sound.
    case jpg
    /// A WebP image sequence: one file per frame, no sound.
    case webp

    /// The container a file name's extension names, if any.
    public init?(extension ext: String) {
        let lower = ext.lowercased()
        self.init(rawValue: lower == "jpeg" ? "jpg" : lower)
    }

    var muxerName: String {
        switch self {
        case .m4v, .m4a: "ipod" // FFmpeg's "m4v" muxer writes raw MPEG-4 part 2, not Apple's MP4
        case .mkv: "matroska"
        case .mov, .mp4, .webm, .gif, .png, .jpg, .webp: rawValue
        }
    }

    /// Whether the container is one file per frame (`png`, `jpg`, `webp`).
    public var isImageSequence: Bool { stillImageFormat != nil }

    package var stillImageFormat: StillImageFormat? {
        switch self {
        case .png: .png
        case .jpg: .jpeg
        case .webp: .webp
        default: nil
        }
    }

    /// How messages name a file of this kind: "mp4", "a GIF", "a PNG image sequence".
    package var noun: String {
        self == .gif ? "a GIF" : isImageSequence ? "a \(rawValue.uppercased()) image sequence" : rawValue
    }

    package var holdsVideo: Bool { self != .m4a }
    package var holdsAudio: Bool { self != .gif && !isImageSequence }
    /// Whether the file keeps tags (`session.metadata`): a GIF's and an image's do not.
    package var holdsMetadata: Bool { self != .gif && !isImageSequence }
    /// Whether the container holds an edit list (QuickTime's `elst`), which hides the frames
    /// a copied cut must start with, from the keyframe before it.
    package var holdsEditLists: Bool { self == .mov || self == .mp4 || self == .m4v || self == .m4a }
    /// GIF files and image sequences hold pictures in their own format, not a video codec.
    package var holdsVideoCodecs: Bool { holdsVideo && self != .gif && !isImageSequence }

    package var videoCodecs: [VideoSettings.Codec] {
        switch self {
        case .mov: [.h264, .hevc, .prores]
        case .mp4: [.h264, .hevc, .vp9, .av1]
        case .m4v: [.h264]
        case .mkv: VideoSettings.Codec.allCases
        case .webm: [.vp9, .av1]
        case .m4a, .gif, .png, .jpg, .webp: []
        }
    }

    package var audioCodecs: [AudioSettings.Codec] {
        switch self {
        case .mov: [.aac, .pcm, .mp3]
        case .mp4: [.aac, .opus, .mp3]
        case .m4v, .m4a: [.aac]
        case .mkv: AudioSettings.Codec.allCases
        case .webm: [.opus]
        case .gif, .png, .jpg, .webp: []
        }
    }

    /// What the container takes, for messages: "mov holds h264, hevc, prores".
    private func holding(_ codecs: [String], kind: String) -> String {
        codecs.isEmpty ? "\(rawValue) holds no \(kind)" : "\(rawValue) holds \(codecs.joined(separator: ", "))"
    }

    /// Refuses a video codec the container cannot hold, saying what it holds and where the
    /// codec can go.
    package func check(_ codec: VideoSettings.Codec) throws {
        guard !videoCodecs.contains(codec) else { return }
        let homes = OutputContainer.allCases.filter { $0.videoCodecs.contains(codec) }.map(\.rawValue)
        let own = self == .gif ? "a .gif file holds GIF pictures (remove videoSettings.codec)"
            : isImageSequence ? "an image sequence holds \(rawValue.uppercased()) pictures (remove videoSettings.codec)"
            : holding(videoCodecs.map(\.rawValue), kind: "video")
        throw EngineError("\(rawValue) cannot hold \(codec.rawValue) video: \(own); \(codec.rawValue) goes in \(homes.joined(separator: ", "))", kind: .unsupported)
    }

    package func check(_ codec: AudioSettings.Codec) throws {
        guard !audioCodecs.contains(codec) else { return }
        let homes = OutputContainer.allCases.filter { $0.audioCodecs.contains(codec) }.map(\.rawValue)
        // FFmpeg 5.1 writes FLAC into MP4 only with -strict experimental; players disagree on it.
        let note = codec == .flac && self == .mp4 ? " (FLAC in MP4 is experimental in FFmpeg 5.1)" : ""
        throw EngineError("\(rawValue) cannot hold \(codec.rawValue) audio\(note): \(holding(audioCodecs.map(\.rawValue), kind: "audio")); \(codec.rawValue) goes in \(homes.joined(separator: ", "))", kind: .unsupported)
    }
}

/// A peak bit rate over a buffer: the VBV (leaky bucket) model, which no window of the
/// stream of T seconds overspends beyond `bufferBits` + `bitsPerSecond` × T.
package struct PeakRate: Sendable, Equatable {
    package let bitsPerSecond: Int
    package let bufferBits: Int
}

/// One video encoder, configured from the preset, the settings and the container: what
/// `StreamEncoder.video` opens (GIF and image sequences have their own writers).
package struct VideoEncoding: Sendable {
    package enum RateControl: Sendable, Equatable {
        case quality(crf: Int)
        /// Every frame at one quantizer (x264, x265).
        case quantizer(qp: Int)

        /// Whether the size follows the pictures (CRF or QP) rather than a bit rate or profile.
        package var isConstantQuality: Bool {
            switch self {
            case .quality, .quantizer: return true
            case .bitRate, .fixed: return false
            }
        }
        /// `constant`: minimum = maximum = average (libvpx's one-pass VBR spends far less than asked).
        case bitRate(average: Int, constant: Bool)
        /// ProRes (data rate by profile) and GIF.
        case fixed
    }

    /// nil: a GIF.
    package let codec: VideoSettings.Codec?
    package let encoderName: String
    /// What the encoder takes (and the renderer converts to before it).
    package let pixelFormat: AVPixelFormat
    package let rateControl: RateControl
    package let profile: String?
    /// Encoder options: speed, profile and codec parameters.
    package let options: [(String, String)]
    package let keyframeInterval: Double?
    /// The VBV cap over `rateControl`: a bit rate's, or constant quality's (x264 and x265
    /// only). nil: none.
    package var peak: PeakRate?
    /// QuickTime plays HEVC only tagged hvc1.
    package let codecTag: String?
    /// HDR10's metadata the output states: x265 writes it in the stream (SEI messages), and
    /// every container in its own boxes (MOV and MP4 `mdcv` and `clli`, Matroska's colour
    /// element; each read back by ffprobe in HDRMetadataTests). nil: none.
    package var hdrMetadata: HDRStaticMetadata?

    /// `options`, with x265's parameters for `hdrMetadata` added to its others.
    var encoderOptions: [(String, String)] {
        hdrMetadata?.encoderOptions(options, for: encoderName) ?? options
    }

    package init(codec: VideoSettings.Codec?, encoderName: String, pixelFormat: AVPixelFormat, rateControl: RateControl, profile: String?,
                 options: [(String, String)], keyframeInterval: Double?, codecTag: String?) {
        (self.codec, self.encoderName, self.pixelFormat, self.rateControl) = (codec, encoderName, pixelFormat, rateControl)
        (self.profile, self.options, self.keyframeInterval, self.codecTag) = (profile, options, keyframeInterval, codecTag)
    }

    /// The sides `pixelFormat`'s colour samples need: 4:2:0 even ones, 4:2:2 an even width,
    /// 4:4:4 and a GIF's palette any.
    package var pixelSides: Size.PixelSides {
        guard let format = av_pix_fmt_desc_get(pixelFormat) else { return .even }
        return format.pointee.log2_chroma_h > 0 ? .even : format.pointee.log2_chroma_w > 0 ? .evenWidth : .whole
    }

    /// `keyframeInterval` in whole frames of `frameDuration`, the nearest (nil: the encoder's own).
    package func keyframeFrames(frameDuration: MediaTime) -> Int? {
        keyframeInterval.map { max(1, Int(($0 / frameDuration.seconds).rounded())) }
    }

    package static let gif = VideoEncoding(codec: nil, encoderName: "gif", pixelFormat: AV_PIX_FMT_PAL8, rateControl: .fixed,
                                           profile: nil, options: [], keyframeInterval: nil, codecTag: nil)

    /// For `codec` with `settings` over the preset's values. `keepsHDR`: HDR is kept, so an
    /// unset pixel format is 10-bit.
    package static func make(_ codec: VideoSettings.Codec, settings: VideoSettings, preset: ExportPreset, container: OutputContainer,
                             keepsHDR: Bool) throws -> VideoEncoding {
        try settings.check(for: codec)
        let encoderName = try availableEncoder(codec)
        let format = settings.chosenPixelFormat(for: codec) ?? (codec == .prores ? .yuv422p10le : keepsHDR ? .yuv420p10le : .yuv420p)
        let pixelFormat = av_get_pix_fmt(format.rawValue)
        try checkEncoderTakes(pixelFormat, name: format.rawValue, encoder: encoderName)

        let rateControl: RateControl
        if codec == .prores {
            rateControl = .fixed
        } else if let qp = settings.qp {
            rateControl = .quantizer(qp: qp)
        } else if let bitRate = settings.bitRate {
            rateControl = .bitRate(average: bitRate, constant: codec == .vp9 && settings.maxBitRate == nil)
        } else {
            let presetScale = preset.video == .hevc ? VideoSettings.Codec.hevc : .h264
            let inherited = preset.crf - presetScale.crfOffsetFromH264 + codec.crfOffsetFromH264
            let scale = codec.crfScale ?? 0...0
            rateControl = .quality(crf: settings.crf ?? min(max(inherited, scale.lowerBound), scale.upperBound))
        }
        let speed = settings.preset ?? (VideoSettings.speedNames.contains(preset.speed) ? preset.speed : "medium")
        var options = speedOptions(codec, speed: speed)
        let profile = settings.profile ?? (codec == .prores ? (format == .yuv444p10le ? "4444" : "hq") : nil)
        if let profile { options.append(("profile", profile)) }
        let fixedKeyframes = settings.keyframeInterval != nil
        switch codec {
        case .h264:
            let parameters = (fixedKeyframes ? ["scenecut=0"] : []) + (settings.deterministic == true ? ["sync-lookahead=0"] : [])
            if !parameters.isEmpty { options.append(("x264-params", parameters.joined(separator: ":"))) }
        case .hevc:
            options.append(("x265-params", "log-level=error" + (fixedKeyframes ? ":scenecut=0:open-gop=0" : "")))
        case .vp9, .av1:
            options.append(("row-mt", "1"))
        case .prores:
            break
        }
        let tagsHVC1 = codec == .hevc && [.mov, .mp4, .m4v].contains(container)
        var encoding = VideoEncoding(codec: codec, encoderName: encoderName, pixelFormat: pixelFormat, rateControl: rateControl,
                                     profile: profile, options: options, keyframeInterval: settings.keyframeInterval,
                                     codecTag: tagsHVC1 ? "hvc1" : nil)
        // x264 ignores a peak without a buffer.
        encoding.peak = settings.maxBitRate.map { PeakRate(bitsPerSecond: $0, bufferBits: settings.bufferSize ?? $0 * 2) }
        return encoding
    }

    /// x264's speed names on each encoder's own knob: x264/x265 take them as they are; VP9
    /// maps them onto libvpx's cpu-used (5 fastest) at the "good" deadline; AV1 onto libaom's
    /// cpu-used, in its real-time mode up to "medium" (its "good" mode is many times slower).
    private static func speedOptions(_ codec: VideoSettings.Codec, speed: String) -> [(String, String)] {
        let rank = VideoSettings.speedNames.firstIndex(of: speed) ?? 5 // 0 ultrafast … 9 placebo
        switch codec {
        case .h264, .hevc:
            return [("preset", speed)]
        case .vp9:
            return [("deadline", "good"), ("cpu-used", "\([5, 5, 5, 4, 4, 3, 2, 1, 0, 0][rank])")]
        case .av1:
            let (usage, cpuUsed) = [("realtime", 8), ("realtime", 8), ("realtime", 8), ("realtime", 7), ("realtime", 7),
                                    ("realtime", 6), ("good", 6), ("good", 4), ("good", 2), ("good", 0)][rank]
            return [("usage", usage), ("cpu-used", "\(cpuUsed)")]
        case .prores:
            return []
        }
    }

    /// The first of the codec's encoders this FFmpeg has, or an error naming them.
    private static func availableEncoder(_ codec: VideoSettings.Codec) throws -> String {
        guard let name = codec.encoderNames.first(where: { avcodec_find_encoder_by_name($0) != nil }) else {
            throw EngineError("this FFmpeg has no \(codec.rawValue) encoder (\(codec.encoderNames.joined(separator: " or "))); Debian's libavcodec59 has it", kind: .unsupported)
        }
        return name
    }

    private static func checkEncoderTakes(_ format: AVPixelFormat, name: String, encoder: String) throws {
        guard let codec = avcodec_find_encoder_by_name(encoder), let list = codec.pointee.pix_fmts else { return }
        var index = 0
        while list[index] != AV_PIX_FMT_NONE {
            if list[index] == format { return }
            index += 1
        }
        throw EngineError("this FFmpeg's \(encoder) cannot encode \(name)", kind: .unsupported)
    }
}

/// One audio encoder, configured.
package struct AudioEncoding: Sendable {
    package let codec: AudioSettings.Codec
    /// nil: lossless.
    package let bitRate: Int?
    /// What the encoder takes: planar float where it can, else interleaved float, else
    /// interleaved integers of `bits`.
    package let sampleFormat: AVSampleFormat
    /// Bits per sample of lossless audio: 16, or 24 for sources of more (FLAC, PCM); 0 for lossy.
    package let bits: Int

    /// The deepest lossless audio written: 24 bits, what recorders and studio masters hold;
    /// a 32-bit source is written at 24, with a note.
    package static let deepestBits = 24

    /// `sourceBits`: the deepest lossless source's bits per sample (0: none); FLAC and PCM
    /// write 24 bits when it is over 16, so a studio master keeps its depth.
    package static func make(_ codec: AudioSettings.Codec, settings: AudioSettings, preset: ExportPreset, sourceBits: Int = 0) throws -> AudioEncoding {
        try settings.check(for: codec)
        let bits = codec.bitRates != nil ? 0 : sourceBits > 16 ? deepestBits : 16
        let name = codec.encoderName(bits: bits)
        guard let encoder = avcodec_find_encoder_by_name(name) else {
            throw EngineError("this FFmpeg has no \(codec.rawValue) encoder (\(name)); Debian's libavcodec59 has it", kind: .unsupported)
        }
        var formats: [AVSampleFormat] = []
        if let list = encoder.pointee.sample_fmts {
            while formats.count < 32, list[formats.count] != AV_SAMPLE_FMT_NONE { formats.append(list[formats.count]) }
        }
        let integers = bits > 16 ? AV_SAMPLE_FMT_S32 : AV_SAMPLE_FMT_S16
        guard let format = [AV_SAMPLE_FMT_FLTP, AV_SAMPLE_FMT_FLT, integers].first(where: formats.contains) else {
            throw EngineError("this FFmpeg's \(name) takes no sample format Moonreel writes", kind: .unsupported)
        }
        let inherited = preset.audioBitRate > 0 ? preset.audioBitRate : 160_000
        let bitRate = codec.bitRates.map { rates in settings.bitRate ?? min(max(inherited, rates.lowerBound), rates.upperBound) }
        return AudioEncoding(codec: codec, bitRate: bitRate, sampleFormat: format, bits: bits)
    }

    /// The encoder's name.
    package var encoderName: String { codec.encoderName(bits: bits) }

    /// `format` moved onto rates the codec takes (Opus: 48 kHz for 44.1 kHz sources) and
    /// the settings' rate and channels.
    package func outputFormat(from sources: AudioFormat, settings: AudioSettings) -> AudioFormat {
        let wanted = settings.sampleRate ?? Int(sources.sampleRate)
        let rates = codec.sampleRates ?? [wanted]
        let rate = rates.contains(wanted) ? wanted : rates.filter { $0 >= wanted }.min() ?? rates.max() ?? wanted
        return AudioFormat(sampleRate: Int32(rate), channels: settings.channels ?? sources.channels)
    }
}
