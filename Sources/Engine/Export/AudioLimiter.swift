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
    private(set) var gain: Float = 1
    /// Fraction of the remaining gain reduction recovered per sample.
    private let release: Float

    init(ceiling: Float = 0.95, releaseSeconds: Double = 0.2, sampleRate: Int32) {
        self.ceiling = ceiling
        release = Float(1 - exp(-1 / (releaseSeconds * Double(sampleRate))))
    }

    mutating func process(_ channels: inout [[Float]]) {
        guard let count = channels.first?.count else { return }
        for i in 0..<count {
            var peak: Float = 0
            for channel in channels.indices { peak = max(peak, abs(channels[channel][i])) }
            if gain < 1 {
                gain += (1 - gain) * release
                // Float steps this small would never reach 1 exactly.
                if 1 - gain < 1e-6 { gain = 1 }
            }
            if peak * gain > ceiling { gain = ceiling / peak }
            if gain < 1 {
                for channel in channels.indices { channels[channel][i] *= gain }
            }
        }
    }
}
