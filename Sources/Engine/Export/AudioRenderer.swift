import CMoonFFmpeg
import CMoonAVShim
#if canImport(Glibc)
import Glibc
#endif

/// The output audio format: planar float at one rate and channel count.
struct AudioFormat: Sendable, Equatable {
    let sampleRate: Int32
    let channels: Int

    /// The sources' common rate when they share one, else 48 kHz; stereo unless all are mono.
    static func forSources(_ sources: [SegmentSource]) -> AudioFormat {
        let rates = Set(sources.map(\.sampleRate).filter { $0 > 0 })
        let rate = rates.count == 1 ? Int32(rates.first!) : 48000
        let channels = sources.allSatisfy { $0.channelCount == 1 } && !sources.isEmpty ? 1 : 2
        return AudioFormat(sampleRate: rate, channels: channels)
    }

    /// Sample index of composition-relative time `t` (exact rational → nearest sample).
    func sample(at t: MediaTime) -> Int64 { t.count(in: sampleRate) }
}

struct AudioPlan: Sendable {
    struct Track: Sendable {
        let segments: [TrackSegment]
        let volume: PropertyTimeline<Double>
    }
    let format: AudioFormat
    let start: MediaTime
    let sampleCount: Int64
    let tracks: [Track]
    /// Length of the fade applied at each end of a segment that joins different media, to
    /// avoid clicks at hard cuts (0 disables).
    let spliceFade: MediaTime
}

extension AudioPlan {
    /// Freezes the composition's audio tracks and the mix for one export (nil: no audio).
    static func make(composition: Composition, audioMix: AudioMix?, range: TimeRange, spliceFade: MediaTime) throws -> AudioPlan? {
        let tracks = composition.tracks(withMediaType: .audio).filter { $0.segments.contains { !$0.isEmpty } }
        guard !tracks.isEmpty else { return nil }
        for parameters in audioMix?.inputParameters ?? [] where composition.track(withID: parameters.trackID)?.mediaType != .audio {
            throw EngineError("audioMix has input parameters for track \(parameters.trackID), which is not an audio track of the composition")
        }
        let sources = tracks.flatMap { $0.segments.compactMap(\.source) }
        let format = AudioFormat.forSources(sources)
        let planTracks = tracks.map { track in
            AudioPlan.Track(segments: track.segments,
                            volume: audioMix?.inputParameters.last { $0.trackID == track.trackID }?.volume
                                ?? PropertyTimeline(defaultValue: track.preferredVolume))
        }
        return AudioPlan(format: format, start: range.start, sampleCount: format.sample(at: range.duration),
                         tracks: planTracks, spliceFade: spliceFade)
    }
}

/// Produces the mixed output audio block by block: each track's segments are decoded,
/// resampled to the output format, placed at exact sample positions, given their volume,
/// and summed with a soft limiter. Owned by the audio thread of one export.
final class AudioRenderer {
    let plan: AudioPlan
    private var readers: [Int: (segmentIndex: Int, reader: AudioSegmentReader)] = [:]
    private var position: Int64 = 0
    private var scratch: [[Float]]

    init(plan: AudioPlan) {
        self.plan = plan
        scratch = Array(repeating: [], count: plan.format.channels)
    }

    var isFinished: Bool { position >= plan.sampleCount }

    /// The next block of up to `count` samples per channel, or nil at the end.
    func nextBlock(count: Int) throws -> [[Float]]? {
        let length = Int(min(Int64(count), plan.sampleCount - position))
        guard length > 0 else { return nil }
        var mix = Array(repeating: [Float](repeating: 0, count: length), count: plan.format.channels)
        for (trackIndex, track) in plan.tracks.enumerated() {
            try addTrack(trackIndex, track, into: &mix, length: length)
        }
        limit(&mix)
        position += Int64(length)
        return mix
    }

    private func addTrack(_ trackIndex: Int, _ track: AudioPlan.Track, into mix: inout [[Float]], length: Int) throws {
        let blockStart = position
        let blockEnd = position + Int64(length)
        for (segmentIndex, segment) in track.segments.enumerated() {
            guard let source = segment.source else { continue }
            let segmentStart = plan.format.sample(at: segment.targetRange.start - plan.start)
            let segmentEnd = plan.format.sample(at: segment.targetRange.end - plan.start)
            let from = max(segmentStart, blockStart), to = min(segmentEnd, blockEnd)
            guard from < to else { continue }
            let reader = try reader(for: trackIndex, segmentIndex, segment, source, startSample: segmentStart, endSample: segmentEnd)
            let count = Int(to - from)
            for channel in 0..<plan.format.channels { scratch[channel].removeAll(keepingCapacity: true) }
            try reader.read(from: from - segmentStart, count: count, into: &scratch)
            let offset = Int(from - blockStart)
            let volume = track.volume
            let constantGain = volume.isConstant ? Float(volume.value(at: segment.targetRange.start)) : nil
            for i in 0..<count {
                let gain = constantGain ?? Float(volume.value(at: plan.start + MediaTime(value: from + Int64(i), timescale: plan.format.sampleRate)))
                for channel in 0..<plan.format.channels {
                    mix[channel][offset + i] += scratch[channel][i] * gain
                }
            }
        }
    }

    private func reader(for trackIndex: Int, _ segmentIndex: Int, _ segment: TrackSegment, _ source: SegmentSource,
                        startSample: Int64, endSample: Int64) throws -> AudioSegmentReader {
        if let open = readers[trackIndex], open.segmentIndex == segmentIndex { return open.reader }
        let fadeSamples = Int(plan.format.sample(at: plan.spliceFade))
        let reader = try AudioSegmentReader(source: source, sourceRange: segment.sourceRange, format: plan.format,
                                            length: endSample - startSample, fadeSamples: fadeSamples)
        readers[trackIndex] = (segmentIndex, reader)
        return reader
    }

    /// Sums above 0.95 bend smoothly towards 1.0 instead of clipping; quieter samples are
    /// untouched, so a single track at normal level passes bit-exact.
    private func limit(_ mix: inout [[Float]]) {
        let knee: Float = 0.95, headroom: Float = 0.05
        for channel in mix.indices {
            for i in mix[channel].indices {
                let x = mix[channel][i]
                let magnitude = abs(x)
                if magnitude > knee {
                    mix[channel][i] = (x < 0 ? -1 : 1) * (knee + headroom * tanhf((magnitude - knee) / headroom))
                }
            }
        }
    }
}

/// Decodes one segment of one audio stream into the output format, starting exactly at the
/// segment's source start: samples before it are dropped, a late first packet is padded with
/// silence, and the source running out early gives silence (never a loop or a stretch).
/// A segment played at another speed is resampled (varispeed).
final class AudioSegmentReader {
    private let reader: StreamReader
    private let format: AudioFormat
    private let sourceStart: MediaTime
    private let length: Int64
    private let fadeSamples: Int
    private var resampler: OpaquePointer?
    private var resamplerInput: (Int32, AVSampleFormat, AVChannelLayout)?
    private var pending: [[Float]]
    private var produced: Int64 = 0   // samples handed out so far
    private var aligned = false
    private var sourceFinished = false
    /// Source samples per output sample: 1 unless the segment is time-scaled.
    private let speed: Double

    init(source: SegmentSource, sourceRange: TimeRange, format: AudioFormat, length: Int64, fadeSamples: Int) throws {
        reader = try StreamReader(path: source.path, streamIndex: source.streamIndex)
        self.format = format
        sourceStart = sourceRange.start
        self.length = length
        self.fadeSamples = min(fadeSamples, Int(length / 4))
        let outputSeconds = Double(length) / Double(format.sampleRate)
        speed = outputSeconds > 0 ? sourceRange.duration.seconds / outputSeconds : 1
        pending = Array(repeating: [], count: format.channels)
        // Audio decoders need the packets before the first sample they output (AAC's
        // overlapped transform, priming): start well before the segment and drop what
        // precedes it. A fresh reader is already at the stream's start.
        let preroll = MediaTime(value: 1, timescale: 2)
        if sourceStart > preroll { try reader.seek(before: sourceStart - preroll) }
    }

    deinit { swr_free(&resampler) }

    /// Appends samples [offset, offset + count) of the segment to `output` (per channel).
    func read(from offset: Int64, count: Int, into output: inout [[Float]]) throws {
        precondition(offset == produced, "audio segments are read in order")
        while pending[0].count < count, !sourceFinished {
            try decodeMore()
        }
        for channel in 0..<format.channels {
            let available = min(count, pending[channel].count)
            output[channel].append(contentsOf: pending[channel].prefix(available))
            output[channel].append(contentsOf: repeatElement(0, count: count - available))
            pending[channel].removeFirst(available)
        }
        applyFades(to: &output, from: offset, count: count)
        produced += Int64(count)
    }

    private func applyFades(to output: inout [[Float]], from offset: Int64, count: Int) {
        guard fadeSamples > 0 else { return }
        for i in 0..<count {
            let position = offset + Int64(i)
            let fromEnd = length - 1 - position
            let edge = min(position, fromEnd)
            guard edge < Int64(fadeSamples) else { continue }
            let gain = Float(edge + 1) / Float(fadeSamples + 1)
            for channel in 0..<format.channels { output[channel][output[channel].count - count + i] *= gain }
        }
    }

    private func decodeMore() throws {
        guard let frame = try reader.nextFrame() else {
            try flushResampler()
            sourceFinished = true
            return
        }
        let input = frame.pointer.pointee
        let outputRate = Int32((Double(format.sampleRate) / speed).rounded())
        try configureResampler(for: frame, outputRate: outputRate)
        let capacity = Int(swr_get_out_samples(resampler, input.nb_samples)) + 32
        // extended_data holds one pointer per plane; swr_convert wants them as const pointers.
        let planes = UnsafeMutableRawPointer(frame.pointer.pointee.extended_data).map { $0.assumingMemoryBound(to: UnsafePointer<UInt8>?.self) }
        let converted = try convert(planes, count: input.nb_samples, capacity: capacity)
        if !aligned {
            // Place the first decoded frame at its exact time relative to the segment start.
            let frameTime = reader.time(of: frame)
            let offset = (frameTime - sourceStart).count(in: outputRate)
            aligned = true
            if offset > 0 {
                for channel in 0..<format.channels { pending[channel].append(contentsOf: repeatElement(0, count: Int(offset))) }
            } else if offset < 0 {
                let drop = Int(min(-offset, Int64(converted[0].count)))
                for channel in 0..<format.channels { pending[channel].append(contentsOf: converted[channel].dropFirst(drop)) }
                if drop == converted[0].count { aligned = false }
                return
            }
        }
        for channel in 0..<format.channels { pending[channel].append(contentsOf: converted[channel]) }
    }

    private func configureResampler(for frame: Frame, outputRate: Int32) throws {
        let input = frame.pointer.pointee
        var inputLayout = input.ch_layout
        if inputLayout.order == AV_CHANNEL_ORDER_UNSPEC || inputLayout.nb_channels == 0 {
            av_channel_layout_default(&inputLayout, max(input.ch_layout.nb_channels, 1))
        }
        let inputFormat = AVSampleFormat(input.format)
        if let configured = resamplerInput, configured.0 == input.sample_rate, configured.1 == inputFormat,
           av_channel_layout_compare(&resamplerInput!.2, &inputLayout) == 0 {
            return
        }
        swr_free(&resampler)
        var outputLayout = AVChannelLayout()
        av_channel_layout_default(&outputLayout, Int32(format.channels))
        try check(swr_alloc_set_opts2(&resampler, &outputLayout, AV_SAMPLE_FMT_FLTP, outputRate,
                                      &inputLayout, inputFormat, input.sample_rate, 0, nil),
                  "setting up audio conversion", context: reader.label)
        try check(swr_init(resampler), "setting up audio conversion", context: reader.label)
        resamplerInput = (input.sample_rate, inputFormat, inputLayout)
    }

    private func convert(_ input: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, count: Int32, capacity: Int) throws -> [[Float]] {
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: capacity * format.channels)
        defer { buffer.deallocate() }
        var planes: [UnsafeMutablePointer<UInt8>?] = (0..<format.channels).map {
            UnsafeMutableRawPointer(buffer + $0 * capacity).assumingMemoryBound(to: UInt8.self)
        }
        let produced = try planes.withUnsafeMutableBufferPointer { pointers in
            try check(swr_convert(resampler, pointers.baseAddress, Int32(capacity), input, count),
                      "converting audio", context: reader.label)
        }
        return (0..<format.channels).map { Array(UnsafeBufferPointer(start: buffer + $0 * capacity, count: Int(produced))) }
    }

    private func flushResampler() throws {
        guard resampler != nil else { return }
        let flushed = try convert(nil, count: 0, capacity: 4096)
        for channel in 0..<format.channels { pending[channel].append(contentsOf: flushed[channel]) }
    }
}
