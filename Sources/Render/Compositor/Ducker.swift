#if canImport(Glibc)
import Glibc
#endif
import MoonreelComposition
import MoonreelMedia

/// The gain of one ducked track, sample by sample, from the sound of its sidechain (see
/// `Ducking`): a sliding RMS of the key against the threshold, a hold that bridges pauses,
/// and a reduction in dB that moves at the attack or release rate. Owned by the audio
/// thread; its state runs on from block to block.
struct Ducker {
    private let thresholdPower: Double
    private let holdSamples: Int64
    private let depth: Double
    /// dB per sample; infinite for an attack or release of zero (the step is taken at once).
    private let attackStep: Double
    private let releaseStep: Double
    /// The key's power (mean square over channels) of the last `window` samples, and their sum.
    private var powers: [Double]
    private var next = 0
    private var powerSum = 0.0
    /// Samples since the key was last at or above the threshold.
    private var quietFor = Int64.max
    /// Current reduction in dB, 0…depth.
    private(set) var reduction = 0.0

    init(_ ducking: Ducking, sampleRate: Int32) {
        let samples = { (t: MediaTime) in t.count(in: sampleRate) }
        thresholdPower = pow(10, ducking.threshold / 10)
        holdSamples = samples(ducking.hold)
        depth = -ducking.amount
        let attack = samples(ducking.attack), release = samples(ducking.release)
        attackStep = attack > 0 ? depth / Double(attack) : .infinity
        releaseStep = release > 0 ? depth / Double(release) : .infinity
        powers = Array(repeating: 0, count: Int(max(samples(ducking.window), 1)))
    }

    var gain: Float { reduction == 0 ? 1 : Float(pow(10, -reduction / 20)) }
    /// The gain of the last reduction it was worked out for: held fully down (or not at
    /// all) the reduction stays put, and `pow` runs only while it moves.
    private var cachedGain: (reduction: Double, gain: Float) = (0, 1)

    /// One gain per sample of `key` (the sidechain's samples, per channel).
    mutating func gains(key: [[Float]], count: Int) -> [Float] {
        var gains = [Float](repeating: 1, count: count)
        let channels = Double(max(key.count, 1))
        for i in 0..<count {
            var power = 0.0
            for channel in key { power += Double(channel[i]) * Double(channel[i]) }
            power /= channels
            powerSum += power - powers[next]
            powers[next] = power
            next = (next + 1) % powers.count
            // The running sum drifts by rounding; it can never truly be negative.
            let mean = max(powerSum, 0) / Double(powers.count)
            quietFor = mean >= thresholdPower ? 0 : (quietFor == .max ? .max : quietFor + 1)
            if quietFor <= holdSamples {
                reduction = min(depth, reduction + attackStep)
            } else if reduction > 0 {
                reduction = max(0, reduction - releaseStep)
            }
            if reduction != cachedGain.reduction { cachedGain = (reduction, gain) }
            gains[i] = cachedGain.gain
        }
        return gains
    }
}
