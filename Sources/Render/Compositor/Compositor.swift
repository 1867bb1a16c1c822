import CMoonFFmpeg
import MoonreelComposition
import MoonreelMedia
import MoonreelPlatform

/// The render core: from a composition, its video composition and audio mix it gives the
/// composed pictures (at an exact time, or a range in order) and the mixed sound, with no
/// file anywhere. Exports, still images, the REPL's snapshots and previews are its
/// consumers, so a preview shows the pixels an export writes.
///
/// ```swift
/// let compositor = try Compositor(composition: comp, videoComposition: vc, maxSize: (960, 540))
/// let picture = try compositor.image(at: MediaTime(seconds: 2.5, timescale: 600))
/// let sound = try compositor.audio(in: TimeRange(start: .zero, duration: MediaTime(value: 1, timescale: 1)))
/// ```
///
/// One compositor serves one thread at a time; `frameStream` and `audioStream` render on
/// threads of their own.
public final class Compositor {
    /// Width of the pictures, in pixels.
    public var width: Int { video?.outputWidth ?? 0 }
    /// Height of the pictures, in pixels.
    public var height: Int { video?.outputHeight ?? 0 }
    /// How long one frame lasts (the video composition's `frameDuration`); zero without video.
    public var frameDuration: MediaTime { video?.frameDuration ?? .zero }
    /// The part of the composition rendered.
    public let range: TimeRange
    /// Whether there is a picture to render (video media, or a video composition of its own).
    public var hasVideo: Bool { video != nil }
    /// Whether there is sound to mix.
    public var hasAudio: Bool { audio != nil }
    /// Samples per second of the mixed sound (0 without sound).
    public var audioSampleRate: Int { audio.map { Int($0.format.sampleRate) } ?? 0 }
    /// Channels of the mixed sound (0 without sound).
    public var audioChannelCount: Int { audio?.format.channels ?? 0 }

    let video: VideoPlan?
    let audio: AudioPlan?
    /// Draws `frame(at:)`; made on first use (a stream has a renderer of its own).
    private var renderer: VideoRenderer?
    /// Kept between `encodedFrame` calls: a preview encodes a picture per frame.
    private lazy var imageScalers = StillImageScalers()

    /// A compositor for all of `composition`. `videoComposition` nil: each video track
    /// upright at the sources' size (`VideoComposition.properties(of:)`), which is rendered
    /// only when the composition has video media. `maxSize`: the pictures are scaled down
    /// (aspect kept, even sizes) to fit inside it, as a preview wants; nil: the render size
    /// times `renderScale`. The audio is planar float at the sources' rate (48 kHz when
    /// they differ), stereo unless every source is mono. `proxies`: preview copies decoded in
    /// place of their sources (a preview's; never an export's).
    /// - Throws: `EngineError` naming the instruction, track or setting that cannot be rendered.
    public convenience init(composition: Composition, videoComposition: VideoComposition? = nil, audioMix: AudioMix? = nil,
                            maxSize: (width: Int, height: Int)? = nil, proxies: ProxyFiles = ProxyFiles()) throws {
        guard composition.duration.value > 0 else { throw EngineError("the composition is empty: insert media before rendering it") }
        let range = TimeRange(start: .zero, duration: composition.duration)
        let hasVideoMedia = composition.tracks(withMediaType: .video).contains { $0.segments.contains { !$0.isEmpty } }
        var video: VideoPlan?
        if hasVideoMedia || videoComposition != nil {
            let resolved = videoComposition ?? VideoComposition.properties(of: composition)
            let (width, height) = try Compositor.pictureSize(of: resolved, fitting: maxSize)
            video = try VideoPlan.make(composition: composition, videoComposition: resolved, range: range, outputWidth: width, outputHeight: height)
            video?.proxies = proxies
        }
        let audio = try AudioPlan.make(composition: composition, audioMix: audioMix, range: range,
                                       spliceFade: AudioPlan.defaultSpliceFade)
        self.init(video: video, audio: audio, range: range)
    }

    /// A compositor for plans an export settled (its encoded size, pixel format, colours,
    /// audio format and loudness gain).
    package init(video: VideoPlan?, audio: AudioPlan?, range: TimeRange) {
        (self.video, self.audio, self.range) = (video, audio, range)
    }

    /// The render size times `renderScale`, fitted inside `maxSize` when given, in even
    /// whole pixels (4:2:0 pictures need them).
    static func pictureSize(of videoComposition: VideoComposition, fitting maxSize: (width: Int, height: Int)?) throws -> (width: Int, height: Int) {
        try fitted(videoComposition.scaledRenderSize(), inside: maxSize)
    }

    /// `size` scaled down (aspect kept) to fit inside `maxSize` when given, in even whole
    /// pixels (4:2:0 pictures need them), by the rule every picture is sized by
    /// (`Size.pixels(fitting:sides:)`).
    static func fitted(_ size: Size, inside maxSize: (width: Int, height: Int)?) throws -> (width: Int, height: Int) {
        if let maxSize, maxSize.width < 2 || maxSize.height < 2 {
            throw EngineError("maxSize must be at least 2×2 pixels, got \(maxSize.width)×\(maxSize.height)")
        }
        return size.pixels(fitting: maxSize.map { Size(width: Double($0.width), height: Double($0.height)) }, sides: .even)
    }

    /// `width`×`height` scaled down (aspect kept) to fit inside `maxSize`, in even whole pixels.
    public static func fitted(width: Int, height: Int, inside maxSize: (width: Int, height: Int)) throws -> (width: Int, height: Int) {
        try fitted(Size(width: Double(width), height: Double(height)), inside: maxSize)
    }

    // MARK: Pictures

    /// The number (from the start) of the frame that shows at `time`; 0 without video.
    public func frameNumber(containing time: MediaTime) -> Int64 { video?.frameNumber(containing: time) ?? 0 }

    /// The composed picture at composition time `time`, exactly (no nearest keyframe).
    package func frame(at time: MediaTime) throws -> Frame {
        guard let video else { throw EngineError("the composition has no video to render", kind: .notFound) }
        guard time >= range.start, time < range.end else {
            throw EngineError("time \(time.seconds) s is outside the composition (\(range.start.seconds)…\(range.end.seconds) s)")
        }
        let renderer = self.renderer ?? VideoRenderer(plan: video)
        self.renderer = renderer
        return try renderer.render(at: time)
    }

    /// The composed picture at `time` as opaque RGBA pixels, `width` wide when given
    /// (smaller than the compositor's width; aspect kept): a preview frame or a thumbnail.
    public func image(at time: MediaTime, width: Int? = nil) throws -> RGBAImage {
        let frame = try frame(at: time)
        let outputWidth = min(frame.width, max(1, width ?? frame.width))
        let outputHeight = max(1, Int((Double(frame.height) * Double(outputWidth) / Double(frame.width)).rounded()))
        let bgra = try Scaler(flags: SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT)
            .convert(frame, width: outputWidth, height: outputHeight, format: AV_PIX_FMT_BGRA,
                     outputColor: ColorDescription(space: ColorDescription.of(frame).space, range: AVCOL_RANGE_JPEG))
        return try RGBAImage(opaqueBGRA: bgra)
    }

    /// The composed picture of the frame that contains `time` (times between frames show the
    /// frame before, as a player does), encoded as an image file's bytes (a preview serves
    /// JPEG), scaled down to fit `maxSize` when given. Returns the frame's number from the
    /// start and its exact start time.
    public func encodedFrame(containing time: MediaTime, as format: StillImageFormat, fitting maxSize: (width: Int, height: Int)? = nil,
                             jpegQuality: Int32 = 2) throws -> (bytes: [UInt8], number: Int64, time: MediaTime) {
        guard let video else { throw EngineError("the composition has no video to render", kind: .notFound) }
        let number = video.frameNumber(containing: time)
        let start = range.start + video.frameDuration * number
        let size = try maxSize.map { try Compositor.fitted(width: video.outputWidth, height: video.outputHeight, inside: $0) }
        return (try StillImageWriter.encode(frame(at: start), as: format, size: size, jpegQuality: jpegQuality, scalers: imageScalers), number, start)
    }

    /// The pictures of the compositor's range in order (or of the frames numbered `frames`
    /// from its start), one per frame duration, rendered on a thread of their own; each
    /// frame's `pts` is its number from the first one streamed. The renderer hands each picture
    /// over and starts the next once the encoder has taken it, so one picture is encoded while
    /// the next is drawn; where the encoder is the work (the plan's pace), once the encoder is
    /// done with it. A 1080p picture is 3 MiB, and queues only held more of them (the encoder
    /// buffers its own lookahead): one waiting besides was 3 MiB more at the lyrics job's
    /// peak, three 12 MiB more, in the same time.
    /// What the pictures met on the way (`VideoRenderer.lateInterlacingNote`) goes to `log`
    /// once they are all rendered.
    package func frameStream(frames: Range<Int64>? = nil, cancellation: CancellationFlag, log: DiagnosticLog? = nil) throws -> RenderStream<Frame> {
        guard let plan = video else { throw EngineError("the composition has no video to render", kind: .notFound) }
        let numbers = frames ?? 0..<plan.frameCount
        // Times made as they are needed: a range may hold billions of frames.
        return try frameStream(count: Int64(numbers.count), cancellation: cancellation, log: log) { plan.start + plan.frameDuration * (numbers.lowerBound + $0) }
    }

    /// The pictures at these composition times, in this order (smart rendering keeps the
    /// source's frame times), rendered on a thread of their own as the plan's pace allows;
    /// each frame's `pts` is its place in `times`.
    package func frameStream(at times: [MediaTime], cancellation: CancellationFlag, log: DiagnosticLog? = nil) throws -> RenderStream<Frame> {
        try frameStream(count: Int64(times.count), cancellation: cancellation, log: log) { times[Int($0)] }
    }

    private func frameStream(count: Int64, cancellation: CancellationFlag, log: DiagnosticLog? = nil,
                             time: @escaping @Sendable (Int64) -> MediaTime) throws -> RenderStream<Frame> {
        guard let plan = video else { throw EngineError("the composition has no video to render", kind: .notFound) }
        return try RenderStream(lead: plan.pace == .renderer ? .queued(0) : .onRequest) { push in
            let renderer = VideoRenderer(plan: plan)
            for number in 0..<count {
                guard !cancellation.isCancelled else { return }
                let frame = try renderer.renderFrame(at: time(number), number: number)
                // Said before the last picture is handed over, which ends the export.
                if number == count - 1, let note = renderer.lateInterlacingNote() { log?.report(note) }
                guard push(frame) else { return }
            }
        }
    }

    // MARK: Sound

    /// The mixed sound of the compositor's range in blocks of `blockSize` samples per
    /// channel (planar float), rendered ahead on a thread of their own; what the mix lost on
    /// the way (`AudioRenderer.limitingDiagnostic`) goes to `log` once it is all rendered.
    package func audioStream(blockSize: Int, cancellation: CancellationFlag, log: DiagnosticLog? = nil) throws -> RenderStream<[[Float]]> {
        guard let plan = audio else { throw EngineError("the composition has no audio to render", kind: .notFound) }
        return try RenderStream(lead: .queued(32)) { push in
            let renderer = try AudioRenderer.make(plan: plan, cancellation: cancellation)
            while !cancellation.isCancelled, let block = try renderer.nextBlock(count: blockSize) {
                guard push(block) else { return }
            }
            if renderer.isFinished, let limited = renderer.limitingDiagnostic() { log?.report(limited) }
        }
    }

    /// The mixed sound of `range` (a part of the compositor's), with the volumes, ramps,
    /// ducking and splice fades an export applies.
    public func audio(in range: TimeRange) throws -> RenderedAudio {
        guard let plan = audio else { throw EngineError("the composition has no audio to render", kind: .notFound) }
        guard let inside = range.intersection(self.range), inside.duration.value > 0 else {
            throw EngineError("range \(range) is outside the composition (\(self.range.start.seconds)…\(self.range.end.seconds) s)")
        }
        let renderer = try AudioRenderer.make(plan: plan.clipped(to: inside))
        var channels = [[Float]](repeating: [], count: plan.format.channels)
        while let block = try renderer.nextBlock(count: 4096) {
            for (channel, samples) in block.enumerated() { channels[channel] += samples }
        }
        return RenderedAudio(sampleRate: Int(plan.format.sampleRate), channels: channels)
    }
}

/// Sound from a `Compositor`: planar float samples, one array per channel.
public struct RenderedAudio: Sendable {
    /// Samples per second.
    public let sampleRate: Int
    /// One array of samples (−1…1) per channel, all of the same length.
    public let channels: [[Float]]
}

/// Items a producer renders on a thread of its own, ahead of its consumer or only when asked
/// (`Lead`); a failure reaches the consumer as the error it was.
package final class RenderStream<Item: Sendable> {
    /// How far the producer may work ahead of the consumer.
    enum Lead {
        /// Up to this many items wait in a bounded queue, so memory stays flat; 0 hands each
        /// over, the producer making the next while the consumer uses the last.
        case queued(Int)
        /// The producer makes the next item when the consumer asks for it (done with the
        /// last): none is made while the consumer still holds one.
        case onRequest
    }

    private let queue: BoundedQueue<StageOutput<Item>>
    /// The consumer's "done with the last, make the next" (`.onRequest` only).
    private let requests: BoundedQueue<Void>?
    private var handedOut = false
    private var worker: WorkerThread?

    /// Starts `produce` on a new thread; it hands each item to `push`, which returns false
    /// when the consumer has stopped.
    init(lead: Lead, produce: @escaping @Sendable (_ push: (Item) -> Bool) throws -> Void) throws {
        let (capacity, requests) = switch lead {
        case .queued(let capacity): (capacity, BoundedQueue<Void>?.none)
        case .onRequest: (0, BoundedQueue<Void>(capacity: 0))
        }
        let queue = BoundedQueue<StageOutput<Item>>(capacity: capacity)
        (self.queue, self.requests) = (queue, requests)
        worker = try WorkerThread {
            do {
                try produce { item in
                    guard queue.push(.item(item)) else { return false }
                    return requests.map { $0.pop() != nil } ?? true
                }
            } catch {
                queue.push(.failed(error))
            }
            queue.close()
            requests?.close()
        }
    }

    /// The next item; nil at the end. Throws what the producer threw.
    package func next() throws -> Item? {
        if let requests, handedOut { _ = requests.push(()) }
        handedOut = true
        switch queue.pop() {
        case .item(let item): return item
        case .failed(let error): throw error
        case nil: return nil
        }
    }

    /// Unblocks and joins the producer (it sees the closed queues and stops).
    package func stop() {
        queue.close()
        requests?.close()
        worker?.join()
        worker = nil
    }

    deinit { stop() }
}

/// What a producer hands its consumer: an item, or the error it stopped with.
enum StageOutput<Item: Sendable>: Sendable {
    case item(Item)
    case failed(any Error)
}
