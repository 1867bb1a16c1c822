#if canImport(Glibc)
import Glibc
#endif
import MoonreelPlatform
import MoonreelComposition
import MoonreelMedia
import MoonreelRender

/// What an audio track holds, measured once: its tempo and beats, its onsets, its level
/// every 10 ms and its momentary loudness every 100 ms. Plain values (seconds in the
/// track's asset time), so it can be cached and handed to scripts as data.
public struct AudioAnalysis: Sendable, Equatable {
    /// Beats per minute of the beats found (their least-squares spacing); nil when the
    /// audio has no steady pulse.
    public var tempo: Double?
    /// How regular the pulse is, 0…1 (its autocorrelation against the onsets' energy).
    public var tempoConfidence: Double
    /// The tempo found and the next strongest pulses in the music (BPM, up to three), each with
    /// its strength against the strongest's (0…1): where a half or double tempo, or a 3:2 one,
    /// was a close call.
    public var tempoCandidates: [TempoCandidate]

    /// A pulse the music has, and how strong.
    public struct TempoCandidate: Sendable, Equatable {
        /// Beats per minute.
        public var bpm: Double
        /// Its weighted autocorrelation over the strongest's, 0…1.
        public var score: Double
        /// A pulse of `bpm` beats per minute scoring `score`.
        public init(bpm: Double, score: Double) { (self.bpm, self.score) = (bpm, score) }
    }
    /// How far the beats can be trusted, 0…1: the geometric mean of `tempoConfidence` and how
    /// well independent trackers (one on each band's onsets alone) agree with the beats and
    /// with each other (`BeatTracker.confidence(ofCommittee:pulse:)`); 0 without beats.
    public var beatConfidence: Double
    /// Beat times, seconds.
    public var beats: [Double]
    /// The first beat of each bar (every `meter`-th beat, at the phase where the kick lands and
    /// the chords and bass change); empty with fewer than eight beats.
    public var downbeats: [Double]
    /// Beats to a bar, 3 or 4; nil when there are no bars (fewer than eight beats).
    public var meter: Int?
    /// How clearly the meter's accent beats the other meter's, 0…1 (0: as strong).
    public var meterConfidence: Double
    /// Where notes, hits and words start, with their strength (0…1, the onset envelope's
    /// height over its range).
    public var onsets: [Onset]
    /// RMS level of each 10 ms of audio (`levelInterval`), dBFS, the loudest channel
    /// (a full-scale square wave reads 0; digital silence −120).
    public var levels: [Float]
    /// Momentary loudness (EBU R128, 400 ms windows) every 100 ms (`loudnessInterval`),
    /// LUFS; −120 where the window is silent.
    public var loudness: [Double]
    /// Seconds of audio analysed.
    public var duration: Double

    /// Where something starts sounding, and how strongly.
    public struct Onset: Sendable, Equatable {
        /// Seconds, in the track's time.
        public var time: Double
        /// 0…1: the onset envelope's height there over its range.
        public var strength: Double
        /// An onset at `time` seconds of `strength` (0…1).
        public init(time: Double, strength: Double) { (self.time, self.strength) = (time, strength) }
    }

    /// The local tempo's range over the track (BPM): the tempo of each stretch of eight beats
    /// (its median beat interval), from the 5th to the 95th percentile; nil with fewer than
    /// nine beats.
    public var tempoRange: ClosedRange<Double>? {
        BeatTracker.spread(of: BeatTracker.stretchPeriods(ofBeats: beats).map { 60 / $0 })
    }

    /// Whether the pulse keeps one tempo: its local tempo varies by at most 7 %
    /// (`steadyRange`); nil with fewer than nine beats. A rubato or an accelerando is not
    /// steady: a montage cut to its beats will not sit on a grid.
    public var steady: Bool? { tempoRange.map { $0.upperBound <= $0.lowerBound * Self.steadyRange } }

    /// The largest ratio of fastest to slowest local tempo that is still steady. Measured on
    /// bench/make_beat_set.py's 22 tracks: 1.007–1.045 on the steady songs and kits (human
    /// players and 4 ms jitter), 1.18 on a rubato of ±15 % over 50 s (1.11 over 20 s of it)
    /// and 1.20 on a 96→120 accelerando.
    public static let steadyRange = 1.07

    /// The tempos the beats may be at, BPM (a `tempos` range given to `analyze` lies within).
    public static let consideredTempos = BeatTracker.consideredTempos
    /// The tempos the beats may be at when no range is given, BPM (`BeatTracker.defaultTempos`).
    public static let defaultTempos = BeatTracker.defaultTempos

    /// What is wrong with `lower`…`upper` as the tempos `analyze` may choose from (both
    /// finite, lower under upper, both within `consideredTempos`); nil when it will do. Taken as
    /// two numbers: a range the wrong way round cannot be made.
    public static func temposProblem(_ lower: Double, _ upper: Double) -> String? {
        guard lower.isFinite, upper.isFinite, lower < upper, consideredTempos.contains(lower), consideredTempos.contains(upper) else {
            return "must be {min, max} in BPM with min < max, both within \(Int(consideredTempos.lowerBound))…\(Int(consideredTempos.upperBound)), got \(shortNumber(lower))…\(shortNumber(upper))"
        }
        return nil
    }

    /// Levels per second (one every 10 ms).
    public static let levelsPerSecond: Int32 = 100
    /// Seconds between loudness readings.
    public static let loudnessInterval = 0.1
    /// The floor of `levels` and `loudness` (digital silence).
    public static let silenceFloor = -120.0

    /// An analysis with these values (as `analyze` or a cache makes one).
    public init(tempo: Double?, tempoConfidence: Double, tempoCandidates: [TempoCandidate] = [], beatConfidence: Double = 0, beats: [Double], downbeats: [Double],
                meter: Int? = nil, meterConfidence: Double = 0, onsets: [Onset], levels: [Float], loudness: [Double], duration: Double) {
        self.tempo = tempo
        self.tempoConfidence = tempoConfidence
        self.tempoCandidates = tempoCandidates
        self.beatConfidence = beatConfidence
        self.beats = beats
        self.downbeats = downbeats
        self.meter = meter
        self.meterConfidence = meterConfidence
        self.onsets = onsets
        self.levels = levels
        self.loudness = loudness
        self.duration = duration
    }

    /// The stretches quieter than `threshold` dBFS for at least `minimumDuration` seconds,
    /// exact to the 10 ms of the levels, in the track's time.
    public func silences(threshold: Double, minimumDuration: Double) -> [TimeRange] {
        Self.silences(in: levels, threshold: threshold, minimumDuration: minimumDuration)
    }

    /// A silence threshold read from the recording itself, for rooms that are not silent: a
    /// fixed −40 dBFS found no pause in a talk over a −38 dBFS room tone.
    public struct SilenceThreshold: Sendable, Equatable {
        /// The threshold, dBFS: `share` of the way from the floor up to the speech.
        public let level: Double
        /// The room's level in the pauses: the 10th percentile of the levels.
        public let floor: Double
        /// The speech's level: the 90th percentile.
        public let speech: Double

        /// The tenth of the recording that is quietest is taken for its pauses, the tenth that
        /// is loudest for its speech: a talk pauses for more than a tenth of its time, and
        /// a tenth is above the dips between syllables.
        static let percentiles = (floor: 0.1, speech: 0.9)
        /// A third of the way up (in dB) from the floor: over a −38 dBFS room tone with speech
        /// at −15, the threshold is −30, 8 dB over the tone's 10 ms swings (±3 dB) and under
        /// the dips of speech (−33 with the tone); a clean studio recording (floor −75,
        /// speech −20) gets −57, under its breaths.
        static let share = 1.0 / 3
        /// Closer than this (dB), pauses cannot be told from speech (music, a loud room).
        public static let smallestGap = 10.0

        /// The threshold of `levels` (10 ms levels in dBFS), nil when the loud and the quiet
        /// parts are less than `smallestGap` apart. Digital silence (a file's padding) is left
        /// out of the floor, so it does not pull the threshold under the room tone.
        public static func of(_ levels: [Float]) -> SilenceThreshold? {
            let heard = levels.filter { Double($0) > AudioAnalysis.silenceFloor }.sorted()
            guard heard.count >= 10 else { return nil }
            let at = { (share: Double) in (Double(heard[min(Int(Double(heard.count) * share), heard.count - 1)]) * 10).rounded() / 10 }
            let (floor, speech) = (at(percentiles.floor), at(percentiles.speech))
            guard speech - floor >= smallestGap else { return nil }
            return SilenceThreshold(level: ((floor + (speech - floor) * share) * 10).rounded() / 10, floor: floor, speech: speech)
        }
    }

    /// The silences of `levels` (one every 10 ms, from 0 s), as `silences(threshold:minimumDuration:)`.
    public static func silences(in levels: [Float], threshold: Double, minimumDuration: Double) -> [TimeRange] {
        // Whole 10 ms steps (less a hair, so 0.3 s is 30 steps, not 31); never more than there are.
        let steps = (minimumDuration * Double(Self.levelsPerSecond) - 1e-9).rounded(.up)
        let shortest = steps.isNaN ? 1 : Int(min(max(steps, 1), Double(levels.count + 1)))
        var ranges: [TimeRange] = []
        var start: Int?
        for index in 0...levels.count {
            let quiet = index < levels.count && Double(levels[index]) < threshold
            if quiet, start == nil { start = index }
            if !quiet, let first = start {
                if index - first >= shortest {
                    ranges.append(TimeRange(from: .units(Int64(first), of: Self.levelsPerSecond),
                                            to: .units(Int64(index), of: Self.levelsPerSecond)))
                }
                start = nil
            }
        }
        return ranges
    }
}

public extension AudioAnalysis {
    /// Analyses `track` (an audio track) from its first sample to its last: one decoding
    /// pass, mixed down to mono for the onsets, its own channels for levels and loudness.
    /// Analysis runs at 44.1 or 48 kHz (other rates are resampled to 48 kHz).
    /// `tempos` narrows the tempos the beats may be at (BPM, within `consideredTempos`):
    /// a script that knows the music is 80–100 BPM keeps a half or double tempo out. With no
    /// pulse in the range, there is no tempo and no beats.
    static func analyze(_ track: AssetTrack, tempos: ClosedRange<Double>? = nil, cancellation: CancellationFlag? = nil) throws -> AudioAnalysis {
        if let tempos, let problem = temposProblem(tempos.lowerBound, tempos.upperBound) {
            throw EngineError("the tempo range \(problem)", kind: .invalidArgument)
        }
        let allowed = tempos ?? Self.defaultTempos
        guard track.mediaType == .audio else {
            throw EngineError("track \(track.trackID) of \(track.path) is \(track.mediaType.rawValue), not audio", kind: .invalidArgument)
        }
        let composition = Composition()
        let range = TimeRange(start: .zero, duration: track.timeRange.end)
        try composition.addMutableTrack(mediaType: .audio).insertTimeRange(range, of: track, at: .zero)
        let rate: Int32 = track.sampleRate == 44100 ? 44100 : 48000
        guard let plan = try AudioPlan.make(composition: composition, audioMix: nil, range: range, spliceFade: .zero,
                                            outputFormat: { AudioFormat(sampleRate: rate, channels: $0.channels) }) else {
            throw EngineError("track \(track.trackID) of \(track.path) has no audio to analyse", kind: .notFound)
        }
        let renderer = AudioRenderer(plan: plan, outputGain: 1, ceiling: .infinity)
        let meter = try LoudnessMeter(format: plan.format, recordsMomentary: true)
        let envelope = try OnsetEnvelope(sampleRate: Int(rate))
        let levelLength = Int(rate / Self.levelsPerSecond)
        var levels: [Float] = []
        // 100 ms blocks: each gives the loudness meter one momentary reading and ten levels.
        while let block = try renderer.nextBlock(count: Int(rate) / 10) {
            if cancellation?.isCancelled == true { throw EngineError("analysis cancelled", kind: .cancelled) }
            try meter.add(block)
            let count = block.first?.count ?? 0
            var mono = [Float](repeating: 0, count: count)
            for channel in block {
                for i in 0..<count { mono[i] += channel[i] / Float(block.count) }
            }
            envelope.add(mono)
            for start in stride(from: 0, to: count, by: levelLength) {
                let end = min(start + levelLength, count)
                let loudest = block.map { channel -> Float in
                    var sum: Float = 0
                    for i in start..<end { sum += channel[i] * channel[i] }
                    return sum / Float(end - start)
                }.max() ?? 0
                levels.append(loudest > 0 ? max(10 * log10f(loudest), Float(Self.silenceFloor)) : Float(Self.silenceFloor))
            }
        }
        envelope.finish()
        try meter.finish()
        // ebur128 reads a silent window as NaN or −∞.
        let loudness = meter.momentary.map { $0.isFinite ? max($0, Self.silenceFloor) : Self.silenceFloor }

        let bands = envelope.bands()
        let tracker = BeatTracker(envelope: envelope.combined(), body: envelope.body(), treble: bands.last, sampleRate: Int(rate), allowedTempos: allowed)
        let found = tracker.tempo()
        // A pulse no stronger than chance (a steady tone, noise, hiss) gives no tempo and no beats.
        let pulse = found.flatMap { $0.significance >= BeatTracker.minimumPulseSignificance ? $0 : nil }
        let beatFrames = pulse.map(tracker.beats(at:)) ?? []
        let beats = tracker.times(ofBeats: beatFrames)
        let committee = beats.isEmpty ? [beats] : [beats] + bands.map { BeatTracker.independentBeats(in: $0, sampleRate: Int(rate), allowedTempos: allowed) }
        let beatConfidence = BeatTracker.confidence(ofCommittee: committee, pulse: pulse?.confidence ?? 0)
        let bars = BarTracker.bars(ofBeats: beatFrames, bassFlux: envelope.bass(), chroma: envelope.chroma,
                                   middleFlux: bands.count > 2 ? bands[1] : [], trebleFlux: bands.count > 2 ? bands[2] : [])
        return AudioAnalysis(tempo: BeatTracker.tempo(ofBeats: beats), tempoConfidence: found?.confidence ?? 0,
                             tempoCandidates: pulse?.candidates.map { TempoCandidate(bpm: $0.bpm, score: $0.score) } ?? [],
                             beatConfidence: beatConfidence, beats: beats, downbeats: bars?.downbeats.compactMap { beats.indices.contains($0) ? beats[$0] : nil } ?? [],
                             meter: bars?.meter, meterConfidence: bars?.confidence ?? 0,
                             onsets: tracker.onsets().map { Onset(time: $0.time, strength: $0.strength) },
                             levels: levels, loudness: loudness, duration: Double(plan.sampleCount) / Double(rate))
    }
}
