import CMoonFFmpeg

/// How an export's settings, preset and container become encoders, and what it is expected
/// to weigh (`estimatedOutputFileLength`, `maxDuration`).
extension ExportSession {
    /// The encoders an export uses and the dynamic range it writes.
    struct Encodings {
        /// nil: no encoded video (audio only, or an image sequence, which has its own writer).
        let video: VideoEncoding?
        let audio: AudioEncoding?
        let dynamicRange: DynamicRange
    }

    /// Settles codecs, quality, formats and the dynamic range, and refuses every
    /// combination that cannot work, saying what would, before any file exists.
    func encodings(for container: OutputContainer) throws -> Encodings {
        if preset.isPassthrough {
            guard videoSettings == nil, audioSettings == nil else {
                throw EngineError("Passthrough copies packets as they are: videoSettings and audioSettings need a re-encoding preset such as HighestQuality")
            }
            guard fileLengthLimit == nil else { throw EngineError("fileLengthLimit needs a re-encoding preset: Passthrough copies whole packets as they are") }
            guard container.holdsVideoCodecs || container == .m4a else {
                throw EngineError("Passthrough copies packets: it writes mov, mp4, m4v, m4a, mkv or webm, not \(container.rawValue) (use a re-encoding preset)")
            }
            return Encodings(video: nil, audio: nil, dynamicRange: .sdr)
        }
        let video = videoSettings ?? VideoSettings(), audio = audioSettings ?? AudioSettings()
        var videoEncoding: VideoEncoding? = nil
        var dynamicRange = DynamicRange.sdr
        if let presetVideo = encodingPreset.video, container.holdsVideo {
            if container.holdsVideoCodecs, let codec = videoCodec(video, presetVideo: presetVideo, container: container) {
                try container.check(codec)
                try tagged("videoSettings") { try video.check(for: codec) }
                dynamicRange = try outputDynamicRange(codec: codec, chosenFormat: video.chosenPixelFormat(for: codec))
                videoEncoding = try tagged("videoSettings") {
                    try VideoEncoding.make(codec, settings: video, preset: encodingPreset, container: container, keepsHDR: dynamicRange.isHDR)
                }
            } else {
                guard videoSettings == nil else {
                    throw EngineError("videoSettings do not apply to \(container.noun) (its pictures have no codec settings): remove them, or write a video file")
                }
                dynamicRange = try outputDynamicRange(codec: nil, chosenFormat: nil)
                videoEncoding = container == .gif ? .gif : nil
            }
        } else if videoSettings != nil {
            throw EngineError(encodingPreset.video == nil ? "\(encodingPreset.name) writes audio only: remove videoSettings or choose a video preset"
                                                  : "m4a holds audio only: remove videoSettings, or write mp4, mov or mkv")
        }
        var audioEncoding: AudioEncoding? = nil
        if container.holdsAudio {
            let codec = audioCodec(audio, container: container)
            try container.check(codec)
            audioEncoding = try tagged("audioSettings") { try AudioEncoding.make(codec, settings: audio, preset: encodingPreset) }
        } else if audioSettings != nil {
            throw EngineError("\(container.noun) holds no sound: remove audioSettings (the audio is left out)")
        }
        return Encodings(video: videoEncoding, audio: audioEncoding, dynamicRange: dynamicRange)
    }

    /// The settings' own codec, else the preset's where the container takes it, else the
    /// container's first (webm: VP9).
    private func videoCodec(_ settings: VideoSettings, presetVideo: ExportPreset.Video, container: OutputContainer?) -> VideoSettings.Codec? {
        let presetCodec = VideoSettings.Codec(rawValue: presetVideo.rawValue) ?? .h264
        guard let container, !container.videoCodecs.contains(presetCodec) else { return settings.codec ?? presetCodec }
        return settings.codec ?? container.videoCodecs.first
    }

    /// The settings' own codec, else AAC where the container takes it, else Opus (webm).
    private func audioCodec(_ settings: AudioSettings, container: OutputContainer?) -> AudioSettings.Codec {
        settings.codec ?? (container.map { $0.audioCodecs.contains(.aac) } != false ? .aac : .opus)
    }

    /// The checks settings get when they are set (`session.videoSettings = {…}` in Lua):
    /// ranges, and what their codec (or the one they will get, by the preset and the
    /// output's type as set now) takes. Combinations with the container are checked at export.
    public func checkSettings(video: VideoSettings?, audio: AudioSettings?) throws {
        let container = outputFileType.flatMap(OutputContainer.init(rawValue:)) ?? outputURL.flatMap { try? resolvedContainer(for: $0) }
        if let video {
            try video.check(for: encodingPreset.video.flatMap { videoCodec(video, presetVideo: $0, container: container) } ?? video.codec)
        }
        if let audio { try audio.check(for: audioCodec(audio, container: container)) }
    }

    /// Settings errors at export name the table they come from.
    private func tagged<T>(_ table: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as EngineError { throw EngineError("\(table): \(error.message)") }
    }

    /// SDR, or the HDR of the sources when it is kept (HLG unless every HDR source is PQ).
    /// HDR needs 10-bit video other than H.264: `auto` keeps it for HEVC and ProRes unless
    /// an 8-bit format is chosen, and for VP9 and AV1 when a 10-bit one is.
    func outputDynamicRange(codec: VideoSettings.Codec?, chosenFormat: VideoSettings.PixelFormat?) throws -> DynamicRange {
        let sources = Set(composition.tracks(withMediaType: .video).flatMap { $0.segments.compactMap { $0.source?.dynamicRange } })
        let kept: DynamicRange = sources == [.pq] || sources == [.pq, .sdr] ? .pq : .hlg
        let tenBit = chosenFormat.map { $0 != .yuv420p } ?? (codec == .hevc || codec == .prores)
        let canKeep = tenBit && codec != nil && codec != .h264
        switch hdr {
        case .toneMap:
            return .sdr
        case .keep:
            guard canKeep else {
                let writes = codec.map { "8-bit \($0.rawValue)" } ?? "8-bit pictures"
                throw EngineError("hdr = \"keep\" needs an HEVC preset or 10-bit videoSettings (codec hevc, prores, vp9 or av1 with a 10-bit pixelFormat); this export writes \(writes)")
            }
            return sources.contains(where: \.isHDR) ? kept : .sdr
        case .auto:
            return canKeep && sources.contains(where: \.isHDR) ? kept : .sdr
        }
    }

    /// What the export would write, for `plan()` and the estimates.
    func summary(of encodings: Encodings, container: OutputContainer, range: TimeRange, output: String) throws -> ExportSummary {
        let fileType = container.rawValue
        if preset.isPassthrough {
            return ExportSummary(output: output, fileType: fileType, duration: range.duration, preset: encodingPreset,
                                 video: nil, audio: nil, videoEncoding: nil, audioEncoding: nil, imageFormat: nil)
        }
        let request = Request(output: PlannedOutput(path: output), container: container, range: range, encodings: encodings, smartCut: nil)
        let (videoPlan, audioPlan) = try ExportError.Kind.invalidRequest.tag {
            (try makeVideoPlan(request), try makeAudioPlan(request))
        }
        guard videoPlan != nil || audioPlan != nil else {
            throw ExportError(.invalidRequest, container == .m4a ? "the composition has no audio to export" : "the composition has no video or audio media")
        }
        return ExportSummary(
            output: output, fileType: fileType, duration: range.duration, preset: encodingPreset,
            video: videoPlan.map { .init(width: $0.outputWidth, height: $0.outputHeight, frameDuration: $0.frameDuration,
                                         hdr: $0.outputColor.dynamicRange.isHDR ? $0.outputColor.dynamicRange.rawValue.uppercased() : nil,
                                         frameCount: $0.frameCount) },
            audio: audioPlan.map { .init(sampleRate: Int($0.format.sampleRate), channels: $0.format.channels) },
            videoEncoding: encodings.video, audioEncoding: audioPlan == nil ? nil : encodings.audio,
            imageFormat: container.stillImageFormat)
    }

    /// About how many bytes the output will take, from the bit rates, or for constant
    /// quality the estimate `--dry-run` prints (`ExportSummary.estimatedBytes`). nil when it
    /// cannot be told: Passthrough, or settings the export would refuse.
    public var estimatedOutputFileLength: Int64? {
        guard let range = try? exportedRange() else { return nil }
        let container = outputURL.flatMap { try? resolvedContainer(for: $0) }
            ?? outputFileType.flatMap(OutputContainer.init(rawValue:)) ?? (encodingPreset.video == nil ? .m4a : .mp4)
        guard let encodings = try? encodings(for: container) else { return nil }
        let notes = warnings // planning again must not repeat its notes
        defer { warnings = notes }
        return (try? summary(of: encodings, container: container, range: range, output: outputURL ?? ""))?.estimatedBytes
    }

    /// The longest output expected to fit in `fileLengthLimit` (as AVFoundation's
    /// `maxDuration`): the exported range when there is no limit or it fits, else that
    /// part of it the limit holds by `estimatedOutputFileLength`; nil when unknown.
    public var maxDuration: MediaTime? {
        guard let range = try? exportedRange() else { return nil }
        guard let limit = fileLengthLimit else { return range.duration }
        guard let estimate = estimatedOutputFileLength, estimate > 0 else { return nil }
        let share = min(1, Double(max(limit - 8192, 0)) / Double(estimate))
        return MediaTime(seconds: range.duration.seconds * share) ?? range.duration
    }
}

/// A place holder for the output while only planning: nothing is written or moved.
private struct PlannedOutput: ExportOutput {
    let path: String
    var temporaryPath: String { path }
    func commit() throws {}
    func discard() {}
}

extension VideoSettings {
    /// The pixel format these settings ask for with `codec`: their own, or their profile's.
    func chosenPixelFormat(for codec: Codec) -> PixelFormat? {
        pixelFormat ?? profile.flatMap { name in codec.profiles.first { $0.name == name }?.pixelFormats.first }
    }
}

extension VideoEncoding {
    /// The format frames are rendered in for this encoder (a GIF's palette stage takes BGRA).
    var renderedFormat: AVPixelFormat { codec == nil ? AV_PIX_FMT_BGRA : pixelFormat }
}
