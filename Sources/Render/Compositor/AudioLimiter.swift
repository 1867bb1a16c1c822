#if canImport(Glibc)
import Glibc
#endif

/// Keeps a mix under `ceiling` without clipping it. It looks `lookahead` samples ahead: the
/// gain ramps down over that time to what the coming peak needs, so the peak arrives already
/// turned down, and then recovers smoothly (release). A loud passage is turned down as a
/// whole instead of having its peaks flattened — flattened peaks sound harsh and make the AAC
/// encoder overshoot past full scale; without the look ahead, the first peak of each loud
/// passage was flattened (4 dB of a two-tone mix's first half-cycle). Blocks that never come
/// near going over pass bit-exact. One gain for all channels keeps the stereo image in place.
struct PeakLimiter {
    let ceiling: Float
    /// Samples looked ahead, over which the gain ramps down: 5 ms, FFmpeg's `alimiter` attack.
    let lookahead: Int
    /// 1 − gain, kept as such because it decays towards 0 without Float's rounding stalling
    /// near 1.
    private var reduction: Float = 0
    /// Share of the reduction kept from one sample to the next while recovering.
    private let releaseFactor: Float
    /// The last `lookahead` samples' lowest needed gains over their look-ahead windows (a
    /// ring), their sum, and how many are under 1: averaged, they ramp the gain down.
    private var windowMinima: [Float]
    private var windowSum: Float
    private var windowCursor = 0
    private var windowUnderOne = 0
    /// Samples processed so far.
    private(set) var samples: Int64 = 0
    /// The largest reduction so far (1 − the lowest gain).
    private(set) var deepestReduction: Float = 0
    /// Samples turned down by more than `heardReduction`, and the first of them.
    private(set) var heardSamples: Int64 = 0
    private(set) var firstHeard: Int64?
    /// A reduction 1 dB (10^(−1/20)) beyond what the ceiling's own headroom under full scale
    /// takes: less, on the peaks of a mix, is not heard as the level changing; more is a
    /// volume other than the one asked for. (Counted from full scale, a loud master whose
    /// encoded peaks pass it by a quarter of a dB was blamed on its volumes.)
    let heardReduction: Float

    /// −1 dBFS: room for a lossy encoder's overshoot, as EBU R128 leaves for distribution
    /// (−1 dBTP). At −0.45 dBFS, AAC rebuilt a dense two-tone mix 0.66 dB higher, past full
    /// scale: clipped wherever it was played.
    static let defaultCeiling: Float = 0.891

    init(ceiling: Float = PeakLimiter.defaultCeiling, releaseSeconds: Double = 0.2, sampleRate: Int32) {
        self.ceiling = ceiling
        releaseFactor = Float(exp(-1 / (releaseSeconds * Double(sampleRate))))
        lookahead = max(1, Int(sampleRate) / 200)
        heardReduction = 1 - min(ceiling, 1) * 0.891
        windowMinima = Array(repeating: 1, count: lookahead)
        windowSum = Float(lookahead)
    }

    var gain: Float { 1 - reduction }

    /// Limits `block` in place; `upcoming` holds the mix's next samples (up to `lookahead` − 1
    /// of them; fewer, or none, at its end), which the next call will be given as its block.
    mutating func process(_ block: inout [[Float]], upcoming: [[Float]] = []) {
        guard let count = block.first?.count, count > 0 else { return }
        let ahead = min(upcoming.first?.count ?? 0, lookahead - 1)
        // The gain each sample needs on its own, for the block and what follows it.
        var needed = [Float](repeating: 1, count: count + ahead)
        var over = false
        for i in 0..<(count + ahead) {
            var peak: Float = 0
            for channel in block.indices {
                peak = max(peak, abs(i < count ? block[channel][i] : upcoming[channel][i - count]))
            }
            if peak > ceiling {
                needed[i] = ceiling / peak
                over = true
            }
        }
        if !over, reduction == 0, windowUnderOne == 0 {
            samples += Int64(count)
            return
        }
        if samples == 0, let first = needed.prefix(lookahead).min(), first < 1 {
            // A mix loud from its first sample has no time before it to ramp in: it starts
            // turned down, as if it had been as loud before.
            (windowMinima, windowSum, windowUnderOne) = (Array(repeating: first, count: lookahead), first * Float(lookahead), lookahead)
        }
        // The lowest needed gain over each sample's look-ahead window, by a rising deque.
        var deque: [Int] = [], head = 0
        func push(_ index: Int) {
            while deque.count > head, needed[deque[deque.count - 1]] >= needed[index] { deque.removeLast() }
            deque.append(index)
        }
        for index in 0..<min(lookahead - 1, needed.count) { push(index) }
        for i in 0..<count {
            if i + lookahead - 1 < needed.count { push(i + lookahead - 1) }
            while deque[head] < i { head += 1 }
            let windowMinimum = needed[deque[head]]
            // Averaged over the last `lookahead` samples: the ramp reaches each peak's need by
            // the time the peak comes (every window up to it holds it).
            let leaving = windowMinima[windowCursor]
            if leaving < 1 { windowUnderOne -= 1 }
            if windowMinimum < 1 { windowUnderOne += 1 }
            windowSum += windowMinimum - leaving
            windowMinima[windowCursor] = windowMinimum
            windowCursor = (windowCursor + 1) % lookahead
            if windowCursor == 0 {
                // Summed afresh once a window: a running float sum drifts over a long loud mix
                // (+0.04 dB in ten minutes, held only by the clamp below).
                windowSum = windowMinima.reduce(0, +)
            }
            let ramp = min(1, windowSum / Float(lookahead))
            if reduction > 0 {
                reduction *= releaseFactor
                if reduction < 1e-6 { reduction = 0 }
            }
            reduction = max(reduction, 1 - ramp)
            guard reduction > 0 else { continue }
            let gain = 1 - reduction
            for channel in block.indices {
                // The ramp's float sum may miss by a hair: the ceiling holds exactly.
                block[channel][i] = max(-ceiling, min(ceiling, block[channel][i] * gain))
            }
            deepestReduction = max(deepestReduction, reduction)
            if reduction > heardReduction {
                heardSamples += 1
                if firstHeard == nil { firstHeard = samples + Int64(i) }
            }
        }
        samples += Int64(count)
    }
}
