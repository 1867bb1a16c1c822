import MoonreelComposition
import MoonreelMedia
import MoonreelPlatform
import MoonreelRender
/// Takes the audio a sound layer shows, once, when the layer is made.
public extension SoundVisual {
    /// Where the sound comes from: a composition's mix (as `audioMix` mixes it, in the
    /// composition's time), or one audio track laid at composition time 0.
    enum Source {
        /// The composition's audio as `AudioMix` (or none) mixes it.
        case mix(Composition, AudioMix?)
        /// One audio track, from its asset's time 0 at composition time 0.
        case track(AssetTrack)
    }

    /// A layer's sound: `style` with `spectrum`'s settings, or a waveform over `window`
    /// seconds (nil: the frame, for a line; 2 s for bars) in `waveformBars` bars.
    static func measure(_ source: Source, style: Style, spectrum: Spectrum = Spectrum(), window: Double? = nil, waveformBars: Int = 64,
                        colors: [Color], cancellation: CancellationFlag? = nil) throws -> SoundVisual {
        guard (1...512).contains(spectrum.bars), (1...2048).contains(waveformBars) else {
            throw EngineError("bars must be 1…512 for a spectrum and 1…2048 for a waveform", kind: .invalidArgument)
        }
        let frequencies = spectrum.frequencies
        guard frequencies.lowerBound > 0, frequencies.upperBound <= 24000, frequencies.lowerBound < frequencies.upperBound else {
            throw EngineError("frequencyRange must be within 0…24000 Hz, low before high, got \(frequencies)", kind: .invalidArgument)
        }
        guard (0...0.95).contains(spectrum.smoothing), spectrum.range > 0 else {
            throw EngineError("smoothing must be 0…0.95 and the range above 0 dB", kind: .invalidArgument)
        }
        if let window { guard window > 0, window <= 60 else { throw EngineError("window must be more than 0 and at most 60 s, got \(window)", kind: .invalidArgument) } }
        let composition: Composition, mix: AudioMix?
        switch source {
        case .mix(let whole, let audioMix): (composition, mix) = (whole, audioMix)
        case .track(let track):
            guard track.mediaType == .audio else { throw EngineError("track \(track.trackID) of \(track.path) is not audio", kind: .invalidArgument) }
            composition = Composition()
            try composition.addMutableTrack(mediaType: .audio).insertTimeRange(TimeRange(start: .zero, duration: track.timeRange.end), of: track, at: .zero)
            mix = nil
        }
        let range = TimeRange(start: .zero, duration: composition.duration)
        guard let plan = try AudioPlan.make(composition: composition, audioMix: mix, range: range, spliceFade: AudioPlan.defaultSpliceFade,
                                            outputFormat: { _ in AudioFormat(sampleRate: sampleRate, channels: 1) }) else {
            throw EngineError("there is no sound to show: the composition has no audio track", kind: .notFound)
        }
        let renderer = AudioRenderer(plan: plan, outputGain: 1, ceiling: .infinity)
        var samples: [Int16] = []
        samples.reserveCapacity(Int(min(max(plan.sampleCount, 0), 1 << 32)))
        while let block = try renderer.nextBlock(count: 8192) {
            if cancellation?.isCancelled == true { throw EngineError("taking the sound cancelled", kind: .cancelled) }
            samples += block[0].map { Int16((min(max($0, -1), 1) * 32767).rounded()) }
        }
        return SoundVisual(style: style, colors: colors, spectrum: spectrum, window: window, waveformBars: waveformBars,
                           start: plan.start, samples: samples)
    }
}
