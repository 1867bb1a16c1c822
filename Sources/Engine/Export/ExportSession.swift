import CMoonFFmpeg
import CMoonAVShim

/// Progress of a running export, reported on the thread that called `export`.
public struct ExportProgress: Sendable {
    public let fraction: Double
    public let framesWritten: Int64
    public let frameCount: Int64
    /// Seconds of output written so far (for speed as a multiple of real time).
    public let mediaSecondsWritten: Double
}

/// Exports a composition to a file, like `AVAssetExportSession`: re-encodes through the
/// render pipeline (or copies packets for `Passthrough`) into a temporary file beside the
/// output, verifies it, and only then renames it into place.
public final class ExportSession {
    public enum Status: String, Sendable { case waiting, exporting, completed, failed, cancelled }

    public let composition: Composition
    public let preset: ExportPreset
    public var outputURL: String?
    /// "mov", "mp4", "m4v" or "m4a"; taken from the output's extension when nil.
    public var outputFileType: String?
    public var videoComposition: VideoComposition?
    public var audioMix: AudioMix?
    public var timeRange: TimeRange?
    public var shouldOptimizeForNetworkUse = false
    public var metadata: [String: String] = [:]
    public var overwrite = false
    /// Files that no output may replace, overwrite or not (see `InputRegistry`).
    public var readFiles: InputRegistry?
    /// What happens to HDR video (HLG or PQ, as iPhones record).
    public enum HDRMode: String, Sendable, CaseIterable {
        /// HEVC presets keep HDR (10-bit, the sources' transfer, BT.2020); H.264 ones tone-map.
        case auto
        /// Keep HDR (an HEVC preset is needed).
        case keep
        /// Tone-map to SDR BT.709 whatever the preset.
        case toneMap
    }
    public var hdr = HDRMode.auto

    /// Fade length at each end of audio segments that join different media (0 turns it off).
    public var audioSpliceFade = ExportSession.defaultAudioSpliceFade
    public static let defaultAudioSpliceFade = MediaTime(value: 2, timescale: 1000)
    /// Brings the audio to a loudness target (measured first); nil leaves it as mixed.
    public var loudness: LoudnessNormalization?

    public private(set) var status = Status.waiting
    /// Why the export failed (or was cancelled), with a kind to act on.
    public private(set) var error: ExportError?
    public private(set) var progress = 0.0
    /// Adjustments the export made and the user should know about (odd sizes rounded…).
    public internal(set) var warnings: [String] = []
    public let cancellation = CancellationFlag()
    /// A flag shared by every export of a host (Ctrl-C); cancels this export too when set.
    public var parentCancellation: CancellationFlag?

    private var isCancelled: Bool {
        if parentCancellation?.isCancelled == true { cancellation.cancel() }
        return cancellation.isCancelled
    }

    public static let fileTypes = ["mov", "mp4", "m4v", "m4a"]

    /// The preset that encodes: `preset`, or the one a smart cut falls back to.
    private var encodingPreset: ExportPreset

    public init(composition: Composition, preset: ExportPreset) {
        self.composition = composition
        self.preset = preset
        encodingPreset = preset
    }

    public func cancel() { cancellation.cancel() }

    /// Runs the export to completion. Blocks; `progress` is called on this thread.
    public func export(progress report: (ExportProgress) throws -> Void = { _ in }) throws {
        guard status == .waiting else {
            // Not recorded as this session's error: that stays the one of its own run.
            throw ExportError(.invalidRequest, "this export session has already run (its status is \(status.rawValue)); "
                              + "make a new one to export again")
        }
        status = .exporting
        do {
            try run(report)
            status = .completed
            progress = 1
        } catch {
            let failure = isCancelled ? ExportError(.cancelled, "export cancelled")
                : error as? ExportError ?? ExportError(.renderFailed, "\(error)")
            status = failure.kind == .cancelled ? .cancelled : .failed
            self.error = failure
            throw failure
        }
    }

    /// Checks everything an export checks (settings, output path, composition, video
    /// composition) and says what it would write, without encoding: `--dry-run`.
    public func plan() throws -> ExportSummary {
        let (output, fileType, range) = try checkedRequest()
        output.discard()
        if preset.isPassthrough {
            return ExportSummary(output: output.path, fileType: fileType, duration: range.duration, preset: preset,
                                 video: nil, audio: nil)
        }
        _ = try smartCut(range: range, fileType: fileType)
        let (videoPlan, audioPlan) = try ExportError.Kind.invalidRequest.tag {
            (try makeVideoPlan(range: range, fileType: fileType), try makeAudioPlan(range: range))
        }
        guard videoPlan != nil || audioPlan != nil else {
            throw ExportError(.invalidRequest, fileType == "m4a" ? "the composition has no audio to export" : "the composition has no video or audio media")
        }
        return ExportSummary(
            output: output.path, fileType: fileType, duration: range.duration, preset: preset,
            video: videoPlan.map { .init(width: $0.outputWidth, height: $0.outputHeight, frameDuration: $0.frameDuration,
                                         hdr: $0.outputColor.dynamicRange.isHDR ? $0.outputColor.dynamicRange.rawValue.uppercased() : nil) },
            audio: audioPlan.map { .init(sampleRate: Int($0.format.sampleRate), channels: $0.format.channels) })
    }

    /// Settings, output path and range, checked before any work.
    private func checkedRequest() throws -> (SafeOutput, String, TimeRange) {
        try ExportError.Kind.invalidRequest.tag { () throws -> (SafeOutput, String, TimeRange) in
            guard let outputPath = outputURL else { throw EngineError("set outputURL before exporting") }
            if preset.isPassthrough, loudness != nil {
                throw EngineError("loudness needs the audio mixed again, but Passthrough copies it as it is; use another preset (AppleM4A, HighestQuality…)")
            }
            let fileType = try resolvedFileType(for: outputPath)
            let output = try ExportError.Kind.outputUnavailable.tag {
                try SafeOutput(path: outputPath, overwrite: overwrite, inputs: composition.sourcePaths, readFiles: readFiles)
            }
            let duration = composition.duration
            guard duration.value > 0 else { throw EngineError("the composition is empty: insert media before exporting") }
            let whole = TimeRange(start: .zero, duration: duration)
            let range = try timeRange.map { requested -> TimeRange in
                guard let clipped = requested.intersection(whole) else {
                    throw EngineError("timeRange \(requested) is outside the composition (0…\(duration.seconds) s)")
                }
                return clipped
            } ?? whole
            return (output, fileType, range)
        }
    }

    private func run(_ report: (ExportProgress) throws -> Void) throws {
        let (output, fileType, range) = try checkedRequest()
        FFmpegLog.capture()
        defer { output.discard() } // no-op once the file has been renamed into place
        do {
            if preset.isPassthrough {
                try PassthroughWriter(composition: composition, range: range, fileType: fileType,
                                      isCancelled: { [unowned self] in isCancelled }).write(to: output.temporaryPath, metadata: metadata,
                                                                        fastStart: shouldOptimizeForNetworkUse, report: report)
            } else if let cut = try smartCut(range: range, fileType: fileType) {
                try cut.write(to: output.temporaryPath, fileType: fileType, preset: preset, audio: try makeAudioPlan(range: range),
                              duration: range.duration, metadata: metadata, fastStart: shouldOptimizeForNetworkUse,
                              cancellation: cancellation, isCancelled: { [unowned self] in isCancelled }, report: report)
            } else {
                try render(range: range, fileType: fileType, to: output.temporaryPath, report: report)
            }
        } catch {
            throw ExportSession.describe(error, writing: output)
        }
        try ExportError.Kind.verificationFailed.tag { try verify(output.temporaryPath, expected: range.duration) }
        try ExportError.Kind.outputUnavailable.tag { try output.commit() }
    }

    /// Errors while writing name the output the user asked for, not the temporary file,
    /// and say plainly when the disk is full.
    private static func describe(_ error: Error, writing output: SafeOutput) -> ExportError {
        if let ffmpeg = error as? FFmpegError, ffmpeg.code == MOON_AVERROR_ENOSPC {
            return ExportError(.diskFull, "output \"\(output.path)\": the disk is full; nothing was replaced (free some space and export again)")
        }
        if let tagged = error as? ExportError { return tagged }
        return ExportError(.renderFailed, "\(error)".replacingAll(output.temporaryPath, with: output.path))
    }

    private func resolvedFileType(for path: String) throws -> String {
        if let type = outputFileType {
            guard ExportSession.fileTypes.contains(type) else {
                throw EngineError("outputFileType must be one of \(ExportSession.fileTypes.joined(separator: ", ")), got \"\(type)\"")
            }
            return type
        }
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        if ExportSession.fileTypes.contains(ext) { return ext }
        if preset.name == "AppleM4A" { return "m4a" }
        throw EngineError("cannot tell the file type from \"\(path)\": use a .mov, .mp4, .m4v or .m4a name, or set outputFileType")
    }

    /// The smart cut of this export; nil, with a note saying why and the preset it falls
    /// back to, when the composition cannot be copied.
    private func smartCut(range: TimeRange, fileType: String) throws -> SmartCutWriter? {
        guard preset.isSmartCut else { return nil }
        do {
            return try SmartCutWriter(composition: composition, range: range, videoComposition: videoComposition, fileType: fileType)
        } catch let unavailable as SmartCutUnavailable {
            let fallback = unavailable.isHEVC ? "HEVCHighestQuality" : "HighestQuality"
            encodingPreset = ExportPreset.named(fallback) ?? preset
            if !warnings.contains(where: { $0.hasPrefix("SmartCut") }) {
                warnings.append("SmartCut re-encodes everything with \(fallback) settings: \(unavailable)")
            }
            return nil
        }
    }

    // MARK: Re-encoding

    private func render(range: TimeRange, fileType: String, to path: String, report: (ExportProgress) throws -> Void) throws {
        let videoPlan = try makeVideoPlan(range: range, fileType: fileType)
        let audioPlan = try makeAudioPlan(range: range)
        guard videoPlan != nil || audioPlan != nil else {
            throw EngineError(fileType == "m4a" ? "the composition has no audio to export" : "the composition has no video or audio media")
        }
        let muxer = try Muxer(path: path, fileType: fileType)
        let videoEncoder = try videoPlan.map {
            try Encoder.video(encodingPreset, width: $0.outputWidth, height: $0.outputHeight, frameDuration: $0.frameDuration,
                              color: $0.outputColor, muxer: muxer)
        }
        let audioEncoder = try audioPlan.map { try Encoder.audio(encodingPreset, format: $0.format, muxer: muxer) }
        try muxer.writeHeader(metadata: metadata, fastStart: shouldOptimizeForNetworkUse)

        let pipeline = try RenderPipeline(video: videoPlan, audio: audioPlan,
                                          audioBlock: audioEncoder?.frameSize ?? 1024, cancellation: cancellation)
        defer { pipeline.stop() }
        var framesWritten: Int64 = 0
        var samplesWritten: Int64 = 0
        var lastReported = -1.0
        let frameCount = videoPlan?.frameCount ?? 0
        let sampleCount = audioPlan?.sampleCount ?? 0
        while true {
            if isCancelled { throw EngineError("export cancelled") }
            // Feed whichever stream is behind in time, so the muxer interleaves cheaply.
            let videoTime = videoPlan.map { $0.frameDuration * framesWritten } ?? MediaTime(value: Int64.max / 4, timescale: 1)
            let audioTime = audioPlan.map { MediaTime(value: samplesWritten, timescale: $0.format.sampleRate) } ?? MediaTime(value: Int64.max / 4, timescale: 1)
            let videoDone = videoPlan == nil || framesWritten >= frameCount
            let audioDone = audioPlan == nil || samplesWritten >= sampleCount
            if videoDone && audioDone { break }
            if !videoDone && (audioDone || videoTime <= audioTime), let encoder = videoEncoder {
                guard let frame = try pipeline.nextVideoFrame() else { throw EngineError("video ended early") }
                try encoder.encode(frame)
                framesWritten += 1
            } else if let encoder = audioEncoder, let plan = audioPlan {
                guard let block = try pipeline.nextAudioBlock() else { throw EngineError("audio ended early") }
                let frame = try ExportSession.audioFrame(block, format: plan.format, pts: samplesWritten)
                try encoder.encode(frame)
                samplesWritten += Int64(block.first?.count ?? 0)
            }
            let fraction = min(videoPlan == nil ? 1 : Double(framesWritten) / Double(max(frameCount, 1)),
                               audioPlan == nil ? 1 : Double(samplesWritten) / Double(max(sampleCount, 1)))
            if fraction - lastReported >= 0.002 || fraction >= 1 {
                lastReported = fraction
                progress = fraction
                try report(ExportProgress(fraction: fraction, framesWritten: framesWritten, frameCount: frameCount,
                                          mediaSecondsWritten: fraction * range.duration.seconds))
            }
        }
        try videoEncoder?.encode(nil)
        try audioEncoder?.encode(nil)
        try muxer.finish()
    }

    /// The video to render, or nil for none. A video composition of the user's own is
    /// rendered even over no video media (layers over a song, a title card over empty
    /// time); without one, only video media makes video.
    private func makeVideoPlan(range: TimeRange, fileType: String) throws -> VideoPlan? {
        let hasVideoMedia = composition.tracks(withMediaType: .video).contains { $0.segments.contains { !$0.isEmpty } }
        guard encodingPreset.video != nil, fileType != "m4a", hasVideoMedia || self.videoComposition != nil else { return nil }
        let videoComposition = self.videoComposition ?? VideoComposition.properties(of: composition)
        let scale = videoComposition.renderScale
        guard scale > 0, scale <= 4, scale.isFinite else { throw EngineError("videoComposition.renderScale must be in (0, 4], got \(scale)") }
        let render = videoComposition.renderSize
        let scaled = Size(width: render.width * scale, height: render.height * scale)
        let (width, height) = encodingPreset.outputSize(for: scaled)
        if self.videoComposition != nil, Int(scaled.width) % 2 != 0 || Int(scaled.height) % 2 != 0 || scaled.width != scaled.width.rounded() {
            warnings.append("renderSize \(scaled) is not made of even whole numbers, which 4:2:0 video needs; the output is \(width)×\(height)")
        }
        return try VideoPlan.make(composition: composition, videoComposition: videoComposition, range: range,
                                  outputWidth: width, outputHeight: height, dynamicRange: try outputDynamicRange())
    }

    /// SDR, or the HDR of the sources when `hdr` keeps it: HLG unless every HDR source is PQ.
    private func outputDynamicRange() throws -> DynamicRange {
        let sources = Set(composition.tracks(withMediaType: .video).flatMap { $0.segments.compactMap { $0.source?.dynamicRange } })
        let kept: DynamicRange = sources == [.pq] || sources == [.pq, .sdr] ? .pq : .hlg
        switch hdr {
        case .toneMap: return .sdr
        case .keep:
            guard encodingPreset.video == .hevc else {
                throw EngineError("hdr = \"keep\" needs an HEVC preset (HEVCHighestQuality, HEVC1920x1080, HEVC3840x2160); \(encodingPreset.name) writes 8-bit H.264")
            }
            return sources.contains(where: \.isHDR) ? kept : .sdr
        case .auto:
            return encodingPreset.video == .hevc && sources.contains(where: \.isHDR) ? kept : .sdr
        }
    }

    private func makeAudioPlan(range: TimeRange) throws -> AudioPlan? {
        try AudioPlan.make(composition: composition, audioMix: audioMix, range: range, spliceFade: audioSpliceFade, loudness: loudness)
    }

    static func audioFrame(_ block: [[Float]], format: AudioFormat, pts: Int64) throws -> Frame {
        let frame = try Frame()
        let count = block.first?.count ?? 0
        frame.pointer.pointee.nb_samples = Int32(count)
        frame.pointer.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointer.pointee.sample_rate = format.sampleRate
        av_channel_layout_default(&frame.pointer.pointee.ch_layout, Int32(format.channels))
        try check(av_frame_get_buffer(frame.pointer, 0), "allocating audio")
        for (channel, samples) in block.enumerated() {
            let (plane, _) = frame.plane(channel)
            samples.withUnsafeBytes { plane.update(from: $0.bindMemory(to: UInt8.self).baseAddress!, count: count * 4) }
        }
        frame.pointer.pointee.pts = pts
        return frame
    }

    /// Reopens the finished file: it must parse and hold every stream it should, with the
    /// expected length (a frame of slack for encoder rounding).
    private func verify(_ path: String, expected duration: MediaTime) throws {
        let written: Asset
        do {
            written = try Asset(path: path)
        } catch {
            throw EngineError("the exported file failed verification (\(error)); the output was not replaced")
        }
        let tolerance = MediaTime(value: 1, timescale: 5)
        if written.duration + tolerance < duration {
            throw EngineError("the exported file is \(written.duration.seconds) s long but should be \(duration.seconds) s; the output was not replaced")
        }
    }
}

/// The threads of one export: video (decode + compose) and audio (decode + mix) each
/// produce into a bounded queue; the caller's thread encodes and muxes.
final class RenderPipeline {
    private let videoQueue = BoundedQueue<StageOutput<Frame>>(capacity: 6)
    private let audioQueue = BoundedQueue<StageOutput<[[Float]]>>(capacity: 32)
    private var workers: [WorkerThread] = []

    init(video: VideoPlan?, audio: AudioPlan?, audioBlock: Int, cancellation: CancellationFlag) throws {
        if let plan = video {
            let queue = videoQueue
            workers.append(try WorkerThread {
                do {
                    let renderer = VideoRenderer(plan: plan)
                    for index in 0..<plan.frameCount {
                        if cancellation.isCancelled { break }
                        guard queue.push(.item(try renderer.renderFrame(index))) else { break }
                    }
                } catch {
                    queue.push(.failed("\(error)"))
                }
                queue.close()
            })
        }
        if let plan = audio {
            let queue = audioQueue
            workers.append(try WorkerThread {
                do {
                    let renderer = try AudioRenderer.make(plan: plan, cancellation: cancellation)
                    while !cancellation.isCancelled, let block = try renderer.nextBlock(count: audioBlock) {
                        guard queue.push(.item(block)) else { break }
                    }
                } catch {
                    queue.push(.failed("\(error)"))
                }
                queue.close()
            })
        }
    }

    func nextVideoFrame() throws -> Frame? { try unwrap(videoQueue.pop()) }
    func nextAudioBlock() throws -> [[Float]]? { try unwrap(audioQueue.pop()) }

    private func unwrap<Item>(_ output: StageOutput<Item>?) throws -> Item? {
        switch output {
        case .item(let item): return item
        case .failed(let message): throw EngineError(message)
        case nil: return nil
        }
    }

    /// Unblocks and joins the producers (they see the closed queues and stop).
    func stop() {
        videoQueue.close()
        audioQueue.close()
        for worker in workers { worker.join() }
        workers.removeAll()
    }
}

public extension String {
    /// Every occurrence of `target` replaced (without Foundation).
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = "", rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
