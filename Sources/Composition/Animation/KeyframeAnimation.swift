import MoonreelMedia

/// How a keyframe animation goes from one value to the next (`CAAnimationCalculationMode`).
public enum CalculationMode: String, Sendable, Hashable, CaseIterable {
    /// Each value holds until the next key time.
    case discrete
    /// Straight interpolation, eased per segment by `timingFunctions`.
    case linear
    /// Linear at constant speed: key times follow the distances between values.
    case paced
    /// A Kochanek–Bartels spline through the values (Catmull-Rom with the default
    /// tension, continuity and bias of 0).
    case cubic
    /// The spline at constant speed along its length.
    case cubicPaced

    var isPaced: Bool { self == .paced || self == .cubicPaced }
    /// A spline through the values, which can bulge past them.
    public var isCubic: Bool { self == .cubic || self == .cubicPaced }
}

/// A property animated through a list of values (`CAKeyframeAnimation`). Evaluation is a
/// pure function of time; everything that does not depend on time is computed on creation.
public struct KeyframeAnimation: Sendable {
    /// The property animated.
    public let keyPath: AnimatableKeyPath
    /// The keyframe values, at least one, all of the key path's kind.
    public let values: [AnimatableValue]
    /// The key times in effect: given, spread evenly, or from the distances (paced modes).
    /// In discrete mode there may be one more than values: the end of the last value.
    public let keyTimes: [Double]
    /// How values are interpolated; `.discrete` whatever was asked when the property's
    /// values are discrete (strings, booleans, images).
    public let calculationMode: CalculationMode
    /// Easing per segment (one fewer than values), or empty for linear segments; ignored
    /// by the paced modes.
    public let timingFunctions: [TimingFunction]
    /// Kochanek–Bartels tension per value for the cubic modes (empty: all 0; positive
    /// tightens the curve toward straight lines).
    public let tensionValues: [Double]
    /// Kochanek–Bartels continuity per value for the cubic modes (empty: all 0; non-zero
    /// makes a corner at the value).
    public let continuityValues: [Double]
    /// Kochanek–Bartels bias per value for the cubic modes (empty: all 0; positive leans
    /// the curve toward the segment before the value, negative toward the one after).
    public let biasValues: [Double]
    /// When the animation runs, repeats and fills.
    public let timing: AnimationTiming
    /// The settings given that a paced mode does not use ("keyTimes", "timingFunctions"):
    /// it places its keys by the distance between the values.
    public let unusedByPacing: [String]

    /// The most values an animation may have; front ends check a list's length against it
    /// before converting the list.
    public static let maxKeyframes = 1_000_000

    /// Interpolation coordinates of `values`; empty when the values are discrete.
    let components: [[Double]]
    /// For cubicPaced: length of the spline from its start to each sample point.
    private(set) var arcLengths: ArcLengthTable?

    /// Builds and checks the animation. `keyTimes`: nil spreads the values evenly; the
    /// paced modes ignore it (and `timingFunctions`), as Core Animation does.
    public init(keyPath: AnimatableKeyPath, values: [AnimatableValue], keyTimes: [Double]? = nil,
                calculationMode: CalculationMode = .linear, timingFunctions: [TimingFunction] = [],
                tensionValues: [Double] = [], continuityValues: [Double] = [], biasValues: [Double] = [],
                timing: AnimationTiming = AnimationTiming()) throws {
        guard values.count <= Self.maxKeyframes else {
            throw EngineError("values has \(values.count) entries; an animation may have at most \(Self.maxKeyframes)", kind: .limit)
        }
        guard !values.isEmpty else { throw EngineError("values must not be empty") }
        for (index, value) in values.enumerated() {
            try keyPath.check(value, "value \(index + 1) of \(values.count)")
        }
        try timing.validate()
        let isDiscrete = calculationMode == .discrete || keyPath.valueKind.isDiscrete
        let count = values.count
        if let keyTimes {
            try Self.checkKeyTimes(keyTimes, valueCount: count, discrete: isDiscrete)
        }
        let segmentCount = count - 1
        if !timingFunctions.isEmpty, timingFunctions.count != segmentCount {
            throw EngineError("timingFunctions has \(timingFunctions.count) entries but \(count) values make \(segmentCount) segments")
        }
        for (name, list) in [("tensionValues", tensionValues), ("continuityValues", continuityValues), ("biasValues", biasValues)]
        where !list.isEmpty && list.count != count {
            throw EngineError("\(name) has \(list.count) entries but values has \(count)")
        }
        self.keyPath = keyPath
        self.values = values
        self.calculationMode = isDiscrete ? .discrete : calculationMode
        self.timingFunctions = timingFunctions
        self.tensionValues = tensionValues
        self.continuityValues = continuityValues
        self.biasValues = biasValues
        self.timing = timing
        let paced = !isDiscrete && calculationMode.isPaced
        unusedByPacing = paced ? [keyTimes == nil ? nil : "keyTimes", timingFunctions.isEmpty ? nil : "timingFunctions"].compactMap { $0 } : []
        components = isDiscrete ? [] : AnimatableValue.interpolationComponents(of: values)
        if isDiscrete {
            self.keyTimes = keyTimes ?? (0...count).map { Double($0) / Double(count) }
        } else if calculationMode.isPaced {
            self.keyTimes = Self.pacedKeyTimes(components)
        } else {
            self.keyTimes = keyTimes ?? (0..<count).map { count == 1 ? 0 : Double($0) / Double(segmentCount) }
        }
        arcLengths = nil
        if self.calculationMode == .cubicPaced, count > 1 { arcLengths = ArcLengthTable(self) }
    }

    private static func checkKeyTimes(_ keyTimes: [Double], valueCount: Int, discrete: Bool) throws {
        // Discrete mode also takes Apple's form, with the end of the last value.
        guard keyTimes.count == valueCount || (discrete && keyTimes.count == valueCount + 1) else {
            let expected = discrete ? "\(valueCount) or \(valueCount + 1)" : "\(valueCount)"
            throw EngineError("values has \(valueCount) entries but keyTimes has \(keyTimes.count) (expected \(expected))")
        }
        // As in Core Animation, key times outside 0…1 are taken as they are: before the
        // first the first value shows, and those past 1 are never reached (a list of lyric
        // times longer than the animation's duration).
        let ordered = zip(keyTimes, keyTimes.dropFirst()).allSatisfy { $0 <= $1 }
        guard keyTimes.allSatisfy(\.isFinite), ordered else {
            throw EngineError("keyTimes must be non-decreasing numbers, got \(keyTimes.prefix(8))\(keyTimes.count > 8 ? "…" : "")")
        }
    }

    /// The key times beyond the end of a pass (never reached), for a note to the script.
    public var unreachedKeyTimes: [Double] { calculationMode.isPaced ? [] : keyTimes.filter { $0 > 1 } }

    /// Key times proportional to the distance travelled (even when nothing moves).
    private static func pacedKeyTimes(_ components: [[Double]]) -> [Double] {
        let steps = zip(components, components.dropFirst()).map { distance($0, $1) }
        let total = steps.reduce(0, +)
        guard total > 0, total.isFinite else {
            return components.indices.map { components.count == 1 ? 0 : Double($0) / Double(components.count - 1) }
        }
        var times = [0.0], covered = 0.0
        for step in steps {
            covered += step
            times.append(covered / total)
        }
        times[times.count - 1] = 1
        return times
    }

    /// The lowest and highest number reached between the keys (see
    /// `LayerAnimation.numbersReached(within:)`); nil when the values are not numbers. The pass's own
    /// easing cannot overshoot here: a fraction past 0…1 holds the first or last value.
    func numbersReached(within bounds: ClosedRange<Double>?) -> ClosedRange<Double>? {
        let numbers = values.compactMap(\.number)
        guard numbers.count == values.count, var low = numbers.min(), var high = numbers.max() else { return nil }
        let eased = !timingFunctions.isEmpty && !calculationMode.isPaced && calculationMode != .discrete
        guard calculationMode.isCubic || (eased && timingFunctions.contains(where: \.overshoots)) else { return low...high }
        // A cubic segment is sampled (enough to find a bulge's top within a fraction of a
        // percent, fewer per segment on very long lists); a straight one has its ends.
        let samples = max(2, min(32, 100_000 / max(numbers.count - 1, 1)))
        for segment in 0..<(numbers.count - 1) {
            // A hold at a bound (a fade's 1, 1): the curve bulges past it, and drawing at the
            // bound is the hold meant.
            let (from, to) = (numbers[segment], numbers[segment + 1])
            if calculationMode.isCubic, from == to, let bounds, from == bounds.lowerBound || from == bounds.upperBound { continue }
            let progress = eased ? timingFunctions[segment].progressRange : 0...1
            let reached: [Double]
            if calculationMode.isCubic {
                reached = (0...samples).map { step in
                    let u = progress.lowerBound + (progress.upperBound - progress.lowerBound) * Double(step) / Double(samples)
                    return splinePoint(segment: segment, u: u).first ?? numbers[segment]
                }
            } else {
                reached = [from + (to - from) * progress.lowerBound, from + (to - from) * progress.upperBound]
            }
            low = min(low, reached.min() ?? low)
            high = max(high, reached.max() ?? high)
        }
        return low...high
    }

    /// The value at composition time `t`, or nil when the animation has no effect then.
    public func value(at t: MediaTime) -> AnimatableValue? {
        timing.fraction(at: t).map(value(atFraction:))
    }

    /// The value at a fraction (0…1) of one pass.
    func value(atFraction fraction: Double) -> AnimatableValue {
        if calculationMode == .discrete {
            return values[lastIndex(atOrBefore: fraction, in: keyTimes, maxIndex: values.count - 1)]
        }
        guard values.count > 1 else { return values[0] }
        if let arcLengths {
            let (segment, u) = arcLengths.segmentAndParameter(atFraction: fraction)
            return values[0].withComponents(splinePoint(segment: segment, u: u))
        }
        let segment = lastIndex(atOrBefore: fraction, in: keyTimes, maxIndex: values.count - 2)
        let span = keyTimes[segment + 1] - keyTimes[segment]
        var u = span > 0 ? min(max((fraction - keyTimes[segment]) / span, 0), 1) : 1
        if !timingFunctions.isEmpty, !calculationMode.isPaced { u = timingFunctions[segment](u) }
        let point = calculationMode.isCubic
            ? splinePoint(segment: segment, u: u)
            : zip(components[segment], components[segment + 1]).map { $0 + ($1 - $0) * u }
        return values[0].withComponents(point)
    }

    /// Hermite interpolation of segment `segment` with Kochanek–Bartels tangents. The
    /// missing neighbours at the ends repeat the end values (the curve leaves the first
    /// value with half the first step's slope). Tangents are scaled by the key-time
    /// spacing, so uneven key times do not make the curve overshoot.
    func splinePoint(segment i: Int, u: Double) -> [Double] {
        let p = components, last = p.count - 1
        let (p0, p1, p2, p3) = (p[max(i - 1, 0)], p[i], p[i + 1], p[min(i + 2, last)])
        let outgoing = tangent(at: i, previous: p0, current: p1, next: p2, outgoing: true)
        let incoming = tangent(at: i + 1, previous: p1, current: p2, next: p3, outgoing: false)
        let (u2, u3) = (u * u, u * u * u)
        let h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2, h11 = u3 - u2
        return p1.indices.map { h00 * p1[$0] + h10 * outgoing[$0] + h01 * p2[$0] + h11 * incoming[$0] }
    }

    private func tangent(at i: Int, previous: [Double], current: [Double], next: [Double], outgoing: Bool) -> [Double] {
        let tension = tensionValues.isEmpty ? 0 : tensionValues[i]
        let continuity = continuityValues.isEmpty ? 0 : continuityValues[i]
        let bias = biasValues.isEmpty ? 0 : biasValues[i]
        let c = outgoing ? continuity : -continuity
        let before = (1 - tension) * (1 + bias) * (1 + c) / 2
        let after = (1 - tension) * (1 - bias) * (1 - c) / 2
        // Uneven spacing: scale by this segment's share of the two around the key.
        var spacing = 1.0
        if i > 0, i < keyTimes.count - 1 {
            let left = keyTimes[i] - keyTimes[i - 1], right = keyTimes[i + 1] - keyTimes[i]
            if left + right > 0 { spacing = 2 * (outgoing ? right : left) / (left + right) }
        }
        return current.indices.map { spacing * (before * (current[$0] - previous[$0]) + after * (next[$0] - current[$0])) }
    }

    /// The pieces of one pass for timeline analysis, within 0…1 (the first value also
    /// covers the time before the first key, the last the time after the last).
    var passPieces: [PassPiece] {
        let unclipped: [PassPiece]
        if calculationMode == .discrete {
            unclipped = values.indices.map { i in
                PassPiece(from: i == 0 ? 0 : keyTimes[i], to: i + 1 < keyTimes.count ? keyTimes[i + 1] : 1, values: [values[i]])
            }
        } else if values.count == 1 || calculationMode.isCubic {
            unclipped = [PassPiece(from: 0, to: 1, values: values)]
        } else {
            let last = values.count - 1
            unclipped = [PassPiece(from: 0, to: keyTimes[0], values: [values[0]])]
                + values.indices.dropLast().map { i in
                    PassPiece(from: keyTimes[i], to: keyTimes[i + 1], values: values[i] == values[i + 1] ? [values[i]] : [values[i], values[i + 1]])
                }
                + [PassPiece(from: keyTimes[last], to: 1, values: [values[last]])]
        }
        return unclipped.compactMap { piece in
            let from = min(max(piece.from, 0), 1), to = min(max(piece.to, 0), 1)
            return from < to ? PassPiece(from: from, to: to, values: piece.values) : nil
        }
    }
}

func distance(_ a: [Double], _ b: [Double]) -> Double {
    zip(a, b).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }.squareRoot()
}

/// The last index `i ≤ maxIndex` with `sorted[i] ≤ x` (0 if none): binary search.
func lastIndex(atOrBefore x: Double, in sorted: [Double], maxIndex: Int) -> Int {
    var (low, high) = (0, min(maxIndex, sorted.count - 1))
    while low < high {
        let middle = (low + high + 1) / 2
        if sorted[middle] <= x { low = middle } else { high = middle - 1 }
    }
    return low
}

/// Cumulative length of a spline, sampled per segment, to move along it at constant speed.
struct ArcLengthTable: Sendable {
    static let samplesPerSegment = 16
    /// lengths[k]: length up to sample k (sample k is segment k / n at u = (k % n) / n).
    let lengths: [Double]

    init(_ animation: KeyframeAnimation) {
        let n = Self.samplesPerSegment
        var lengths = [0.0]
        var previous = animation.components[0]
        for segment in 0..<(animation.values.count - 1) {
            for step in 1...n {
                let point = animation.splinePoint(segment: segment, u: Double(step) / Double(n))
                lengths.append(lengths[lengths.count - 1] + distance(previous, point))
                previous = point
            }
        }
        self.lengths = lengths
    }

    /// The segment and curve parameter at which `fraction` of the length is covered.
    func segmentAndParameter(atFraction fraction: Double) -> (Int, Double) {
        let n = Self.samplesPerSegment, segments = (lengths.count - 1) / n
        let total = lengths[lengths.count - 1]
        guard total > 0 else { return (min(Int(fraction * Double(segments)), segments - 1), 0) }
        let target = min(max(fraction, 0), 1) * total
        let sample = min(lastIndex(atOrBefore: target, in: lengths, maxIndex: lengths.count - 2), lengths.count - 2)
        let step = lengths[sample + 1] - lengths[sample]
        let within = step > 0 ? (target - lengths[sample]) / step : 0
        let position = (Double(sample) + within) / Double(n)
        let segment = min(Int(position), segments - 1)
        return (segment, position - Double(segment))
    }
}
