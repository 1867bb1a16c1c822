import MoonreelMedia

/// A cubic Bézier easing curve from (0, 0) to (1, 1), like `CAMediaTimingFunction`: it maps
/// the fraction of elapsed time `x` to the fraction of progress `y`.
public struct TimingFunction: Sendable, Hashable {
    /// Time coordinate of the first control point, 0…1.
    public let x1: Double
    /// Progress coordinate of the first control point (may leave 0…1 for overshoot).
    public let y1: Double
    /// Time coordinate of the second control point, 0…1.
    public let x2: Double
    /// Progress coordinate of the second control point (may leave 0…1 for overshoot).
    public let y2: Double

    /// Control points as in `CAMediaTimingFunction(controlPoints:)`. The x coordinates must
    /// lie in 0…1 so that the curve is a function of time; y may overshoot (a bounce).
    /// - Throws: `EngineError` when a coordinate is not finite or an x lies outside 0…1.
    public init(controlPoints x1: Double, _ y1: Double, _ x2: Double, _ y2: Double) throws {
        guard [x1, y1, x2, y2].allSatisfy(\.isFinite) else {
            throw EngineError("timing function control points must be finite numbers")
        }
        guard (0...1).contains(x1), (0...1).contains(x2) else {
            throw EngineError("timing function control point x values must lie in 0…1, got \(x1) and \(x2)")
        }
        (self.x1, self.y1, self.x2, self.y2) = (x1, y1, x2, y2)
    }

    private init(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double) {
        (self.x1, self.y1, self.x2, self.y2) = (x1, y1, x2, y2)
    }

    // Core Animation's named functions, with Apple's control points.
    /// Constant speed (`CAMediaTimingFunctionName.linear`): (0, 0, 1, 1).
    public static let linear = TimingFunction(0, 0, 1, 1)
    /// Starts slowly, then speeds up (`.easeIn`): (0.42, 0, 1, 1).
    public static let easeIn = TimingFunction(0.42, 0, 1, 1)
    /// Starts fast, then slows down (`.easeOut`): (0, 0, 0.58, 1).
    public static let easeOut = TimingFunction(0, 0, 0.58, 1)
    /// Slow at both ends (`.easeInEaseOut`): (0.42, 0, 0.58, 1).
    public static let easeInEaseOut = TimingFunction(0.42, 0, 0.58, 1)
    /// Core Animation's default curve (`.default`), a gentle ease: (0.25, 0.1, 0.25, 1).
    public static let `default` = TimingFunction(0.25, 0.1, 0.25, 1)

    /// The named functions with the names `init(named:)` accepts ("linear", "easeIn",
    /// "easeOut", "easeInEaseOut", "default"), in that order.
    public static let namedFunctions: [(name: String, function: TimingFunction)] = [
        ("linear", .linear), ("easeIn", .easeIn), ("easeOut", .easeOut),
        ("easeInEaseOut", .easeInEaseOut), ("default", .default),
    ]

    /// The named function (`"easeIn"`, …); the error lists the names.
    public init(named name: String) throws {
        guard let match = TimingFunction.namedFunctions.first(where: { $0.name == name }) else {
            let names = TimingFunction.namedFunctions.map(\.name).joined(separator: ", ")
            throw EngineError("unknown timing function \(name.quotedForMessage()) (known: \(names))")
        }
        self = match.function
    }

    /// True when the curve is the straight line (each control point on the diagonal), so
    /// progress equals elapsed time.
    public var isLinear: Bool { x1 == y1 && x2 == y2 }

    /// Whether progress leaves 0…1 on the way (a "back" ease): a control point's y lies outside it.
    public var overshoots: Bool { !(0...1).contains(y1) || !(0...1).contains(y2) }

    /// The lowest and highest progress along the curve: 0…1 unless it overshoots. Exact: the
    /// ends, and where the progress cubic's slope is zero inside the curve.
    public var progressRange: ClosedRange<Double> {
        guard overshoots else { return 0...1 }
        let c = 3 * y1, b = 3 * (y2 - y1) - c, a = 1 - c - b
        // The slope 3a·s² + 2b·s + c is zero at its roots; a = 0 leaves a line.
        var turns: [Double] = []
        if abs(a) < 1e-12 {
            if abs(b) > 1e-12 { turns = [-c / (2 * b)] }
        } else {
            let discriminant = 4 * b * b - 12 * a * c
            if discriminant >= 0 {
                let root = discriminant.squareRoot()
                turns = [(-2 * b - root) / (6 * a), (-2 * b + root) / (6 * a)]
            }
        }
        let reached = [0, 1] + turns.filter { $0 > 0 && $0 < 1 }.map { Self.bezier($0, y1, y2) }
        return (reached.min() ?? 0)...(reached.max() ?? 1)
    }

    /// Progress at time fraction `x` (clamped to 0…1).
    public func callAsFunction(_ x: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        if isLinear { return x }
        return Self.bezier(parameter(forX: x), y1, y2)
    }

    /// One coordinate of the curve at parameter `s`, with end points 0 and 1.
    private static func bezier(_ s: Double, _ p1: Double, _ p2: Double) -> Double {
        let c = 3 * p1, b = 3 * (p2 - p1) - c, a = 1 - c - b
        return ((a * s + b) * s + c) * s
    }

    private static func bezierSlope(_ s: Double, _ p1: Double, _ p2: Double) -> Double {
        let c = 3 * p1, b = 3 * (p2 - p1) - c, a = 1 - c - b
        return (3 * a * s + 2 * b) * s + c
    }

    /// The curve parameter whose x is `x`: Newton's method, which converges in a few steps
    /// almost everywhere, then bisection where the slope is too flat for Newton (x(s) is
    /// monotonic because x1, x2 ∈ 0…1, so bisection always succeeds).
    private func parameter(forX x: Double) -> Double {
        let tolerance = 1e-12
        var s = x
        for _ in 0..<8 {
            let error = Self.bezier(s, x1, x2) - x
            if abs(error) < tolerance { return s }
            let slope = Self.bezierSlope(s, x1, x2)
            if abs(slope) < 1e-6 { break }
            s -= error / slope
        }
        var (low, high) = (0.0, 1.0)
        s = x
        for _ in 0..<100 {
            let value = Self.bezier(s, x1, x2)
            if abs(value - x) < tolerance { break }
            if value < x { low = s } else { high = s }
            s = (low + high) / 2
        }
        return s
    }
}
