#if canImport(Glibc)
import Glibc
#endif
import CMoonFFmpeg
import CMoonAVShim
import Synchronization
import MoonreelPlatform
import MoonreelMedia

/// How a recording went, for the finished event and `stopRecording()`.
public struct CaptureSummary: Sendable {
    /// Why the recording ended.
    public enum StopReason: String, Sendable {
        /// `requestStop`, `stopRecording` or the host's cancellation.
        case stopped
        /// `maxDuration` was reached.
        case maxDuration
        /// The file reached `maxFileSize`.
        case maxFileSize
        /// A device failed while recording (the session then reports `failed`, saying where
        /// what was recorded before went).
        case deviceFailed
    }
    /// The recording's path, as given to `startRecording`.
    public let path: String
    /// How long the recording is.
    public let duration: MediaTime
    /// Video frames written.
    public let videoFrames: Int64
    /// Frame slots of the recording left without a picture (the encoder fell behind, the
    /// camera skipped or delivered late).
    public let droppedVideoFrames: Int64
    /// Audio samples written, per channel.
    public let audioSamples: Int64
    /// Audio samples, per channel, dropped because the writer fell behind.
    public let droppedAudioSamples: Int64
    /// The file's size in bytes.
    public let fileSize: Int64
    /// Why the recording ended.
    public let reason: StopReason
    /// What the recording lost: a `framesDropped` warning for pictures, one for sound.
    public let diagnostics: [Diagnostic]

    init(path: String, duration: MediaTime, videoFrames: Int64, droppedVideoFrames: Int64, audioSamples: Int64,
         droppedAudioSamples: Int64, sampleRate: Int32, fileSize: Int64, reason: StopReason) {
        (self.path, self.duration, self.videoFrames, self.droppedVideoFrames) = (path, duration, videoFrames, droppedVideoFrames)
        (self.audioSamples, self.droppedAudioSamples, self.fileSize, self.reason) = (audioSamples, droppedAudioSamples, fileSize, reason)
        diagnostics = Self.losses(path: path, videoFrames: videoFrames, droppedVideoFrames: droppedVideoFrames,
                                  droppedAudioSamples: droppedAudioSamples, sampleRate: Int(sampleRate))
    }

    /// A warning for frame slots without a picture (the one before is shown longer) and one
    /// for sound that found no room (silence in its place).
    private static func losses(path: String, videoFrames: Int64, droppedVideoFrames: Int64, droppedAudioSamples: Int64, sampleRate: Int) -> [Diagnostic] {
        var found: [Diagnostic] = []
        let slots = videoFrames + droppedVideoFrames
        if droppedVideoFrames > 0, slots > 0 {
            let share = shortNumber((Double(droppedVideoFrames) / Double(slots) * 1000).rounded() / 10)
            found.append(Diagnostic(.framesDropped, .warning,
                                    "the recording \(path.quotedForMessage(limit: 200)) has no picture in \(droppedVideoFrames) of its \(slots) frame slots (\(share) %; the picture before is shown longer there): the camera was late or skipped, or the encoder fell behind",
                                    remedy: "record at a lower size, rate or preset, or on a less busy machine"))
        }
        if droppedAudioSamples > 0, sampleRate > 0 {
            let milliseconds = shortNumber((Double(droppedAudioSamples) / Double(sampleRate) * 1000).rounded())
            found.append(Diagnostic(.framesDropped, .warning,
                                    "the recording \(path.quotedForMessage(limit: 200)) lost \(droppedAudioSamples) audio samples (\(milliseconds) ms) that found no room in the writer: silence is in their place",
                                    remedy: "record on a less busy machine or with fewer inputs"))
        }
        return found
    }
}

/// What happens to a recording, in order: `started`, then `finished` or `failed`.
public enum CaptureEvent: Sendable {
    /// Recording runs, into `path`.
    case started(path: String)
    /// The file is finished and in place.
    case finished(CaptureSummary)
    /// The recording failed; the error says why, and where any part recorded before the
    /// failure was saved.
    case failed(ExportError)
}

/// Records cameras, screens and microphones to a movie file, like `AVCaptureSession` with
/// an `AVCaptureMovieFileOutput`. Each input is read on its own thread; one writer thread
/// encodes with an export preset into a fragmented MP4 beside the output and moves it into
/// place when recording stops. The writer never makes an input wait: when it falls behind,
/// frames are dropped and counted.
public final class CaptureSession: @unchecked Sendable {
    // `inputs`, `preset` and the options are set by the owner before `startRecording`; after
    // that the writer thread owns the recording state and shares only `state` (a Mutex),
    // the stop flag and the event queue.
    /// Where the session is.
    public enum Status: String, Sendable {
        /// `startRecording` has not been called.
        case waiting
        /// Recording.
        case recording
        /// The file is finished and in place.
        case finished
        /// Starting or recording failed (see `error`), or a device failed while recording.
        case failed
    }

    /// The devices recorded, at most one per media type (`addInput`).
    public private(set) var inputs: [CaptureDevice] = []
    /// The export preset that encodes (nil: MediumQuality).
    public var preset: ExportPreset?
    /// Whether an existing file at the recording's path may be replaced; off by default.
    public var overwrite = false
    /// Files the recording may never replace, overwrite or not (see `InputRegistry`).
    public var readFiles: InputRegistry?
    /// Stops by itself after this long (nil: until `stopRecording`).
    public var maxDuration: MediaTime?
    /// Stops before the file grows past this many bytes (nil: no limit).
    public var maxFileSize: Int64?
    /// A flag shared by everything a host runs (Ctrl-C); stops this recording too when set.
    public var parentCancellation: CancellationFlag?
    /// What the recording does other than exactly as asked, known once it starts: a camera
    /// picture that the preset's box fits at a fraction of a pixel is rounded (`sizeRounded`).
    public private(set) var diagnostics: [Diagnostic] = []
    /// Warnings are errors: a recording that would give one does not start (`--strict`).
    public var strict = false

    private struct State {
        var status = Status.waiting
        var summary: CaptureSummary?
        var error: ExportError?
    }
    private let state = Mutex(State())
    private let stopFlag = CancellationFlag()
    private let events = BoundedQueue<CapturedEventSlot>(capacity: 8)
    private var writer: WorkerThread?
    private var readers: [WorkerThread] = []
    private var stopper: CaptureStopper?

    /// A session with no inputs, like `AVCaptureSession()`.
    public init() {}

    /// Where the session is; safe to read from any thread.
    public var status: Status { state.withLock { $0.status } }
    /// How the recording went, once it has ended; nil until then.
    public var summary: CaptureSummary? { state.withLock { $0.summary } }
    /// Why starting or recording failed; nil otherwise.
    public var error: ExportError? { state.withLock { $0.error } }

    /// Adds a camera, screen or microphone: at most one of each media type.
    public func addInput(_ device: CaptureDevice) throws {
        guard status == .waiting else { throw EngineError("add inputs before startRecording") }
        if let present = inputs.first(where: { $0.mediaType == device.mediaType }) {
            throw EngineError("the session already records \(device.mediaType.rawValue) from \"\(present.uniqueID)\"; a session takes one camera and one microphone")
        }
        inputs.append(device)
    }

    /// Opens the devices and starts writing `path` (.mp4 or .mov). Returns once recording
    /// runs; a failure to start throws and leaves nothing behind.
    public func startRecording(to path: String) throws {
        guard status == .waiting else {
            throw ExportError(.invalidRequest, "this capture session has already recorded (its status is \(status.rawValue)); make a new one")
        }
        guard !inputs.isEmpty else { throw ExportError(.invalidRequest, "add a camera or microphone (addInput) before startRecording") }
        let preset = self.preset ?? ExportPreset.named("MediumQuality")
        guard let preset, preset.video != nil || !inputs.contains(where: { $0.mediaType == .video }), !preset.isPassthrough, !preset.isSmartCut else {
            throw ExportError(.invalidRequest, "preset \(preset?.name ?? "none") cannot record video; use an encoding preset such as MediumQuality or HighestQuality")
        }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let container = name.contains(".") ? name.split(separator: ".").last.flatMap { OutputContainer(extension: String($0)) } : nil
        guard let container, container == .mp4 || container == .mov else {
            throw ExportError(.invalidRequest, "recordings are written as fragmented MP4: name the output .mp4 or .mov, got \(path.quotedForMessage(limit: 200))")
        }
        let output = try ExportError.Kind.outputUnavailable.tag {
            try SafeOutput(path: path, overwrite: overwrite, inputs: [], readFiles: readFiles, temporarySuffix: "recording.\(container.rawValue)")
        }
        do {
            let opened = try ExportError.Kind.invalidRequest.tag { try inputs.map { try CaptureInput(device: $0) } }
            let recording = try ExportError.Kind.renderFailed.tag {
                try Recording(inputs: opened, preset: preset, output: output, container: container,
                              maxDuration: maxDuration, maxFileSize: maxFileSize, stop: stopFlag, parentStop: parentCancellation)
            }
            diagnostics = recording.sizeNote.map { [$0] } ?? []
            if strict, let warning = diagnostics.first(where: { $0.level == .warning }) {
                throw ExportError(.strict, "strict: \(warning.text)")
            }
            state.withLock { $0.status = .recording }
            events.push(.event(.started(path: path)))
            let queue = recording.queue
            let stopper = CaptureStopper(inputs: opened, queue: queue, stop: stopFlag, parentStop: parentCancellation)
            try stopper.start()
            self.stopper = stopper
            let start = monotonicNanoseconds()
            for input in opened {
                let (stop, limit, outputFormat) = (stopFlag, maxDuration, recording.outputFormat)
                readers.append(try WorkerThread { input.run(sessionStart: start, limit: limit, output: outputFormat, queue: queue, stop: stop) })
            }
            writer = try WorkerThread { [self] in finish(recording, stopper: stopper) }
        } catch {
            // Only a thread that could not start gets here after recording began: the
            // readers are stopped (interrupted, and given up after a grace) and joined.
            stopper?.writerFinished()
            stopper?.stopWithoutWriter()
            stopper?.join(readers: readers)
            readers = []
            state.withLock { $0.status = .failed }
            output.discard()
            throw error
        }
    }

    /// Runs the recording on the writer thread, then publishes its end.
    private func finish(_ recording: Recording, stopper: CaptureStopper) {
        defer { stopper.writerFinished() }
        let event: CaptureEvent
        do {
            let summary = try recording.run()
            state.withLock {
                $0.summary = summary
                $0.status = summary.reason == .deviceFailed ? .failed : .finished
            }
            event = .finished(summary)
        } catch {
            let failure = ExportError.wrapping(error, as: .renderFailed)
            state.withLock {
                $0.error = failure
                $0.status = .failed
            }
            event = .failed(failure)
        }
        events.push(.event(event))
        events.close()
    }

    /// Asks the recording to stop (from any thread, a signal handler's thread included);
    /// the file is finished on the writer thread.
    public func requestStop() { stopFlag.cancel() }

    /// The next event, waiting for it; nil once the last one (finished or failed) was taken.
    public func nextEvent() -> CaptureEvent? {
        guard case .event(let event)? = events.pop() else { return nil }
        return event
    }

    /// Stops, waits until the file is finished and in place, and joins every thread.
    public func stopRecording() {
        requestStop()
        waitUntilFinished()
    }

    /// Waits for the writer and the input threads to end (the recording stopped by itself,
    /// by `requestStop`, or failed).
    public func waitUntilFinished() {
        writer?.join()
        writer = nil
        stopper?.join(readers: readers)
        readers = []
    }
}

/// Events travel in a queue of their own; this wrapper keeps the payload Sendable.
private enum CapturedEventSlot: Sendable { case event(CaptureEvent) }

/// One recording, owned by the writer thread: encoders, muxer and the timeline bookkeeping.
private final class Recording: @unchecked Sendable {
    // Created on the caller's thread, then used only by the writer thread.
    let queue: BoundedQueue<CapturedMedia>
    let outputFormat: CaptureOutputFormat
    /// Why the picture's size is not the camera's fitted exactly into the preset's box, if it is not.
    let sizeNote: Diagnostic?
    private let inputs: [CaptureInput]
    private let camera: CaptureInput?
    private let microphone: CaptureInput?
    private let output: SafeOutput
    private let muxer: Muxer
    private let videoEncoder: StreamEncoder?
    private let audioEncoder: StreamEncoder?
    private let maxFrames: Int64?
    private let maxSamples: Int64?
    private let maxFileSize: Int64?
    private let stop: CancellationFlag
    private let parentStop: CancellationFlag?

    private var nextFrameIndex: Int64?
    private var framesWritten: Int64 = 0
    private var missedFrames: Int64 = 0
    private var pendingAudio: [[Float]] = []
    private var nextSample: Int64?
    private var samplesWritten: Int64 = 0
    private var reason = CaptureSummary.StopReason.stopped

    init(inputs: [CaptureInput], preset: ExportPreset, output: SafeOutput, container: OutputContainer,
         maxDuration: MediaTime?, maxFileSize: Int64?, stop: CancellationFlag, parentStop: CancellationFlag?) throws {
        self.inputs = inputs
        self.output = output
        self.maxFileSize = maxFileSize
        self.stop = stop
        self.parentStop = parentStop
        let camera = inputs.first { $0.device.mediaType == .video }
        let microphone = inputs.first { $0.device.mediaType == .audio }
        (self.camera, self.microphone) = (camera, microphone)
        let picture = camera.map { Size(width: Double($0.format.width), height: Double($0.format.height)) }
        let size = picture.map { preset.outputSize(for: $0) } ?? (width: 2, height: 2)
        sizeNote = picture?.roundingNote(to: size, sides: .even, name: "the camera's picture", fitting: picture.flatMap(preset.box(for:)), boxIsAsked: preset.namesItsSize)
        let frameDuration = CaptureSession.frameDuration(forRate: camera?.frameRate ?? 30)
        let format = CaptureOutputFormat(
            video: .init(width: size.width, height: size.height, frameDuration: frameDuration,
                         color: .forOutput(width: size.width, height: size.height)),
            audio: AudioFormat(sampleRate: Int32(clamping: microphone?.format.sampleRate ?? 48000), channels: microphone?.format.channels ?? 2))
        outputFormat = format
        maxFrames = maxDuration.map { $0.ceilDivided(by: frameDuration) }
        maxSamples = maxDuration.map { $0.count(in: format.audio.sampleRate) }
        // Room for every input's backlog (about two seconds each): enough to ride out an
        // encoder hiccup, never unbounded.
        let rate = camera?.frameRate ?? 30
        queue = BoundedQueue(capacity: inputs.reduce(0) { $0 + $1.backlogLimit })
        let muxer = try Muxer(path: output.temporaryPath, container: container)
        self.muxer = muxer
        let video = format.video
        // The preset's codec and quality, as an export with no writer settings would use them.
        let videoCodec = VideoSettings.Codec(rawValue: (preset.video ?? .h264).rawValue) ?? .h264
        // A keyframe a second: each fragment starts with one, so a killed recording loses at most a second.
        videoEncoder = try camera.map { _ in
            try StreamEncoder.video(try VideoEncoding.make(videoCodec, settings: VideoSettings(), preset: preset, container: container, keepsHDR: false),
                                    width: video.width, height: video.height, frameDuration: frameDuration, color: video.color,
                                    muxer: muxer, liveKeyframeInterval: Int32(max(1, rate.rounded())))
        }
        audioEncoder = try microphone.map { _ in
            try StreamEncoder.audio(try AudioEncoding.make(.aac, settings: AudioSettings(), preset: preset), format: format.audio, muxer: muxer)
        }
        try muxer.writeHeader(metadata: [:], fastStart: false, fragmented: true)
    }

    /// Encodes until every input ended, finishes the file and moves it into place.
    func run() throws -> CaptureSummary {
        var failures: [String] = []
        var ended = 0
        do {
            while ended < inputs.count, let item = queue.pop() {
                switch item {
                case .video(let frame, let time):
                    camera?.backlog.subtract(1, ordering: .relaxed)
                    try encodeVideo(frame, at: time)
                case .audio(let samples, let position):
                    microphone?.backlog.subtract(1, ordering: .relaxed)
                    try encodeAudio(samples, at: position)
                case .ended(let failure):
                    ended += 1
                    if let failure {
                        failures.append(failure)
                        reason = .deviceFailed
                        stopInputs()
                    }
                }
                if reachedLimits() || parentStop?.isCancelled == true { stopInputs() }
            }
            // Inputs that ended by themselves (nothing asked them to) reached maxDuration.
            if reason == .stopped, maxFrames != nil, !stop.isCancelled { reason = .maxDuration }
            if reason == .maxDuration, let maxFrames, let next = nextFrameIndex, next < maxFrames {
                missedFrames += maxFrames - next // pictures dropped at the very end
                nextFrameIndex = maxFrames
            }
            try flushAudio()
            try videoEncoder?.encode(nil)
            try audioEncoder?.encode(nil)
            try muxer.finish()
        } catch {
            stopInputs()
            while ended < inputs.count, let item = queue.pop() { if case .ended = item { ended += 1 } }
            throw describe(error)
        }
        let duration = max(outputFormat.video.frameDuration * (nextFrameIndex ?? 0),
                           MediaTime(value: nextSample ?? 0, timescale: outputFormat.audio.sampleRate))
        try ExportError.Kind.verificationFailed.tag {
            do { _ = try Asset(path: output.temporaryPath) } catch {
                throw EngineError("the recording failed verification (\(error)); it was kept as \(output.temporaryPath.quotedForMessage(limit: 200))", kind: .encode, subject: output.temporaryPath, underlying: error)
            }
        }
        let size = fileSize(output.temporaryPath) ?? 0
        try ExportError.Kind.outputUnavailable.tag {
            do { try output.commit() } catch {
                throw EngineError("\(error); the recording was kept as \(output.temporaryPath.quotedForMessage(limit: 200))", kind: .encode, subject: output.temporaryPath, underlying: error)
            }
        }
        let summary = CaptureSummary(
            path: output.path, duration: duration, videoFrames: framesWritten,
            droppedVideoFrames: missedFrames, audioSamples: samplesWritten,
            droppedAudioSamples: microphone?.droppedSamples.load(ordering: .relaxed) ?? 0,
            sampleRate: outputFormat.audio.sampleRate, fileSize: size, reason: reason)
        if let failure = failures.first {
            throw ExportError(.renderFailed, "\(failure); the \(duration.seconds) s recorded before were saved to \(output.path.quotedForMessage(limit: 200))")
        }
        return summary
    }

    private func stopInputs() {
        stop.cancel()
        inputs.forEach { $0.interrupt() }
    }

    /// A failure while recording, saying where what was recorded is kept (the hidden file
    /// plays up to its last fragment).
    private func describe(_ error: Error) -> ExportError {
        let kept = "what was recorded is kept in \(output.temporaryPath.quotedForMessage(limit: 200))"
        if let ffmpeg = error as? FFmpegError, ffmpeg.code == MOON_AVERROR_ENOSPC {
            return ExportError(.diskFull, "output \(output.path.quotedForMessage(limit: 200)): the disk is full; \(kept)")
        }
        let tagged = ExportError.wrapping(error, as: .renderFailed)
        return ExportError(tagged.kind, "\(tagged.message); \(kept)", underlying: tagged.underlying)
    }

    /// Stops at maxDuration (every stream full) or before maxFileSize (a fragment of headroom).
    private func reachedLimits() -> Bool {
        if let maxFileSize, muxer.packetBytes + 64 * 1024 >= maxFileSize {
            if reason == .stopped { reason = .maxFileSize }
            return true
        }
        guard maxFrames != nil else { return false }
        let videoDone = videoEncoder == nil || (nextFrameIndex ?? 0) >= (maxFrames ?? 0)
        let audioDone = audioEncoder == nil || (nextSample ?? 0) + Int64(pendingAudio.first?.count ?? 0) >= (maxSamples ?? 0)
        if videoDone && audioDone, reason == .stopped { reason = .maxDuration }
        return videoDone && audioDone
    }

    /// Places a picture at its frame slot of the timeline; one that lands on a slot already
    /// written (late) is left out, and every slot skipped counts as a dropped frame.
    private func encodeVideo(_ frame: Frame, at time: MediaTime) throws {
        guard let encoder = videoEncoder, reason != .maxFileSize else { return }
        let index = CaptureSession.frameIndex(of: time, frameDuration: outputFormat.video.frameDuration)
        if let maxFrames, index >= maxFrames { nextFrameIndex = max(nextFrameIndex ?? 0, maxFrames); return }
        let next = nextFrameIndex ?? 0
        guard index >= next else { return }
        missedFrames += index - next
        frame.pointer.pointee.pts = index
        try encoder.encode(frame)
        framesWritten += 1
        nextFrameIndex = index + 1
    }

    /// Appends samples at their position: a gap (samples dropped upstream) is filled with
    /// silence and an overlap trimmed, so audio stays on the timeline the video shares.
    private func encodeAudio(_ samples: [[Float]], at position: Int64) throws {
        guard audioEncoder != nil, reason != .maxFileSize else { return }
        let channels = outputFormat.audio.channels
        if pendingAudio.isEmpty { pendingAudio = Array(repeating: [], count: channels) }
        let expected = (nextSample ?? position) + Int64(pendingAudio[0].count)
        if nextSample == nil { nextSample = position }
        var block = samples
        if position > expected {
            let silence = [Float](repeating: 0, count: Int(min(position - expected, Int64(outputFormat.audio.sampleRate))))
            for channel in 0..<channels { pendingAudio[channel].append(contentsOf: silence) }
        } else if position < expected {
            let overlap = Int(min(expected - position, Int64(block[0].count)))
            block = block.map { Array($0.dropFirst(overlap)) }
        }
        for channel in 0..<channels { pendingAudio[channel].append(contentsOf: block[channel]) }
        if let maxSamples, let start = nextSample {
            let room = Int(max(0, maxSamples - start))
            if pendingAudio[0].count > room { pendingAudio = pendingAudio.map { Array($0.prefix(room)) } }
        }
        try encodePendingAudio(final: false)
    }

    private func flushAudio() throws { try encodePendingAudio(final: true) }

    /// Encodes whole encoder frames of the pending samples (and the short rest when final).
    private func encodePendingAudio(final: Bool) throws {
        guard let encoder = audioEncoder, !pendingAudio.isEmpty, var position = nextSample else { return }
        var cursor = 0
        let available = pendingAudio[0].count
        while available - cursor >= encoder.frameSize || (final && cursor < available) {
            let count = min(encoder.frameSize, available - cursor)
            let block = pendingAudio.map { Array($0[cursor..<(cursor + count)]) }
            try encoder.encode(try Frame.audio(block, format: outputFormat.audio, pts: position))
            cursor += count
            position += Int64(count)
            samplesWritten += Int64(count)
        }
        nextSample = position
        if cursor > 0 { pendingAudio = pendingAudio.map { Array($0[cursor...]) } }
    }
}

extension CaptureSession {
    /// The frame duration of a rate: exact for whole rates and NTSC rates (29.97 = 30000/1001).
    static func frameDuration(forRate rate: Double) -> MediaTime {
        let whole = rate.rounded()
        if abs(rate - whole) < 1e-9 { return MediaTime(value: 1, timescale: Int32(max(1, min(whole, 1000)))) }
        let ntsc = (rate * 1.001).rounded()
        if abs(rate - ntsc * 1000 / 1001) < 1e-3 { return MediaTime(value: 1001, timescale: Int32(ntsc * 1000)) }
        return MediaTime(seconds: 1 / rate) ?? MediaTime(value: 1, timescale: 30)
    }

    /// The frame slot nearest to `time`.
    static func frameIndex(of time: MediaTime, frameDuration: MediaTime) -> Int64 {
        let numerator = Int128(time.value) * Int128(frameDuration.timescale)
        let denominator = Int128(time.timescale) * Int128(max(frameDuration.value, 1))
        let (quotient, remainder) = numerator.quotientAndRemainder(dividingBy: denominator)
        let rounded = remainder * 2 >= denominator ? quotient + 1 : quotient
        return MediaTime.clamped(rounded)
    }
}
