#if canImport(Glibc)
import Glibc
#endif
import MoonreelMedia

/// How strongly something new starts at each moment of mono audio: the spectral flux of
/// log-compressed magnitude spectra (each bin's rise since the previous spectrum), one value
/// per `hop` samples. Beats and onsets are picked from it. Spectra are 1024-sample Hann
/// windows (≈ 21–23 ms) every 256 samples (≈ 5.3–5.8 ms), transformed with libavutil's real
/// FFT. The flux is measured apart in three bands — bass (kick drums), middle and treble
/// (snares, hats, consonants) — each scaled by its own typical size before they are summed,
/// so a kick on 1 and 3 counts as much as a snare on 2 and 4 (Scheirer's multi-band idea):
/// otherwise the broadband snare alone sets the pulse, at half the tempo.
final class OnsetEnvelope {
    static let windowLength = 1024
    static let hop = 256
    /// Magnitudes are compressed as log(1 + γ·|X|) (|X| in amplitude units of a sine), so
    /// quiet and loud events rise alike.
    private static let compression: Float = 100

    /// Upper edges of the bands but the last, Hz.
    private static let bandEdges = [200.0, 2000.0]

    let sampleRate: Int
    /// The flux of each band in each spectrum, spectrum `k` centred on sample `k · hop`.
    private var bandFlux: [[Float]]
    /// The first bin of each band, and the end.
    private let bandStarts: [Int]

    /// What a bar's first beat is heard by besides its drums (`BarTracker`): each spectrum's
    /// pitch-class profile (its log magnitudes from `chromaRange`, each bin counted to the
    /// nearest semitone's class; 12 values a spectrum, over the largest of them), where chord
    /// changes show. Each profile is scaled to its largest class, as chroma features usually
    /// are (Müller 2015, §3.1.2), so that a beat's profile is the shape of its frames, not that
    /// of its loudest ones: a distorted guitar's attack outweighed the chord it held.
    private(set) var chroma: [Float] = []
    /// Frequencies whose bins count to the pitch classes, Hz: above the kick's thump, and up to
    /// where the chords' fundamentals and first overtones end (the bins are 43–47 Hz wide, so
    /// lower notes blur into their neighbours).
    static let chromaRange = 80.0...2000.0
    /// The pitch class of each bin in `chromaRange` (others -1).
    private let pitchClass: [Int]

    private let spectrum: RealSpectrum
    private var pending: [Float]
    private var previous: [Float]
    private var current: [Float]

    init(sampleRate: Int) throws {
        self.sampleRate = sampleRate
        let length = Self.windowLength
        spectrum = try RealSpectrum(length: length)
        // Half a window of silence first, so spectrum 0 is centred on sample 0.
        pending = [Float](repeating: 0, count: length / 2)
        previous = [Float](repeating: 0, count: length / 2 + 1)
        current = previous
        let binWidth = Double(sampleRate) / Double(length)
        bandStarts = [1] + Self.bandEdges.map { max(2, Int(($0 / binWidth).rounded())) } + [length / 2 + 1]
        bandFlux = Array(repeating: [], count: Self.bandEdges.count + 1)
        pitchClass = (0...(length / 2)).map { bin in
            let frequency = Double(bin) * binWidth
            guard Self.chromaRange.contains(frequency) else { return -1 }
            let midi = Int((12 * log2(frequency / 440) + 69).rounded())
            return ((midi % 12) + 12) % 12
        }
    }

    /// Takes the next mono samples.
    func add(_ samples: [Float]) {
        pending.append(contentsOf: samples)
        var start = 0
        while pending.count - start >= Self.windowLength {
            measure(from: start)
            start += Self.hop
        }
        pending.removeFirst(start)
    }

    /// Takes the end of the audio: the last spectra see silence after it.
    func finish() {
        add([Float](repeating: 0, count: Self.windowLength / 2))
    }

    /// The onset envelope: the bands' fluxes, each over its root mean square (or a tenth of
    /// the loudest band's, so a band with nothing in it does not amplify its noise), summed.
    func combined() -> [Float] { sum(of: Array(bandFlux.indices)) }

    /// The bass and middle bands alone, summed as in `combined`: kicks, snares, bass and
    /// chords — what a bar's beats are played with — without the hats and cymbals that
    /// tick between them.
    func body() -> [Float] { sum(of: Array(0..<(bandFlux.count - 1))) }

    /// The bass band's flux alone: the kicks (and bass notes) that mark a bar's first beat.
    func bass() -> [Float] { bandFlux.first ?? [] }

    /// Each band's flux alone (bass, middle, treble), scaled as in `combined`: what the
    /// independent beat trackers of `BeatTracker.agreement` listen to.
    func bands() -> [[Float]] { bandFlux.indices.map { sum(of: [$0]) } }

    private func sum(of bands: [Int]) -> [Float] {
        let sizes = bandFlux.map { flux in (flux.reduce(0) { $0 + $1 * $1 } / Float(max(flux.count, 1))).squareRoot() }
        let floor = 0.1 * (sizes.max() ?? 0)
        guard floor > 0 else { return bandFlux.first.map { [Float](repeating: 0, count: $0.count) } ?? [] }
        var sum = [Float](repeating: 0, count: bandFlux[0].count)
        for band in bands {
            let scale = 1 / max(sizes[band], floor)
            for i in sum.indices { sum[i] += bandFlux[band][i] * scale }
        }
        return sum
    }

    private func measure(from start: Int) {
        spectrum.measure(pending, from: start)
        for (k, magnitude) in spectrum.magnitudes.enumerated() { current[k] = log1pf(Self.compression * magnitude) }
        var profile = [Float](repeating: 0, count: 12)
        for (k, pitch) in pitchClass.enumerated() where pitch >= 0 { profile[pitch] += current[k] }
        let loudest = profile.max() ?? 0
        chroma.append(contentsOf: loudest > 0 ? profile.map { $0 / loudest } : profile)
        for band in bandFlux.indices {
            let bins = bandStarts[band]..<max(bandStarts[band], bandStarts[band + 1])
            var flux: Float = 0
            for k in bins { flux += max(0, current[k] - previous[k]) }
            bandFlux[band].append(flux / Float(max(bins.count, 1)))
        }
        swap(&previous, &current)
    }
}
