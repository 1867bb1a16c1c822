import CMoonAVShim
import CMoonFFmpeg
import MoonreelComposition
import MoonreelMedia
import MoonreelPlatform
import MoonreelRender

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
        (copy.smartRendering, copy.strict, copy.parentCancellation) = (smartRendering, strict, parentCancellation)
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

    /// Adds `notes` to `diagnostics`, in their order.
    func note(_ notes: [Diagnostic]) {
        for note in notes { log.report(note) }
    }

    private func run(_ report: (ExportProgress) throws -> Void) throws {
        let planner = ExportPlanner(settings: settings)
        let request = try planner.request()
        note(request.notes)
        guard let writer = request.writer(of: composition) else { return }
        note(try planner.textNotes(request))
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
