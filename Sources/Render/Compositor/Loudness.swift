import CMoonFFmpeg
import CMoonAVShim
#if canImport(Glibc)
import Glibc
#endif
import MoonreelPlatform
import MoonreelComposition
import MoonreelMedia

/// EBU R128 figures of a mix (ITU-R BS.1770 integrated loudness, as libavfilter's `ebur128`
/// measures them).
public struct LoudnessMeasurement: Sendable, Equatable {
    /// Integrated loudness, LUFS (−70 for silence: the absolute gate).
    public let integrated: Double
    /// Highest true peak (4× oversampled) over all channels, dBTP.
    public let truePeak: Double
    /// Loudness range, LU.
    public let range: Double
}

/// Brings an export's audio to an integrated loudness (EBU R128: −23 LUFS for broadcast,
/// −14 for most streaming services, −16 for podcasts) with its peaks under a ceiling.
/// The finished mix (volumes, ducking) is read once to measure it, and the gain that meets
/// the target is applied to the whole; when that gain would lift peaks over the ceiling, the
/// limiter holds them under it and, since limiting lowers the loudness, the mix is measured
/// again through the limiter and the gain corrected (three more readings at most).
public struct LoudnessNormalization: Sendable, Equatable {
    /// Target integrated loudness, LUFS.
    public var integrated: Double
    /// Ceiling for peaks, dBTP. The limiter works on samples, `encoderHeadroom` under it; an
    /// export checks its lossy encoding's peaks against it (`EncodedPeak`).
    public var truePeak: Double

    /// A target of `integrated` LUFS with peaks under `truePeak` dBTP (−1 by default).
    /// E.g. −14 for streaming, −16 for podcasts, −23 for broadcast.
    public init(integrated: Double, truePeak: Double = -1) {
        self.integrated = integrated
        self.truePeak = truePeak
    }

    /// The targets `integrated` may take, in LUFS. The engine does not check them; the scripting
    /// bindings refuse values outside.
    public static let integratedRange = -70.0 ... -5.0
    /// The ceilings `truePeak` may take, in dBTP. The engine does not check them; the scripting
    /// bindings refuse values outside.
    public static let truePeakRange = -20.0...0.0
    /// Quiet audio is raised at most this much (dB), so a near-silent mix keeps its noise down.
    public static let maximumGain = 30.0
    /// How close the limited mix must come to the target before the gain stops being corrected (LU).
    static let tolerance = 0.2
    /// Measurements through the limiter at most (each reads the whole mix again).
    static let limitedPasses = 4
    /// The limiter holds samples this far (dB) under the ceiling: room for the AAC encoder's
    /// overshoot and for peaks between samples.
    static let encoderHeadroom = 0.5

    /// What normalisation settles on for one mix: the gain, the limiter's ceiling, the
    /// loudness the mix will have, and what held it back when that misses the target.
    package struct Settled: Sendable {
        let gain: Float
        let ceiling: Float
        package let expected: Double
        package let heldBack: String?
    }

    /// The linear gain for the mix and the limiter ceiling that bring `plan` to the target;
    /// `extraHeadroom` (dB) lowers the ceiling further, by what an encoding overshot it.
    package func gain(for plan: AudioPlan, cancellation: CancellationFlag?, extraHeadroom: Double = 0) throws -> Settled {
        let headroom = Self.encoderHeadroom + extraHeadroom
        let ceiling = min(Float(pow(10, (truePeak - headroom) / 20)), plan.ceiling)
        let linear = { (decibels: Double) in Float(pow(10, decibels / 20)) }
        let measure = { (decibels: Double, ceiling: Float) in
            try LoudnessMeter.measure(plan, gain: linear(decibels), ceiling: ceiling, cancellation: cancellation)
        }
        let unlimited = try measure(0, .infinity)
        let raisedAtMost = "quiet audio is raised at most \(Int(Self.maximumGain)) dB, so its noise stays down"
        // Silence (below the absolute gate) has no loudness to correct.
        guard unlimited.integrated > LoudnessMeter.silence else {
            return Settled(gain: 1, ceiling: ceiling, expected: unlimited.integrated, heldBack: "the mix is silent")
        }
        var decibels = min(integrated - unlimited.integrated, Self.maximumGain)
        if unlimited.truePeak + decibels <= truePeak - headroom {
            return Settled(gain: linear(decibels), ceiling: ceiling, expected: unlimited.integrated + decibels,
                           heldBack: decibels >= Self.maximumGain ? raisedAtMost : nil)
        }
        // Limiting takes more loudness away the higher the gain: step along the measured
        // curve (secant steps from the unlimited reading) until the target is met.
        var previous = (gain: 0.0, loudness: unlimited.integrated)
        // The gain settled on is one whose result was measured, the nearest the target: a
        // last secant step taken unmeasured missed a bursty mix by 1.4 LU, unsaid.
        var best: (gain: Double, loudness: Double)?
        for pass in 0..<Self.limitedPasses {
            let limited = try measure(decibels, ceiling).integrated
            if best.map({ abs(limited - integrated) < abs($0.loudness - integrated) }) ?? true { best = (decibels, limited) }
            let miss = integrated - limited
            // At the most gain, only a mix that came out too loud is corrected.
            guard abs(miss) > Self.tolerance, decibels < Self.maximumGain || miss < 0, pass < Self.limitedPasses - 1 else { break }
            let slope = min(max((limited - previous.loudness) / (decibels - previous.gain), 0.1), 1)
            previous = (decibels, limited)
            decibels = min(decibels + miss / slope, Self.maximumGain)
        }
        let expected = best?.loudness ?? integrated
        decibels = best?.gain ?? decibels
        let heldBack = decibels >= Self.maximumGain ? raisedAtMost
            : "its peaks are held under the \(truePeak) dBTP ceiling, which takes loudness away"
        return Settled(gain: linear(decibels), ceiling: ceiling, expected: expected, heldBack: heldBack)
    }
}

/// Measures planar float audio with libavfilter's `ebur128` (`abuffer → ebur128 →
/// abuffersink`), reading its running figures from the metadata of the frames it passes on.
package final class LoudnessMeter {
    private let chain: FilterChain
    private let format: AudioFormat
    private var pushed: Int64 = 0
    private var integrated = LoudnessMeter.silence
    private var range = 0.0
    private var truePeak: Double = 0
    /// Momentary loudness (400 ms windows), LUFS, one reading per 100 ms pushed, when asked for.
    package private(set) var momentary: [Double] = []
    private let recordsMomentary: Bool

    /// What `ebur128` reports for silence: its absolute gate.
    static let silence = -70.0

    /// With `recordsMomentary`, blocks must be pushed 100 ms at a time: `ebur128` updates its
    /// momentary reading every 100 ms and a frame carries the latest.
    package init(format: AudioFormat, recordsMomentary: Bool = false) throws {
        self.format = format
        self.recordsMomentary = recordsMomentary
        chain = try FilterChain(chain: [("abuffer", try format.abufferArguments()), ("ebur128", "metadata=1:peak=true")],
                                sink: "abuffersink")
    }

    package func add(_ block: [[Float]]) throws {
        try chain.push(Frame.audio(block, format: format, pts: pushed))
        pushed += Int64(block.first?.count ?? 0)
        try drain()
    }

    @discardableResult
    package func finish() throws -> LoudnessMeasurement {
        try chain.push(nil)
        try drain()
        return LoudnessMeasurement(integrated: integrated, truePeak: truePeak > 0 ? 20 * log10(truePeak) : -.infinity,
                                   range: range)
    }

    private func drain() throws {
        while let frame = try chain.next() {
            let metadata = frame.pointer.pointee.metadata
            let number = { (key: String) in av_dict_get(metadata, key, nil, 0).flatMap { Double(String(cString: $0.pointee.value)) } }
            if let value = number("lavfi.r128.I") { integrated = value }
            if let value = number("lavfi.r128.LRA") { range = value }
            if let value = number("lavfi.r128.true_peak") { truePeak = max(truePeak, value) }
            if recordsMomentary, let value = number("lavfi.r128.M") { momentary.append(value) }
        }
    }

    /// Renders `plan` through a fresh renderer (`gain` and a limiter at `ceiling`; infinity
    /// for none) and measures the result.
    static func measure(_ plan: AudioPlan, gain: Float, ceiling: Float, cancellation: CancellationFlag?) throws -> LoudnessMeasurement {
        let renderer = AudioRenderer(plan: plan, outputGain: gain, ceiling: ceiling)
        let meter = try LoudnessMeter(format: plan.format)
        while let block = try renderer.nextBlock(count: Int(plan.format.sampleRate) / 10) {
            if cancellation?.isCancelled == true { throw EngineError("export cancelled", kind: .cancelled) }
            try meter.add(block)
        }
        return try meter.finish()
    }
}

public extension Composition {
    /// The EBU R128 loudness of `range` (default: all) of the composition's audio as
    /// `audioMix` mixes it; nil when it has no audio. Read as the sources are, without the
    /// export's 2 ms splice fades or limiter: a fade at the start hid a file's first peak.
    func loudness(audioMix: AudioMix? = nil, range: TimeRange? = nil) throws -> LoudnessMeasurement? {
        let whole = TimeRange(start: .zero, duration: duration)
        let measured = range.map { $0.intersection(whole) } ?? whole
        guard let measured else { throw EngineError("the range \(range.map(\.description) ?? "") is outside the composition (0…\(duration.seconds) s)") }
        guard let plan = try AudioPlan.make(composition: self, audioMix: audioMix, range: measured,
                                            spliceFade: .zero) else { return nil }
        return try LoudnessMeter.measure(plan, gain: 1, ceiling: .infinity, cancellation: nil)
    }
}
