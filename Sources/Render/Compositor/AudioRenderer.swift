#if canImport(Glibc)
import Glibc
#endif
import MoonreelComposition
import MoonreelMedia
import MoonreelPlatform
extension AudioFormat {
    /// The sources' common rate when they share one, else 48 kHz; stereo unless all are mono.
    static func forSources(_ sources: [SegmentSource]) -> AudioFormat {
        let rates = Set(sources.map(\.sampleRate).filter { $0 > 0 })
        let rate = rates.count == 1 ? rates.first.map { Int32(clamping: $0) } ?? 48000 : 48000
        let channels = sources.allSatisfy { $0.channelCount == 1 } && !sources.isEmpty ? 1 : 2
        return AudioFormat(sampleRate: rate, channels: channels)
    }
}

/// The audio of one export, frozen: each track's segments inside the exported range, with
/// times relative to the range start, and how to mix them.
package struct AudioPlan: Sendable {
    struct Segment: Sendable, Equatable {
        let source: SegmentSource
        let sourceRange: TimeRange
        /// Relative to the start of the export.
        let targetRange: TimeRange
        /// Whether this end is a splice (a cut to other media, to silence or to the edge of
        /// the export) and so gets the short anti-click fade.
        let fadesIn: Bool
        let fadesOut: Bool
    }
    struct Track: Sendable {
        let segments: [Segment]
        /// In composition time.
        let volume: PropertyTimeline<Double>
        let timePitch: AudioTimePitchAlgorithm
        let ducking: Ducking?
        /// Indices in `tracks` of the tracks it ducks under (those with media).
        let duckingKeys: [Int]
    }
    package let format: AudioFormat
    /// Composition time of the first output sample.
    package let start: MediaTime
    package let sampleCount: Int64
    let tracks: [Track]
    /// Length of the fade applied at each end of a segment that is a splice, so hard cuts
    /// don't click (0 disables).
    let spliceFade: MediaTime
    /// The loudness the mix is brought to (measured first), or nil to leave it as mixed.
    package let loudness: LoudnessNormalization?
    /// The gain `loudness` settled on, when it was measured before rendering.
    package var settledLoudness: LoudnessNormalization.Settled?
    /// The peak the limiter keeps the mix under: room for a lossy encoder's overshoot
    /// (`PeakLimiter.defaultCeiling`), or full scale for lossless sound, so a master that
    /// peaks at 0 dBFS comes back as it was.
    package var ceiling = PeakLimiter.defaultCeiling

    /// Tracks mixed apart before summing: the ducked ones and those they listen to.
    var sidechainedTracks: Set<Int> {
        Set(tracks.indices.filter { tracks[$0].ducking != nil }).union(tracks.flatMap(\.duckingKeys))
    }
}

extension AudioPlan {
    /// 2 ms: enough to hide a click where two sounds are spliced, too short to hear as a fade.
    package static let defaultSpliceFade = MediaTime(value: 2, timescale: 1000)

    /// Freezes the composition's audio tracks and the mix for one export (nil: no audio).
    /// `outputFormat` turns the sources' common format into the one written (a codec's rates, the settings' channels).
    package static func make(composition: Composition, audioMix: AudioMix?, range: TimeRange, spliceFade: MediaTime,
                             loudness: LoudnessNormalization? = nil, outputFormat: (AudioFormat) -> AudioFormat = { $0 }) throws -> AudioPlan? {
        let tracks = composition.tracks(withMediaType: .audio).filter { $0.segments.contains { !$0.isEmpty } }
        guard !tracks.isEmpty else { return nil }
        let resolved = { (p: AudioMixInputParameters) in composition.resolvedTrackID(p.trackID, source: p.source, mediaType: .audio) }
        for parameters in audioMix?.inputParameters ?? [] where composition.track(withID: resolved(parameters))?.mediaType != .audio {
            throw EngineError("audioMix has input parameters for track \(parameters.trackID), which is not an audio track of the composition")
        }
        let sources = tracks.flatMap { $0.segments.compactMap(\.source) }
        let format = outputFormat(AudioFormat.forSources(sources))
        let planTracks = try tracks.map { track in
            let parameters = audioMix?.inputParameters.last { resolved($0) == track.trackID }
            let keys = try parameters?.ducking.map { try duckingKeys($0, of: track, among: tracks, in: composition) } ?? []
            return AudioPlan.Track(segments: segments(of: track.segments, in: range),
                                   volume: parameters?.volume ?? PropertyTimeline(defaultValue: track.preferredVolume),
                                   timePitch: parameters?.audioTimePitchAlgorithm ?? .spectral,
                                   ducking: keys.isEmpty ? nil : parameters?.ducking, duckingKeys: keys)
        }
        return AudioPlan(format: format, start: range.start, sampleCount: format.sample(at: range.duration),
                         tracks: planTracks, spliceFade: spliceFade, loudness: loudness)
    }

    /// The same mix over `range` (composition time, inside the plan's): as an export of
    /// that range would render it, with splice fades at its ends.
    func clipped(to range: TimeRange) -> AudioPlan {
        let relative = TimeRange(start: range.start - start, duration: range.duration)
        let clippedTracks = tracks.map { track in
            let whole = track.segments.map { TrackSegment(source: $0.source, sourceRange: $0.sourceRange, targetRange: $0.targetRange) }
            return Track(segments: AudioPlan.segments(of: whole, in: relative), volume: track.volume, timePitch: track.timePitch,
                         ducking: track.ducking, duckingKeys: track.duckingKeys)
        }
        return AudioPlan(format: format, start: range.start, sampleCount: format.sample(at: range.duration), tracks: clippedTracks,
                         spliceFade: spliceFade, loudness: loudness, settledLoudness: settledLoudness, ceiling: ceiling)
    }

    /// Where in `mixed` (the tracks with media) the tracks that `track` ducks under are;
    /// a named track that is not an audio track of the composition is an error.
    private static func duckingKeys(_ ducking: Ducking, of track: CompositionTrack, among mixed: [CompositionTrack],
                                    in composition: Composition) throws -> [Int] {
        try ducking.under.compactMap { key in
            let id = composition.resolvedTrackID(key.trackID, source: key.source, mediaType: .audio)
            guard composition.track(withID: id)?.mediaType == .audio else {
                throw EngineError("audioMix: track \(track.trackID) ducks under track \(key.trackID), which is not an audio track of the composition")
            }
            guard id != track.trackID else { throw EngineError("audioMix: track \(track.trackID) cannot duck under itself") }
            return mixed.firstIndex { $0.trackID == id }
        }
    }

    /// The parts of `segments` inside `range` (split exactly at its ends), relative to its
    /// start, each end marked as a splice unless the neighbour simply plays on.
    static func segments(of segments: [TrackSegment], in range: TimeRange) -> [Segment] {
        let clipped: [TrackSegment] = segments.compactMap { segment in
            guard segment.source != nil, let inside = segment.targetRange.intersection(range) else { return nil }
            // TrackSegment.split maps times in the cut time's own timescale: give it a fine
            // one so a cut at a whole second of a scaled segment isn't rounded to a second.
            let fine = { (t: MediaTime) in t.converted(to: MediaTime.defaultTimescale) }
            var part = segment
            if inside.start > segment.targetRange.start { part = part.split(at: fine(inside.start)).1 }
            if inside.end < part.targetRange.end { part = part.split(at: fine(inside.end)).0 }
            return part.shifted(by: -range.start)
        }
        return clipped.enumerated().compactMap { index, segment in
            guard let source = segment.source else { return nil }
            let previous = index > 0 ? clipped[index - 1] : nil
            let next = index + 1 < clipped.count ? clipped[index + 1] : nil
            return Segment(source: source, sourceRange: segment.sourceRange, targetRange: segment.targetRange,
                           fadesIn: !(previous.map { playsOn($0, into: segment) } ?? false),
                           fadesOut: !(next.map { playsOn(segment, into: $0) } ?? false))
        }
    }

    /// True when `next` continues `previous` with no cut: the same stream, from where it
    /// left off, both at normal speed (scaled audio is stretched per segment, so its ends
    /// don't meet sample for sample).
    static func playsOn(_ previous: TrackSegment, into next: TrackSegment) -> Bool {
        guard let a = previous.source, let b = next.source else { return false }
        return a.path == b.path && a.streamIndex == b.streamIndex
            && previous.targetRange.end == next.targetRange.start
            && previous.sourceRange.end == next.sourceRange.start
            && previous.sourceRange.duration == previous.targetRange.duration
            && next.sourceRange.duration == next.targetRange.duration
    }
}

/// Produces the mixed output audio block by block: each track's segments are decoded,
/// resampled to the output format, placed at exact sample positions, given their volume
/// (and ducking), summed, given the loudness gain and passed through a peak limiter.
/// Owned by the audio thread of one export.
package final class AudioRenderer {
    let plan: AudioPlan
    private var readers: [Int: (segmentIndex: Int, reader: AudioSegmentReader)] = [:]
    private var position: Int64 = 0
    /// The mix from `position` on, mixed ahead of what was handed out so the limiter sees
    /// what comes (`PeakLimiter.lookahead`), not yet limited.
    private var ahead: [[Float]]
    private var scratch: [[Float]]
    private var limiter: PeakLimiter
    /// Gain applied to the sum before the limiter (loudness normalisation), linear.
    private let outputGain: Float
    private let sidechained: Set<Int>
    private var duckers: [Int: Ducker]

    /// Each segment's first and end sample, counted once from its exact times.
    private let segmentSamples: [[(start: Int64, end: Int64)]]
    /// Volume is evaluated every this many samples and interpolated in between: exact for
    /// linear ramps, within a hair for eased ones, and no rational arithmetic per sample.
    private let gainStep = 32

    /// The mix as it is, or (with `loudness` in the plan) brought to its target: see
    /// `LoudnessNormalization.gain`, which reads the audio first.
    package static func make(plan: AudioPlan, cancellation: CancellationFlag? = nil) throws -> AudioRenderer {
        guard let target = plan.loudness else { return AudioRenderer(plan: plan, ceiling: plan.ceiling) }
        let settled = try plan.settledLoudness ?? target.gain(for: plan, cancellation: cancellation)
        return AudioRenderer(plan: plan, outputGain: settled.gain, ceiling: settled.ceiling)
    }

    package init(plan: AudioPlan, outputGain: Float = 1, ceiling: Float = PeakLimiter.defaultCeiling) {
        self.plan = plan
        self.outputGain = outputGain
        segmentSamples = plan.tracks.map { track in
            track.segments.map { (plan.format.sample(at: $0.targetRange.start), plan.format.sample(at: $0.targetRange.end)) }
        }
        scratch = Array(repeating: [], count: plan.format.channels)
        ahead = Array(repeating: [], count: plan.format.channels)
        limiter = PeakLimiter(ceiling: ceiling, sampleRate: plan.format.sampleRate)
        sidechained = plan.sidechainedTracks
        duckers = [:]
        for (index, track) in plan.tracks.enumerated() {
            if let ducking = track.ducking { duckers[index] = Ducker(ducking, sampleRate: plan.format.sampleRate) }
        }
    }

    var isFinished: Bool { position >= plan.sampleCount }

    /// A `soundLimited` warning when the mix went over full scale by more than 1 dB, so the
    /// limiter turned it down past its ceiling's headroom: the tracks' volumes added up past
    /// full scale, and what plays is quieter than asked. Nil with a loudness target, whose
    /// ceiling the limiter is there to keep.
    package func limitingDiagnostic() -> Diagnostic? {
        guard plan.loudness == nil, limiter.deepestReduction > limiter.heardReduction, let first = limiter.firstHeard else { return nil }
        let rate = plan.format.sampleRate
        let over = -20 * log10(Double(1 - limiter.deepestReduction)) + 20 * log10(Double(min(limiter.ceiling, 1)))
        let decibels = shortNumber((over * 10).rounded() / 10)
        let start = plan.start + MediaTime(value: first, timescale: rate)
        return Diagnostic(.soundLimited, .warning,
                          "the mix goes over full scale by up to \(decibels) dB, so the limiter turned it down, for \(shortSeconds(MediaTime(value: limiter.heardSamples, timescale: rate))) s in all from \(shortSeconds(start)) s: the sound plays quieter than its volumes ask",
                          remedy: "lower the volumes (setVolume, setVolumeRamp) so the tracks add up under full scale, or give a loudness target", time: start.seconds)
    }

    /// The next block of up to `count` samples per channel, or nil at the end.
    package func nextBlock(count: Int) throws -> [[Float]]? {
        let length = Int(min(Int64(count), plan.sampleCount - position))
        guard length > 0 else { return nil }
        let mixed = position + Int64(ahead[0].count)
        let wanted = min(plan.sampleCount, position + Int64(length + limiter.lookahead - 1))
        if wanted > mixed {
            let more = try mix(from: mixed, count: Int(wanted - mixed))
            for channel in ahead.indices { ahead[channel] += more[channel] }
        }
        var block = ahead.map { Array($0.prefix(length)) }
        let upcoming = ahead.map { Array($0.dropFirst(length)) }
        limiter.process(&block, upcoming: upcoming)
        ahead = upcoming
        position += Int64(length)
        return block
    }

    /// The mix of every track over `count` samples from `start`, before the limiter; called
    /// in order, with no gap (duckers follow the sound).
    private func mix(from start: Int64, count length: Int) throws -> [[Float]] {
        let silence = Array(repeating: [Float](repeating: 0, count: length), count: plan.format.channels)
        var mix = silence
        // Ducked tracks and their keys are mixed apart first, so each key is heard whole
        // before the tracks it lowers are added.
        var apart: [Int: [[Float]]] = [:]
        for (trackIndex, track) in plan.tracks.enumerated() {
            if sidechained.contains(trackIndex) {
                var own = silence
                try addTrack(trackIndex, track, into: &own, from: start, length: length)
                apart[trackIndex] = own
            } else {
                try addTrack(trackIndex, track, into: &mix, from: start, length: length)
            }
        }
        for trackIndex in apart.keys.sorted() {  // a fixed order keeps the sum bit-exact from run to run
            guard var samples = apart[trackIndex] else { continue }
            if var ducker = duckers[trackIndex] {
                var key = silence
                for keyIndex in plan.tracks[trackIndex].duckingKeys { key.add(apart[keyIndex] ?? silence) }
                let gains = ducker.gains(key: key, count: length)
                duckers[trackIndex] = ducker
                for channel in samples.indices { for i in 0..<length { samples[channel][i] *= gains[i] } }
            }
            mix.add(samples)
        }
        if outputGain != 1 {
            for channel in mix.indices { for i in 0..<length { mix[channel][i] *= outputGain } }
        }
        return mix
    }

    private func addTrack(_ trackIndex: Int, _ track: AudioPlan.Track, into mix: inout [[Float]], from blockStart: Int64, length: Int) throws {
        let blockEnd = blockStart + Int64(length)
        for (segmentIndex, (segmentStart, segmentEnd)) in segmentSamples[trackIndex].enumerated() {
            let from = max(segmentStart, blockStart), to = min(segmentEnd, blockEnd)
            guard from < to else { continue }
            let reader = try reader(for: trackIndex, track, segmentIndex, length: segmentEnd - segmentStart)
            let count = Int(to - from)
            for channel in 0..<plan.format.channels { scratch[channel].removeAll(keepingCapacity: true) }
            try reader.read(from: from - segmentStart, count: count, into: &scratch)
            let offset = Int(from - blockStart)
            let volume = track.volume
            let gainAt = { (sample: Int64) in
                Float(volume.value(at: self.plan.start + MediaTime(value: sample, timescale: self.plan.format.sampleRate)))
            }
            let steadyGain = volume.steadyValue(over: TimeRange(
                from: plan.start + MediaTime(value: from, timescale: plan.format.sampleRate),
                to: plan.start + MediaTime(value: to, timescale: plan.format.sampleRate))).map(Float.init)
            var stepStart = 0
            while stepStart < count {
                let stepEnd = min(stepStart + gainStep, count)
                let first = steadyGain ?? gainAt(from + Int64(stepStart))
                let last = steadyGain ?? gainAt(from + Int64(stepEnd))
                let slope = (last - first) / Float(stepEnd - stepStart)
                for channel in 0..<plan.format.channels {
                    for i in stepStart..<stepEnd {
                        mix[channel][offset + i] += scratch[channel][i] * (first + slope * Float(i - stepStart))
                    }
                }
                stepStart = stepEnd
            }
        }
    }

    private func reader(for trackIndex: Int, _ track: AudioPlan.Track, _ segmentIndex: Int, length: Int64) throws -> AudioSegmentReader {
        if let open = readers[trackIndex], open.segmentIndex == segmentIndex { return open.reader }
        let reader = try AudioSegmentReader(segment: track.segments[segmentIndex], format: plan.format, length: length,
                                            timePitch: track.timePitch, fadeSamples: Int(plan.format.sample(at: plan.spliceFade)))
        readers[trackIndex] = (segmentIndex, reader)
        return reader
    }
}

extension Array where Element == [Float] {
    /// Adds `other` (same channels and length) sample by sample.
    mutating func add(_ other: [[Float]]) {
        for channel in indices { for i in self[channel].indices { self[channel][i] += other[channel][i] } }
    }
}

extension PropertyTimeline {
    /// The value throughout `range` when no set or moving ramp falls inside it, else nil
    /// (lets the mixer skip evaluating the timeline per sample).
    func steadyValue(over range: TimeRange) -> Value? {
        let changesInside = changes.contains { change in
            let changesAtStart = change.start > range.start && change.start < range.end
            let rampsInside = change.from != change.to && change.start < range.end && change.start + change.duration > range.start
            return changesAtStart || rampsInside
        }
        return changesInside ? nil : value(at: range.start)
    }
}
