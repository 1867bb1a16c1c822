import CMoonFFmpeg
import CMoonAVShim

/// Decodes one segment of one audio stream into the output format, starting exactly at the
/// segment's source start: samples before it are dropped, a late first packet is padded with
/// silence, and the source running out early gives silence (never a loop or a stretch).
/// A time-scaled segment either keeps its pitch (`atempo`) or, with varispeed, is resampled
/// so the pitch follows the speed; either way it fills exactly its length in samples.
final class AudioSegmentReader {
    private let reader: StreamReader
    private let channels: Int
    private let sourceStart: MediaTime
    private let length: Int64
    private let fadeInSamples: Int
    private let fadeOutSamples: Int
    private let resampler: AudioResampler
    private let tempo: AudioTempo?
    /// Resampled samples to drop before the segment's first sample (negative: silence to
    /// add first); known once the first frame is decoded.
    private var leadIn: Int64?
    private var pending: [[Float]]
    private var produced: Int64 = 0
    private var sourceFinished = false

    init(segment: AudioPlan.Segment, format: AudioFormat, length: Int64, timePitch: AudioTimePitchAlgorithm,
         fadeSamples: Int) throws {
        reader = try StreamReader(path: segment.source.path, streamIndex: segment.source.streamIndex)
        channels = format.channels
        sourceStart = segment.sourceRange.start
        self.length = length
        let fade = min(fadeSamples, Int(length / 4))
        fadeInSamples = segment.fadesIn ? fade : 0
        fadeOutSamples = segment.fadesOut ? fade : 0
        pending = Array(repeating: [], count: format.channels)

        let sourceDuration = segment.sourceRange.duration, targetDuration = segment.targetRange.duration
        let scaled = sourceDuration != targetDuration && sourceDuration.value > 0
        var resampledRate = format.sampleRate
        if scaled && !timePitch.keepsPitch {
            // Varispeed: resample to the rate at which the source, played at the output
            // rate, lasts the target duration.
            let rate = MediaTime(value: Int64(format.sampleRate), timescale: 1).multiplied(by: targetDuration, dividedBy: sourceDuration).count(in: 1)
            guard rate >= 1, rate <= 1 << 24, AudioTempo.speedRange.contains(sourceDuration.seconds / targetDuration.seconds) else {
                throw EngineError("\(reader.label): cannot play audio at \(sourceDuration.seconds / targetDuration.seconds)× speed with varispeed")
            }
            resampledRate = Int32(rate)
        }
        resampler = AudioResampler(outputRate: resampledRate, channels: format.channels, label: reader.label)
        tempo = scaled && timePitch.keepsPitch
            ? try AudioTempo(format: format, speed: sourceDuration.seconds / targetDuration.seconds, label: reader.label)
            : nil
        // Audio decoders need the packets before the first sample they output (AAC's
        // overlapped transform, priming): start well before the segment and drop what
        // precedes it. A fresh reader is already at the stream's start.
        let preroll = MediaTime(value: 1, timescale: 2)
        if sourceStart > preroll { try reader.seek(before: sourceStart - preroll) }
    }

    /// Appends samples [offset, offset + count) of the segment to `output` (per channel).
    func read(from offset: Int64, count: Int, into output: inout [[Float]]) throws {
        precondition(offset == produced, "audio segments are read in order")
        while pending[0].count < count, !sourceFinished {
            try decodeMore()
        }
        for channel in 0..<channels {
            let available = min(count, pending[channel].count)
            output[channel].append(contentsOf: pending[channel].prefix(available))
            output[channel].append(contentsOf: repeatElement(0, count: count - available))
            pending[channel].removeFirst(available)
        }
        applyFades(to: &output, from: offset, count: count)
        produced += Int64(count)
    }

    private func applyFades(to output: inout [[Float]], from offset: Int64, count: Int) {
        guard fadeInSamples > 0 || fadeOutSamples > 0 else { return }
        for i in 0..<count {
            let position = offset + Int64(i)
            let fromEnd = length - 1 - position
            var gain: Float = 1
            if position < Int64(fadeInSamples) { gain = Float(position + 1) / Float(fadeInSamples + 1) }
            if fromEnd < Int64(fadeOutSamples) { gain = min(gain, Float(fromEnd + 1) / Float(fadeOutSamples + 1)) }
            guard gain < 1 else { continue }
            for channel in 0..<channels { output[channel][output[channel].count - count + i] *= gain }
        }
    }

    private func decodeMore() throws {
        guard let frame = try reader.nextFrame() else {
            sourceFinished = true
            if leadIn != nil { try deliver(resampler.flush()) }
            if let tempo { append(try tempo.finish()) }
            return
        }
        if leadIn == nil {
            // The resampler's output starts at the first frame's time and runs on without
            // gaps, so one count from there places every later sample exactly.
            leadIn = (sourceStart - reader.time(of: frame)).count(in: resampler.outputRate)
        }
        try deliver(resampler.convert(frame))
    }

    /// Takes resampled source audio: trims or pads its start onto the segment start, then
    /// time-stretches it when the segment keeps its pitch at another speed.
    private func deliver(_ resampled: [[Float]]) throws {
        var samples = resampled
        if let lead = leadIn, lead != 0 {
            if lead < 0 {
                for channel in 0..<channels { samples[channel].insert(contentsOf: repeatElement(0, count: Int(-lead)), at: 0) }
                leadIn = 0
            } else {
                let drop = Int(min(lead, Int64(samples[0].count)))
                for channel in 0..<channels { samples[channel].removeFirst(drop) }
                leadIn = lead - Int64(drop)
            }
        }
        guard !samples[0].isEmpty else { return }
        append(try tempo?.process(samples) ?? samples)
    }

    private func append(_ samples: [[Float]]) {
        for channel in 0..<channels { pending[channel].append(contentsOf: samples[channel]) }
    }
}

/// Owns a libswresample context that converts decoded frames to planar float at one rate
/// and channel count. Rebuilt when the input's rate, format or layout changes mid-stream.
final class AudioResampler {
    let outputRate: Int32
    private let channels: Int
    private let label: String
    private var context: OpaquePointer?
    private var inputRate: Int32 = 0
    private var inputFormat = AV_SAMPLE_FMT_NONE
    private var inputLayout = AVChannelLayout()

    init(outputRate: Int32, channels: Int, label: String) {
        self.outputRate = outputRate
        self.channels = channels
        self.label = label
    }

    deinit {
        swr_free(&context)
        av_channel_layout_uninit(&inputLayout)
    }

    func convert(_ frame: Frame) throws -> [[Float]] {
        try configure(for: frame)
        let input = frame.pointer.pointee
        let capacity = Int(swr_get_out_samples(context, input.nb_samples)) + 32
        // extended_data holds one pointer per plane; swr_convert wants them as const pointers.
        let planes = UnsafeMutableRawPointer(input.extended_data).map { $0.assumingMemoryBound(to: UnsafePointer<UInt8>?.self) }
        return try run(planes, count: input.nb_samples, capacity: capacity)
    }

    /// What the resampler still holds at the end of the stream.
    func flush() throws -> [[Float]] {
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
        guard input.sample_rate > 0 else { throw EngineError("\(label): audio frame without a sample rate") }
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
final class AudioTempo {
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
    static let speedRange = 0.01...100.0

    init(format: AudioFormat, speed: Double, label: String) throws {
        guard speed.isFinite, AudioTempo.speedRange.contains(speed) else {
            throw EngineError("\(label): cannot play audio at \(speed)× speed (time-scaled audio plays from 0.01× to 100×; remove the audio or scale less)")
        }
        self.format = format
        chain = try FilterChain(
            chain: [("abuffer", try format.abufferArguments())]
                + AudioTempo.factors(forSpeed: speed).map { ("atempo", "tempo=\($0)") }
                + [("aformat", "sample_fmts=fltp")],
            sink: "abuffersink")
    }

    /// Stretches the next piece of the stream; returns what the filters have ready.
    func process(_ samples: [[Float]]) throws -> [[Float]] {
        try chain.push(ExportSession.audioFrame(samples, format: format, pts: pushed))
        pushed += Int64(samples[0].count)
        return try drain()
    }

    /// Ends the stream; returns what the filters still held.
    func finish() throws -> [[Float]] {
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

extension AudioFormat {
    /// The `abuffer` source's arguments for planar float audio in this format.
    func abufferArguments() throws -> String {
        var layout = AVChannelLayout()
        av_channel_layout_default(&layout, Int32(channels))
        var name = [CChar](repeating: 0, count: 64)
        _ = try check(av_channel_layout_describe(&layout, &name, name.count), "describing the channel layout")
        let layoutName = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "sample_fmt=fltp:sample_rate=\(sampleRate):channel_layout=\(layoutName):time_base=1/\(sampleRate)"
    }
}
