import MoonreelMedia

/// A property animated from one value to another (`CABasicAnimation`). As in Core
/// Animation, any of `fromValue`, `toValue`, `byValue` may be left out:
/// from+to, from+by (to = from + by), by+to (from = to − by); from alone goes to the
/// property's current value, to alone comes from it, by alone adds to it. For transforms,
/// "+ by" means "then by" (concatenation). Strings, booleans and images switch at halfway.
public struct BasicAnimation: Sendable {
    /// The property animated.
    public let keyPath: AnimatableKeyPath
    /// The start value; nil: derived from `toValue` and `byValue`, or the property's value.
    public let fromValue: AnimatableValue?
    /// The end value; nil: derived from `fromValue` and `byValue`, or the property's value.
    public let toValue: AnimatableValue?
    /// The change from start to end (see the type for how it combines with the others).
    public let byValue: AnimatableValue?
    /// When the animation runs, repeats and fills.
    public let timing: AnimationTiming

    /// The fixed start and end, given or made from `byValue`; nil where the property's own
    /// value is used.
    let start: AnimatableValue?
    let end: AnimatableValue?

    /// Builds and checks the animation.
    /// - Throws: `EngineError` when a value's kind does not suit `keyPath`, when all
    ///   three values are set, when `byValue` is given for a discrete property (string,
    ///   boolean, image), when `byValue` is a transform that cannot be inverted (with
    ///   `toValue` alone), or when `timing` is invalid (see `AnimationTiming`).
    public init(keyPath: AnimatableKeyPath, fromValue: AnimatableValue? = nil, toValue: AnimatableValue? = nil,
                byValue: AnimatableValue? = nil, timing: AnimationTiming = AnimationTiming()) throws {
        for (name, value) in [("fromValue", fromValue), ("toValue", toValue), ("byValue", byValue)] {
            if let value { try keyPath.check(value, name) }
        }
        guard fromValue == nil || toValue == nil || byValue == nil else {
            throw EngineError("set at most two of fromValue, toValue and byValue")
        }
        if byValue != nil, keyPath.valueKind.isDiscrete {
            throw EngineError("byValue needs a value that can be added; keyPath \(keyPath.rawValue) takes a \(keyPath.valueKind.rawValue)")
        }
        try timing.validate()
        self.keyPath = keyPath
        self.fromValue = fromValue
        self.toValue = toValue
        self.byValue = byValue
        self.timing = timing
        switch (fromValue, toValue, byValue) {
        case (let from?, nil, let by?): (start, end) = (from, from.adding(by))
        case (nil, let to?, let by?):
            guard let from = to.subtracting(by) else { throw EngineError("byValue cannot be undone (its transform is not invertible)") }
            (start, end) = (from, to)
        default: (start, end) = (fromValue, toValue)
        }
    }

    /// The value at composition time `t` for a property whose value without this animation
    /// is `current`; nil when the animation has no effect at `t`.
    public func value(at t: MediaTime, current: AnimatableValue?) -> AnimatableValue? {
        timing.fraction(at: t).flatMap { value(atFraction: $0, current: current) }
    }

    func value(atFraction fraction: Double, current: AnimatableValue?) -> AnimatableValue? {
        guard let (from, to) = endpoints(current: current) else { return nil }
        guard from.kind == to.kind, !from.kind.isDiscrete else { return fraction < 0.5 ? from : to }
        let pair = AnimatableValue.interpolationComponents(of: [from, to])
        return from.withComponents(zip(pair[0], pair[1]).map { $0 + ($1 - $0) * fraction })
    }

    private func endpoints(current: AnimatableValue?) -> (AnimatableValue, AnimatableValue)? {
        if let start, let end { return (start, end) }
        guard let current else { return nil }
        if let byValue, let sum = current.adding(byValue) { return (current, sum) }
        return (start ?? current, end ?? current)
    }

    var passPieces: [PassPiece] {
        [PassPiece(from: 0, to: 1, values: start.flatMap { s in end.map { [s, $0] } })]
    }
}

/// An animation attached to a layer with `Layer.addAnimation(_:forKey:)`: a keyframe or a
/// basic animation (Core Animation's `CAPropertyAnimation` subclasses).
public enum LayerAnimation: Sendable {
    /// A `CAKeyframeAnimation`-like animation through a list of values.
    case keyframe(KeyframeAnimation)
    /// A `CABasicAnimation`-like animation from one value to another.
    case basic(BasicAnimation)

    /// Throws when a value it reaches lies outside what its property takes (an opacity
    /// of 4, an end that byValue makes below 0), which a setter refuses and drawing would
    /// clamp; the message names the value.
    public func checkRange() throws {
        switch self {
        case .keyframe(let a):
            for (index, value) in a.values.enumerated() { try a.keyPath.check(value, "value \(index + 1) of \(a.values.count)", ranged: true) }
        case .basic(let a):
            let byMade = a.byValue != nil
            if let start = a.start { try a.keyPath.check(start, byMade && a.fromValue == nil ? "fromValue (toValue − byValue)" : "fromValue", ranged: true) }
            if let end = a.end { try a.keyPath.check(end, byMade && a.toValue == nil ? "toValue (fromValue + byValue)" : "toValue", ranged: true) }
        }
    }

    /// The lowest and highest number the animation gives its property over a pass, eased
    /// (an ease that overshoots, a cubic curve bulging past a key, go beyond the values
    /// given); nil for a property that is not a number, or a basic animation from or to the
    /// layer's own value. A cubic curve's bulge between two keys at a bound of `bounds` (a
    /// hold at full opacity) is not counted: drawn at the bound, it is the hold meant.
    public func numbersReached(within bounds: ClosedRange<Double>? = nil) -> ClosedRange<Double>? {
        switch self {
        case .keyframe(let a): return a.numbersReached(within: bounds)
        case .basic(let a):
            guard let start = a.start?.number, let end = a.end?.number else { return nil }
            let progress = a.timing.timingFunction?.progressRange ?? 0...1
            let ends = [start + (end - start) * progress.lowerBound, start + (end - start) * progress.upperBound]
            return min(ends[0], ends[1])...max(ends[0], ends[1])
        }
    }

    /// The property the animation drives.
    public var keyPath: AnimatableKeyPath {
        switch self {
        case .keyframe(let a): a.keyPath
        case .basic(let a): a.keyPath
        }
    }

    /// When the animation runs, repeats and fills.
    public var timing: AnimationTiming {
        switch self {
        case .keyframe(let a): a.timing
        case .basic(let a): a.timing
        }
    }

    /// The value at `t` given the property's value without this animation; nil: no effect.
    public func value(at t: MediaTime, current: AnimatableValue?) -> AnimatableValue? {
        switch self {
        case .keyframe(let a): a.value(at: t)
        case .basic(let a): a.value(at: t, current: current)
        }
    }

    /// When and with which values the animation acts, for the layer timeline.
    var effectPieces: [EffectPiece] {
        switch self {
        case .keyframe(let a): a.timing.effectPieces(pass: a.passPieces, valueAtFraction: a.value(atFraction:))
        case .basic(let a): a.timing.effectPieces(pass: a.passPieces) { a.value(atFraction: $0, current: nil) }
        }
    }
}
