#if canImport(Glibc)
import Glibc
#endif

/// The meter (3 or 4 beats to a bar) and the bars' first beats, from the beats and what is
/// heard at each: a bar's first beat is where the kick lands and where the chord and the
/// bass note change (Goto's chord-change and drum-pattern cues; madmom's bar tracker learns
/// the same from beat-synchronous spectral and harmonic features). Each beat gets three
/// accents — the bass band's flux at it, the change of the pitch-class profile and of the
/// bass spectrum from the beat before to the beat after it — each standardised over the
/// beats and summed with `weights`. For each meter and phase, the accent of the beats at
/// that phase over the mean, times the square root of their number (a t-statistic, so a
/// grouping in fours, with fewer beats a phase, does not win on chance peaks), scores how
/// well the accent repeats with that period; the best meter and phase are taken.
struct BarTracker {
    /// The accents' weights: the kick's flux, the chord change, the bass note's change. The
    /// bass change weighs half: it mostly repeats the chord change. Measured on
    /// bench/make_beat_set.py's 22 tracks with Moonreel's beats (mean downbeat F): the kick
    /// alone 0.45, chords alone 0.39, bass alone 0.26, kick and chords 0.49, the three at
    /// these weights 0.56, at 1, 1, 1 0.49 (the differences between the last three are
    /// within a track or two of chance).
    static let weights = (kick: 1.0, harmony: 1.0, bass: 0.5)
    /// Three beats to a bar only when its score is this many times four's: most music is in
    /// four, and grouping the beats of a 4/4 bar in threes still finds chance accents. On the
    /// 22 tracks, three's score over four's was 8.5 on the waltz (2.2 on its 20 s CI excerpt:
    /// a slim margin) and 0.01–1.7 on the 21 in four (1.7 rock with its kick on 1 and 3, 1.7 a
    /// metal excerpt whose beats are at 2/3 of the tempo). One waltz: a weak calibration.
    static let tripleStrength = 2.0
    /// Fewer beats than this give no bars (two bars of four).
    static let minimumBeats = 8

    struct Bars: Equatable {
        /// Beats to a bar, 3 or 4.
        let meter: Int
        /// How clearly that meter's accent beats the other's: 1 − the other's score over
        /// this one's (0…1; 0 when they are as strong).
        let confidence: Double
        /// The index of the first beat of each bar in the beats given.
        let downbeats: [Int]
    }

    /// The bars of `beats` (envelope frames, ascending) given, for each envelope frame, the
    /// bass band's flux, 12 pitch-class values and `bassWidth` bass-band log magnitudes;
    /// nil with fewer than `minimumBeats` beats or no frames.
    static func bars(ofBeats beats: [Double], bassFlux: [Float], chroma: [Float], bassSpectrum: [Float], bassWidth: Int) -> Bars? {
        let frameCount = bassFlux.count
        guard beats.count >= minimumBeats, frameCount > 0, chroma.count >= 12 * frameCount,
              bassWidth >= 0, bassSpectrum.count >= bassWidth * frameCount else { return nil }
        let frames = beats.map { beat -> Int in
            guard beat.isFinite else { return 0 }
            return Int(min(max(beat.rounded(), 0), Double(frameCount - 1)))
        }
        // The kick: the bass flux's highest within two frames (≈ 11 ms) of the beat.
        let kick = frames.map { frame -> Double in
            let window = max(0, frame - 2)...min(frameCount - 1, frame + 2)
            return Double(window.map { bassFlux[$0] }.max() ?? 0)
        }
        // Each beat's span: to the next beat (the last as long as the one before it).
        let spans = frames.indices.map { i -> Range<Int> in
            let start = frames[i]
            let end = i + 1 < frames.count ? frames[i + 1] : min(frameCount, start + (start - frames[max(i - 1, 0)]))
            return start..<max(end, start + 1)
        }
        let harmony = changes(spans.map { mean(of: chroma, width: 12, over: $0) })
        let bass = changes(spans.map { mean(of: bassSpectrum, width: bassWidth, over: $0) })
        let (kickZ, harmonyZ, bassZ) = (BeatTracker.standardised(kick), BeatTracker.standardised(harmony), BeatTracker.standardised(bass))
        let accent = beats.indices.map { weights.kick * kickZ[$0] + weights.harmony * harmonyZ[$0] + weights.bass * bassZ[$0] }
        let overall = accent.reduce(0, +) / Double(accent.count)

        // The score of each phase of a meter: the mean accent there over the whole mean, times √count.
        let scores = { (meter: Int) -> [Double] in
            (0..<meter).map { phase in
                let at = stride(from: phase, to: accent.count, by: meter).map { accent[$0] }
                guard !at.isEmpty else { return 0 }
                return (at.reduce(0, +) / Double(at.count) - overall) * Double(at.count).squareRoot()
            }
        }
        let (three, four) = (scores(3), scores(4))
        let (bestThree, bestFour) = (three.max() ?? 0, four.max() ?? 0)
        let meter = bestThree > tripleStrength * bestFour ? 3 : 4
        let (chosen, other) = meter == 3 ? (three, bestFour) : (four, bestThree)
        guard let best = chosen.max(), let phase = chosen.firstIndex(of: best) else { return nil }
        let confidence = best > 0 ? min(max(1 - max(other, 0) / best, 0), 1) : 0
        return Bars(meter: meter, confidence: confidence, downbeats: Array(stride(from: phase, to: beats.count, by: meter)))
    }

    /// The mean of each of `width` values a frame over `frames`, less their own mean (so the
    /// change between two spans is of shape, not of loudness).
    private static func mean(of values: [Float], width: Int, over frames: Range<Int>) -> [Double] {
        guard width > 0 else { return [] }
        var sum = [Double](repeating: 0, count: width)
        var count = 0
        for frame in frames where (frame + 1) * width <= values.count {
            for k in 0..<width { sum[k] += Double(values[frame * width + k]) }
            count += 1
        }
        let means = sum.map { $0 / Double(max(count, 1)) }
        let centre = means.reduce(0, +) / Double(width)
        return means.map { $0 - centre }
    }

    /// For each span but the first, 1 − the cosine between it and the one before (0 for the first).
    private static func changes(_ profiles: [[Double]]) -> [Double] {
        profiles.indices.map { i in
            guard i > 0 else { return 0 }
            let (a, b) = (profiles[i - 1], profiles[i])
            let dot = zip(a, b).reduce(0) { $0 + $1.0 * $1.1 }
            let norms = (a.reduce(0) { $0 + $1 * $1 } * b.reduce(0) { $0 + $1 * $1 }).squareRoot()
            return norms > 0 ? 1 - dot / norms : 0
        }
    }
}
