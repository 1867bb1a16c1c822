import CMoonFFmpeg
import CMoonAVShim

/// Makes a test clip with FFmpeg's own generators (libavfilter `testsrc2`: colour bars with
/// a moving element and a frame counter; `sine`: a tone), encoded to H.264 + AAC. Used by
/// the built-in demo so Moonreel runs with no media of the user's.
public enum TestPattern {
    /// The pattern's first picture, for trying what takes an image (an effect's logo).
    /// - Throws: `FFmpegError` or `EngineError` when it cannot be made at that size.
    public static func picture(width: Int, height: Int) throws -> RGBAImage {
        let chain = try FilterChain(chain: [("testsrc2", "size=\(width)x\(height):rate=1:duration=1"), ("format", "pix_fmts=bgra")],
                                    sink: "buffersink")
        guard let frame = try chain.next() else { throw EngineError("the test pattern gave no picture") }
        return try RGBAImage(opaqueBGRA: frame)
    }

    /// Writes an MP4 test clip (H.264 video, 48 kHz stereo AAC audio) to `path`,
    /// replacing any file there; the file appears only once complete.
    /// - Parameters:
    ///   - path: the output file.
    ///   - seconds: length of the clip in seconds.
    ///   - width: picture width in pixels.
    ///   - height: picture height in pixels.
    ///   - rate: frames per second.
    ///   - toneFrequency: pitch of the sine tone in hertz.
    /// - Throws: `FFmpegError` or `EngineError` when the file cannot be encoded or written.
    public static func write(to path: String, seconds: Int = 8, width: Int = 1280, height: Int = 720,
                             rate: Int = 30, toneFrequency: Int = 440) throws {
        FFmpegLog.capture()
        let output = try SafeOutput(path: path, overwrite: true, inputs: [])
        defer { output.discard() }
        let preset = ExportPreset(name: "test pattern", video: .h264, boundingBox: nil, crf: 23, speed: "veryfast", audioBitRate: 128_000)
        let muxer = try Muxer(path: output.temporaryPath, container: .mp4)
        let format = AudioFormat(sampleRate: 48000, channels: 2)
        let color = ColorDescription.forOutput(width: width, height: height)
        let video = try StreamEncoder.video(VideoEncoding.make(.h264, settings: VideoSettings(), preset: preset, container: .mp4, keepsHDR: false),
                                            width: width, height: height,
                                            frameDuration: MediaTime(value: 1, timescale: Int32(rate)), color: color, muxer: muxer)
        let audio = try StreamEncoder.audio(AudioEncoding.make(.aac, settings: AudioSettings(), preset: preset), format: format, muxer: muxer)
        try muxer.writeHeader(metadata: ["title": "Moonreel test pattern"], fastStart: true)
        let pictures = try FilterChain(chain: [("testsrc2", "size=\(width)x\(height):rate=\(rate):duration=\(seconds)"),
                                                ("format", "pix_fmts=yuv420p")], sink: "buffersink")
        let tone = try FilterChain(chain: [("sine", "frequency=\(toneFrequency):sample_rate=48000:duration=\(seconds)"),
                                            ("aformat", "sample_fmts=fltp:channel_layouts=stereo")], sink: "abuffersink")
        tone.setFrameSize(audio.frameSize)
        var videoDone = false, audioDone = false
        var videoTime = MediaTime.zero, audioTime = MediaTime.zero
        while !videoDone || !audioDone {
            if !videoDone && (audioDone || videoTime <= audioTime) {
                if let frame = try pictures.next() {
                    frame.pointer.pointee.colorspace = color.space
                    frame.pointer.pointee.color_range = color.range
                    videoTime = MediaTime(value: frame.pointer.pointee.pts, timescale: Int32(rate))
                    try video.encode(frame)
                } else { videoDone = true }
            } else if let frame = try tone.next() {
                audioTime = MediaTime(value: frame.pointer.pointee.pts, timescale: 48000)
                try audio.encode(frame)
            } else { audioDone = true }
        }
        try video.encode(nil)
        try audio.encode(nil)
        try muxer.finish()
        try output.commit()
    }
}
