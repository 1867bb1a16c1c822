import CMoonAVShim
import CMoonFFmpeg
import MoonreelComposition
import MoonreelMedia

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
                throw EngineError("\(reader.label): cannot play audio at \(sourceDuration.seconds / targetDuration.seconds)× speed with varispeed", kind: .unsupported)
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
