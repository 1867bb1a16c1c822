import CMoonFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// Magnitude spectra of windows of a signal: a Hann window (or another shape) and
/// libavutil's real FFT, scaled so a full-scale sine's bin reads about 1. One owner thread.
package final class RealSpectrum {
    let length: Int
    private let transform: av_tx_fn
    private var context: OpaquePointer?
    private let window: [Float]
    private var input: [Float]
    private var bins: [AVComplexFloat]
    /// The magnitudes of the last window measured, `length / 2 + 1` bins.
    package private(set) var magnitudes: [Float]

    /// `length` samples (a power of two) windowed by `shape` (a function of the position 0…1
    /// across the window; Hann by default) over its first `span` samples, zeros after.
    package init(length: Int, span: Int? = nil, shape: (Float) -> Float = { 0.5 - 0.5 * cos(2 * Float.pi * $0) }) throws {
        self.length = length
        var scale: Float = 1
        var function: av_tx_fn?
        let status = av_tx_init(&context, &function, AV_TX_FLOAT_RDFT, 0, Int32(length), &scale, UInt64(AV_TX_UNALIGNED.rawValue))
        guard status >= 0, let function else { throw EngineError("cannot set up an FFT of \(length) samples", kind: .internal) }
        transform = function
        let covered = min(span ?? length, length)
        let weights = (0..<length).map { $0 < covered ? shape(Float($0) / Float(covered)) : 0 }
        let sum = weights.reduce(0, +)
        window = weights.map { sum > 0 ? $0 * 2 / sum : 0 }
        input = [Float](repeating: 0, count: length)
        bins = [AVComplexFloat](repeating: AVComplexFloat(re: 0, im: 0), count: length / 2 + 1)
        magnitudes = [Float](repeating: 0, count: length / 2 + 1)
    }

    deinit { av_tx_uninit(&context) }

    /// Measures the window of `signal` starting at `first` (zeros outside it) into `magnitudes`.
    package func measure(_ signal: [Float], from first: Int) {
        measure(count: signal.count, from: first) { signal[$0] }
    }

    /// Measures the window starting at sample `first` of a signal of `count` samples that
    /// `sample` reads (zeros outside it) into `magnitudes`.
    package func measure(count: Int, from first: Int, sample: (Int) -> Float) {
        for i in 0..<length {
            let index = first + i
            input[i] = index >= 0 && index < count && window[i] != 0 ? sample(index) * window[i] : 0
        }
        input.withUnsafeMutableBytes { samples in
            bins.withUnsafeMutableBytes { out in
                transform(context, out.baseAddress, samples.baseAddress, MemoryLayout<AVComplexFloat>.stride)
            }
        }
        for k in bins.indices { magnitudes[k] = (bins[k].re * bins[k].re + bins[k].im * bins[k].im).squareRoot() }
    }
}
