#if canImport(Glibc)
import Glibc
#endif

/// Keeps a mix under `ceiling` without clipping it. When a sample would go over, the gain
/// drops at once to what that sample needs and then recovers smoothly (release), so a loud
/// passage is turned down as a whole instead of having its peaks flattened — flattened
/// peaks sound harsh and make the AAC encoder overshoot past full scale. Blocks that never
/// go over pass bit-exact. One gain for all channels keeps the stereo image in place.
struct PeakLimiter {
    let ceiling: Float
    /// 1 − gain, kept as such because it decays towards 0 without Float's rounding stalling
    /// near 1.
    private var reduction: Float = 0
    /// Share of the reduction kept from one sample to the next while recovering.
    private let releaseFactor: Float
    /// Samples processed so far.
    private(set) var samples: Int64 = 0
    /// The largest reduction so far (1 − the lowest gain).
    private(set) var deepestReduction: Float = 0
    /// Samples turned down by more than `heardReduction`, and the first of them.
    private(set) var heardSamples: Int64 = 0
    private(set) var firstHeard: Int64?
    /// A reduction of 1 dB (1 − 10^(−1/20)): less, on the peaks of a mix, is not heard as the
    /// level changing; more is a volume other than the one asked for.
    static let heardReduction: Float = 1 - 0.891

    /// −0.45 dBFS: room for the AAC encoder's overshoot.
    static let defaultCeiling: Float = 0.95

    init(ceiling: Float = PeakLimiter.defaultCeiling, releaseSeconds: Double = 0.2, sampleRate: Int32) {
        self.ceiling = ceiling
        releaseFactor = Float(exp(-1 / (releaseSeconds * Double(sampleRate))))
    }

    var gain: Float { 1 - reduction }

    mutating func process(_ channels: inout [[Float]]) {
        guard let count = channels.first?.count else { return }
        for i in 0..<count {
            var peak: Float = 0
            for channel in channels.indices { peak = max(peak, abs(channels[channel][i])) }
            if reduction > 0 {
                reduction *= releaseFactor
                if reduction < 1e-6 { reduction = 0 }
            }
            if peak * gain > ceiling { reduction = 1 - ceiling / peak }
            if reduction > 0 {
                for channel in channels.indices { channels[channel][i] *= gain }
                deepestReduction = max(deepestReduction, reduction)
                if reduction > Self.heardReduction {
                    heardSamples += 1
                    if firstHeard == nil { firstHeard = samples + Int64(i) }
                }
            }
        }
        samples += Int64(count)
    }
}
