#if canImport(Glibc)
import Glibc
#endif

/// Tempo, beats and onsets from an onset envelope (the bars are `BarTracker`'s), by documented methods:
/// the tempo is the autocorrelation peak of the envelope weighted by a log-normal prior
/// around 120 BPM, its metrical level then checked against the body's pulse (twice or 3/2 the
/// tempo) and the treble's backbeat (half the tempo); the beats are the best path of beats at
/// that tempo through the envelope (dynamic programming, D. P. W. Ellis, "Beat Tracking by Dynamic Programming", 2007);
/// the onsets are the envelope's peaks over its local average (librosa's peak picking).
struct BeatTracker {
    /// Tempos a script may ask for, BPM (`AudioAnalysis.consideredTempos`).
    static let consideredTempos = 40.0...240.0
    /// Tempos considered when the script names none: up to 200 BPM. Above it, a tracker has
    /// found the subdivision, not the beat: on the evaluation behind issue 36 every result
    /// above 200 was twice the annotated tempo, and on bench/make_beat_set.py's 83 tracks
    /// (both sets) no annotated beat is faster than 190 while the three results above 200
    /// (rock at 100 and a breakbeat at 102 read as 200 and 204, four-on-the-floor at 118 as
    /// 236, all kits under music) were all doubles. A script that wants faster beats asks
    /// with `tempoRange`.
    static let defaultTempos = 40.0...200.0
    /// Centre and width (octaves) of the prior that settles between a tempo and its half or double.
    static let preferredTempo = 120.0
    static let priorWidth = 1.0
    /// How strictly beats keep the tempo against the envelope's peaks (Ellis's α).
    static let tightness = 100.0
    /// When the body's pulse (bass and middle bands) at twice the tempo is this strong against
    /// its pulse at the chosen one, the faster tempo is what a listener taps. Measured on
    /// bench/make_beat_set.py's 22 tracks: 0.91–1.07 where the faster level is the annotated
    /// one (drum and bass at 174, metal at 180), 0.565 for a 95 BPM song first read at 47.5;
    /// 0.17–0.49 where hats alone tick between the beats (rock at 95, a kick at 120 under
    /// eighth-note hats, an accelerando, a shuffle at 110, four-on-the-floor under music).
    static let doubleTempoStrength = 0.53
    /// When the treble (snare crack, hats, cymbals) pulses this much more strongly every other
    /// beat of the slower level than every beat of it (autocorrelation over the band's energy),
    /// the slower level is the beat: a backbeat, the snare on 2 and 4, marks the beat a
    /// drummer taps (Goto, "An Audio-based Real-time Beat Tracking System for Music With or
    /// Without Drum-sounds", 2001, reads the beat level from the snare on 2 and 4). Measured on
    /// bench/make_beat_set.py's 22 tracks: 0.78 and 0.83 for the song "Feelings" read at 190
    /// (annotated 95: a snare on 2 and 4 over a body that pulses at 190), −0.13 to 0.27 on the
    /// 20 others; 0.5 lies midway.
    static let backbeatStrength = 0.5
    /// How far the peak of the flux lies before the sound's true start: a sound rises most
    /// in the spectra whose windows it has just entered. Measured on clicks and drum hits at
    /// 44.1 and 48 kHz: a quarter window less half a hop (≈ 3 ms).
    static let latencySamples = OnsetEnvelope.windowLength / 4 - OnsetEnvelope.hop / 2

    let envelope: [Float]
    let sampleRate: Int
    /// The tempos this tracker may choose, BPM (`defaultTempos` unless a script gives a range).
    let allowedTempos: ClosedRange<Double>
    /// The envelope as doubles, and minus its mean over its standard deviation (each made once).
    private let values: [Double]
    private let standardised: [Double]
    /// The bass and middle bands' envelope, standardised: what the metrical level is read from.
    private let body: [Double]
    /// The treble band's envelope, standardised, smoothed as for the tempo: where a backbeat is heard.
    private let treble: [Double]?

    init(envelope: [Float], body: [Float]? = nil, treble: [Float]? = nil, sampleRate: Int, allowedTempos: ClosedRange<Double> = Self.defaultTempos) {
        self.envelope = envelope
        self.sampleRate = sampleRate
        self.allowedTempos = allowedTempos
        values = envelope.map(Double.init)
        standardised = Self.standardised(values)
        self.body = body.map { Self.standardised($0.map(Double.init)) } ?? standardised
        self.treble = treble.map { Self.smoothed(Self.standardised($0.map(Double.init)), deviation: 1.5) }
    }

    /// `values` minus their mean over their standard deviation (zeros when they are all alike).
    static func standardised(_ values: [Double]) -> [Double] {
        let mean = values.reduce(0, +) / Double(max(values.count, 1))
        let deviation = (values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(max(values.count, 1))).squareRoot()
        return values.map { deviation > 0 ? ($0 - mean) / deviation : 0 }
    }

    /// Envelope values per second.
    private var frameRate: Double { Double(sampleRate) / Double(OnsetEnvelope.hop) }

    private func seconds(_ frame: Double) -> Double {
        (frame * Double(OnsetEnvelope.hop) + Double(Self.latencySamples)) / Double(sampleRate)
    }

    struct Tempo {
        /// Beat period in envelope frames.
        let period: Double
        /// How regular the pulse is: its autocorrelation against the envelope's energy (0…1).
        let confidence: Double
        /// The tempo chosen and the next strongest pulses (BPM), each with its prior-weighted
        /// autocorrelation over the strongest's.
        let candidates: [(bpm: Double, score: Double)]
        /// How far the strongest pulse in the tempos considered (whatever its level: the highest
        /// autocorrelation peak over the envelope's energy) stands above chance, in standard
        /// errors of the autocorrelation of a random envelope as long (`significance(of:frames:)`).
        let significance: Double
    }

    /// A pulse less significant than this is no pulse: `analyze` gives no tempo and no beats.
    /// Four standard errors of a random envelope's autocorrelation. Measured (bench/RESULTS.md,
    /// 2026-11-29, tenth session, issue 36 §3) on bench/make_no_pulse_set.sh's sounds: steady sine tones
    /// 0.04–0.19 (a 4 s AAC tone at 440 Hz 0.11: it got 180 BPM and 13 beats before), white,
    /// pink and brown noise and hiss at −60 dBFS 1.6–2.4, real read speech 2.7 and spoken
    /// digits 3.9 (pocketsphinx's LibriVox and digit recordings); against every track with beat F ≥ 0.8
    /// of `make_beat_set.py --hard` (38 of 61, the base set's 22 among them) at 7.8 or more (a
    /// ritardando; the next 12.4) and the 6 CI excerpts at 8.2 or more (the rubato): 1.7 times
    /// the loudest noise, 1.9 times under the weakest pulse tracked right. A log sweep (4.3), a
    /// steady chord (5.7) and a linear sweep (6.2) stay above.
    static let minimumPulseSignificance = 4.0

    /// How many standard errors `strongest` (an autocorrelation over the energy) is of a random
    /// envelope's autocorrelation over `frames` frames: its standard error is 1/√n, n the
    /// independent values, which the 1.5-frame Gaussian smoothing makes one per 2√π·1.5 ≈ 5.3
    /// frames (the smoothing's equivalent width).
    static func significance(of strongest: Double, frames: Int) -> Double {
        let independent = Double(frames) / (2 * Double.pi.squareRoot() * 1.5)
        return max(strongest, 0) * independent.squareRoot()
    }

    /// How many tempos `Tempo.candidates` lists.
    static let candidateCount = 3

    /// The tempo (within `allowedTempos`), or nil when the audio is too short or has no pulse there.
    func tempo() -> Tempo? {
        // Smoothed (a Gaussian of 1.5 frames, ≈ 8 ms), so peaks one or two frames wide still
        // meet when the period is a fractional number of frames.
        let signal = Self.smoothed(standardised, deviation: 1.5)
        let shortest = Int((frameRate * 60 / allowedTempos.upperBound).rounded(.down))
        let longest = Int((frameRate * 60 / allowedTempos.lowerBound).rounded(.up))
        guard signal.count > 2 * longest, shortest >= 2 else { return nil }
        var correlation = [Double](repeating: 0, count: longest + 2)
        let energy = signal.reduce(0) { $0 + $1 * $1 } / Double(signal.count)
        signal.withUnsafeBufferPointer { s in
            for lag in (shortest - 1)...(longest + 1) {
                var sum = 0.0
                for i in 0..<(s.count - lag) { sum += s[i] * s[i + lag] }
                correlation[lag] = sum / Double(s.count - lag)
            }
        }
        let prior = { (period: Double) -> Double in
            let octaves = log2(60 * frameRate / period / Self.preferredTempo) / Self.priorWidth
            return exp(-0.5 * octaves * octaves)
        }
        let isPeak = { (lag: Int) -> Bool in
            correlation[lag] > 0 && correlation[lag] > correlation[lag - 1] && correlation[lag] >= correlation[lag + 1]
        }
        let weighted = { (lag: Int) -> Double in correlation[lag] * prior(Double(lag)) }
        let bpm = { (lag: Double) in 60 * frameRate / lag }
        // A peak's tempo is its refined period's: a narrow tempo range may fall between two
        // whole lags (0.9 BPM apart near 100 BPM, 5 near 240).
        let peaks = (shortest...longest).filter { isPeak($0) && allowedTempos.contains(bpm(refinedPeak(correlation, at: $0))) }
            .sorted { weighted($0) > weighted($1) }
        guard let best = peaks.first else { return nil }
        var period = refinedPeak(correlation, at: best)
        var strength = correlation[best]
        let bodySignal = Self.smoothed(body, deviation: 1.5)
        let bodyPulse = { (lag: Double) -> Double in Self.pulse(bodySignal, near: lag) }
        // Three beats for two: a syncopation in 3 + 3 + 2 pulses every beat and a half, and the
        // prior may prefer that pulse (127 BPM) to the beat (190, a metal excerpt: the body's
        // pulse 0.61 of its energy at 190, 0.45 at 127). The two levels are not nested, so the
        // body's pulse decides at equal strength, without the double level's threshold. Only
        // towards the faster: the slower of two is the syncopation's own span (tried both ways,
        // the song "Feelings" went from 95 to 63, where its body pulses a little more).
        let faster = period * 2 / 3
        let fasterLag = Int(faster.rounded())
        if fasterLag - 1 >= shortest, allowedTempos.contains(bpm(faster)),
           let fasterPeak = ((fasterLag - 1)...(fasterLag + 1)).max(by: { correlation[$0] < correlation[$1] }),
           isPeak(fasterPeak), bodyPulse(faster) > bodyPulse(period) {
            period = refinedPeak(correlation, at: fasterPeak)
            strength = correlation[fasterPeak]
        }
        // The faster level when the kicks, snares and chords keep it too: every beat has one
        // (174 BPM drum and bass, metal at 180), not only hats between them (rock at 95 with
        // eighth-note hats, a kick at 120 under eighth hats: the full envelope's pulse at twice
        // the tempo is as strong there, and the cuts fell on the hats).
        let half = Int((period / 2).rounded())
        if half - 1 >= shortest - 1, half + 1 <= longest + 1, allowedTempos.contains(bpm(period / 2)), bodyPulse(period) > 0,
           bodyPulse(period / 2) >= Self.doubleTempoStrength * bodyPulse(period),
           let halfPeak = ((half - 1)...(half + 1)).max(by: { correlation[$0] < correlation[$1] }) {
            period = refinedPeak(correlation, at: halfPeak)
            strength = max(correlation[halfPeak], 0)
        }
        // The slower level when its beats carry a backbeat: the treble pulses every other beat
        // of it, hardly every beat (a snare on 2 and 4 at 95 BPM over guitars and bass at 190).
        let slower = 2 * period
        let slowerLag = Int(slower.rounded())
        // (A silent treble band, all zeros, has no backbeat.)
        if let treble, Self.energy(treble) > 0, slowerLag + 1 <= longest + 1, allowedTempos.contains(bpm(slower)),
           Self.pulse(treble, near: 2 * slower) - Self.pulse(treble, near: slower) >= Self.backbeatStrength * Self.energy(treble),
           let slowerPeak = ((slowerLag - 1)...(slowerLag + 1)).max(by: { correlation[$0] < correlation[$1] }) {
            period = refinedPeak(correlation, at: slowerPeak)
            strength = max(correlation[slowerPeak], 0)
        }
        // The chosen tempo first, then the strongest other pulses more than 4 % away from it and each other.
        var candidates = [(bpm: bpm(period), score: 1.0)]
        for peak in peaks where candidates.count < Self.candidateCount {
            let tempo = bpm(refinedPeak(correlation, at: peak))
            guard candidates.allSatisfy({ abs($0.bpm / tempo - 1) > 0.04 }) else { continue }
            candidates.append((tempo, min(max(weighted(peak) / weighted(best), 0), 1)))
        }
        let strongest = energy > 0 ? min(max((peaks.map { correlation[$0] }.max() ?? 0) / energy, 0), 1) : 0
        return Tempo(period: period, confidence: energy > 0 ? min(max(strength / energy, 0), 1) : 0, candidates: candidates,
                     significance: Self.significance(of: strongest, frames: signal.count))
    }

    /// The strongest autocorrelation of `signal` within a frame of `lag`.
    private static func pulse(_ signal: [Double], near lag: Double) -> Double {
        let center = Int(lag.rounded())
        return ((center - 1)...(center + 1)).map { autocorrelation(signal, lag: $0) }.max() ?? 0
    }

    /// The mean square of `signal`.
    private static func energy(_ signal: [Double]) -> Double {
        signal.reduce(0) { $0 + $1 * $1 } / Double(max(signal.count, 1))
    }

    /// The mean product of `signal` with itself `lag` frames later.
    private static func autocorrelation(_ signal: [Double], lag: Int) -> Double {
        guard lag > 0, lag < signal.count else { return 0 }
        var sum = 0.0
        signal.withUnsafeBufferPointer { s in
            for i in 0..<(s.count - lag) { sum += s[i] * s[i + lag] }
        }
        return sum / Double(signal.count - lag)
    }

    private static func smoothed(_ values: [Double], deviation: Double) -> [Double] {
        let reach = Int((3 * deviation).rounded(.up))
        let kernel = (-reach...reach).map { exp(-0.5 * Double($0 * $0) / (deviation * deviation)) }
        let total = kernel.reduce(0, +)
        return values.indices.map { i in
            var sum = 0.0
            for (k, weight) in kernel.enumerated() {
                let j = i + k - reach
                if j >= 0, j < values.count { sum += values[j] * weight }
            }
            return sum / total
        }
    }

    /// Beat frames (fractional) at `tempo`: the path through the envelope that best combines
    /// strong onsets with steady spacing, without the leading and trailing beats that fall
    /// where nothing sounds. Where the tempo moves (a rubato, an accelerando: that path's
    /// local tempo varies by more than `AudioAnalysis.steadyRange`), the path is found again
    /// with the envelope's own period at each moment (`localPeriods`): one period for all put
    /// beats between the hits where a rubato ran fastest and slowest (beat F 0.78 on the
    /// ±15 % rubato of bench/make_beat_set.py; 1.00 so).
    func beats(at tempo: Tempo) -> [Double] {
        guard !standardised.isEmpty, tempo.period >= 2 else { return [] }
        let steady = beatPath(period: tempo.period, local: nil)
        guard tempoMoves(along: steady), let local = localPeriods(around: tempo.period) else { return steady }
        return beatPath(period: tempo.period, local: local)
    }

    /// The best beat path at `period` frames, or at `local[t]` frames at each frame `t` when given.
    private func beatPath(period: Double, local: [Double]?) -> [Double] {
        let signal = standardised
        let count = signal.count
        let (shortest, longest) = (local?.min() ?? period, local?.max() ?? period)
        var score = [Double](repeating: 0, count: count)
        var backlink = [Int](repeating: -1, count: count)
        let nearest = max(1, Int((shortest / 2).rounded())), farthest = Int((2 * longest).rounded())
        // What a gap of d frames costs for straying from the period: α · log(d / period)².
        let logGaps = (0...farthest).map { log(Double(max($0, 1))) }
        let logPeriods = local?.map { log($0) }
        for t in 0..<count {
            var bestScore = -Double.infinity, bestFrame = -1
            let logPeriod = logPeriods?[t] ?? log(period)
            for previous in max(0, t - farthest)..<max(0, t - nearest + 1) {
                let spacing = logGaps[t - previous] - logPeriod
                let candidate = score[previous] - Self.tightness * spacing * spacing
                if candidate > bestScore { (bestScore, bestFrame) = (candidate, previous) }
            }
            score[t] = signal[t] + (bestFrame >= 0 ? max(bestScore, 0) : 0)
            backlink[t] = bestScore > 0 ? bestFrame : -1
        }
        // The path ends on the best-scoring frame within the last beat period.
        let tail = max(0, count - Int((local?.last ?? period).rounded(.up)))..<count
        guard var frame = tail.max(by: { score[$0] < score[$1] }) else { return [] }
        var path: [Int] = []
        while frame >= 0 {
            path.append(frame)
            frame = backlink[frame]
        }
        path.reverse()
        // Trim beats at either end where the envelope is weak (silence before or after the music).
        let onBeats = path.map { Double(envelope[$0]) }
        let threshold = 0.5 * (onBeats.reduce(0) { $0 + $1 * $1 } / Double(max(onBeats.count, 1))).squareRoot()
        guard let first = onBeats.firstIndex(where: { $0 >= threshold }),
              let last = onBeats.lastIndex(where: { $0 >= threshold }) else { return [] }
        return path[first...last].map { refinedPeak(values, near: $0) }
    }

    /// Whether the local tempo along `beats` (frames) varies by more than
    /// `AudioAnalysis.steadyRange`, as `AudioAnalysis.steady` judges it.
    private func tempoMoves(along beats: [Double]) -> Bool {
        guard let range = Self.spread(of: Self.stretchPeriods(ofBeats: beats)), range.lowerBound > 0 else { return false }
        return range.upperBound / range.lowerBound > AudioAnalysis.steadyRange
    }

    /// The beat period at each envelope frame: the strongest pulse within `localReach` of
    /// `period` in each `localWindow` seconds of the envelope, every `localStep` seconds,
    /// smoothed (a median, then a mean, of three), linear between the windows' middles and
    /// held at the ends; nil when the envelope is shorter than two windows. Read from the
    /// envelope, not from beats found at one period: those slip off the hits exactly where the
    /// tempo strays, and their intervals then mislead.
    private func localPeriods(around period: Double) -> [Double]? {
        let signal = Self.smoothed(standardised, deviation: 1.5)
        let window = Int((Self.localWindow * frameRate).rounded()), step = Int((Self.localStep * frameRate).rounded())
        // Within the reach and within the tempos a script allowed (`tempoRange`).
        let shortestLag = max(2, Int((period / Self.localReach).rounded(.down)), Int((frameRate * 60 / allowedTempos.upperBound).rounded(.up)))
        let longestLag = min(Int((period * Self.localReach).rounded(.up)), Int((frameRate * 60 / allowedTempos.lowerBound).rounded(.down)))
        let blocksPerWindow = window / max(step, 1)
        guard step > 0, blocksPerWindow >= 2, longestLag > shortestLag, window > 2 * longestLag + 2, signal.count >= window + step else { return nil }
        // Each step's products at every lag, once: a window's correlation is the sum of its
        // steps' (the windows overlap twelvefold).
        let lags = (shortestLag - 1)...(longestLag + 1)
        let blocks = signal.count / step
        var products = [[Double]](repeating: [Double](repeating: 0, count: longestLag + 2), count: blocks)
        signal.withUnsafeBufferPointer { s in
            for block in 0..<blocks {
                for lag in lags {
                    let (start, end) = (block * step, min((block + 1) * step, s.count - lag))
                    guard start < end else { continue }
                    var sum = 0.0
                    for i in start..<end { sum += s[i] * s[i + lag] }
                    products[block][lag] = sum
                }
            }
        }
        var middles: [Double] = [], found: [Double] = []
        var correlation = [Double](repeating: 0, count: longestLag + 2)
        for first in 0...(blocks - blocksPerWindow) {
            for lag in lags {
                correlation[lag] = products[first..<(first + blocksPerWindow)].reduce(0) { $0 + $1[lag] }
            }
            guard let best = (shortestLag...longestLag).max(by: { correlation[$0] < correlation[$1] }),
                  correlation[best] > 0 else { continue }
            middles.append(Double(first * step + blocksPerWindow * step / 2))
            found.append(refinedPeak(correlation, at: best))
        }
        guard found.count >= 3 else { return nil }
        // One window misled by a fill or a break does not bend the beats.
        let medians = found.indices.map { i -> Double in
            guard i > 0, i + 1 < found.count else { return found[i] }
            return found[(i - 1)...(i + 1)].sorted()[1]
        }
        let smooth = medians.indices.map { i -> Double in
            let near = medians[max(0, i - 1)...min(medians.count - 1, i + 1)]
            return near.reduce(0, +) / Double(near.count)
        }
        var periods = [Double](repeating: 0, count: signal.count)
        var k = 0
        for t in periods.indices {
            let frame = Double(t)
            while k + 1 < middles.count, middles[k + 1] <= frame { k += 1 }
            let next = min(k + 1, middles.count - 1)
            let along = middles[next] > middles[k] ? min(max((frame - middles[k]) / (middles[next] - middles[k]), 0), 1) : 0
            periods[t] = smooth[k] + (smooth[next] - smooth[k]) * along
        }
        return periods
    }

    /// How long a stretch the local tempo is read from, seconds: at least six beats down to
    /// 60 BPM, few enough that a rubato's swing (±15 % over 17 s on the evaluation set) shows.
    static let localWindow = 6.0
    /// How often the local tempo is read, seconds.
    static let localStep = 0.5
    /// How far a stretch's period may stray from the track's: 30 % either way, so the tempo's
    /// half, double and 3:2 stay out of reach.
    static let localReach = 1.3

    /// Each stretch of eight beats' median interval, in the beats' unit (frames or seconds):
    /// the local tempo that `steady` and `tempoRange` judge; empty with fewer than nine beats.
    static func stretchPeriods(ofBeats beats: [Double]) -> [Double] {
        guard beats.count >= 9 else { return [] }
        return (0..<(beats.count - 8)).map { start in
            let intervals = (start..<(start + 8)).map { beats[$0 + 1] - beats[$0] }.sorted()
            return (intervals[3] + intervals[4]) / 2
        }
    }

    /// The 5th to the 95th percentile of `values`; nil when empty.
    static func spread(of values: [Double]) -> ClosedRange<Double>? {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return nil }
        let at = { (fraction: Double) in sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count - 1) * fraction).rounded())))] }
        return at(0.05)...at(0.95)
    }

    /// How far two beat sequences (seconds, sorted) agree: mir_eval's beat F-measure of one
    /// against the other, each beat matched once within `window` seconds (sorted lists, so
    /// matching in order is the largest matching); 0 when either is empty.
    static func agreement(_ one: [Double], _ other: [Double], window: Double = 0.07) -> Double {
        guard !one.isEmpty, !other.isEmpty else { return 0 }
        var matched = 0, j = 0
        for beat in one {
            while j < other.count, other[j] < beat - window { j += 1 }
            if j < other.count, abs(other[j] - beat) <= window { matched += 1; j += 1 }
        }
        return 2 * Double(matched) / Double(one.count + other.count)
    }

    /// How far beats found by a committee of trackers can be trusted, 0…1: the mean agreement
    /// of every pair of the committee's beat sequences (the first is the beats given; the
    /// others from other onset functions, each with its own tempo), as Zapata et al. ("Assigning
    /// a confidence threshold on automatic beat annotation", 2012) rate a committee, times the
    /// pulse's regularity (`Tempo.confidence`), square-rooted. On bench/make_beat_set.py's 22
    /// tracks (bench/RESULTS.md, 2026-11-29 afternoon) it tells the tracks with beat F ≥ 0.8 from
    /// the rest with an AUC of 0.73 (agreement alone 0.68, regularity alone 0.68): chosen
    /// among seven combinations on that same set, and far from a sure separation, since the
    /// trackers there mostly err together, at the same wrong metrical level.
    static func confidence(ofCommittee committee: [[Double]], pulse: Double) -> Double {
        guard committee.first?.isEmpty == false else { return 0 }
        var total = 0.0, pairs = 0
        for i in committee.indices {
            for j in committee.indices where j > i {
                total += agreement(committee[i], committee[j])
                pairs += 1
            }
        }
        let agreeing = pairs > 0 ? total / Double(pairs) : 1
        return (min(max(pulse, 0), 1) * agreeing).squareRoot()
    }

    /// The beats (seconds) a tracker of its own finds in `envelope` alone, tempo and all.
    static func independentBeats(in envelope: [Float], sampleRate: Int, allowedTempos: ClosedRange<Double>) -> [Double] {
        let tracker = BeatTracker(envelope: envelope, sampleRate: sampleRate, allowedTempos: allowedTempos)
        return tracker.tempo().map { tracker.times(ofBeats: tracker.beats(at: $0)) } ?? []
    }

    /// Seconds of beat frames.
    func times(ofBeats frames: [Double]) -> [Double] { frames.map(seconds) }

    /// BPM of steady beats: the least-squares slope of beat time against beat number.
    static func tempo(ofBeats times: [Double]) -> Double? {
        guard times.count >= 4 else { return nil }
        let n = Double(times.count)
        let meanIndex = (n - 1) / 2
        let meanTime = times.reduce(0, +) / n
        var covariance = 0.0, variance = 0.0
        for (i, t) in times.enumerated() {
            covariance += (Double(i) - meanIndex) * (t - meanTime)
            variance += (Double(i) - meanIndex) * (Double(i) - meanIndex)
        }
        let interval = covariance / variance
        return interval > 0 ? 60 / interval : nil
    }

    /// Onsets as (seconds, strength 0…1), picked as Böck's SuperFlux picks them: frames of the
    /// envelope (smoothed over 1.5 frames, ≈ 8 ms, as for the tempo) that are the highest within
    /// 30 ms on either side and rise `onsetDelta` over their mean of ±100 ms, at least 30 ms
    /// apart. The envelope is measured against its `onsetScalePercentile` (not its one loudest
    /// peak, which left the rest of a track under a threshold set by one hit). The strength is
    /// the envelope's height there over its whole range.
    func onsets() -> [(time: Double, strength: Double)] {
        guard let low = envelope.min(), let high = envelope.max(), high > low else { return [] }
        let sorted = envelope.sorted()
        let typical = Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * Self.onsetScalePercentile))] - low)
        // Never under a tenth of the range: in a quiet recording with a few hits (room tone,
        // speech) the percentile is the noise floor, and every ripple of it would rise enough.
        let scale = max(typical, 0.1 * Double(high - low))
        let signal = Self.smoothed(envelope.map { Double($0 - low) / scale }, deviation: 1.5)
        let reach = max(1, Int((Self.minimumOnsetGap * frameRate).rounded())), average = max(1, Int((0.1 * frameRate).rounded()))
        var prefix = [0.0]
        for value in signal { prefix.append(prefix[prefix.count - 1] + value) }
        var found: [(time: Double, strength: Double)] = []
        var lastFrame = -reach - 1
        for t in signal.indices where t - lastFrame > reach {
            let value = signal[t]
            guard signal[max(0, t - reach)...min(signal.count - 1, t + reach)].allSatisfy({ $0 <= value }) else { continue }
            let from = max(0, t - average), to = min(signal.count, t + average + 1)
            guard value >= (prefix[to] - prefix[from]) / Double(to - from) + Self.onsetDelta else { continue }
            lastFrame = t
            let height = envelope[max(0, t - 1)...min(envelope.count - 1, t + 1)].max() ?? envelope[t]
            // The refined peak may move up to two frames: the 30 ms minimum holds between the
            // times given (two picks 22.5 ms apart were seen under music), keeping the stronger.
            let onset = (time: seconds(refinedPeak(signal, near: t)), strength: Double((height - low) / (high - low)))
            if let last = found.last, onset.time - last.time < Self.minimumOnsetGap {
                if onset.strength > last.strength { found[found.count - 1] = onset }
                continue
            }
            found.append(onset)
        }
        return found
    }

    /// The envelope's level that onset thresholds are measured against: its 99th percentile.
    /// With its maximum (librosa's normalisation), mean onset F on bench/make_beat_set.py's 22
    /// tracks was 0.61 against librosa's onsets and 0.62 against aubio's, with twice their count;
    /// with the 99th percentile (and `onsetDelta` 0.1, the smoothing and the 30 ms after),
    /// 0.85 and 0.85 at their count. The 95th gave 0.79–0.85. Chosen on that same set among
    /// 35 settings (bench/RESULTS.md, 2026-11-29 afternoon).
    static let onsetScalePercentile = 0.99
    /// How far over its ±100 ms mean a peak must rise, in `onsetScalePercentile` units: 0.2
    /// gave F 0.72 (too few, 0.56 of librosa's count), 0.1 gave 0.85 (the same count).
    static let onsetDelta = 0.1

    /// The shortest gap between two onsets, seconds (librosa's default wait).
    static let minimumOnsetGap = 0.03

    /// The fractional position of the peak at `index` (a parabola through it and its neighbours).
    private func refinedPeak(_ values: [Double], at index: Int) -> Double {
        guard index > 0, index + 1 < values.count else { return Double(index) }
        let (a, b, c) = (values[index - 1], values[index], values[index + 1])
        let curvature = a - 2 * b + c
        guard curvature < 0 else { return Double(index) }
        return Double(index) + min(max(0.5 * (a - c) / curvature, -0.5), 0.5)
    }

    /// The refined peak of `values` within two frames of `index`.
    private func refinedPeak(_ values: [Double], near index: Int) -> Double {
        let range = max(0, index - 2)...min(values.count - 1, index + 2)
        let peak = range.max { values[$0] < values[$1] } ?? index
        return refinedPeak(values, at: peak)
    }
}
