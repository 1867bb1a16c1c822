import MoonreelMedia
import MoonreelRender

/// Composes and encodes every frame and mixes the sound: a re-encoding export, and a chunked
/// render's pieces and sound. A GIF's palette comes from a pass over every frame first.
struct ReencodeWriter: ExportWriter {
    /// What a render writes: all of the plan, or a chunked render's part of it.
    enum Part {
        case whole
        /// These output frames encoded, without sound; the file keeps those at `kept`
        /// (positions among them), the others only warm the encoder up.
        case pictures(Range<Int64>, kept: Range<Int64>)
        /// The sound alone.
        case sound
    }

    let part: Part

    /// Renders and writes the plan; returns the duration written (less than the range
    /// when `fileLengthLimit` ended it).
    func write(_ plan: ExportPlan, context: ExportContext, report: (ExportProgress) throws -> Void) throws -> MediaTime {
        let request = plan.request, log = context.log, fileLengthLimit = plan.fileLengthLimit
        var videoPlan = plan.video
        var frames = videoPlan.map { 0..<$0.frameCount }
        switch part {
        case .whole: break
        case .pictures(let numbers, _): frames = numbers
        case .sound: (videoPlan, frames) = (nil, nil)
        }
        // Before any picture, encoder or palette is made.
        let budget = try plan.memoryLimit.flatMap { limit in try videoPlan.map { try ExportMemoryBudget(limit: limit, plan: $0) } }
        let audioPlan = try plan.settledAudio(context: context)
        guard videoPlan != nil || audioPlan != nil else {
            throw EngineError(ExportPlanner.nothingToWrite(in: request.container), kind: .notFound)
        }
        if !request.container.holdsAudio, plan.composition.tracks(withMediaType: .audio).contains(where: { $0.segments.contains { !$0.isEmpty } }) {
            log.report(Diagnostic(.soundLeftOut, .warning, "\(request.output.path): \(request.container.noun) holds no sound; the audio was left out",
                                  remedy: "export to a container with sound (mp4, mov) to keep it"))
        }
        if !request.container.holdsMetadata, !plan.metadata.isEmpty {
            log.report(Diagnostic(.optionIgnored, .warning, "\(request.output.path): \(request.container.noun) holds no metadata; \(plan.metadata.keys.sorted().joined(separator: ", ")) \(plan.metadata.count == 1 ? "was" : "were") left out",
                                  remedy: "export to a container with tags (mp4, mov, webm) to keep them"))
        }
        let sequence = request.output as? ImageSequenceOutput
        if let sequence, let pictures = videoPlan, let note = try ExportError.Kind.outputUnavailable.tag({ try sequence.checkNames(frameCount: pictures.frameCount) }) {
            log.report(Diagnostic(.fileNotAsExpected, .note, note))
        }
        sequence?.sizeLimit = fileLengthLimit
        // A GIF's palette comes from a first pass over every frame: that pass is the first half of the progress.
        let gifPalette = try videoPlan.flatMap { pictures in
            try request.container == .gif ? makeGIFPalette(pictures, range: request.range, context: context, report: report) : nil
        }
        let progressStart = gifPalette == nil ? 0.0 : 0.5
        let writer = try sequence == nil ? ContainerWriter(
            path: request.output.temporaryPath, container: request.container,
            video: request.encodings.video.flatMap { encoding in videoPlan.map { (encoding, $0) } },
            audio: request.encodings.audio.flatMap { encoding in audioPlan.map { (encoding, $0) } },
            gifPalette: gifPalette, metadata: plan.metadata.merging(request.tags) { $1 }, fastStart: plan.fastStart, sizeLimit: fileLengthLimit) : nil
        if case .pictures(_, let kept) = part { writer?.keepVideoFrames(kept) }

        let compositor = Compositor(video: videoPlan, audio: audioPlan, range: request.range)
        let pictures = try videoPlan.map { _ in try compositor.frameStream(frames: frames, cancellation: context.cancellation, log: log) }
        defer { pictures?.stop() }
        let sound = try audioPlan.map { _ in try compositor.audioStream(blockSize: writer?.audioFrameSize ?? 1024, cancellation: context.cancellation, log: log) }
        defer { sound?.stop() }
        var framesWritten: Int64 = 0
        var samplesWritten: Int64 = 0
        var lastReported = -1.0
        let frameCount = frames.map { Int64($0.count) } ?? 0
        let sampleCount = audioPlan?.sampleCount ?? 0
        let never = MediaTime(value: Int64.max / 4, timescale: 1)
        while true {
            if context.isCancelled { throw EngineError("export cancelled", kind: .cancelled) }
            // Feed whichever stream is behind in time, so the muxer interleaves cheaply.
            let videoTime = videoPlan.map { $0.frameDuration * framesWritten } ?? never
            let audioTime = audioPlan.map { MediaTime(value: samplesWritten, timescale: $0.format.sampleRate) } ?? never
            let videoDone = videoPlan == nil || framesWritten >= frameCount
            let audioDone = audioPlan == nil || samplesWritten >= sampleCount
            if videoDone && audioDone { break }
            if writer?.isAtSizeLimit == true || sequence?.isAtSizeLimit == true {
                context.stoppedBy = .fileLengthLimit
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
                context.stoppedBy = .fileLengthLimit
                break
            }
            let fraction = min(videoPlan == nil ? 1 : Double(framesWritten) / Double(max(frameCount, 1)),
                               audioPlan == nil ? 1 : Double(samplesWritten) / Double(max(sampleCount, 1)))
            if fraction - lastReported >= 0.002 || fraction >= 1 {
                lastReported = fraction
                context.progress = progressStart + (1 - progressStart) * fraction
                try report(ExportProgress(fraction: context.progress, framesWritten: framesWritten, frameCount: frameCount,
                                          mediaSecondsWritten: fraction * request.range.duration.seconds))
            }
        }
        let tooSmall = ExportError(.invalidRequest, "fileLengthLimit (\(fileLengthLimit ?? 0) bytes) is too small for even the first frame and the file's header and index; raise it")
        do {
            try writer?.finish()
        } catch {
            // A GIF holds its frames in the palette stage: with none of them fitting, the
            // muxer has nothing to finish and FFmpeg's "Invalid argument" would say nothing.
            if context.stoppedBy != nil, writer?.hasEmptyStream == true { throw tooSmall }
            throw error
        }
        if context.stoppedBy != nil, writer?.hasEmptyStream == true || sequence?.framesWritten == 0 { throw tooSmall }
        if context.stoppedBy != nil {
            let images = videoPlan.map { $0.frameDuration * Int64(sequence?.framesWritten ?? 0) } ?? .zero
            let length = writer.flatMap { MediaTime(seconds: $0.writtenSeconds, timescale: 1000) } ?? images
            // The encoder holds pictures back (x264 about 40) while sound is written as it
            // comes: cut in the first second, a file's sound ran 1.4 s past its picture.
            var apart = ""
            if let ends = writer?.pictureAndSoundSeconds, let frame = videoPlan?.frameDuration.seconds, abs(ends.picture - ends.sound) > frame {
                let (first, second, runsOn) = ends.picture < ends.sound ? ("picture", "sound", "the last picture holds while the sound plays on")
                                                                        : ("sound", "picture", "the picture plays on in silence")
                let seconds = { (value: Double) in shortNumber((value * 1000).rounded() / 1000) }
                apart = "; its \(first) ends at \(seconds(min(ends.picture, ends.sound))) s, \(seconds(abs(ends.picture - ends.sound))) s before its \(second): \(runsOn)"
            }
            log.report(Diagnostic(.lengthLimited, .warning, "\(request.output.path): stopped at \(length.seconds) s of \(request.range.duration.seconds) s to stay within fileLengthLimit (\(fileLengthLimit ?? 0) bytes)\(apart)"))
            return length
        }
        if case .pictures(_, let kept) = part, let videoPlan { return videoPlan.frameDuration * Int64(kept.count) }
        return request.range.duration
    }

    /// A GIF's first pass: every frame rendered once into `palettegen`.
    private func makeGIFPalette(_ plan: VideoPlan, range: TimeRange, context: ExportContext, report: (ExportProgress) throws -> Void) throws -> Frame {
        let frames = try Compositor(video: plan, audio: nil, range: range).frameStream(cancellation: context.cancellation)
        defer { frames.stop() }
        var index: Int64 = 0
        return try GIFPalette.palette(width: plan.outputWidth, height: plan.outputHeight) {
            if context.isCancelled { throw EngineError("export cancelled", kind: .cancelled) }
            guard let frame = try frames.next() else { return nil }
            index += 1
            context.progress = 0.5 * Double(index) / Double(max(plan.frameCount, 1))
            try report(ExportProgress(fraction: context.progress, framesWritten: 0, frameCount: plan.frameCount, mediaSecondsWritten: 0))
            return frame
        }
    }
}
