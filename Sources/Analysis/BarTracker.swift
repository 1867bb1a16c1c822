#if canImport(Glibc)
import Glibc
#endif

/// The meter (3 or 4 beats to a bar) and the bars' first beats, from the beats and what is
/// heard at each: a bar's first beat is where the kick lands, the chord changes and a crash
/// may ring, and not where the snare marks the backbeat (Goto's
/// chord-change and drum-pattern cues; madmom's bar tracker learns the same from
/// beat-synchronous spectral and harmonic features). Each beat gets accents — the bass,
/// middle and treble bands' flux at it (kick, snare, cymbal) and the change of the
/// pitch-class profile from the beat before to the beat after it — each standardised over
/// the beats and summed with `weights` (the snare's negative). For each
/// meter and phase, the accent of the beats at that phase over the mean, times the square
/// root of their number (a t-statistic, so a grouping in fours, with fewer beats a phase,
/// does not win on chance peaks), scores how well the accent repeats with that period; the
/// best meter and phase are taken.
struct BarTracker {
    /// The accents' weights: the kick's flux, the chord change, the snare's flux (the middle
    /// band, 200–2000 Hz) and a cymbal's (the treble band). Each is ±1, no value tuned: a
    /// bar's first beat has the kick and, at a section's start, the crash; the snare marks the
    /// backbeat, 2 and 4, so it counts against (Goto 2001's drum patterns). The bass note's
    /// change, an accent before, is left out (chosen on the set below): it mostly repeats the
    /// chord change. On bench/make_beat_set.py's 22 tracks with Moonreel's beats (tracks at downbeat F ≥ 0.8,
    /// mean F): the kick, chords and bass at 1, 1, ½ 12, 0.59 (the weights before); with the
    /// snare and cymbal 13, 0.66; without the bass as here 15, 0.74 (three kits gained: two
    /// had their downbeats on a snare beat; their patterns repeat every two beats, so 1
    /// against 3 rests on weak cues). The best of a grid of 72 weightings, each chosen on the
    /// other 21 tracks and scored on the one left out: 13, 0.65.
    static let weights = (kick: 1.0, harmony: 1.0, snare: -1.0, cymbal: 1.0)
    /// Three beats to a bar only when its score is this many times four's: most music is in
    /// four, and grouping the beats of a 4/4 bar in threes still finds chance accents. On the
    /// 22 tracks, three's score over four's is 4.0 on the waltz and 0.02–1.85 on the 21 in
    /// four (1.85 a kick on every beat under eighth hats, 1.52 a metal excerpt with a 3 + 3 + 2
    /// syncopation); with the kick, chords and bass alone it was 8.5 and up to 1.7. One
    /// waltz: a weak calibration.
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
    /// bass band's flux, 12 pitch-class values and the middle and treble bands' flux (left
    /// out, they weigh nothing); nil with fewer than `minimumBeats` beats or no frames.
    static func bars(ofBeats beats: [Double], bassFlux: [Float], chroma: [Float], middleFlux: [Float] = [], trebleFlux: [Float] = []) -> Bars? {
        let frameCount = bassFlux.count
        guard beats.count >= minimumBeats, frameCount > 0, chroma.count >= 12 * frameCount else { return nil }
        let frames = beats.map { beat -> Int in
            guard beat.isFinite else { return 0 }
            return Int(min(max(beat.rounded(), 0), Double(frameCount - 1)))
        }
        // A band's flux at each beat: its highest within two frames (≈ 11 ms) of it (0 for a
        // band not given). The kick is the bass band's, the snare the middle's, a cymbal the treble's.
        let peak = { (flux: [Float]) -> [Double] in
            frames.map { frame in
                guard flux.count == frameCount else { return 0 }
                let window = max(0, frame - 2)...min(frameCount - 1, frame + 2)
                return Double(window.map { flux[$0] }.max() ?? 0)
            }
        }
        let (kick, snare, cymbal) = (peak(bassFlux), peak(middleFlux), peak(trebleFlux))
        // Each beat's span: to the next beat (the last as long as the one before it).
        let spans = frames.indices.map { i -> Range<Int> in
            let start = frames[i]
            let end = i + 1 < frames.count ? frames[i + 1] : min(frameCount, start + (start - frames[max(i - 1, 0)]))
            return start..<max(end, start + 1)
        }
        let harmony = changes(spans.map { mean(of: chroma, width: 12, over: $0) })
        let (kickZ, harmonyZ) = (BeatTracker.standardised(kick), BeatTracker.standardised(harmony))
        let (snareZ, cymbalZ) = (BeatTracker.standardised(snare), BeatTracker.standardised(cymbal))
        let accent = beats.indices.map {
            weights.kick * kickZ[$0] + weights.harmony * harmonyZ[$0] + weights.snare * snareZ[$0] + weights.cymbal * cymbalZ[$0]
        }
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
