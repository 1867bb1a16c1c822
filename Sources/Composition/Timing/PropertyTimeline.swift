import MoonreelMedia

/// Values that a layer instruction can ramp between.
public protocol Rampable: Sendable, Equatable {
    /// The value `fraction` of the way from `from` to `to` (0 gives `from`, 1 gives `to`; an
    /// eased ramp may pass slightly outside 0…1).
    static func interpolate(_ from: Self, _ to: Self, _ fraction: Double) -> Self
}

extension Double: Rampable {
    /// Linear: `from + (to − from) × fraction`.
    public static func interpolate(_ from: Double, _ to: Double, _ fraction: Double) -> Double { from + (to - from) * fraction }
}

extension AffineTransform: Rampable {
    /// Componentwise, as AVFoundation's transform ramps do.
    public static func interpolate(_ from: AffineTransform, _ to: AffineTransform, _ f: Double) -> AffineTransform {
        AffineTransform(a: .interpolate(from.a, to.a, f), b: .interpolate(from.b, to.b, f),
                        c: .interpolate(from.c, to.c, f), d: .interpolate(from.d, to.d, f),
                        tx: .interpolate(from.tx, to.tx, f), ty: .interpolate(from.ty, to.ty, f))
    }
}

extension Rect: Rampable {
    /// Origin and size each moved linearly, as AVFoundation's crop-rectangle ramps do.
    public static func interpolate(_ from: Rect, _ to: Rect, _ f: Double) -> Rect {
        Rect(x: .interpolate(from.x, to.x, f), y: .interpolate(from.y, to.y, f),
             width: .interpolate(from.width, to.width, f), height: .interpolate(from.height, to.height, f))
    }
}

/// The value of one layer-instruction property over time: `set` values that hold until the
/// next change, and ramps that move between two values over a range and then hold the end.
public struct PropertyTimeline<Value: Rampable>: Sendable, Equatable {
    /// A value set (no duration) or a ramp, from `start`.
    package struct Change: Sendable, Equatable {
        package var start: MediaTime
        package var duration: MediaTime
        package var from: Value
        package var to: Value
        var curve: TimingFunction
    }
    package private(set) var changes: [Change] = []
    /// The value before the first change.
    public let defaultValue: Value
    /// How many values and ramps are set (what the timeline weighs).
    public var changeCount: Int { changes.count }

    /// A timeline holding `defaultValue` until something is set.
    public init(defaultValue: Value) { self.defaultValue = defaultValue }

    /// Whether a value moves over time somewhere (a ramp, not only values set).
    var ramps: Bool { changes.contains { $0.duration > .zero } }

    /// Holds `value` from `time` until the next change. A later change at the same time
    /// replaces this one.
    /// - Returns: The ramp this value cuts short (one whose span holds `time`; from there the
    ///   value jumps), nil when none.
    @discardableResult
    public mutating func set(_ value: Value, at time: MediaTime) -> TimeRange? {
        add(Change(start: time, duration: .zero, from: value, to: value, curve: .linear))
    }

    /// Moves from `from` to `to` over `range` (eased by `curve`, linear by default), then holds
    /// `to`. Before `range.start` the previous change still holds. A later change at the same
    /// start time replaces this one.
    /// - Returns: The change this ramp and it overlap (a ramp whose span holds this one's
    ///   start, or a change inside this one's span: the later start wins, so the value
    ///   jumps), nil when none.
    @discardableResult
    public mutating func ramp(from: Value, to: Value, over range: TimeRange, curve: TimingFunction = .linear) -> TimeRange? {
        add(Change(start: range.start, duration: range.duration, from: from, to: to, curve: curve))
    }

    /// A ramp that a change over `range` (a value set: an empty range) would cut short, or that
    /// would cut the new ramp short: the one whose span holds the other's start (a change at
    /// the same start replaces, it does not cut). The later start wins from there on, so the
    /// value jumps; nil when none overlaps.
    private func rampCut(by range: TimeRange) -> TimeRange? {
        changes.first { change in
            guard change.start != range.start else { return false }
            let span = TimeRange(start: change.start, duration: change.duration)
            return (change.duration.value > 0 && span.start < range.start && range.start < span.end)
                || (range.duration.value > 0 && range.start < span.start && span.start < range.end)
        }.map { TimeRange(start: $0.start, duration: $0.duration) }
    }

    /// Adds `change`; returns the ramp it and an earlier change overlap.
    private mutating func add(_ change: Change) -> TimeRange? {
        let cut = rampCut(by: TimeRange(start: change.start, duration: change.duration))
        // A later call for the same start time replaces the earlier one, as in AVFoundation.
        changes.removeAll { $0.start == change.start }
        let index = changes.firstIndex { $0.start > change.start } ?? changes.count
        changes.insert(change, at: index)
        return cut
    }

    /// The ramps that run on past `end` (where the output stops): each with how far through
    /// it the output ends (0 for one that starts at `end` or later: never reached) and the
    /// value there (nil then). A ramp a later change cuts off before `end` is left out: it
    /// stops short there, as `animationIgnored` says.
    package func rampsPast(_ end: MediaTime) -> [(range: TimeRange, to: Value, fraction: Double, valueAtEnd: Value?)] {
        changes.compactMap { change in
            let range = TimeRange(start: change.start, duration: change.duration)
            guard change.duration.value > 0, range.end > end else { return nil }
            guard change.start < end else { return (range, change.to, 0, nil) }
            guard !changes.contains(where: { $0.start > change.start && $0.start < end }) else { return nil }
            return (range, change.to, (end - change.start).seconds / change.duration.seconds, value(at: end))
        }
    }

    /// The value at composition time `time`.
    public func value(at time: MediaTime) -> Value { value(at: time, before: defaultValue) }

    /// The value at `time`, or `initial` before the first change.
    func value(at time: MediaTime, before initial: Value) -> Value {
        guard let change = changes.last(where: { $0.start <= time }) else { return initial }
        let elapsed = time - change.start
        guard change.duration.value > 0, elapsed < change.duration else { return change.to }
        return Value.interpolate(change.from, change.to, change.curve(elapsed.seconds / change.duration.seconds))
    }
}
