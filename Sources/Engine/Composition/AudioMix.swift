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
    /// Lowers this track while other tracks carry sound (music under speech); nil: never.
    public var ducking: Ducking?

    public init(trackID: Int) { self.trackID = trackID }

    public func setVolume(_ value: Double, at time: MediaTime) { volume.set(value, at: time) }

    public func setVolumeRamp(from: Double, to: Double, over range: TimeRange, curve: TimingFunction = .linear) {
        volume.ramp(from: from, to: to, over: range, curve: curve)
    }
}

/// Sidechain ducking, Moonreel's own (AVFoundation has none): while the level of the `under`
/// tracks (as mixed: after their volume, before any ducking of their own) is at or above `threshold`, this track's gain moves
/// down by `amount` dB in a straight line (in dB) over `attack`; once their level has stayed
/// below the threshold for `hold`, the gain comes back up over `release`. The level is the
/// RMS of the sum of the `under` tracks over the last `window`, every sample. All times are
/// counted in output samples, so the result is the same however the audio is cut into blocks.
public struct Ducking: Sendable, Equatable {
    /// A track whose sound lowers the ducked one.
    public struct Sidechain: Sendable, Equatable {
        public let trackID: Int
        /// Set when named by an asset track: see `Composition.resolvedTrackID`.
        public let source: SourceReference?
        public init(trackID: Int, source: SourceReference? = nil) { (self.trackID, self.source) = (trackID, source) }
    }
    public var under: [Sidechain]
    /// dB, negative: −12 makes the track a quarter as loud (in amplitude) under speech.
    public var amount: Double = -12
    /// dBFS (RMS over `window`) from which the `under` tracks count as sounding.
    public var threshold: Double = -35
    public var attack = MediaTime(value: 50, timescale: 1000)
    /// How long the level may stay under the threshold (a pause between words) before the
    /// release starts.
    public var hold = MediaTime(value: 300, timescale: 1000)
    public var release = MediaTime(value: 400, timescale: 1000)
    public var window = MediaTime(value: 10, timescale: 1000)

    public init(under: [Sidechain]) { self.under = under }

    public static let amountRange = -60.0...0.0
    public static let thresholdRange = -90.0...0.0
    /// Attack, hold and release: long enough for any fade, short enough to count in samples.
    public static let maximumTime = MediaTime(value: 60, timescale: 1)
    public static let windowRange = MediaTime(value: 1, timescale: 1000)...MediaTime(value: 1, timescale: 1)
}

/// How the audio tracks are mixed, like `AVMutableAudioMix`.
public final class AudioMix {
    public var inputParameters: [AudioMixInputParameters]
    public init(inputParameters: [AudioMixInputParameters] = []) { self.inputParameters = inputParameters }
}
