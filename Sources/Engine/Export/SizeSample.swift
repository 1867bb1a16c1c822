import CMoonFFmpeg
import MoonreelMedia
import MoonreelPlatform
import MoonreelRender

/// A constant-quality export's size depends on its pictures more than on anything in its
/// settings (a still title takes a tenth of what camera footage takes at the same CRF), so
/// `--dry-run` encodes a few short bursts of the export's own pictures at its own settings
/// and scales what they took to the whole length.
enum SizeSample {
    /// Bursts spread evenly over the range, each this many frames: some 3 s of a 1080p
    /// encode, against the minutes of the export.
    static let bursts: Int64 = 3
    static let burstLength: Int64 = 15

    /// Bytes per frame `encoding` takes for `plan`'s pictures; nil when it cannot be told
    /// (no codec, no frames).
    static func bytesPerFrame(plan: VideoPlan, encoding: VideoEncoding, cancellation: CancellationFlag) throws -> Double? {
        guard encoding.codec != nil, plan.frameCount > 0 else { return nil }
        let length = min(burstLength, plan.frameCount)
        let count = min(bursts, max(plan.frameCount / length, 1))
        let compositor = Compositor(video: plan, audio: nil, range: TimeRange(start: plan.start, duration: plan.frameDuration * plan.frameCount))
        // Encoders' default keyframe spacing (x264, x265: 250 frames) unless one is set.
        let spacing = encoding.keyframeInterval.map { Int(($0 / plan.frameDuration.seconds).rounded()) } ?? 250
        var measured: [Double] = []
        for burst in 0..<count {
            let first = (plan.frameCount - length) * (2 * burst + 1) / (2 * count)
            let muxer = try Muxer(path: "/dev/null", container: .mkv)
            let encoder = try StreamEncoder.video(encoding, width: plan.outputWidth, height: plan.outputHeight, frameDuration: plan.frameDuration,
                                                  color: plan.outputColor, muxer: muxer)
            try muxer.writeHeader(metadata: [:], fastStart: false)
            let frames = try compositor.frameStream(frames: first..<first + length, cancellation: cancellation)
            defer { frames.stop() }
            while let frame = try frames.next() { try encoder.encode(frame) }
            try encoder.encode(nil)
            if let bytes = encoder.bytesPerFrame(keyframeSpacing: min(spacing, Int(plan.frameCount))) { measured.append(bytes) }
        }
        return measured.isEmpty ? nil : measured.reduce(0, +) / Double(measured.count)
    }
}
