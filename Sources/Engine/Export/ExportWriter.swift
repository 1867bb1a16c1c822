import MoonreelComposition
import MoonreelMedia
import MoonreelPlatform
import MoonreelRender
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

/// Makes an export's file from its plan: one conformer for each way a file is made (packets
/// copied, GOPs copied and the cuts re-encoded, every frame encoded, pieces joined). The
/// session runs the line around it: plan, write, verify, commit.
protocol ExportWriter {
    /// Writes `plan` into its output's temporary file; returns the duration written (less
    /// than the plan's range when `fileLengthLimit` ended it).
    func write(_ plan: ExportPlan, context: ExportContext, report: (ExportProgress) throws -> Void) throws -> MediaTime
    /// Called once the file is in place.
    func outputCommitted()
}

extension ExportWriter {
    func outputCommitted() {}
}

/// What an export's writer shares with its session: the cancellation it obeys, the log its
/// notes go to, and what it tells back as it goes (progress, an early stop), kept when it fails.
final class ExportContext {
    /// Set by `ExportSession.cancel()`, or from another thread.
    let cancellation = CancellationFlag()
    /// A flag shared by every export of a host (Ctrl-C).
    var parentCancellation: CancellationFlag?
    let log = DiagnosticLog()
    var progress = 0.0
    var stoppedBy: ExportSession.StopReason?

    var isCancelled: Bool {
        if parentCancellation?.isCancelled == true { cancellation.cancel() }
        return cancellation.isCancelled
    }
}

extension ExportRequest {
    /// The writer that makes this request's file; nil when there is nothing to write.
    func writer(of composition: Composition) -> (any ExportWriter)? {
        switch strategy {
        case .passthrough: PassthroughWriter(composition: composition, range: range)
        case .smartCut(let cut): cut
        case .reencode: ReencodeWriter(part: .whole)
        case .piece(let encoded, let kept): ReencodeWriter(part: .pictures(encoded, kept: kept))
        case .sound: ReencodeWriter(part: .sound)
        case .join(let layout, let hasSound): JoinWriter(layout: layout, hasSound: hasSound)
        case .nothing: nil
        }
    }
}

extension ExportPlan {
    /// The sound with its loudness gain measured (when `loudness` is set), and a note when
    /// the mix cannot reach the target, rather than a silent miss. A lossy encoding's peaks
    /// are read back from a trial encode: when they pass the ceiling, the limiter's ceiling
    /// goes down by as much (and a little more), at most `peakTrials` times.
    func settledAudio(context: ExportContext) throws -> AudioPlan? {
        guard var plan = audio else { return nil }
        guard let target = plan.loudness else { return plan }
        var settled = try target.gain(for: plan, cancellation: context.cancellation)
        plan.settledLoudness = settled
        if let encoding = request.encodings.audio, encoding.bitRate != nil {
            var extraHeadroom = 0.0
            for trial in 1...Self.peakTrials {
                let peak = try EncodedPeak.truePeak(of: plan, encoding: encoding, container: request.container, cancellation: context.cancellation)
                guard peak > target.truePeak else { break }
                guard trial < Self.peakTrials else {
                    context.log.report(Diagnostic(.loudnessMissed, .warning, "loudness: the encoded sound peaks at \((peak * 10).rounded() / 10) dBTP, over the \(target.truePeak) dBTP ceiling (the \(encoding.codec.rawValue) encoder overshoots the limiter)",
                                                  remedy: "give a lower truePeakLimit or a higher audio bit rate"))
                    break
                }
                extraHeadroom += peak - target.truePeak + Self.peakMargin
                settled = try target.gain(for: plan, cancellation: context.cancellation, extraHeadroom: extraHeadroom)
                plan.settledLoudness = settled
            }
        }
        if abs(settled.expected - target.integrated) > 1, let reason = settled.heldBack {
            context.log.report(Diagnostic(.loudnessMissed, .warning, "loudness: the mix reaches about \((settled.expected * 10).rounded() / 10) LUFS, not \(target.integrated): \(reason)"))
        }
        return plan
    }

    /// Trial encodes at most: the overshoot grows little as the ceiling drops, so the second
    /// lands under it; the third only confirms.
    private static let peakTrials = 3
    /// How far under the ceiling a corrected trial aims (dB): a tenth of a dB, the precision
    /// the ceiling is given in.
    private static let peakMargin = 0.1
}

extension PassthroughWriter: ExportWriter {
    func write(_ plan: ExportPlan, context: ExportContext, report: (ExportProgress) throws -> Void) throws -> MediaTime {
        try write(to: plan.request.output.temporaryPath, container: plan.request.container, metadata: plan.metadata, carriedTimecode: plan.carriedTimecode,
                  fastStart: plan.fastStart, log: context.log, isCancelled: { context.isCancelled }, report: report)
        return plan.request.range.duration
    }
}

extension SmartCutWriter: ExportWriter {
    func write(_ plan: ExportPlan, context: ExportContext, report: (ExportProgress) throws -> Void) throws -> MediaTime {
        let request = plan.request
        try write(to: request.output.temporaryPath, container: request.container, preset: request.preset,
                  audio: try request.encodings.audio.flatMap { encoding in try plan.settledAudio(context: context).map { (encoding, $0) } },
                  duration: request.range.duration, metadata: plan.metadata, fastStart: plan.fastStart,
                  cancellation: context.cancellation, isCancelled: { context.isCancelled }, log: context.log, report: report)
        return request.range.duration
    }
}

/// A chunked render's last step: the pieces' packets and the sound's copied into the output,
/// then the pieces removed.
struct JoinWriter: ExportWriter {
    let layout: ChunkLayout
    let hasSound: Bool

    func write(_ plan: ExportPlan, context: ExportContext, report: (ExportProgress) throws -> Void) throws -> MediaTime {
        let duration = plan.request.range.duration
        return try PassthroughWriter(composition: layout.joinedComposition(hasSound: hasSound, duration: duration), range: TimeRange(start: .zero, duration: duration))
            .write(plan, context: context, report: report)
    }

    func outputCommitted() { layout.removeFiles() }
}
