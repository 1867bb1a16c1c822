import CMoonFFmpeg
import CMoonAVShim

/// Owns a libswresample context that converts decoded frames to planar float at one rate
/// and channel count. Rebuilt when the input's rate, format or layout changes mid-stream.
package final class AudioResampler {
    package let outputRate: Int32
    private let channels: Int
    private let label: String
    private var context: OpaquePointer?
    private var inputRate: Int32 = 0
    private var inputFormat = AV_SAMPLE_FMT_NONE
    private var inputLayout = AVChannelLayout()

    package init(outputRate: Int32, channels: Int, label: String) {
        self.outputRate = outputRate
        self.channels = channels
        self.label = label
    }

    deinit {
        swr_free(&context)
        av_channel_layout_uninit(&inputLayout)
    }

    package func convert(_ frame: Frame) throws -> [[Float]] {
        try configure(for: frame)
        let input = frame.pointer.pointee
        let capacity = Int(swr_get_out_samples(context, input.nb_samples)) + 32
        // extended_data holds one pointer per plane; swr_convert wants them as const pointers.
        let planes = UnsafeMutableRawPointer(input.extended_data).map { $0.assumingMemoryBound(to: UnsafePointer<UInt8>?.self) }
        return try run(planes, count: input.nb_samples, capacity: capacity)
    }

    /// What the resampler still holds at the end of the stream.
    package func flush() throws -> [[Float]] {
        guard context != nil else { return Array(repeating: [], count: channels) }
        return try run(nil, count: 0, capacity: Int(swr_get_out_samples(context, 0)) + 32)
    }

    private func configure(for frame: Frame) throws {
        let input = frame.pointer.pointee
        var layout = AVChannelLayout()
        defer { av_channel_layout_uninit(&layout) }
        if input.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || input.ch_layout.nb_channels == 0 {
            av_channel_layout_default(&layout, max(input.ch_layout.nb_channels, 1))
        } else {
            try check(withUnsafePointer(to: input.ch_layout) { av_channel_layout_copy(&layout, $0) }, "reading the channel layout", context: label)
        }
        let format = AVSampleFormat(input.format)
        if context != nil, input.sample_rate == inputRate, format == inputFormat, av_channel_layout_compare(&inputLayout, &layout) == 0 {
            return
        }
        guard input.sample_rate > 0 else { throw EngineError("\(label): audio frame without a sample rate", kind: .decode, subject: label) }
        swr_free(&context)
        var outputLayout = AVChannelLayout()
        av_channel_layout_default(&outputLayout, Int32(channels))
        try check(swr_alloc_set_opts2(&context, &outputLayout, AV_SAMPLE_FMT_FLTP, outputRate,
                                      &layout, format, input.sample_rate, 0, nil),
                  "setting up audio conversion", context: label)
        if layout.nb_channels == 1 && channels > 1 {
            // A mono source plays at full level in every channel (as AVFoundation plays it),
            // not at libswresample's −3 dB pan law, so it matches stereo clips beside it.
            let matrix = [Double](repeating: 1, count: channels)
            try check(swr_set_matrix(context, matrix, 1), "setting up audio conversion", context: label)
        }
        try check(swr_init(context), "setting up audio conversion", context: label)
        inputRate = input.sample_rate
        inputFormat = format
        av_channel_layout_uninit(&inputLayout)
        try check(av_channel_layout_copy(&inputLayout, &layout), "reading the channel layout", context: label)
    }

    private func run(_ input: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, count: Int32, capacity: Int) throws -> [[Float]] {
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: capacity * channels)
        defer { buffer.deallocate() }
        var planes: [UnsafeMutablePointer<UInt8>?] = (0..<channels).map {
            UnsafeMutableRawPointer(buffer + $0 * capacity).assumingMemoryBound(to: UInt8.self)
        }
        let produced = try planes.withUnsafeMutableBufferPointer { pointers in
            try check(swr_convert(context, pointers.baseAddress, Int32(capacity), input, count),
                      "converting audio", context: label)
        }
        return (0..<channels).map { Array(UnsafeBufferPointer(start: buffer + $0 * capacity, count: Int(produced))) }
    }
}

/// Plays planar float audio faster or slower with its pitch kept: libavfilter `atempo`,
/// chained because one instance works best within 0.5…2× (0.25× = 0.5 · 0.5).
package final class AudioTempo {
    private let chain: FilterChain
    private let format: AudioFormat
    private var pushed: Int64 = 0

    /// Factors within 0.5…2 whose product is `speed`.
    static func factors(forSpeed speed: Double) -> [Double] {
        var factors: [Double] = [], remaining = speed
        while remaining < 0.5 { factors.append(0.5); remaining /= 0.5 }
        while remaining > 2 { factors.append(2); remaining /= 2 }
        return factors + [remaining]
    }

    /// How far audio can be slowed down or sped up and still be heard as itself.
    package static let speedRange = 0.01...100.0

    package init(format: AudioFormat, speed: Double, label: String) throws {
        guard speed.isFinite, AudioTempo.speedRange.contains(speed) else {
            throw EngineError("\(label): cannot play audio at \(speed)× speed (time-scaled audio plays from 0.01× to 100×; remove the audio or scale less)", subject: label)
        }
        self.format = format
        chain = try FilterChain(
            chain: [("abuffer", try format.abufferArguments())]
                + AudioTempo.factors(forSpeed: speed).map { ("atempo", "tempo=\($0)") }
                + [("aformat", "sample_fmts=fltp")],
            sink: "abuffersink")
    }

    /// Stretches the next piece of the stream; returns what the filters have ready.
    package func process(_ samples: [[Float]]) throws -> [[Float]] {
        try chain.push(Frame.audio(samples, format: format, pts: pushed))
        pushed += Int64(samples[0].count)
        return try drain()
    }

    /// Ends the stream; returns what the filters still held.
    package func finish() throws -> [[Float]] {
        try chain.push(nil)
        return try drain()
    }

    private func drain() throws -> [[Float]] {
        var output = Array(repeating: [Float](), count: format.channels)
        while let frame = try chain.next() {
            let count = Int(frame.pointer.pointee.nb_samples)
            for channel in 0..<format.channels {
                let (plane, _) = frame.plane(channel)
                plane.withMemoryRebound(to: Float.self, capacity: count) { output[channel].append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
            }
        }
        return output
    }
}
