import MoonreelMedia

/// What an animation shows outside its active time, as `CAMediaTimingFillMode`. A
/// forwards fill shows only while the animation stays on its layer after completing
/// (`AnimationTiming.isRemovedOnCompletion` false), as in Core Animation.
public enum FillMode: String, Sendable, Hashable, CaseIterable {
    /// No fill: outside its active time the animation has no effect (the default).
    case removed
    /// After the active time the last value stays (if not removed on completion).
    case forwards
    /// Before `beginTime` the first value already shows.
    case backwards
    /// Both `forwards` and `backwards`.
    case both
    /// True for `backwards` and `both`: the first value shows before `beginTime`.
    public var fillsBackwards: Bool { self == .backwards || self == .both }
    /// True for `forwards` and `both`: the last value holds after the active time.
    public var fillsForwards: Bool { self == .forwards || self == .both }
}

/// When an animation runs, as `CAMediaTiming`. Times are in composition time:
/// `beginTime = 0` is the composition's start (AVFoundation's epsilon trick is not needed).
///
/// The values are checked when an animation is built (`BasicAnimation`,
/// `KeyframeAnimation`), which throws `EngineError` for a non-positive duration, a
/// speed outside `speedRange`, a negative repeat count, both `repeatCount` and
/// `repeatDuration` set, or times beyond `maxActiveSeconds`.
public struct AnimationTiming: Sendable, Hashable {
    /// When the animation starts, in composition time (0 = the composition's start).
    public var beginTime: MediaTime
    /// One pass through the keyframes (Core Animation's default is 0.25 s).
    public var duration: MediaTime
    /// Local time runs `speed` times as fast as composition time.
    public var speed: Double
    /// Where in its local time the animation starts (the pass wraps around).
    public var timeOffset: MediaTime
    /// Number of passes (a pass and its reverse count as one); 0 means 1; may be
    /// fractional or `.infinity`.
    public var repeatCount: Double
    /// Alternative to `repeatCount`: how long to repeat, in local time.
    public var repeatDuration: MediaTime?
    /// Each pass plays forwards then backwards (`CAMediaTiming.autoreverses`), so a cycle
    /// lasts twice `duration`.
    public var autoreverses: Bool
    /// What shows before and after the active time (default `.removed`: nothing).
    public var fillMode: FillMode
    /// Core Animation's default: the animation is taken off its layer when it completes,
    /// so the layer shows its model value again whatever the fill mode. Apple's guidance for
    /// exports is to set it false, which lets a forwards fill hold the last value.
    public var isRemovedOnCompletion: Bool
    /// Eases each pass as a whole (`CAAnimation.timingFunction`).
    public var timingFunction: TimingFunction?

    /// Limit on how long an animation can run before repeating for ever, which keeps
    /// exact time arithmetic far from overflow.
    public static let maxActiveSeconds = 1e9
    /// The speeds accepted: 0.001…1000 (Core Animation's 0, a paused animation, is not).
    public static let speedRange = 1e-3...1e3

    /// Timing with Core Animation's defaults: begins at 0, lasts 0.25 s, speed 1, one
    /// pass, no fill, removed on completion, linear pacing. Checked when an animation is
    /// built with it, not here.
    public init(beginTime: MediaTime = .zero, duration: MediaTime = MediaTime(value: 1, timescale: 4),
                speed: Double = 1, timeOffset: MediaTime = .zero, repeatCount: Double = 0,
                repeatDuration: MediaTime? = nil, autoreverses: Bool = false,
                fillMode: FillMode = .removed, isRemovedOnCompletion: Bool = true, timingFunction: TimingFunction? = nil) {
        self.beginTime = beginTime
        self.duration = duration
        self.speed = speed
        self.timeOffset = timeOffset
        self.repeatCount = repeatCount
        self.repeatDuration = repeatDuration
        self.autoreverses = autoreverses
        self.fillMode = fillMode
        self.isRemovedOnCompletion = isRemovedOnCompletion
        self.timingFunction = timingFunction
    }

    func validate() throws {
        guard duration.value > 0 else { throw EngineError("duration must be positive, got \(duration.seconds)") }
        guard Self.speedRange.contains(speed) else {
            throw EngineError("speed must lie in \(Self.speedRange.lowerBound)…\(Self.speedRange.upperBound), got \(speed)")
        }
        guard repeatCount >= 0, !repeatCount.isNaN else { throw EngineError("repeatCount must be 0 or more, got \(repeatCount)") }
        if let repeatDuration {
            guard repeatDuration.value > 0 else { throw EngineError("repeatDuration must be positive, got \(repeatDuration.seconds)") }
            guard repeatCount == 0 else { throw EngineError("set repeatCount or repeatDuration, not both") }
        }
        // Checked in seconds before any exact arithmetic, which would trap on overflow.
        let passes = repeatCount.isInfinite ? 1 : max(repeatCount, 1)
        let activeSeconds = repeatDuration?.seconds ?? (autoreverses ? 2 : 1) * duration.seconds * passes
        let magnitudes = [beginTime.seconds, timeOffset.seconds, activeSeconds, activeSeconds / speed]
        guard magnitudes.allSatisfy({ abs($0) <= Self.maxActiveSeconds }) else {
            throw EngineError("the animation's times must stay within \(Self.maxActiveSeconds) s; set repeatCount to infinity to repeat for ever")
        }
    }

    /// Whether the last value shows after the active time: a forwards fill on an animation
    /// that is not removed on completion.
    var holdsAfterEnd: Bool { fillMode.fillsForwards && !isRemovedOnCompletion }

    /// One pass, or a pass and its reverse.
    var cycle: MediaTime { autoreverses ? duration * 2 : duration }

    /// How long the animation runs in its local time; nil: for ever.
    var activeDuration: MediaTime? {
        if let repeatDuration { return repeatDuration }
        if repeatCount.isInfinite { return nil }
        return repeatCount > 0 ? cycle.scaled(by: repeatCount) : cycle
    }

    /// Composition time at which the animation stops running; nil: never.
    var activeEnd: MediaTime? { activeDuration.map { beginTime + $0.scaled(by: 1 / speed) } }

    /// Whether it runs on past its first cycle (repeats, or for ever), whose values
    /// `lookTimes` looks at: what it shows at the last of them does not stay.
    package var runsPastFirstCycle: Bool {
        activeDuration.map { $0 > cycle } ?? true
    }

    /// Composition times at which every value of the animation shows: `perPass` steps over
    /// its first cycle (later ones repeat it) and a moment after it stops; none before 0,
    /// where nothing is drawn.
    package func lookTimes(perPass steps: Int) -> [MediaTime] {
        let cycleEnd = beginTime + cycle.scaled(by: 1 / speed)
        let end = activeEnd.map { Swift.min($0, cycleEnd) } ?? cycleEnd
        let span = end - beginTime
        var times = (0...Swift.max(steps, 1)).map { beginTime + span.scaled(by: Double($0) / Double(Swift.max(steps, 1))) }
        if let activeEnd { times.append(activeEnd + MediaTime(value: 1, timescale: 1000)) }
        return times.filter { !$0.isNegative }
    }

    /// The fraction of `duration` to show at composition time `t` (after repeats, reversal
    /// and the pass's timing function), or nil when the animation has no effect at `t`.
    /// Running is half-open, `[beginTime, end)`: at `end` only a forwards fill shows.
    func fraction(at t: MediaTime) -> Double? {
        let elapsed = t - beginTime
        if elapsed.isNegative { return fillMode.fillsBackwards ? fraction(atLocal: .zero) : nil }
        let local = elapsed.scaled(by: speed)
        if let active = activeDuration, local >= active {
            return holdsAfterEnd ? fraction(atLocal: active) : nil
        }
        return fraction(atLocal: local)
    }

    /// The fraction at a local time within `0…activeDuration`.
    func fraction(atLocal local: MediaTime) -> Double {
        let passTime = local + timeOffset
        var position = passTime - cycle * passTime.floorDivided(by: cycle)
        // At the very end of a whole number of cycles, show the end of the last one.
        if position.value == 0, local.value > 0, local == activeDuration { position = cycle }
        if autoreverses, position > duration { position = cycle - position }
        let (numerator, denominator, _) = MediaTime.common(position, duration)
        let linear = Double(numerator) / Double(denominator)
        return timingFunction.map { $0(linear) } ?? linear
    }
}

extension MediaTime {
    /// `self × factor`, exact when the factor is 1, else rounded to 1/defaultTimescale s
    /// (the only place where a Double scales an animation's time).
    func scaled(by factor: Double) -> MediaTime {
        guard factor != 1, let ratio = MediaTime(seconds: factor) else { return self }
        let fine = converted(to: Swift.max(timescale, MediaTime.defaultTimescale))
        return fine.multiplied(by: ratio, dividedBy: MediaTime(value: 1, timescale: 1))
    }
}
