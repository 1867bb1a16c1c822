import Foundation
import Testing
import TestSupport
@testable import MoonreelEngine
@testable import MoonreelAnalysis

/// Issue 36: beats at the level a drummer taps, on music with known beats that nobody here
/// made the truth of — drum kits laid at known times under real music, and a recorded song
/// with its hand-made chart (Tests/Fixtures/beats, excerpts of bench/make_beat_set.py's set;
/// bench/analysis.py scores the whole set beside essentia, aubio and librosa). Scored as
/// mir_eval scores beats: F-measure with ±70 ms windows, each beat matched once.
@Suite struct BeatSetTests {
    struct Track: Decodable, CustomTestStringConvertible {
        let name: String
        let audio: String
        let beats: String
        let downbeats: String
        let meter: Int
        let tempo: Double
        let steady: Bool
        var testDescription: String { name }
    }

    static let folder = ((Fixtures.real("x") as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent + "/beats/"

    static let tracks: [Track] = {
        guard let data = FileManager.default.contents(atPath: folder + "beats.json") else { return [] }
        return (try? JSONDecoder().decode([Track].self, from: data)) ?? []
    }()

    /// mir_eval.beat.f_measure: estimated beats matched one-to-one to the reference within
    /// `window` seconds (both lists sorted, so matching in order is the maximal matching).
    static func fMeasure(reference: [Double], estimated: [Double], window: Double = 0.07) -> Double {
        guard !reference.isEmpty, !estimated.isEmpty else { return 0 }
        var matched = 0, j = 0
        for beat in reference {
            while j < estimated.count, estimated[j] < beat - window { j += 1 }
            if j < estimated.count, abs(estimated[j] - beat) <= window { matched += 1; j += 1 }
        }
        let precision = Double(matched) / Double(estimated.count), recall = Double(matched) / Double(reference.count)
        return precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0
    }

    static func analysis(_ track: Track) throws -> (AudioAnalysis, [Double]) {
        let asset = try Asset(path: folder + track.audio)
        let analysis = try AudioAnalysis.analyze(#require(asset.tracks(withMediaType: .audio).first))
        let truth = try String(contentsOfFile: folder + track.beats, encoding: .utf8).split(separator: "\n").compactMap { Double($0) }
        return (analysis, truth)
    }

    /// Slow rock with eighth-note hats (read as 190 before), a kick under eighth hats (240:
    /// the cuts fell on the hats), four-on-the-floor 4 dB under music, a waltz: the tempo at
    /// the annotated level within 4 %, and the beats on the truth's (F ≥ 0.95).
    @Test(arguments: tracks.filter { $0.name.hasPrefix("kit_") && $0.steady })
    func steadyKitsAreTrackedAtTheirLevel(_ track: Track) throws {
        let (analysis, truth) = try Self.analysis(track)
        let tempo = try #require(analysis.tempo, "\(track.name): no tempo")
        #expect(abs(tempo / track.tempo - 1) <= 0.04, "\(track.name): \(tempo) BPM for \(track.tempo)")
        let f = Self.fMeasure(reference: truth, estimated: analysis.beats)
        #expect(f >= 0.95, "\(track.name): F \(f)")
    }

    /// §3: a rubato of ±15 % is not steady, and its tempo range says how far it wanders; a
    /// steady kit is steady within a few percent.
    @Test func aRubatoIsNotSteady() throws {
        let rubato = try #require(Self.tracks.first { !$0.steady }), steady = try #require(Self.tracks.first { $0.name == "kit_rock95" })
        let (wandering, _) = try Self.analysis(rubato)
        #expect(wandering.steady == false, "\(rubato.name): \(String(describing: wandering.tempoRange))")
        let range = try #require(wandering.tempoRange)
        #expect(range.upperBound / range.lowerBound > 1.09, "\(range)")
        let (kept, _) = try Self.analysis(steady)
        #expect(kept.steady == true, "\(String(describing: kept.tempoRange))")
        #expect(try #require(kept.tempoRange).upperBound / #require(kept.tempoRange).lowerBound < 1.03)
    }

    /// §2: a rubato's beats follow its swings: one period for the whole excerpt put beats
    /// between the hits where it ran fastest and slowest (F 0.78 on the set's whole track);
    /// read stretch by stretch, every beat is on its hit.
    @Test func aRubatoIsTrackedThroughItsSwings() throws {
        let rubato = try #require(Self.tracks.first { !$0.steady })
        let (analysis, truth) = try Self.analysis(rubato)
        let f = Self.fMeasure(reference: truth, estimated: analysis.beats)
        #expect(f >= 0.95, "\(rubato.name): F \(f)")
    }

    /// §1: the candidates start with the tempo chosen; rock at 95 lists its double (190, where
    /// the hats tick) close behind — the choice the level rule made.
    @Test func tempoCandidatesStartWithTheTempoAndShowTheCloseCall() throws {
        let rock = try #require(Self.tracks.first { $0.name == "kit_rock95" })
        let (analysis, _) = try Self.analysis(rock)
        let candidates = analysis.tempoCandidates
        #expect(candidates.count >= 2 && candidates.count <= 3, "\(candidates)")
        #expect(abs((candidates.first?.bpm ?? 0) / 95 - 1) < 0.02 && candidates.first?.score == 1, "\(candidates)")
        #expect(candidates.dropFirst().contains { abs($0.bpm / 190 - 1) < 0.03 && $0.score > 0.5 }, "the double tempo close behind: \(candidates)")
        #expect(candidates.allSatisfy { (0...1).contains($0.score) })
    }

    /// §3: the beat confidence, within 0…1, is at least 0.45 on every excerpt tracked right
    /// (F ≥ 0.95: the four steady kits and the rubato). Measured with this build: 0.51 (the
    /// rubato, whose kit sits under louder music) to 0.95. It does not tell a beat at another
    /// level: the song read at twice its tempo (F 0.67, every beat on a hit) has 0.52. On the
    /// 61-track hard set 11 of the 23 misses are such level errors, and the confidence ranks
    /// by whether there is a beat at all (bench/RESULTS.md, tenth session); before the rubato
    /// was tracked right (F 0.78), it ranked below the kits by luck.
    @Test func beatConfidenceIsHighWhereTheBeatsAreRight() throws {
        var right: [(String, Double)] = []
        for track in Self.tracks {
            let (analysis, truth) = try Self.analysis(track)
            #expect((0...1).contains(analysis.beatConfidence), "\(track.name): \(analysis.beatConfidence)")
            if Self.fMeasure(reference: truth, estimated: analysis.beats) >= 0.95 { right.append((track.name, analysis.beatConfidence)) }
        }
        #expect(right.count >= 5, "\(right)")
        for (name, confidence) in right { #expect(confidence >= 0.45, "\(name): \(confidence)") }
    }

    /// A committee agrees as mir_eval's F-measure says: the same beats fully, the off-beats
    /// not at all, beats at twice the tempo on two thirds; no beats, no confidence.
    @Test func committeeAgreement() {
        let beats = (0..<20).map { 0.5 * Double($0) }
        #expect(BeatTracker.agreement(beats, beats.map { $0 + 0.01 }) == 1)
        #expect(BeatTracker.agreement(beats, beats.map { $0 + 0.25 }) == 0)
        #expect(abs(BeatTracker.agreement(beats, (0..<40).map { 0.25 * Double($0) }) - 2.0 / 3) < 1e-9)
        #expect(BeatTracker.confidence(ofCommittee: [beats, beats, beats], pulse: 0.81) == 0.9)
        #expect(BeatTracker.confidence(ofCommittee: [[], beats], pulse: 1) == 0)
    }

    /// §1: `tempos` keeps the tempo in a range: rock at 95 read within 150–240 is its double
    /// (where the hats tick), a kick at 120 read within 40–80 is its half, on every other beat
    /// of the truth; where the music has no pulse in the range (the quiet song excerpt, read at
    /// 47.9, has none at 80–110), there is no tempo and no beats, as documented.
    @Test func aTempoRangeConstrainsTheTempo() throws {
        func analyze(_ name: String, _ tempos: ClosedRange<Double>) throws -> (AudioAnalysis, [Double]) {
            let track = try #require(Self.tracks.first { $0.name == name })
            let asset = try Asset(path: Self.folder + track.audio)
            let truth = try String(contentsOfFile: Self.folder + track.beats, encoding: .utf8).split(separator: "\n").compactMap { Double($0) }
            return (try AudioAnalysis.analyze(#require(asset.tracks(withMediaType: .audio).first), tempos: tempos), truth)
        }
        let (fast, _) = try analyze("kit_rock95", 150...240)
        #expect(abs((fast.tempo ?? 0) / 190 - 1) < 0.02, "\(String(describing: fast.tempo))")
        #expect(fast.tempoCandidates.allSatisfy { (150...240).contains($0.bpm) }, "\(fast.tempoCandidates)")
        let (slow, truth) = try analyze("kit_kickhats120", 40...80)
        #expect(abs((slow.tempo ?? 0) / 60 - 1) < 0.02, "\(String(describing: slow.tempo))")
        let everyOther = [0, 1].map { phase in Self.fMeasure(reference: truth.enumerated().filter { $0.offset % 2 == phase }.map(\.element), estimated: slow.beats) }
        #expect((everyOther.max() ?? 0) >= 0.9, "\(everyOther)")
        let (none, _) = try analyze("fof_feelings_quiet_intro", 80...110)
        #expect(none.tempo == nil && none.beats.isEmpty && none.beatConfidence == 0)
        let rock = try #require(Self.tracks.first { $0.name == "kit_rock95" })
        let asset = try Asset(path: Self.folder + rock.audio)
        #expect(throws: EngineError.self) { try AudioAnalysis.analyze(#require(asset.tracks(withMediaType: .audio).first), tempos: 20...100) }
    }

    /// §5: onsets are at least 30 ms apart, as documented — the refined times too (four-on-the-
    /// floor under music had two pairs 22.5 ms apart).
    @Test(arguments: tracks) func onsetsKeepTheirMinimumGap(_ track: Track) throws {
        let (analysis, _) = try Self.analysis(track)
        let gaps = zip(analysis.onsets.dropFirst(), analysis.onsets).map { $0.time - $1.time }
        #expect(!analysis.onsets.isEmpty)
        #expect(gaps.allSatisfy { $0 >= BeatTracker.minimumOnsetGap - 1e-9 }, "\(track.name): shortest gap \(gaps.min() ?? 0)")
    }

    /// §5: `strength` keeps the strong ones: on the steady kits, the onsets of at least the
    /// median strength land on the beats (±50 ms) more often than the onsets as a whole, which
    /// also hold the hats between them.
    @Test func strongOnsetsAreTheBeats() throws {
        for track in Self.tracks where track.name.hasPrefix("kit_") && track.steady {
            let (analysis, truth) = try Self.analysis(track)
            let strengths = analysis.onsets.map(\.strength).sorted()
            let median = strengths.isEmpty ? 0 : strengths[strengths.count / 2]
            let onBeat = { (onsets: [AudioAnalysis.Onset]) -> Double in
                Double(onsets.filter { onset in truth.contains { abs($0 - onset.time) <= 0.05 } }.count) / Double(max(onsets.count, 1))
            }
            let all = onBeat(analysis.onsets), strong = onBeat(analysis.onsets.filter { $0.strength >= median })
            #expect(strong > all && strong >= 0.6, "\(track.name): \(strong) of the strong on beats, \(all) of all")
        }
    }

    /// §4: the meter of every excerpt (the waltz in three, the rest in four) and the bars'
    /// first beats where the audio tells them. Measured with this build: downbeat F 1.00 on the
    /// waltz, 0.67 on the song (its beats at half the tempo: every other bar), 0.35 on the
    /// rubato, 0 on the three kits in four whose first and third beats sound alike (a kick on
    /// every beat, or on 1 and 3 a decibel apart, under music that does not follow their
    /// bars); mean 0.34 (0.33 without the snare and cymbal cues), where the four-phase rule
    /// gave 0.12 (no downbeats on four of six).
    @Test func metersAndDownbeatsOfTheExcerpts() throws {
        var scores: [Double] = []
        for track in Self.tracks {
            let (analysis, _) = try Self.analysis(track)
            let truth = try String(contentsOfFile: Self.folder + track.downbeats, encoding: .utf8).split(separator: "\n").compactMap { Double($0) }
            #expect(analysis.meter == track.meter, "\(track.name): meter \(String(describing: analysis.meter)) for \(track.meter)")
            #expect((0...1).contains(analysis.meterConfidence))
            let f = Self.fMeasure(reference: truth, estimated: analysis.downbeats)
            if track.meter == 3 {
                #expect(f >= 0.95, "\(track.name): downbeat F \(f)")
                #expect(analysis.meterConfidence >= 0.4, "\(track.name): meter confidence \(analysis.meterConfidence)")
            }
            scores.append(f)
        }
        let mean = scores.reduce(0, +) / Double(max(scores.count, 1))
        #expect(scores.count == 6 && mean >= 0.3, "downbeat F \(scores), mean \(mean)")
    }

    /// The bar tracker alone: beats whose chords change every third (or fourth) beat, from the
    /// second, are bars of three (four) starting there; fewer than eight beats give none.
    @Test(arguments: [3, 4]) func barsFollowTheChordChanges(meter: Int) throws {
        let beats = (0..<24).map { Double(10 + 20 * $0) }
        let frames = 10 + 20 * 24
        var chroma = [Float](repeating: 0, count: 12 * frames)
        for frame in 0..<frames {
            let beat = max(0, frame - 10) / 20
            let chord = (beat + meter - 1) / meter   // changes on beats 1, 1 + meter, …
            for pitch in [0, 4, 7] { chroma[12 * frame + (pitch + 5 * chord) % 12] = 1 }
        }
        let bass = [Float](repeating: 0, count: frames)
        let bars = try #require(BarTracker.bars(ofBeats: beats, bassFlux: bass, chroma: chroma))
        #expect(bars.meter == meter)
        #expect(bars.downbeats == Array(stride(from: 1, to: 24, by: meter)), "\(bars.downbeats)")
        #expect(bars.confidence > 0.5, "\(bars.confidence)")
        #expect(BarTracker.bars(ofBeats: Array(beats.prefix(7)), bassFlux: bass, chroma: chroma) == nil)
    }

    @Test func theFixturesAreThere() {
        #expect(Self.tracks.count == 6, "Tests/Fixtures/beats/beats.json lists the six excerpts")
    }
}
