/// An exact rational time, like `CMTime`: `value / timescale` seconds. Arithmetic across
/// timescales is exact (done over the least common multiple); seconds as `Double` exist
/// only at the edges (`init(seconds:)`, `.seconds`).
public struct MediaTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The numerator: a count of `1/timescale`-second units (may be negative).
    public let value: Int64
    /// Units per second (always > 0), like `CMTime.timescale`.
    public let timescale: Int32

    /// Zero seconds.
    public static let zero = MediaTime(value: 0, timescale: 1)
    /// Timescale for times that arrive as seconds: a multiple of 600, 1000, 24000, 30000,
    /// 60000, 90000, 44100 and 48000, so frame times of every common rate (NTSC x/1001
    /// included) and sample times of common audio rates are exact (2^7·3^2·5^4·7^2).
    public static let defaultTimescale: Int32 = 35_280_000

    /// `value / timescale` seconds, like `CMTime(value:timescale:)`. Traps unless
    /// `timescale > 0`; for values from users use `checked(value:timescale:)`.
    public init(value: Int64, timescale: Int32) {
        precondition(timescale > 0, "MediaTime timescale must be positive")
        self.value = value
        self.timescale = timescale
    }

    /// Validating initializer for times coming from users: nil unless timescale > 0.
    public static func checked(value: Int64, timescale: Int64) -> MediaTime? {
        guard timescale > 0, timescale <= Int64(Int32.max) else { return nil }
        return MediaTime(value: value, timescale: Int32(timescale)).reduced()
    }

    /// Seconds → time. Values that are exact in the default timescale stay exact
    /// (e.g. 2.0, 0.5, 1/30 rounded to the nearest 1/3003000 s). Nil for NaN or ±inf or
    /// values too large to represent.
    public init?(seconds: Double, timescale: Int32 = MediaTime.defaultTimescale) {
        guard seconds.isFinite else { return nil }
        let scaled = (seconds * Double(timescale)).rounded()
        guard abs(scaled) < 9.0e18 else { return nil }
        self = MediaTime(value: Int64(scaled), timescale: timescale).reduced()
    }

    /// The time in seconds as a `Double` (`CMTimeGetSeconds`), for display and for edges
    /// that need floating point; may round.
    public var seconds: Double { Double(value) / Double(timescale) }
    /// True for times before zero.
    public var isNegative: Bool { value < 0 }

    /// Seconds, for messages: "2 s", or "0.5005 s (1001/2000)" when not whole.
    public var description: String {
        let s = seconds
        return value % Int64(timescale) == 0 ? "\(value / Int64(timescale)) s" : "\(s) s (\(value)/\(timescale))"
    }

    /// The same time with the smallest timescale.
    public func reduced() -> MediaTime {
        let divisor = gcd(abs(value), Int64(timescale))
        guard divisor > 1 else { return self }
        return MediaTime(value: value / divisor, timescale: Int32(Int64(timescale) / divisor))
    }

    /// Converts to another timescale, rounding to nearest (ties away from zero).
    /// This is the named hand-off between the engine and FFmpeg time bases. A value too
    /// large for the new timescale (only absurd times from damaged files come near) is
    /// clamped to ±`MediaTime.limitValue` instead of trapping.
    public func converted(to newScale: Int32, rounding: Rounding = .nearest) -> MediaTime {
        if newScale == timescale { return self }
        let numerator = Int128(value) * Int128(newScale)
        var (result, remainder) = numerator.quotientAndRemainder(dividingBy: Int128(timescale))
        if remainder != 0 {
            switch rounding {
            case .down: if remainder < 0 { result -= 1 }
            case .up: if remainder > 0 { result += 1 }
            case .nearest:
                if remainder.magnitude * 2 >= UInt128(timescale) { result += remainder > 0 ? 1 : -1 }
            }
        }
        return MediaTime(value: MediaTime.clamped(result), timescale: newScale)
    }

    /// The largest value kept: far beyond any real time (2.3e18 ticks), with room for the
    /// sums and differences of two such values.
    public static let limitValue = Int64.max / 4

    package static func clamped(_ value: Int128) -> Int64 {
        Int64(Swift.min(Swift.max(value, -Int128(limitValue)), Int128(limitValue)))
    }

    /// How `converted(to:rounding:)` and `count(in:rounding:)` round a time that falls
    /// between two units of the new timescale.
    public enum Rounding: Sendable {
        /// Toward negative infinity (floor).
        case down
        /// Toward positive infinity (ceiling).
        case up
        /// To the nearest unit; halves round away from zero.
        case nearest
    }

    /// Value counted in units of `1/scale` s (e.g. an FFmpeg stream time base or a sample rate).
    public func count(in scale: Int32, rounding: Rounding = .nearest) -> Int64 {
        converted(to: scale, rounding: rounding).value
    }

    /// Time of `count` units of `1/scale` s (sample or frame counts).
    public static func units(_ count: Int64, of scale: Int32) -> MediaTime {
        MediaTime(value: count, timescale: scale)
    }

    /// Brings two times onto one timescale (their lcm, or the larger one if the lcm
    /// would overflow Int32, rounding to nearest — exact for every real media timescale).
    package static func common(_ a: MediaTime, _ b: MediaTime) -> (Int64, Int64, Int32) {
        if a.timescale == b.timescale { return (a.value, b.value, a.timescale) }
        let g = gcd(Int64(a.timescale), Int64(b.timescale))
        let lcm = Int64(a.timescale) / g * Int64(b.timescale)
        let scale = lcm <= Int64(Int32.max) ? Int32(lcm) : Swift.max(a.timescale, b.timescale)
        return (a.converted(to: scale).value, b.converted(to: scale).value, scale)
    }

    /// The exact sum, on a common timescale of both (clamped to ±`limitValue`, never trapping).
    public static func + (a: MediaTime, b: MediaTime) -> MediaTime {
        let (x, y, scale) = common(a, b)
        return MediaTime(value: clamped(Int128(x) + Int128(y)), timescale: scale)
    }

    /// The exact difference, on a common timescale of both (clamped to ±`limitValue`).
    public static func - (a: MediaTime, b: MediaTime) -> MediaTime {
        let (x, y, scale) = common(a, b)
        return MediaTime(value: clamped(Int128(x) - Int128(y)), timescale: scale)
    }

    /// The time negated, in the same timescale.
    public static prefix func - (a: MediaTime) -> MediaTime { MediaTime(value: clamped(-Int128(a.value)), timescale: a.timescale) }

    /// `self * count`, e.g. frame `k` of a frame duration (clamped, never trapping).
    public static func * (a: MediaTime, count: Int64) -> MediaTime {
        MediaTime(value: clamped(Int128(a.value) * Int128(count)), timescale: a.timescale)
    }

    /// `self * numerator / denominator` in this time's timescale (or the default one if that
    /// is finer and a multiple of it), rounded to nearest
    /// (used by time scaling: a range of `d` scaled to `d'` maps `t` to `t * d' / d`).
    public func multiplied(by numerator: MediaTime, dividedBy denominator: MediaTime) -> MediaTime {
        // A coarse timescale (whole seconds from a script) would round the result to it:
        // work in the fine default timescale instead.
        if timescale < MediaTime.defaultTimescale, timescale != 0, MediaTime.defaultTimescale % timescale == 0 {
            return converted(to: MediaTime.defaultTimescale).multiplied(by: numerator, dividedBy: denominator)
        }
        // Exact in 128 bits (the ratio reduced first); a zero denominator gives zero rather
        // than a trap, and a product beyond 128 bits falls back to floating point.
        let n = Int128(numerator.value) * Int128(denominator.timescale)
        let d = Int128(numerator.timescale) * Int128(denominator.value)
        guard d != 0 else { return MediaTime(value: 0, timescale: timescale) }
        let g = Swift.max(gcd128(n, d), 1)
        let (factor, divisor) = (n / g, d / g)
        let (product, overflow) = Int128(value).multipliedReportingOverflow(by: factor)
        guard !overflow else {
            let approximate = (Double(value) * Double(factor) / Double(divisor)).rounded()
            return MediaTime(value: MediaTime.clamped(approximate.isFinite && abs(approximate) < 1e37 ? Int128(approximate) : (approximate < 0 ? Int128.min / 2 : Int128.max / 2)),
                             timescale: timescale)
        }
        var (result, remainder) = product.quotientAndRemainder(dividingBy: divisor)
        if remainder != 0, remainder.magnitude * 2 >= divisor.magnitude {
            result += (remainder > 0) == (divisor > 0) ? 1 : -1
        }
        return MediaTime(value: MediaTime.clamped(result), timescale: timescale)
    }

    /// How many whole `step`s fit in `self` (floor), e.g. frame index at a time.
    public func floorDivided(by step: MediaTime) -> Int64 {
        let (x, y, _) = MediaTime.common(self, step)
        precondition(y > 0, "division by a non-positive step")
        return x >= 0 ? x / y : -((-x + y - 1) / y)
    }

    /// How many `step`s are needed to reach or pass `self` (ceiling).
    public func ceilDivided(by step: MediaTime) -> Int64 {
        let (x, y, _) = MediaTime.common(self, step)
        precondition(y > 0, "division by a non-positive step")
        return x >= 0 ? (x + y - 1) / y : -((-x) / y)
    }

    /// Compares the times exactly, whatever their timescales (`CMTimeCompare`).
    public static func < (a: MediaTime, b: MediaTime) -> Bool {
        // Cross-multiplication in 128 bits: exact for any pair.
        let left = a.value.multipliedFullWidth(by: Int64(b.timescale))
        let right = b.value.multipliedFullWidth(by: Int64(a.timescale))
        return (left.high, left.low) < (right.high, right.low)
    }

    /// Equal when they are the same number of seconds, whatever their timescales: 1/2 == 30/60.
    public static func == (a: MediaTime, b: MediaTime) -> Bool {
        Int64(a.value).multipliedFullWidth(by: Int64(b.timescale)) == Int64(b.value).multipliedFullWidth(by: Int64(a.timescale))
    }

    /// Hashes the reduced fraction, so equal times in different timescales hash alike.
    public func hash(into hasher: inout Hasher) {
        let r = reduced()
        hasher.combine(r.value)
        hasher.combine(r.timescale)
    }

    /// The later of two times (`CMTimeMaximum`); `a` when they are equal.
    public static func max(_ a: MediaTime, _ b: MediaTime) -> MediaTime { a < b ? b : a }
    /// The earlier of two times (`CMTimeMinimum`); `a` when they are equal.
    public static func min(_ a: MediaTime, _ b: MediaTime) -> MediaTime { a < b ? a : b }
}

func gcd128(_ a: Int128, _ b: Int128) -> Int128 {
    var (x, y) = (a.magnitude, b.magnitude)
    while y != 0 { (x, y) = (y, x % y) }
    return Int128(x)
}

func gcd(_ a: Int64, _ b: Int64) -> Int64 {
    var (x, y) = (abs(a), abs(b))
    while y != 0 { (x, y) = (y, x % y) }
    return x
}

/// A half-open time range `[start, start + duration)`, like `CMTimeRange`.
public struct TimeRange: Sendable, Hashable, CustomStringConvertible {
    /// The first time in the range.
    public var start: MediaTime
    /// The length; the range is empty when it is zero or negative.
    public var duration: MediaTime

    /// The range from `start` lasting `duration` (`CMTimeRange(start:duration:)`).
    public init(start: MediaTime, duration: MediaTime) {
        self.start = start
        self.duration = duration
    }

    /// The range from `start` up to, not including, `end` (`CMTimeRangeFromTimeToTime`);
    /// `end` before `start` gives a negative duration, that is an empty range.
    public init(from start: MediaTime, to end: MediaTime) {
        self.start = start
        self.duration = end - start
    }

    /// The first time after the range: `start + duration` (excluded from the range).
    public var end: MediaTime { start + duration }
    /// True when the duration is zero or negative.
    public var isEmpty: Bool { duration.value <= 0 }

    /// True when `start <= time < end`.
    public func contains(_ time: MediaTime) -> Bool { time >= start && time < end }
    /// True when `other` lies wholly inside this range (its end may equal this end).
    public func contains(_ other: TimeRange) -> Bool { other.start >= start && other.end <= end }

    /// The part both ranges share, or nil when they do not overlap (touching ends do not).
    public func intersection(_ other: TimeRange) -> TimeRange? {
        let s = MediaTime.max(start, other.start)
        let e = MediaTime.min(end, other.end)
        return s < e ? TimeRange(from: s, to: e) : nil
    }

    /// Seconds, for messages: "[1.0…2.5) s".
    public var description: String { "[\(start.seconds)…\(end.seconds)) s" }
}
