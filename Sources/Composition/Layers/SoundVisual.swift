#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import MoonreelMedia

/// What a sound layer shows of the audio: the mono signal, taken once when the layer is made
/// (32 kHz, 16 bits: 64 KB a second), and read for each frame's time. A frame shows the
/// sound that plays during it, so a sound shows in its own frame, in any order of rendering.
public final class SoundVisual: Sendable {
    /// How the sound is drawn.
    public enum Style: String, Sendable, CaseIterable {
        /// Bars, one per frequency band (low to high, left to right), as loud as the band
        /// in the sound playing during the frame.
        case spectrum
        /// The waveform of the sound playing during the frame (or `window` seconds from its
        /// start), as a line across the layer.
        case line
        /// Bars of the signal's peak level across `window` seconds centred on the frame (the
        /// playhead in the middle: a sound reaches the centre in its own frame).
        case bars
        /// The same bars mirrored about the middle (an audiogram's waveform).
        case mirror
    }

    /// How spectrum bars are measured.
    public struct Spectrum: Sendable {
        /// Bands spaced evenly in pitch (log frequency) across `frequencies` (Hz).
        public var bars: Int
        /// The lowest and highest frequency shown, Hz (at most 16 kHz is measured).
        public var frequencies: ClosedRange<Double>
        /// Decibels below full scale a bar's height spans: −`range` dBFS is empty, 0 full.
        public var range: Double
        /// How much of a bar's height stays from one frame to the next when the sound falls
        /// (Web Audio's analyser smoothing; rises show at once): 0…0.95.
        public var smoothing: Double

        /// Settings with the defaults of `av.audioSpectrumLayer`: 32 bars over 40 Hz–16 kHz, 70 dB, smoothing 0.5.
        public init(bars: Int = 32, frequencies: ClosedRange<Double> = 40...16000, range: Double = 70, smoothing: Double = 0.5) {
            (self.bars, self.frequencies, self.range, self.smoothing) = (bars, frequencies, range, smoothing)
        }
    }

    /// Spectrum, line, bars or mirrored bars.
    public let style: Style
    /// Colours across the bars or along the line (one: all alike).
    public let colors: [Color]
    /// How spectrum bars are measured (unused by the waveforms).
    public let spectrum: Spectrum
    /// Waveforms: seconds shown (nil for the line: the frame's own duration).
    public let window: Double?
    /// Waveform bars across the layer.
    public let waveformBars: Int
    /// Composition time of the first sample.
    let start: MediaTime
    let samples: [Int16]

    /// Bytes of the signal kept (2 a sample, 64 KB a second): what the layer weighs.
    public var storedBytes: Int { samples.count * MemoryLayout<Int16>.stride }

    /// The signal's sample rate: spectra reach 16 kHz.
    public static let sampleRate: Int32 = 32_000

    /// Spectrum set-ups (an FFT, its window, the bands' bins) by frame length, lent to one
    /// drawing at a time: frames drawn on several render threads each take one, and a layer
    /// makes as many as draw at once, not one per frame.
    private let idleSpectra = Mutex<[Int: [SpectrumSetup]]>([:])

    package init(style: Style, colors: [Color], spectrum: Spectrum, window: Double?, waveformBars: Int, start: MediaTime, samples: [Int16]) {
        self.style = style
        self.colors = colors.isEmpty ? [.white] : colors
        self.spectrum = spectrum
        self.window = window
        self.waveformBars = waveformBars
        self.start = start
        self.samples = samples
    }

    /// The values shown in the frame from `t` lasting `frameDuration`: bar heights 0…1, or
    /// the line's points −1…1.
    func picture(at t: MediaTime, frameDuration: MediaTime) -> SoundPicture {
        let rate = Double(Self.sampleRate)
        let first = Int(((t - start).seconds * rate).rounded())
        let frameLength = max(Int((frameDuration.seconds * rate).rounded()), 1)
        let values: [Float]
        switch style {
        case .spectrum:
            values = spectrumHeights(from: first, frameLength: frameLength)
        case .line:
            let length = max(window.map { Int(($0 * rate).rounded()) } ?? frameLength, 2)
            values = (first..<(first + length)).map(sample)
        case .bars, .mirror:
            let length = (window ?? 2) * rate
            let from = Double(first) + Double(frameLength) / 2 - length / 2
            values = (0..<waveformBars).map { bar -> Float in
                let lower = max(Int((from + length * Double(bar) / Double(waveformBars)).rounded()), 0)
                let upper = min(Int((from + length * Double(bar + 1) / Double(waveformBars)).rounded()), samples.count)
                guard lower < upper else { return 0 }
                return Float(samples[lower..<upper].reduce(0) { max($0, abs(Int32($1))) }) / 32767
            }
        }
        return SoundPicture(style: style, values: values, colors: colors)
    }

    /// The FFT for frames of `frameLength` samples: a window flat over the frame with short
    /// tapers at its ends, and each band's bins.
    private func spectrumSetup(frameLength: Int) -> SpectrumSetup? {
        var length = 2048
        while length < frameLength { length *= 2 }
        // A Tukey window: flat in the middle half, with cosine tapers over its first and last quarter.
        let taper: (Float) -> Float = { x in
            let edge: Float = 0.25
            if x < edge { return 0.5 - 0.5 * cos(Float.pi * x / edge) }
            if x > 1 - edge { return 0.5 - 0.5 * cos(Float.pi * (1 - x) / edge) }
            return 1
        }
        guard let analyser = try? RealSpectrum(length: length, span: frameLength, shape: taper) else { return nil }
        let binWidth = Double(Self.sampleRate) / Double(length)
        let low = spectrum.frequencies.lowerBound, high = min(spectrum.frequencies.upperBound, Double(Self.sampleRate) / 2)
        let bars = spectrum.bars
        let bands = (0..<bars).map { band -> Range<Int> in
            let from = low * pow(high / low, Double(band) / Double(bars)), to = low * pow(high / low, Double(band + 1) / Double(bars))
            let lower = min(max(Int((from / binWidth).rounded()), 1), length / 2)
            return lower..<min(max(Int((to / binWidth).rounded()), lower + 1), length / 2 + 1)
        }
        return SpectrumSetup(analyser: analyser, bands: bands)
    }

    private func sample(_ index: Int) -> Float { index >= 0 && index < samples.count ? Float(samples[index]) / 32767 : 0 }

    /// Each band's loudest bin in the frame's own samples, as a height; falling heights held
    /// by the smoothing, frame by frame back from this one (so the result needs no earlier
    /// frame to have been drawn).
    private func spectrumHeights(from first: Int, frameLength: Int) -> [Float] {
        let bars = spectrum.bars
        guard let setup = idleSpectra.withLock({ $0[frameLength]?.popLast() }) ?? spectrumSetup(frameLength: frameLength) else {
            return [Float](repeating: 0, count: bars)
        }
        defer { idleSpectra.withLock { $0[frameLength, default: []].append(setup) } }
        let (analyser, bands) = (setup.analyser, setup.bands)
        let keep = Float(min(max(spectrum.smoothing, 0), 0.95))
        // Frames further back than this add less than 1 % of their height.
        let reach = keep > 0 ? Int((log(0.01) / log(Double(keep))).rounded(.up)) : 0
        var heights = [Float](repeating: 0, count: bars)
        var weight: Float = 1
        for back in 0...reach {
            let from = first - back * frameLength
            guard from + frameLength > 0 else { break }
            analyser.measure(count: samples.count, from: from, sample: sample)
            for (band, bins) in bands.enumerated() {
                let loudest = bins.reduce(Float(0)) { max($0, analyser.magnitudes[$1]) }
                let decibels = 20 * log10f(max(loudest, 1e-9))
                heights[band] = max(heights[band], weight * min(max((decibels + Float(spectrum.range)) / Float(spectrum.range), 0), 1))
            }
            weight *= keep
        }
        return heights
    }
}

/// An FFT and the bins of each band, used by one drawing at a time (`SoundVisual.idleSpectra`
/// lends it under its lock).
private final class SpectrumSetup: @unchecked Sendable {
    let analyser: RealSpectrum
    let bands: [Range<Int>]
    init(analyser: RealSpectrum, bands: [Range<Int>]) {
        self.analyser = analyser
        self.bands = bands
    }
}

/// A sound layer's drawing at one time: what the renderer draws across the layer's bounds.
package struct SoundPicture: Sendable, Hashable {
    package var style: SoundVisual.Style
    package var values: [Float]
    package var colors: [Color]

    /// The colour at `fraction` (0…1) of the way across: the colours spread evenly, blended between.
    package func color(at fraction: Double) -> Color {
        guard colors.count > 1 else { return colors.first ?? .white }
        let position = min(max(fraction, 0), 1) * Double(colors.count - 1)
        let index = min(Int(position), colors.count - 2), mix = position - Double(index)
        let (a, b) = (colors[index], colors[index + 1])
        return Color(red: a.red + (b.red - a.red) * mix, green: a.green + (b.green - a.green) * mix,
                     blue: a.blue + (b.blue - a.blue) * mix, alpha: a.alpha + (b.alpha - a.alpha) * mix)
    }
}
