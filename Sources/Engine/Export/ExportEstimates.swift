import MoonreelMedia
import MoonreelRender

/// What an export would do, found without writing it: the dry run, the size and length
/// estimates, and the checks settings get as they are set.
extension ExportSession {
    /// Checks everything an export checks (settings, output path, composition, video
    /// composition) and says what it would write, without writing it: `--dry-run`. With
    /// `samplingSize`, a constant-quality video's size is measured on a few short bursts of
    /// its own pictures, encoded at its own settings (`SizeSample`; some seconds at 1080p).
    public func plan(samplingSize: Bool = false) throws -> ExportSummary {
        let planner = ExportPlanner(settings: settings)
        let request = try planner.request()
        request.output.discard()
        note(request.notes)
        note(try planner.textNotes(request))
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
        let planner = ExportPlanner(settings: settings)
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
        let planner = ExportPlanner(settings: settings)
        guard let request = try? planner.request(makingOutput: false) else { return nil }
        return (try? planner.summary(of: request))?.summary.estimatedBytes
    }

    /// The longest output expected to fit in `fileLengthLimit` (as AVFoundation's
    /// `maxDuration`): the exported range when there is no limit or it fits, else that
    /// part of it the limit holds by `estimatedOutputFileLength`; nil when unknown.
    public var maxDuration: MediaTime? {
        guard let range = try? ExportPlanner(settings: settings).range() else { return nil }
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
        return try chosen + videoComposition.textDiagnostics(shownUntil: composition.duration)
    }
}
