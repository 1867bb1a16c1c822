import CMoonFFmpeg
import MoonreelMedia
import MoonreelRender

/// A media file an export is writing: the muxer, an encoder per stream and, for a GIF, the
/// palette stage; it keeps the file under `fileLengthLimit` by ending it cleanly (every
/// encoder drained, the index written) before the next packets would pass it.
final class ContainerWriter {
    private let muxer: Muxer
    private let videoEncoder: StreamEncoder?
    private let audioEncoder: StreamEncoder?
    private let palette: GIFPalette?
    private let sampleFormat: AVSampleFormat
    private let audioFormat: AudioFormat?

    init(path: String, container: OutputContainer, video: (encoding: VideoEncoding, plan: VideoPlan)?,
         audio: (encoding: AudioEncoding, plan: AudioPlan)?, gifPalette: Frame?,
         metadata: [String: String], fastStart: Bool, sizeLimit: Int64?) throws {
        let muxer = try Muxer(path: path, container: container)
        muxer.sizeLimit = sizeLimit
        self.muxer = muxer
        videoEncoder = try video.map {
            try StreamEncoder.video($0.encoding, width: $0.plan.outputWidth, height: $0.plan.outputHeight,
                                    frameDuration: $0.plan.frameDuration, color: $0.plan.outputColor, muxer: muxer)
        }
        audioEncoder = try audio.map { try StreamEncoder.audio($0.encoding, format: $0.plan.format, muxer: muxer) }
        (sampleFormat, audioFormat) = (audio?.encoding.sampleFormat ?? AV_SAMPLE_FMT_FLTP, audio?.plan.format)
        palette = try video.flatMap { video in
            try gifPalette.map { try GIFPalette(palette: $0, width: video.plan.outputWidth, height: video.plan.outputHeight,
                                                frameDuration: video.plan.frameDuration) }
        }
        if palette != nil, let plan = video?.plan, plan.frameCount > 0 {
            // The GIF muxer gives the last frame the delay of the one before (4 hundredths at
            // 30 fps, where 3 and 4 alternate), so 2 s of it lasted 2.01 s: it is given what
            // is left to the end.
            let hundredths = { (frames: Int64) in (plan.frameDuration * frames).pts(in: AVRational(num: 1, den: 100)) }
            av_opt_set_int(muxer.context.pointee.priv_data, "final_delay", hundredths(plan.frameCount) - hundredths(plan.frameCount - 1), 0)
        }
        try muxer.writeHeader(metadata: metadata, fastStart: fastStart)
    }

    /// Writes only the video frames at these positions (pts, in frames from the first one
    /// encoded), moved to start at 0: the others only warm the encoder up (a chunked render's piece).
    func keepVideoFrames(_ kept: Range<Int64>) { videoEncoder?.keptFrames = kept }

    /// Samples per audio frame the encoder wants.
    var audioFrameSize: Int { audioEncoder?.frameSize ?? 1024 }

    /// Encodes a video frame; false once the stream has reached the size limit.
    func write(video frame: Frame) throws -> Bool {
        guard let encoder = videoEncoder else { return false }
        for mapped in try palette?.map(frame) ?? [frame] { try encoder.encode(mapped) }
        return !encoder.isCutShort
    }

    /// Encodes a block of planar float samples starting at sample `pts`; false once the
    /// stream has reached the size limit.
    func write(audio block: [[Float]], pts: Int64) throws -> Bool {
        guard let encoder = audioEncoder, let audioFormat else { return false }
        try encoder.encode(Frame.audio(block, format: audioFormat, pts: pts, sampleFormat: sampleFormat))
        return !encoder.isCutShort
    }

    /// Whether writing on would pass the size limit: the file so far, what the encoders
    /// still hold, and one more frame of each stream.
    var isAtSizeLimit: Bool {
        guard let limit = muxer.sizeLimit else { return false }
        if videoEncoder?.isCutShort == true || audioEncoder?.isCutShort == true { return true }
        return muxer.projectedSize + (videoEncoder?.bytesInFlight ?? 0) + (audioEncoder?.bytesInFlight ?? 0) >= limit
    }

    /// Seconds of media written so far.
    var writtenSeconds: Double { muxer.writtenSeconds }

    /// How long the picture and the sound written so far last, as a player counts them, in
    /// seconds; nil without both.
    var pictureAndSoundSeconds: (picture: Double, sound: Double)? {
        guard let video = videoEncoder, let audio = audioEncoder else { return nil }
        return (muxer.streamSeconds[video.streamIndex] ?? 0, max((muxer.streamSeconds[audio.streamIndex] ?? 0) - audio.primingSeconds, 0))
    }

    /// Whether a stream has no packet at all (the size limit was below its first one).
    var hasEmptyStream: Bool { [videoEncoder, audioEncoder].contains { $0 != nil && $0?.packetsWritten == 0 } }

    /// Drains the palette stage and the encoders and writes the trailer.
    func finish() throws {
        if let palette, let encoder = videoEncoder {
            for mapped in try palette.map(nil) { try encoder.encode(mapped) }
        }
        try videoEncoder?.encode(nil)
        try audioEncoder?.encode(nil)
        try muxer.finish()
    }
}
