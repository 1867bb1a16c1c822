import CMoonFFmpeg
import CMoonAVShim

/// Progress of a running export, reported on the thread that called `export`.
public struct ExportProgress: Sendable {
    /// How much of the export is done, 0…1 (a GIF's palette pass is the first half).
    public let fraction: Double
    /// Video frames encoded so far.
    public let framesWritten: Int64
    /// Video frames the export will write (0 without video).
    public let frameCount: Int64
    /// Seconds of output written so far (for speed as a multiple of real time).
    public let mediaSecondsWritten: Double
}

/// Exports a composition to a file, like `AVAssetExportSession`: re-encodes through the
/// render pipeline (or copies packets for `Passthrough`) into a temporary file beside the
/// output, verifies it, and only then renames it into place.
public final class ExportSession {
    /// The states of an export, like `AVAssetExportSession.Status`.
    public enum Status: String, Sendable {
        /// `export` has not been called.
        case waiting
        /// `export` is running.
        case exporting
        /// The file is written, verified and in place.
        case completed
        /// The export failed: see `error`. Nothing was replaced.
        case failed
        /// The export was cancelled. Nothing was replaced.
        case cancelled
    }

    /// The composition exported (AVAssetExportSession's `asset`).
    public let composition: Composition
    /// How the output is encoded (AVAssetExportSession's `presetName`).
    public let preset: ExportPreset
    /// The path of the output file (AVAssetExportSession's `outputURL`); it must be set
    /// before `export`. Its extension gives the file type unless `outputFileType` is set; for an
    /// image sequence it is a pattern such as `frames/%05d.png`. An existing file is replaced
    /// only with `overwrite`, never one the export reads.
    public var outputURL: String?
    /// One of `fileTypes` ("mp4", "mov", "m4a", "gif", "png"…), like AVAssetExportSession's
    /// `outputFileType`; taken from the output's extension when nil.
    public var outputFileType: String?
    /// How frames are composed (AVAssetExportSession's `videoComposition`); nil: each video
    /// track upright at the sources' size, as `VideoComposition.properties(of:)` makes it.
    public var videoComposition: VideoComposition?
    /// Volumes and ducking of the audio tracks (AVAssetExportSession's `audioMix`); nil: each
    /// track at its `preferredVolume`.
    public var audioMix: AudioMix?
    /// The part of the composition exported (AVAssetExportSession's `timeRange`); nil: all of
    /// it. Clipped to the composition; a range entirely outside it fails the export.
    public var timeRange: TimeRange?
    /// Puts the file's index at the front (MP4/MOV `faststart`) so playback can start while it
    /// downloads, like AVAssetExportSession's property of that name; off by default.
    public var shouldOptimizeForNetworkUse = false
    /// Tags written into the file (AVAssetExportSession's `metadata`). Standard keys ("title",
    /// "artist", "album", "comment", "date", "copyright", "creation_time"…) become the usual
    /// tags; any other key makes MP4/MOV files carry QuickTime `mdta` metadata, which holds any key.
    public var metadata: [String: String] = [:]
    /// Whether an existing file at `outputURL` may be replaced; off by default. The composition's
    /// sources and `readFiles` are never replaced either way.
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
    /// What happens to HDR sources; `.auto` by default.
    public var hdr = HDRMode.auto
    /// Smart rendering: the GOPs of an H.264 or HEVC source that the video composition and
    /// its layers leave untouched (an intro without text, an outro) are copied as `SmartCut`
    /// copies them, and only the rest is composed and encoded, at the source's frame times and
    /// with encoder settings matched to the source. nil (the default): on for the `SmartCut`
    /// preset, off for the others. When it cannot copy, every frame is encoded and a note says why.
    public var smartRendering: Bool?

    /// Fade length at each end of audio segments that join different media (0 turns it off).
    public var audioSpliceFade = ExportSession.defaultAudioSpliceFade
    /// 2 ms: enough to hide a click where two sounds are spliced, too short to hear as a fade.
    public static let defaultAudioSpliceFade = AudioPlan.defaultSpliceFade
    /// Brings the audio to a loudness target (measured first); nil leaves it as mixed.
    public var loudness: LoudnessNormalization?

    /// The video stream's codec, quality or bit rate, speed, profile, pixel format and
    /// keyframe spacing, over the preset's values (`AVAssetWriterInput`'s output settings).
    public var videoSettings: VideoSettings?
    /// The audio stream's codec, bit rate, sample rate and channels over the preset's values
    /// (`AVAssetWriterInput`'s output settings); nil: AAC (Opus for webm) at the preset's bit
    /// rate, the sources' rate and channels. Passthrough takes none.
    public var audioSettings: AudioSettings?
    /// The most bytes the output may take: the export ends cleanly before the next packet
    /// would pass it (the file is complete and plays; `stoppedBy` says so). nil: no limit.
    public var fileLengthLimit: Int64?
    /// The most memory the export may take beyond what the process held when it began,
    /// in bytes: its pictures, render caches and encoder buffers (a host passes its script
    /// memory limit). Over it, the export stops with an error of kind `.memoryLimit`
    /// naming the picture size; nil: no limit.
    public var memoryLimit: Int64?
    /// Why an export wrote less than its range.
    public enum StopReason: String, Sendable {
        /// The next packet would have taken the file past `fileLengthLimit`.
        case fileLengthLimit
    }
    /// Why the export ended before the end of its range; nil when it wrote all of it.
    public private(set) var stoppedBy: StopReason?
    /// How long the written output is, once the export has completed.
    public private(set) var outputDuration: MediaTime?

    /// Where the export is (AVAssetExportSession's `status`).
    public private(set) var status = Status.waiting
    /// Why the export failed (or was cancelled), with a kind to act on.
    public private(set) var error: ExportError?
    /// How much is done, 0…1 (AVAssetExportSession's `progress`); 1 once completed.
    public private(set) var progress = 0.0
    /// What the export did other than exactly as asked (a size rounded, sound left out, a
    /// line of text cut), each once, in the order they came.
    public var diagnostics: [Diagnostic] { log.all }
    /// Any warning among `diagnostics` fails the export before its output is committed
    /// (kind `.strict`); nothing is replaced. Notes never fail it.
    public var strict = false
    let log = DiagnosticLog()
    /// This export's cancellation flag: `cancel()` sets it. It is `Sendable`, so another thread
    /// can hold it and cancel the export while `export` runs.
    public let cancellation = CancellationFlag()
    /// A flag shared by every export of a host (Ctrl-C); cancels this export too when set.
    public var parentCancellation: CancellationFlag?
    /// This process's share of a chunked render (`moonreel run --chunks`): one piece of the
    /// pictures, the sound, or the join into `outputURL`; nil: the whole export.
    package var chunkTask: ChunkTask?

    private var isCancelled: Bool {
        if parentCancellation?.isCancelled == true { cancellation.cancel() }
        return cancellation.isCancelled
    }

    /// Containers, GIF, and image sequences (png, jpg, webp: `frames/%05d.png`).
    public static let fileTypes = OutputContainer.allCases.map(\.rawValue)

    /// A session exporting `composition` with `preset`, like
    /// `AVAssetExportSession(asset:presetName:)`; set `outputURL` (and whatever else) before `export`.
    public init(composition: Composition, preset: ExportPreset) {
        self.composition = composition
        self.preset = preset
    }

    /// Asks a running export to stop, like `cancelExport()`: `export` then throws an
    /// `ExportError` of kind `.cancelled`, and `outputURL` is left as it was. To cancel from
    /// another thread, hand that thread `cancellation`.
    public func cancel() { cancellation.cancel() }

    /// A new session, waiting, with this one's settings (a session exports once; a preview's
    /// Export button exports the same edit again).
    public func copy() -> ExportSession {
        let copy = ExportSession(composition: composition, preset: preset)
        (copy.outputURL, copy.outputFileType, copy.videoComposition, copy.audioMix) = (outputURL, outputFileType, videoComposition, audioMix)
        (copy.timeRange, copy.shouldOptimizeForNetworkUse, copy.metadata, copy.overwrite) = (timeRange, shouldOptimizeForNetworkUse, metadata, overwrite)
        (copy.readFiles, copy.hdr, copy.audioSpliceFade, copy.loudness) = (readFiles, hdr, audioSpliceFade, loudness)
        (copy.videoSettings, copy.audioSettings, copy.fileLengthLimit, copy.memoryLimit) = (videoSettings, audioSettings, fileLengthLimit, memoryLimit)
        copy.parentCancellation = parentCancellation
        return copy
    }

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
                : ExportError.wrapping(error, as: .renderFailed)
            status = failure.kind == .cancelled ? .cancelled : .failed
            self.error = failure
            throw failure
        }
    }

    /// Checks everything an export checks (settings, output path, composition, video
    /// composition) and says what it would write, without writing it: `--dry-run`. With
    /// `samplingSize`, a constant-quality video's size is measured on a few short bursts of
    /// its own pictures, encoded at its own settings (`SizeSample`; some seconds at 1080p).
    public func plan(samplingSize: Bool = false) throws -> ExportSummary {
        let planner = ExportPlanner(session: self)
        let request = try planner.request()
        request.output.discard()
        note(request.notes)
        try checkText(request)
        var (summary, notes) = try planner.summary(of: request)
        note(notes)
        if samplingSize, case .reencode = request.strategy, let encoding = request.encodings.video, encoding.rateControl.isConstantQuality,
           let pictures = try planner.videoPlan(request).0 {
            summary.sampledBytesPerFrame = try SizeSample.bytesPerFrame(plan: pictures, encoding: encoding, cancellation: cancellation)
        }
        if let sequence = request.output as? ImageSequenceOutput, let frames = summary.video?.frameCount {
            _ = try ExportError.Kind.outputUnavailable.tag { try sequence.checkNames(frameCount: frames) }
        }
        return summary
    }

    /// The checks settings get when they are set (`session.videoSettings = {…}` in Lua):
    /// ranges, and what their codec (or the one they will get, by the preset and the
    /// output's type as set now) takes. Combinations with the container are checked at export.
    public func checkSettings(video: VideoSettings?, audio: AudioSettings?) throws {
        let planner = ExportPlanner(session: self)
        let container = outputFileType.flatMap(OutputContainer.init(rawValue:)) ?? outputURL.flatMap { try? planner.container(for: $0) }
        if let video {
            try video.check(for: preset.video.flatMap { planner.videoCodec(video, presetVideo: $0, container: container) } ?? video.codec)
        }
        if let audio { try audio.check(for: planner.audioCodec(audio, container: container)) }
    }


    /// About how many bytes the output will take, from the bit rates, or for constant
    /// quality the estimate `--dry-run` prints (`ExportSummary.estimatedBytes`). nil when it
    /// cannot be told: Passthrough, or settings the export would refuse.
    public var estimatedOutputFileLength: Int64? {
        let planner = ExportPlanner(session: self)
        guard let request = try? planner.request(makingOutput: false) else { return nil }
        return (try? planner.summary(of: request))?.summary.estimatedBytes
    }

    /// The longest output expected to fit in `fileLengthLimit` (as AVFoundation's
    /// `maxDuration`): the exported range when there is no limit or it fits, else that
    /// part of it the limit holds by `estimatedOutputFileLength`; nil when unknown.
    public var maxDuration: MediaTime? {
        guard let range = try? ExportPlanner(session: self).range() else { return nil }
        guard let limit = fileLengthLimit else { return range.duration }
        guard let estimate = estimatedOutputFileLength, estimate > 0 else { return nil }
        let share = min(1, Double(max(limit - 8192, 0)) / Double(estimate))
        return MediaTime(seconds: range.duration.seconds * share) ?? range.duration
    }

    /// What an export of this session would say of its pictures, found without planning a
    /// file: text cut or drawn smaller to fit, and a frame rate chosen. A preview (the
    /// studio) lists them beside the player.
    package func pictureDiagnostics() throws -> [Diagnostic] {
        guard let videoComposition else { return [] }
        let chosen = videoComposition.renderFrameDuration.note.map { [$0] } ?? []
        return try chosen + (videoComposition.animationTool.map { try TextFit.diagnostics(under: $0.parentLayer) } ?? [])
    }

    private func note(_ notes: [Diagnostic]) {
        for note in notes { log.report(note) }
    }

    /// What the layers' text loses (cut to fit, or past its box), checked once per export
    /// that draws pictures or joins them (a chunked render's join says it for its pieces).
    private func checkText(_ request: ExportRequest) throws {
        switch request.strategy {
        case .reencode, .piece, .join: break
        case .passthrough, .smartCut, .sound, .nothing: return
        }
        guard let tool = videoComposition?.animationTool else { return }
        note(try TextFit.diagnostics(under: tool.parentLayer))
    }

    private func run(_ report: (ExportProgress) throws -> Void) throws {
        let request = try ExportPlanner(session: self).request()
        note(request.notes)
        if case .nothing = request.strategy { return }
        try checkText(request)
        let output = request.output
        FFmpegLog.capture()
        defer { output.discard() } // no-op once the file has been renamed into place
        var written = request.range.duration
        do {
            switch request.strategy {
            case .passthrough:
                try PassthroughWriter(composition: composition, range: request.range, container: request.container,
                                      isCancelled: { [unowned self] in isCancelled }).write(to: output.temporaryPath, metadata: metadata,
                                                                        fastStart: shouldOptimizeForNetworkUse, report: report)
            case .smartCut(let cut):
                try cut.write(to: output.temporaryPath, container: request.container, preset: preset,
                              audio: try request.encodings.audio.flatMap { encoding in try settledAudioPlan(request).map { (encoding, $0) } },
                              duration: request.range.duration, metadata: metadata, fastStart: shouldOptimizeForNetworkUse,
                              cancellation: cancellation, isCancelled: { [unowned self] in isCancelled }, report: report)
            case .reencode:
                written = try render(request, report: report)
            case .piece(let encoded, let kept):
                written = try render(request, part: .pictures(encoded, kept: kept), report: report)
            case .sound:
                written = try render(request, part: .sound, report: report)
            case .join(let layout, let hasSound):
                try PassthroughWriter(composition: layout.joinedComposition(hasSound: hasSound, duration: request.range.duration), range: TimeRange(start: .zero, duration: request.range.duration),
                                      container: request.container, isCancelled: { [unowned self] in isCancelled })
                    .write(to: output.temporaryPath, metadata: metadata, fastStart: shouldOptimizeForNetworkUse, report: report)
            case .nothing:
                return
            }
        } catch {
            throw ExportSession.describe(error, writing: output)
        }
        outputDuration = written
        try ExportError.Kind.verificationFailed.tag {
            try OutputVerifier(fileLengthLimit: fileLengthLimit).verify(output, lasting: stoppedBy == nil ? written : nil)
        }
        if strict, let first = log.warnings.first {
            let count = log.warnings.count
            throw ExportError(.strict, "strict: \(first)" + (count > 1 ? " (and \(count - 1) more warning\(count > 2 ? "s" : ""))" : "")
                              + "; \(output.path) was not written")
        }
        try ExportError.Kind.outputUnavailable.tag { try output.commit() }
        if case .join(let layout, _) = request.strategy { layout.removeFiles() }
    }

    /// Errors while writing name the output the user asked for, not the temporary file,
    /// and say plainly when the disk is full.
    private static func describe(_ error: Error, writing output: any ExportOutput) -> ExportError {
        if let ffmpeg = error as? FFmpegError, ffmpeg.code == MOON_AVERROR_ENOSPC {
            return ExportError(.diskFull, "output \"\(output.path)\": the disk is full; nothing was replaced (free some space and export again)")
        }
        if let tagged = error as? ExportError { return tagged }
        // The encoder and muxer name the temporary file, which is gone: the user's is the output.
        let aboutOutput = (error as? FFmpegError)?.subject?.contains(output.temporaryPath) ?? false
        return ExportError(.renderFailed, "\(error)".replacingAll(output.temporaryPath, with: output.path), underlying: error,
                           subject: aboutOutput ? output.path : nil)
    }

    /// The audio plan with its loudness gain measured (when `loudness` is set), and a note
    /// when the mix cannot reach the target, rather than a silent miss. A lossy encoding's
    /// peaks are read back from a trial encode: when they pass the ceiling, the limiter's
    /// ceiling goes down by as much (and a little more), at most `peakTrials` times.
    private func settledAudioPlan(_ request: ExportRequest) throws -> AudioPlan? {
        guard var plan = try ExportPlanner(session: self).audioPlan(request) else { return nil }
        guard let target = plan.loudness else { return plan }
        var settled = try target.gain(for: plan, cancellation: cancellation)
        plan.settledLoudness = settled
        if let encoding = request.encodings.audio, encoding.bitRate != nil {
            var extraHeadroom = 0.0
            for trial in 1...Self.peakTrials {
                let peak = try EncodedPeak.truePeak(of: plan, encoding: encoding, container: request.container, cancellation: cancellation)
                guard peak > target.truePeak else { break }
                guard trial < Self.peakTrials else {
                    log.report(Diagnostic(.loudnessMissed, .warning, "loudness: the encoded sound peaks at \((peak * 10).rounded() / 10) dBTP, over the \(target.truePeak) dBTP ceiling (the \(encoding.codec.rawValue) encoder overshoots the limiter)",
                                          remedy: "give a lower truePeakLimit or a higher audio bit rate"))
                    break
                }
                extraHeadroom += peak - target.truePeak + Self.peakMargin
                settled = try target.gain(for: plan, cancellation: cancellation, extraHeadroom: extraHeadroom)
                plan.settledLoudness = settled
            }
        }
        if abs(settled.expected - target.integrated) > 1, let reason = settled.heldBack {
            log.report(Diagnostic(.loudnessMissed, .warning, "loudness: the mix reaches about \((settled.expected * 10).rounded() / 10) LUFS, not \(target.integrated): \(reason)"))
        }
        return plan
    }

    /// Trial encodes at most: the overshoot grows little as the ceiling drops, so the second
    /// lands under it; the third only confirms.
    private static let peakTrials = 3
    /// How far under the ceiling a corrected trial aims (dB): a tenth of a dB, the precision
    /// the ceiling is given in.
    private static let peakMargin = 0.1

    // MARK: Re-encoding

    /// What a render writes: all of the request, or a chunked render's part of it.
    private enum RenderedPart {
        case whole
        /// These output frames encoded, without sound; the file keeps those at `kept`
        /// (positions among them), the others only warm the encoder up.
        case pictures(Range<Int64>, kept: Range<Int64>)
        /// The sound alone.
        case sound
    }

    /// Renders and writes the request; returns the duration written (less than the range
    /// when `fileLengthLimit` ended it).
    private func render(_ request: ExportRequest, part: RenderedPart = .whole, report: (ExportProgress) throws -> Void) throws -> MediaTime {
        var (videoPlan, notes) = try ExportPlanner(session: self).videoPlan(request)
        note(notes)
        var frames = videoPlan.map { 0..<$0.frameCount }
        switch part {
        case .whole: break
        case .pictures(let numbers, _): frames = numbers
        case .sound: (videoPlan, frames) = (nil, nil)
        }
        // Before any picture, encoder or palette is made.
        let budget = try memoryLimit.flatMap { limit in try videoPlan.map { try ExportMemoryBudget(limit: limit, plan: $0) } }
        let audioPlan = try settledAudioPlan(request)
        guard videoPlan != nil || audioPlan != nil else {
            throw EngineError(request.container == .m4a ? "the composition has no audio to export" : "the composition has no video or audio media", kind: .notFound)
        }
        if !request.container.holdsAudio, composition.tracks(withMediaType: .audio).contains(where: { $0.segments.contains { !$0.isEmpty } }) {
            log.report(Diagnostic(.soundLeftOut, .warning, "\(request.output.path): \(request.container.noun) holds no sound; the audio was left out",
                                  remedy: "export to a container with sound (mp4, mov) to keep it"))
        }
        let sequence = request.output as? ImageSequenceOutput
        if let sequence, let plan = videoPlan, let note = try ExportError.Kind.outputUnavailable.tag({ try sequence.checkNames(frameCount: plan.frameCount) }) {
            log.report(Diagnostic(.fileNotAsExpected, .note, note))
        }
        sequence?.sizeLimit = fileLengthLimit
        // A GIF's palette comes from a first pass over every frame: that pass is the first half of the progress.
        let gifPalette = try videoPlan.flatMap { plan in
            try request.container == .gif ? makeGIFPalette(plan, range: request.range, report: report) : nil
        }
        let progressStart = gifPalette == nil ? 0.0 : 0.5
        let writer = try sequence == nil ? ContainerWriter(
            path: request.output.temporaryPath, container: request.container,
            video: request.encodings.video.flatMap { encoding in videoPlan.map { (encoding, $0) } },
            audio: request.encodings.audio.flatMap { encoding in audioPlan.map { (encoding, $0) } },
            gifPalette: gifPalette, metadata: metadata.merging(request.tags) { $1 }, fastStart: shouldOptimizeForNetworkUse, sizeLimit: fileLengthLimit) : nil
        if case .pictures(_, let kept) = part { writer?.keepVideoFrames(kept) }

        let compositor = Compositor(video: videoPlan, audio: audioPlan, range: request.range)
        let pictures = try videoPlan.map { _ in try compositor.frameStream(frames: frames, cancellation: cancellation) }
        defer { pictures?.stop() }
        let sound = try audioPlan.map { _ in try compositor.audioStream(blockSize: writer?.audioFrameSize ?? 1024, cancellation: cancellation) }
        defer { sound?.stop() }
        var framesWritten: Int64 = 0
        var samplesWritten: Int64 = 0
        var lastReported = -1.0
        let frameCount = frames.map { Int64($0.count) } ?? 0
        let sampleCount = audioPlan?.sampleCount ?? 0
        let never = MediaTime(value: Int64.max / 4, timescale: 1)
        while true {
            if isCancelled { throw EngineError("export cancelled", kind: .cancelled) }
            // Feed whichever stream is behind in time, so the muxer interleaves cheaply.
            let videoTime = videoPlan.map { $0.frameDuration * framesWritten } ?? never
            let audioTime = audioPlan.map { MediaTime(value: samplesWritten, timescale: $0.format.sampleRate) } ?? never
            let videoDone = videoPlan == nil || framesWritten >= frameCount
            let audioDone = audioPlan == nil || samplesWritten >= sampleCount
            if videoDone && audioDone { break }
            if writer?.isAtSizeLimit == true || sequence?.isAtSizeLimit == true {
                stoppedBy = .fileLengthLimit
                break
            }
            var fits = true
            if !videoDone && (audioDone || videoTime <= audioTime) {
                guard let frame = try pictures?.next() else { throw EngineError("video ended early", kind: .internal) }
                fits = try sequence?.write(frame) ?? writer?.write(video: frame) ?? false
                if fits { framesWritten += 1 }
                try budget?.check(framesWritten: framesWritten)
            } else {
                guard let block = try sound?.next() else { throw EngineError("audio ended early", kind: .internal) }
                fits = try writer?.write(audio: block, pts: samplesWritten) ?? false
                if fits { samplesWritten += Int64(block.first?.count ?? 0) }
            }
            if !fits {
                stoppedBy = .fileLengthLimit
                break
            }
            let fraction = min(videoPlan == nil ? 1 : Double(framesWritten) / Double(max(frameCount, 1)),
                               audioPlan == nil ? 1 : Double(samplesWritten) / Double(max(sampleCount, 1)))
            if fraction - lastReported >= 0.002 || fraction >= 1 {
                lastReported = fraction
                progress = progressStart + (1 - progressStart) * fraction
                try report(ExportProgress(fraction: progress, framesWritten: framesWritten, frameCount: frameCount,
                                          mediaSecondsWritten: fraction * request.range.duration.seconds))
            }
        }
        let tooSmall = ExportError(.invalidRequest, "fileLengthLimit (\(fileLengthLimit ?? 0) bytes) is too small for even the first frame and the file's header and index; raise it")
        do {
            try writer?.finish()
        } catch {
            // A GIF holds its frames in the palette stage: with none of them fitting, the
            // muxer has nothing to finish and FFmpeg's "Invalid argument" would say nothing.
            if stoppedBy != nil, writer?.hasEmptyStream == true { throw tooSmall }
            throw error
        }
        if stoppedBy != nil, writer?.hasEmptyStream == true || sequence?.framesWritten == 0 { throw tooSmall }
        if stoppedBy != nil {
            let images = videoPlan.map { $0.frameDuration * Int64(sequence?.framesWritten ?? 0) } ?? .zero
            let length = writer.flatMap { MediaTime(seconds: $0.writtenSeconds, timescale: 1000) } ?? images
            log.report(Diagnostic(.lengthLimited, .warning, "\(request.output.path): stopped at \(length.seconds) s of \(request.range.duration.seconds) s to stay within fileLengthLimit (\(fileLengthLimit ?? 0) bytes)"))
            return length
        }
        if case .pictures(_, let kept) = part, let videoPlan { return videoPlan.frameDuration * Int64(kept.count) }
        return request.range.duration
    }

    /// A GIF's first pass: every frame rendered once into `palettegen`.
    private func makeGIFPalette(_ plan: VideoPlan, range: TimeRange, report: (ExportProgress) throws -> Void) throws -> Frame {
        let frames = try Compositor(video: plan, audio: nil, range: range).frameStream(cancellation: cancellation)
        defer { frames.stop() }
        var index: Int64 = 0
        return try GIFPalette.palette(width: plan.outputWidth, height: plan.outputHeight) {
            if isCancelled { throw EngineError("export cancelled", kind: .cancelled) }
            guard let frame = try frames.next() else { return nil }
            index += 1
            progress = 0.5 * Double(index) / Double(max(plan.frameCount, 1))
            try report(ExportProgress(fraction: progress, framesWritten: 0, frameCount: plan.frameCount, mediaSecondsWritten: 0))
            return frame
        }
    }

}

package extension String {
    /// Every occurrence of `target` replaced (without Foundation).
    package func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = "", rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
