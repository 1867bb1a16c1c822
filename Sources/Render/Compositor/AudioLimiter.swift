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
            }
        }
    }
}
