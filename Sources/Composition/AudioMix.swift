import MoonreelMedia

/// How a time-scaled audio segment (`scaleTimeRange`) is played, with AVFoundation's names
/// (`AVAudioTimePitchAlgorithm`).
public enum AudioTimePitchAlgorithm: String, Sendable, CaseIterable {
    /// Pitch kept (libavfilter `atempo`); the default.
    case spectral
    /// Pitch kept (libavfilter `atempo`, which is itself a time-domain method).
    case timeDomain
    /// Resampled like a tape played faster or slower: the pitch follows the speed.
    case varispeed

    /// Whether the pitch stays the same when the speed changes: true for all but `varispeed`.
    public var keepsPitch: Bool { self != .varispeed }
}

/// Volume over time for one audio track of a composition, like
/// `AVMutableAudioMixInputParameters`.
public final class AudioMixInputParameters {
    /// The composition track these parameters apply to (AVFoundation's `trackID`). Made from
    /// an asset track, the ID may be that track's: see `source`.
    public let trackID: Int
    /// Set when made from an asset track: see `Composition.resolvedTrackID`.
    public var source: SourceReference?
    /// The track's gain over time as a linear factor (1 unchanged, 0.5 half the amplitude, 0
    /// silent); 1 until set. Set it with `setVolume(_:at:)` and `setVolumeRamp(from:to:over:curve:)`.
    public var volume = PropertyTimeline<Double>(defaultValue: 1)
    /// How the track sounds where it plays faster or slower (`scaleTimeRange`), like
    /// `AVAudioMixInputParameters.audioTimePitchAlgorithm`; `.spectral` (pitch kept) by default.
    public var audioTimePitchAlgorithm = AudioTimePitchAlgorithm.spectral
    /// Lowers this track while other tracks carry sound (music under speech); nil: never.
    public var ducking: Ducking?

    /// Parameters for the composition track `trackID`, at full volume, like
    /// `AVMutableAudioMixInputParameters(track:)`.
    public init(trackID: Int) { self.trackID = trackID }

    /// Sets the volume from `time` on, until the next change, like
    /// `AVMutableAudioMixInputParameters.setVolume(_:at:)`. A later call for the same time replaces it.
    /// - Parameters:
    ///   - value: Linear gain: 1 unchanged, 0 silent.
    ///   - time: Composition time.
    /// - Returns: The volume ramp this cuts short (`PropertyTimeline.set(_:at:)`).
    @discardableResult
    public func setVolume(_ value: Double, at time: MediaTime) -> TimeRange? { volume.set(value, at: time) }

    /// Moves the volume in a line (shaped by `curve`) from `from` to `to` over `range`, then holds
    /// `to`, like `setVolumeRamp(fromStartVolume:toEndVolume:timeRange:)`. Before the ramp the
    /// volume is that of the previous change (1 when there is none).
    /// - Parameters:
    ///   - from: Linear gain at `range.start`.
    ///   - to: Linear gain at `range.end` and after.
    ///   - range: The composition time the ramp takes.
    ///   - curve: The ramp's easing; linear by default.
    /// - Returns: The volume change this ramp and it overlap (`PropertyTimeline.ramp(from:to:over:curve:)`).
    @discardableResult
    public func setVolumeRamp(from: Double, to: Double, over range: TimeRange, curve: TimingFunction = .linear) -> TimeRange? {
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
        /// The ID of the composition track whose sound lowers the ducked one.
        public let trackID: Int
        /// Set when named by an asset track: see `Composition.resolvedTrackID`.
        public let source: SourceReference?
        /// Names the track `trackID`; pass `source` when the ID is an asset track's (see
        /// `Composition.resolvedTrackID`).
        public init(trackID: Int, source: SourceReference? = nil) { (self.trackID, self.source) = (trackID, source) }
    }
    /// The tracks whose sound lowers this one; their mixed sum is measured.
    public var under: [Sidechain]
    /// dB, negative: −12 makes the track a quarter as loud (in amplitude) under speech.
    public var amount: Double = -12
    /// dBFS (RMS over `window`) from which the `under` tracks count as sounding.
    public var threshold: Double = -35
    /// How long the gain takes to go down by `amount` once the `under` tracks sound: 50 ms by
    /// default, at most `maximumTime`.
    public var attack = MediaTime(value: 50, timescale: 1000)
    /// How long the level may stay under the threshold (a pause between words) before the
    /// release starts.
    public var hold = MediaTime(value: 300, timescale: 1000)
    /// How long the gain takes to come back up once `hold` has passed: 400 ms by default, at
    /// most `maximumTime`.
    public var release = MediaTime(value: 400, timescale: 1000)
    /// How much of the `under` tracks' sound the level (RMS) is measured over: 10 ms by
    /// default, within `windowRange`.
    public var window = MediaTime(value: 10, timescale: 1000)

    /// Ducking under `under` with the defaults: −12 dB while they are above −35 dBFS, 50 ms
    /// attack, 300 ms hold, 400 ms release, a 10 ms window.
    public init(under: [Sidechain]) { self.under = under }

    /// The values `amount` may take, in dB. The engine does not check them; the scripting
    /// bindings refuse values outside.
    public static let amountRange = -60.0...0.0
    /// The values `threshold` may take, in dBFS. The engine does not check them; the scripting
    /// bindings refuse values outside.
    public static let thresholdRange = -90.0...0.0
    /// Attack, hold and release: long enough for any fade, short enough to count in samples.
    public static let maximumTime = MediaTime(value: 60, timescale: 1)
    /// The lengths `window` may take (1 ms to 1 s). The engine does not check them; the scripting
    /// bindings refuse values outside.
    public static let windowRange = MediaTime(value: 1, timescale: 1000)...MediaTime(value: 1, timescale: 1)
}

/// How the audio tracks are mixed, like `AVMutableAudioMix`.
public final class AudioMix {
    /// The parameters of each audio track, like `AVMutableAudioMix.inputParameters`. A track
    /// with none plays at its `preferredVolume` with the `.spectral` algorithm; when several
    /// name the same track, the last one counts.
    public var inputParameters: [AudioMixInputParameters]
    /// A mix with these parameters (none by default: every track plays as it is).
    public init(inputParameters: [AudioMixInputParameters] = []) { self.inputParameters = inputParameters }
}
