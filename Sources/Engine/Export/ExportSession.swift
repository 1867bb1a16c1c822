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
    public var stoppedBy: StopReason? { context.stoppedBy }
    /// How long the written output is, once the export has completed.
    public private(set) var outputDuration: MediaTime?

    /// Where the export is (AVAssetExportSession's `status`).
    public private(set) var status = Status.waiting
    /// Why the export failed (or was cancelled), with a kind to act on.
    public private(set) var error: ExportError?
    /// How much is done, 0…1 (AVAssetExportSession's `progress`); 1 once completed.
    public var progress: Double { context.progress }
    /// What the export did other than exactly as asked (a size rounded, sound left out, a
    /// line of text cut), each once, in the order they came.
    public var diagnostics: [Diagnostic] { log.all }
    /// Any warning among `diagnostics` fails the export before its output is committed
    /// (kind `.strict`); nothing is replaced. Notes never fail it.
    public var strict = false
    private var log: DiagnosticLog { context.log }
    /// This export's cancellation flag: `cancel()` sets it. It is `Sendable`, so another thread
    /// can hold it and cancel the export while `export` runs.
    public var cancellation: CancellationFlag { context.cancellation }
    /// A flag shared by every export of a host (Ctrl-C); cancels this export too when set.
    public var parentCancellation: CancellationFlag? {
        get { context.parentCancellation }
        set { context.parentCancellation = newValue }
    }
    /// What this session shares with its writer while it runs.
    private let context = ExportContext()
    /// This process's share of a chunked render (`moonreel run --chunks`): one piece of the
    /// pictures, the sound, or the join into `outputURL`; nil: the whole export.
    package var chunkTask: ChunkTask?

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
            context.progress = 1
        } catch {
            let failure = context.isCancelled ? ExportError(.cancelled, "export cancelled")
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
        let planner = ExportPlanner(session: self)
        let request = try planner.request()
        note(request.notes)
        guard let writer = request.writer(of: composition) else { return }
        try checkText(request)
        let output = request.output
        FFmpegLog.capture()
        defer { output.discard() } // no-op once the file has been renamed into place
        let written: MediaTime
        do {
            let plan = try planner.plan(request)
            note(plan.videoNotes)
            written = try writer.write(plan, context: context, report: report)
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
        writer.outputCommitted()
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
