import Foundation
import Testing
import TestSupport
@testable import MoonreelEngine
@testable import MoonreelMedia
@testable import MoonreelRender

/// The audio mixer below the export: plans, segment placement, time scaling, volume and the
/// limiter, checked on the rendered float samples themselves (no encoder in the way).
@Suite struct AudioEngineTests {
    // MARK: Names and pure functions

    @Test func timePitchAlgorithmsUseAVFoundationNamesAndKeepPitchByDefault() {
        #expect(AudioTimePitchAlgorithm.allCases.map(\.rawValue) == ["spectral", "timeDomain", "varispeed"])
        #expect(AudioMixInputParameters(trackID: 1).audioTimePitchAlgorithm == .spectral)
        #expect(AudioTimePitchAlgorithm.spectral.keepsPitch && AudioTimePitchAlgorithm.timeDomain.keepsPitch)
        #expect(!AudioTimePitchAlgorithm.varispeed.keepsPitch)
    }

    @Test func tempoFactorsStayWithinWhatOneAtempoDoesWell() {
        #expect(AudioTempo.factors(forSpeed: 0.5) == [0.5])
        #expect(AudioTempo.factors(forSpeed: 0.25) == [0.5, 0.5])
        #expect(AudioTempo.factors(forSpeed: 3) == [2, 1.5])
        for speed in [0.1, 0.3, 0.7, 1, 1.9, 7, 40] {
            let factors = AudioTempo.factors(forSpeed: speed)
            #expect(factors.allSatisfy { (0.5...2).contains($0) }, "\(speed): \(factors)")
            #expect(abs(factors.reduce(1, *) - speed) < 1e-12, "\(speed): \(factors)")
        }
    }

    @Test func limiterPassesQuietAudioBitExact() {
        var limiter = PeakLimiter(sampleRate: 48000)
        let quiet = sine(440, amplitude: 0.89, count: 4800)
        var block = [quiet, quiet.map { -$0 }]
        limiter.process(&block)
        #expect(block[0] == quiet && limiter.gain == 1)
    }

    @Test func limiterKeepsLoudAudioUnderItsCeilingAndRecovers() {
        var limiter = PeakLimiter(sampleRate: 48000)
        var loud = [sine(440, amplitude: 2.5, count: 9600)]
        limiter.process(&loud)
        let peak = loud[0].map(abs).max() ?? 0
        #expect(peak <= limiter.ceiling + 1e-6)
        // Turned down as a whole, not flattened: after the first peak it is still a sine.
        let tail = loud[0].suffix(4800).map(abs).max() ?? 0
        #expect(tail > limiter.ceiling * 0.95 && tail <= limiter.ceiling + 1e-6)
        var silence = [[Float](repeating: 0, count: 48000)]
        limiter.process(&silence)
        #expect(limiter.gain > 0.99, "gain \(limiter.gain) one second later")
        silence = [[Float](repeating: 0, count: 2 * 48000)]
        limiter.process(&silence)
        #expect(limiter.gain == 1, "gain \(limiter.gain) three seconds later")
    }

    @Test func steadyVolumeIsFoundOnlyWhereNothingChanges() {
        var volume = PropertyTimeline<Double>(defaultValue: 1)
        volume.set(0.5, at: seconds(1))
        volume.ramp(from: 0.5, to: 0, over: TimeRange(start: seconds(2), duration: seconds(1)))
        #expect(volume.steadyValue(over: TimeRange(from: seconds(0), to: seconds(0.5))) == 1)
        #expect(volume.steadyValue(over: TimeRange(from: seconds(0.5), to: seconds(1.5))) == nil)
        #expect(volume.steadyValue(over: TimeRange(from: seconds(1), to: seconds(2))) == 0.5)
        #expect(volume.steadyValue(over: TimeRange(from: seconds(2.5), to: seconds(2.6))) == nil)
        #expect(volume.steadyValue(over: TimeRange(from: seconds(3), to: seconds(9))) == 0)
    }

    // MARK: Plans

    @Test func spliceFadesOnlyWhereTheAudioIsCut() throws {
        let asset = try Asset(path: try Self.wav("sin(2*PI*440*t)/4", rate: 48000))
        let track = try #require(asset.tracks.first)
        let composition = Composition()
        let audio = try composition.addMutableTrack(mediaType: .audio)
        // 0–1 s then 1–2 s of the same file: one continuous stream, no splice between.
        try audio.insertTimeRange(TimeRange(start: seconds(0), duration: seconds(1)), of: track, at: seconds(0))
        try audio.insertTimeRange(TimeRange(start: seconds(1), duration: seconds(1)), of: track, at: seconds(1))
        // …then a cut back to 0.5 s, and silence before a last piece.
        try audio.insertTimeRange(TimeRange(start: seconds(0.5), duration: seconds(0.5)), of: track, at: seconds(2))
        try audio.insertTimeRange(TimeRange(start: seconds(0), duration: seconds(0.5)), of: track, at: seconds(3))
        let plan = AudioPlan.segments(of: audio.segments, in: TimeRange(start: .zero, duration: seconds(4)))
        #expect(plan.map(\.fadesIn) == [true, false, true, true])
        #expect(plan.map(\.fadesOut) == [false, true, true, true])

        // Slowing part of a continuous stretch splits it; each scaled piece is stretched on
        // its own, so every one of its ends is a splice.
        try audio.scaleTimeRange(TimeRange(start: seconds(0.5), duration: seconds(1)), toDuration: seconds(2))
        let scaled = AudioPlan.segments(of: audio.segments, in: TimeRange(start: .zero, duration: seconds(5)))
        #expect(scaled.count == 6)
        #expect(scaled.prefix(4).map(\.fadesOut) == [true, true, true, true])
    }

    @Test func exportRangeCutsSegmentsExactlyAndCountsFromItsStart() throws {
        let asset = try Asset(path: try Self.wav("sin(2*PI*440*t)/4", rate: 48000))
        let composition = Composition()
        let audio = try composition.addMutableTrack(mediaType: .audio)
        try audio.insertTimeRange(TimeRange(start: seconds(0), duration: seconds(2)), of: try #require(asset.tracks.first), at: seconds(1))
        try audio.scaleTimeRange(TimeRange(start: seconds(1), duration: seconds(2)), toDuration: seconds(4))
        let plan = AudioPlan.segments(of: audio.segments, in: TimeRange(from: seconds(2), to: seconds(4)))
        let only = try #require(plan.first)
        #expect(plan.count == 1)
        #expect(only.targetRange == TimeRange(start: .zero, duration: seconds(2)))
        #expect(only.sourceRange == TimeRange(start: seconds(0.5), duration: seconds(1)))
        #expect(only.fadesIn && only.fadesOut)
    }

    // MARK: Rendering

    /// Constant levels make every boundary readable sample by sample: each segment must
    /// start on the exact sample its rational start time gives, whatever the source rate.
    @Test func segmentsLandOnTheirExactSamplesAcrossRatesAndLayouts() throws {
        let high = try Asset(path: try Self.wav("0.5", rate: 48000, channels: 2))
        let low = try Asset(path: try Self.wav("-0.25", rate: 44100, channels: 1))
        let composition = Composition()
        let audio = try composition.addMutableTrack(mediaType: .audio)
        // Odd lengths (1/3 s, 7/30 s, 0.1234 s) so boundaries fall between samples of 44.1 kHz.
        let lengths = [MediaTime(value: 1, timescale: 3), MediaTime(value: 7, timescale: 30), seconds(0.1234),
                       MediaTime(value: 1, timescale: 3), seconds(0.25)]
        var at = MediaTime.zero
        for (index, length) in lengths.enumerated() {
            let source = try #require((index % 2 == 0 ? high : low).tracks.first)
            try audio.insertTimeRange(TimeRange(start: seconds(0.2), duration: length), of: source, at: at)
            at = at + length
        }
        let (samples, format) = try render(composition, spliceFade: .zero)
        #expect(format == AudioFormat(sampleRate: 48000, channels: 2))
        #expect(Int64(samples[0].count) == at.count(in: 48000))
        var boundary = MediaTime.zero
        for (index, length) in lengths.enumerated() {
            let first = Int(boundary.count(in: 48000))
            boundary = boundary + length
            let last = Int(boundary.count(in: 48000)) - 1
            let level: Float = index % 2 == 0 ? 0.5 : -0.25
            for channel in 0..<2 {
                #expect(abs(samples[channel][first] - level) < 0.02, "segment \(index) first sample \(first): \(samples[channel][first])")
                #expect(abs(samples[channel][last] - level) < 0.02, "segment \(index) last sample \(last): \(samples[channel][last])")
            }
        }
    }

    @Test func slowedAudioKeepsItsPitchAndFillsItsNewLengthExactly() throws {
        let (samples, format) = try renderScaled(speed: 0.5, algorithm: .spectral)
        let rate = Int(format.sampleRate)
        // 0.5 s before, 1 s of source slowed to 2 s, 0.5 s after: exactly 3 s.
        #expect(samples.count == 3 * rate)
        #expect(abs(samples.toneFrequency(from: rate, to: 2 * rate, rate: rate) - 440) < 4.4)
        // No silence at the stretched section's end (atempo's tail is filled from the source).
        let steady = samples.level(from: rate / 10, to: rate / 2 - rate / 100)
        #expect(samples.level(from: 5 * rate / 2 - rate / 20, to: 5 * rate / 2 - rate / 200) > steady * 0.9)
        #expect(samples.level(from: 5 * rate / 2 + rate / 200, to: 5 * rate / 2 + rate / 20) > steady * 0.9)
    }

    @Test func quarterSpeedChainsTwoTempoFilters() throws {
        let (samples, format) = try renderScaled(speed: 0.25, algorithm: .timeDomain)
        let rate = Int(format.sampleRate)
        #expect(samples.count == 5 * rate)
        #expect(abs(samples.toneFrequency(from: rate, to: 4 * rate, rate: rate) - 440) < 4.4)
    }

    @Test func varispeedLetsThePitchFollowTheSpeed() throws {
        let (samples, format) = try renderScaled(speed: 0.5, algorithm: .varispeed)
        let rate = Int(format.sampleRate)
        #expect(samples.count == 3 * rate)
        #expect(abs(samples.toneFrequency(from: rate, to: 2 * rate, rate: rate) - 220) < 2.2)
        #expect(abs(samples.toneFrequency(from: rate / 10, to: rate / 2 - rate / 100, rate: rate) - 440) < 4.4)
    }

    @Test func spliceFadeRemovesTheClickOfAHardCut() throws {
        // Cut from the crest of one sine into the trough of another: a jump of ~1.0.
        let up = try Asset(path: try Self.wav("0.5*sin(2*PI*250*t)", rate: 48000))
        let down = try Asset(path: try Self.wav("-0.5*sin(2*PI*250*t)", rate: 48000))
        let composition = Composition()
        let audio = try composition.addMutableTrack(mediaType: .audio)
        try audio.insertTimeRange(TimeRange(start: seconds(0), duration: seconds(0.501)), of: try #require(up.tracks.first), at: .zero)
        try audio.insertTimeRange(TimeRange(start: seconds(0.001), duration: seconds(0.5)), of: try #require(down.tracks.first), at: seconds(0.501))
        let join = 24048
        let sineStep = Float(0.5 * 2 * Double.pi * 250 / 48000)
        let (hard, _) = try render(composition, spliceFade: .zero)
        let (faded, _) = try render(composition, spliceFade: MediaTime(value: 2, timescale: 1000))
        #expect(hard[0].largestStep(from: join - 200, to: join + 200) > 0.9)
        #expect(faded[0].largestStep(from: join - 200, to: join + 200) < sineStep * 1.5, "step \(faded[0].largestStep(from: join - 200, to: join + 200)) vs \(sineStep)")
    }

    // MARK: Helpers

    /// One 440 Hz segment: 0.5 s, then 1 s played at `speed`, then 0.5 s more.
    func renderScaled(speed: Double, algorithm: AudioTimePitchAlgorithm) throws -> ([Float], AudioFormat) {
        let asset = try Asset(path: try Self.wav("sin(2*PI*440*t)/4", rate: 48000))
        let composition = Composition()
        let audio = try composition.addMutableTrack(mediaType: .audio)
        try audio.insertTimeRange(TimeRange(start: .zero, duration: seconds(2)), of: try #require(asset.tracks.first), at: .zero)
        try audio.scaleTimeRange(TimeRange(start: seconds(0.5), duration: seconds(1)), toDuration: try #require(MediaTime(seconds: 1 / speed)))
        let parameters = AudioMixInputParameters(trackID: audio.trackID)
        parameters.audioTimePitchAlgorithm = algorithm
        let (samples, format) = try render(composition, mix: AudioMix(inputParameters: [parameters]), spliceFade: .zero)
        return (samples[0], format)
    }

    func render(_ composition: Composition, mix: AudioMix? = nil, spliceFade: MediaTime,
                loudness: LoudnessNormalization? = nil) throws -> ([[Float]], AudioFormat) {
        let plan = try #require(try AudioPlan.make(composition: composition, audioMix: mix, range: composition.tracks[0].timeRange,
                                                   spliceFade: spliceFade, loudness: loudness))
        let renderer = try AudioRenderer.make(plan: plan)
        var output = Array(repeating: [Float](), count: plan.format.channels)
        while let block = try renderer.nextBlock(count: 1024) {
            for channel in block.indices { output[channel] += block[channel] }
        }
        return (output, plan.format)
    }

    /// A WAV file of `expression` (an `aevalsrc` formula of t), 2 s long, cached for the run.
    static func wav(_ expression: String, rate: Int, channels: Int = 1) throws -> String {
        let name = "wav-\(expression.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) ? String($0) : "_" }.joined())-\(rate)-\(channels).wav"
        return try Fixtures.cached(name) { path in
            let layout = channels == 1 ? "mono" : "stereo"
            try Tool.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=\(expression):s=\(rate):c=\(layout):d=2", "-c:a", "pcm_f32le", path])
        }
    }

    func sine(_ frequency: Double, amplitude: Float, count: Int) -> [Float] {
        (0..<count).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / 48000)) }
    }
}
