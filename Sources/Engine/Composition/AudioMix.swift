/// How a time-scaled audio segment (`scaleTimeRange`) is played, with AVFoundation's names
/// (`AVAudioTimePitchAlgorithm`).
public enum AudioTimePitchAlgorithm: String, Sendable, CaseIterable {
    /// Pitch kept (libavfilter `atempo`); the default.
    case spectral
    /// Pitch kept (libavfilter `atempo`, which is itself a time-domain method).
    case timeDomain
    /// Resampled like a tape played faster or slower: the pitch follows the speed.
    case varispeed

    public var keepsPitch: Bool { self != .varispeed }
}

/// Volume over time for one audio track of a composition, like
/// `AVMutableAudioMixInputParameters`.
public final class AudioMixInputParameters {
    public let trackID: Int
    /// Set when made from an asset track: see `Composition.resolvedTrackID`.
    public var source: SourceReference?
    public var volume = PropertyTimeline<Double>(defaultValue: 1)
    public var audioTimePitchAlgorithm = AudioTimePitchAlgorithm.spectral

    public init(trackID: Int) { self.trackID = trackID }

    public func setVolume(_ value: Double, at time: MediaTime) { volume.set(value, at: time) }

    public func setVolumeRamp(from: Double, to: Double, over range: TimeRange, curve: TimingFunction = .linear) {
        volume.ramp(from: from, to: to, over: range, curve: curve)
    }
}

/// How the audio tracks are mixed, like `AVMutableAudioMix`.
public final class AudioMix {
    public var inputParameters: [AudioMixInputParameters]
    public init(inputParameters: [AudioMixInputParameters] = []) { self.inputParameters = inputParameters }
}
