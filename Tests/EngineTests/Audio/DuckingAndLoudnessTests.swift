import Foundation
import Testing
import TestSupport
@testable import MoonreelEngine
@testable import MoonreelRender

/// Sidechain ducking and loudness normalisation, on the mixer's own float output: music is
/// a 440 Hz sine, "speech" a 1 kHz tone, each read apart from the mix by its own frequency.
extension AudioEngineTests {
    // MARK: Ducking

    /// The gain curve counted in samples: full depth exactly `attack` samples after the key
    /// starts, held `hold` samples after it stops (plus the RMS window emptying), back to 1
    /// exactly `release` samples later.
    @Test func duckerMovesInStraightDecibelLinesOfExactSampleLengths() {
        var settings = Ducking(under: [])
        settings.amount = -12
        settings.threshold = -30
        settings.attack = MediaTime(value: 100, timescale: 48000)
        settings.hold = MediaTime(value: 50, timescale: 48000)
        settings.release = MediaTime(value: 200, timescale: 48000)
        settings.window = MediaTime(value: 10, timescale: 48000)
        var ducker = Ducker(settings, sampleRate: 48000)
        let key = [Float](repeating: 0, count: 1000) + [Float](repeating: 0.5, count: 1000) + [Float](repeating: 0, count: 1000)
        var gains: [Float] = []
        for block in stride(from: 0, to: key.count, by: 256) {   // blocks that cut across every phase
            let piece = Array(key[block..<min(block + 256, key.count)])
            gains += ducker.gains(key: [piece, piece], count: piece.count)
        }
        let decibels = gains.map { 20 * log10(Double($0)) }
        #expect(gains[999] == 1)
        #expect(abs(decibels[1000 + 49] - -6) < 1e-6, "half way down after half the attack: \(decibels[1049])")
        #expect(abs(decibels[1000 + 99] - -12) < 1e-6 && gains[1500] == gains[1099])
        // The 10-sample window last holds a loud sample at 2008; the hold keeps the depth 50
        // samples more, then the release takes 200.
        let lastHeld = 2008 + 50
        #expect(gains[lastHeld] == gains[1500], "still fully down at the end of the hold")
        #expect(abs(decibels[lastHeld + 100] - -6) < 1e-6, "half way up: \(decibels[lastHeld + 100])")
        #expect(gains[lastHeld + 199] < 1 && gains[lastHeld + 200] == 1 && gains[2999] == 1)
    }

    @Test func musicIsDuckedWhileSpeechPlaysAndRecoversAfterTheRelease() throws {
        let music = try Asset(path: try Self.wav("0.25*sin(2*PI*440*t)", rate: 48000))
        let speech = try Asset(path: try Self.wav("0.3*sin(2*PI*1000*t)*between(t\\,0.5\\,1)", rate: 48000))
        let composition = Composition()
        let musicTrack = try composition.addMutableTrack(mediaType: .audio)
        let speechTrack = try composition.addMutableTrack(mediaType: .audio)
        try musicTrack.insertTimeRange(TimeRange(start: .zero, duration: seconds(2)), of: try #require(music.tracks.first), at: .zero)
        try speechTrack.insertTimeRange(TimeRange(start: .zero, duration: seconds(2)), of: try #require(speech.tracks.first), at: .zero)
        let parameters = AudioMixInputParameters(trackID: musicTrack.trackID)
        var ducking = Ducking(under: [.init(trackID: speechTrack.trackID)])
        ducking.amount = -12
        ducking.hold = seconds(0.1)
        ducking.release = seconds(0.2)
        parameters.ducking = ducking
        let (mixed, format) = try render(composition, mix: AudioMix(inputParameters: [parameters]), spliceFade: .zero)
        let samples = mixed[0], rate = Int(format.sampleRate)
        let musicAt = { (t: Double) in samples.toneAmplitude(440, from: Int(t * Double(rate)), to: Int((t + 0.05) * Double(rate)), rate: rate) / 0.25 }
        #expect(abs(musicAt(0.2) - 1) < 0.01)
        for t in [0.6, 0.8, 0.95] {
            #expect(abs(20 * log10(musicAt(t)) - -12) < 0.1, "at \(t) s: \(20 * log10(musicAt(t))) dB")
        }
        // Speech ends at 1 s; 10 ms window + 100 ms hold, then 200 ms of release: back by 1.31 s.
        #expect(abs(20 * log10(musicAt(1.05)) - -12) < 0.1)
        #expect(abs(musicAt(1.4) - 1) < 0.01 && abs(musicAt(1.9) - 1) < 0.01)
        // The speech itself is untouched.
        #expect(abs(samples.toneAmplitude(1000, from: rate * 6 / 10, to: rate * 9 / 10, rate: rate) - 0.3) < 0.01)
    }

    @Test func duckingUnderATrackThatIsNotInTheCompositionIsAnError() throws {
        let music = try Asset(path: try Self.wav("0.25*sin(2*PI*440*t)", rate: 48000))
        let composition = Composition()
        let track = try composition.addMutableTrack(mediaType: .audio)
        try track.insertTimeRange(TimeRange(start: .zero, duration: seconds(1)), of: try #require(music.tracks.first), at: .zero)
        let parameters = AudioMixInputParameters(trackID: track.trackID)
        parameters.ducking = Ducking(under: [.init(trackID: 42)])
        #expect(throws: EngineError.self) {
            try AudioPlan.make(composition: composition, audioMix: AudioMix(inputParameters: [parameters]),
                               range: track.timeRange, spliceFade: .zero)
        }
        parameters.ducking = Ducking(under: [.init(trackID: track.trackID)])
        #expect(throws: EngineError.self) {
            try AudioPlan.make(composition: composition, audioMix: AudioMix(inputParameters: [parameters]),
                               range: track.timeRange, spliceFade: .zero)
        }
    }

    // MARK: Loudness

    /// BS.1770 by hand: a mono 997 Hz sine of amplitude A reads 20·log10(A) − 3.01 LUFS
    /// (the K-weighting is 0.69 dB at 1 kHz, which the −0.691 of the formula cancels).
    @Test func meterReadsTheLoudnessOfASineAsBS1770Defines() throws {
        let composition = try Self.composition(of: "0.1*sin(2*PI*997*t)")
        let measured = try #require(try composition.loudness())
        #expect(abs(measured.integrated - (20 * log10(0.1) - 3.01)) < 0.1, "\(measured)")
        #expect(abs(measured.truePeak - 20 * log10(0.1)) < 0.1, "\(measured)")
    }

    @Test func normalisationAppliesOneGainWhenThePeaksAllowIt() throws {
        let composition = try Self.composition(of: "0.1*sin(2*PI*997*t)")
        let (samples, _) = try render(composition, spliceFade: .zero, loudness: LoudnessNormalization(integrated: -16))
        // −23 LUFS → −16 LUFS: +7 dB, the same on every sample.
        let peak = samples[0][24000..<48000].map(abs).max() ?? 0
        #expect(abs(Double(peak) - 0.1 * pow(10, 7.0 / 20)) < 0.002, "peak \(peak)")
    }

    /// Clicks far above a quiet tone: the gain that meets the target would put them over the
    /// ceiling, so the limiter holds them and the gain is corrected for what it took away.
    @Test func normalisationLimitsPeaksAndStillMeetsTheTarget() throws {
        let composition = try Self.composition(of: "0.05*sin(2*PI*440*t)+0.5*lt(mod(t\\,0.25)\\,0.001)")
        let target = LoudnessNormalization(integrated: -14, truePeak: -1)
        let (samples, format) = try render(composition, spliceFade: .zero, loudness: target)
        let peak = samples[0].map(abs).max() ?? 0
        #expect(Double(peak) <= pow(10, -1.0 / 20) + 1e-6, "peak \(peak)")
        let meter = try LoudnessMeter(format: format)
        try meter.add(samples)
        let measured = try meter.finish()
        #expect(abs(measured.integrated - -14) < 0.5, "\(measured)")
    }

    static func composition(of expression: String) throws -> Composition {
        let asset = try Asset(path: try wav(expression, rate: 48000))
        let composition = Composition()
        let track = try composition.addMutableTrack(mediaType: .audio)
        try track.insertTimeRange(TimeRange(start: .zero, duration: seconds(2)), of: try #require(asset.tracks.first), at: .zero)
        return composition
    }
}
