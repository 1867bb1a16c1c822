/// A property animated from one value to another (`CABasicAnimation`). As in Core
/// Animation, any of `fromValue`, `toValue`, `byValue` may be left out:
/// from+to, from+by (to = from + by), by+to (from = to − by); from alone goes to the
/// property's current value, to alone comes from it, by alone adds to it. For transforms,
/// "+ by" means "then by" (concatenation). Strings, booleans and images switch at halfway.
public struct BasicAnimation: Sendable {
    public let keyPath: AnimatableKeyPath
    public let fromValue: AnimatableValue?
    public let toValue: AnimatableValue?
    public let byValue: AnimatableValue?
    public let timing: AnimationTiming

    /// The fixed start and end, where they do not depend on the current value.
    private let start: AnimatableValue?
    private let end: AnimatableValue?

    public init(keyPath: AnimatableKeyPath, fromValue: AnimatableValue? = nil, toValue: AnimatableValue? = nil,
                byValue: AnimatableValue? = nil, timing: AnimationTiming = AnimationTiming()) throws {
        for (name, value) in [("fromValue", fromValue), ("toValue", toValue), ("byValue", byValue)] {
            if let value { try keyPath.check(value, name) }
        }
        guard fromValue == nil || toValue == nil || byValue == nil else {
            throw AnimationError("set at most two of fromValue, toValue and byValue")
        }
        if byValue != nil, keyPath.valueKind.isDiscrete {
            throw AnimationError("byValue needs a value that can be added; keyPath \(keyPath.rawValue) takes a \(keyPath.valueKind.rawValue)")
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
            guard let from = to.subtracting(by) else { throw AnimationError("byValue cannot be undone (its transform is not invertible)") }
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

/// An animation attached to a layer.
public enum LayerAnimation: Sendable {
    case keyframe(KeyframeAnimation)
    case basic(BasicAnimation)

    public var keyPath: AnimatableKeyPath {
        switch self {
        case .keyframe(let a): a.keyPath
        case .basic(let a): a.keyPath
        }
    }

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
