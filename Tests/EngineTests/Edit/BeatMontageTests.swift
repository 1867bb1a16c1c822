import Testing
import TestSupport
@testable import MoonreelEngine

/// `BeatMontage` on two generated clips: where each stretch lies and which part of which
/// clip fills it, transitions centred on the cuts, and a clip too short for its stretch.
@Suite struct BeatMontageTests {
    func seconds(_ value: Double) -> MediaTime { MediaTime(seconds: value, timescale: 1000)! }

    @Test func stretchesFollowTheCutsAndClipsGoOnWhereTheyStopped() throws {
        let red = try Asset(path: Fixtures.solid("red", seconds: 2, tone: nil))
        let blue = try Asset(path: Fixtures.solid("blue", seconds: 2, tone: nil))
        let cuts = [0.5, 1.5, 2.5, 3.5].map(seconds)
        let plain = try BeatMontage.make(clips: [(red, nil), (blue, nil)], cuts: cuts, duration: seconds(5)).sequence
        #expect(plain.parts.map(\.timeRange.start) == [0, 0.5, 1.5, 2.5, 3.5].map(seconds))
        #expect(plain.parts.map(\.timeRange.duration) == [0.5, 1, 1, 1, 1.5].map(seconds))
        // Red fills 0…0.5, then 1.5…2.5 from 0.5 s into the clip; its third stretch (1.5 s) no
        // longer fits after 1.5 s and starts over at 0.
        let redParts = [0, 2, 4].map { index in
            let part = plain.parts[index]
            return part.videoTrack?.segments.first { $0.targetRange.start == part.timeRange.start && !$0.isEmpty }?.sourceRange.start
        }
        #expect(redParts == [0, 0.5, 0].map(seconds))

        let dissolve = Transition(.dissolve, duration: seconds(0.2))
        let crossed = try BeatMontage.make(clips: [(red, nil), (blue, nil)], cuts: cuts, duration: seconds(5), transition: dissolve).sequence
        // Each transition runs 0.1 s either side of its cut.
        #expect(crossed.parts.dropFirst().map(\.timeRange.start) == [0.4, 1.4, 2.4, 3.4].map(seconds))
        #expect(crossed.parts.dropLast().map(\.timeRange.end) == [0.6, 1.6, 2.6, 3.6].map(seconds))
        #expect(crossed.composition.duration == seconds(5))
    }

    @Test func aClipShorterThanItsStretchIsNamed() throws {
        let red = try Asset(path: Fixtures.solid("red", seconds: 2, tone: nil))
        #expect {
            try BeatMontage.make(clips: [(red, nil)], cuts: [seconds(3)], duration: seconds(4))
        } throws: { error in
            "\(error)".contains("clip 1") && "\(error)".contains("shorter than the 3 s from 0 s to 3 s; cut on more beats")
        }
        // After the last beat there is no beat to cut on: the way out is a shorter montage.
        #expect {
            try BeatMontage.make(clips: [(red, nil)], cuts: [seconds(1)], duration: seconds(4))
        } throws: { error in
            "\(error)".contains("shorter than the 3 s from 1 s to 4 s, after the last cut; end the montage sooner (duration)")
        }
    }

    @Test func tooManyCutsAreRefusedBeforeAnythingIsBuilt() throws {
        let red = try Asset(path: Fixtures.solid("red", seconds: 2, tone: nil))
        let cuts = (1...20_000).map { MediaTime(value: Int64($0), timescale: 10) }
        #expect {
            try BeatMontage.make(clips: [(red, nil)], cuts: cuts, duration: seconds(3000))
        } throws: { "\($0)".contains("more than 10000 stretches") }
    }

    /// A cut closer than `minimumStretch` to the start, the cut before it or the end is left
    /// out, so no stretch is a flash of a frame; one note names them.
    @Test func cutsTooCloseToTheirNeighboursAreLeftOut() throws {
        let (bounds, leftOut) = BeatMontage.bounds(cuts: [0.003, 1, 1.05, 2, 2.95].map(seconds), duration: seconds(3))
        #expect(bounds == [0, 1, 2, 3].map(seconds))
        #expect(leftOut == [0.003, 1.05, 2.95].map(seconds))
        let red = try Asset(path: Fixtures.solid("red", seconds: 4, tone: nil))
        let made = try BeatMontage.make(clips: [(red, nil)], cuts: [0.003, 1, 1.05, 2, 2.95].map(seconds), duration: seconds(3))
        #expect(made.notes.map(\.kind) == [.cutLeftOut])
        #expect(made.notes.first?.message.hasPrefix("no cut at 0.003 s, 1.05 s, 2.95 s: each would leave a stretch shorter than 0.1 s") == true)
    }
}
