/// Volume over time for one audio track of a composition, like
/// `AVMutableAudioMixInputParameters`.
public final class AudioMixInputParameters {
    public let trackID: Int
    public var volume = PropertyTimeline<Double>(defaultValue: 1)

    public init(trackID: Int) { self.trackID = trackID }

    public func setVolume(_ value: Double, at time: MediaTime) { volume.set(value, at: time) }

    public func setVolumeRamp(from: Double, to: Double, over range: TimeRange, curve: RampCurve = .linear) {
        volume.ramp(from: from, to: to, over: range, curve: curve)
    }
}

/// How the audio tracks are mixed, like `AVMutableAudioMix`.
public final class AudioMix {
    public var inputParameters: [AudioMixInputParameters]
    public init(inputParameters: [AudioMixInputParameters] = []) { self.inputParameters = inputParameters }
}
