import MoonreelMedia

/// Keyframe animations made from data about the media: a pulse on each beat, and a
/// property that follows a level envelope (loudness every 100 ms, say).
public extension KeyframeAnimation {
    /// `keyPath` (a number) rests at `from`, rises to `from + amount` over `rise` seconds so it
    /// peaks exactly on each of `beats` (composition time), and falls back over `fall`
    /// seconds; a beat closer than that to the next shortens the fall so every beat peaks.
    static func pulse(keyPath: AnimatableKeyPath, beats: [MediaTime], from: Double, amount: Double,
                      rise: MediaTime, fall: MediaTime) throws -> KeyframeAnimation {
        try checkNumeric(keyPath)
        let sorted = beats.filter { !$0.isNegative }.sorted()
        guard let last = sorted.last else { throw EngineError("a pulse needs at least one beat") }
        guard rise.value > 0, fall.value > 0 else { throw EngineError("rise and fall must last more than 0 s") }
        var times: [MediaTime] = [], values: [Double] = []
        for (index, beat) in sorted.enumerated() {
            let next = index + 1 < sorted.count ? sorted[index + 1] - rise : nil
            let before = MediaTime.max(beat - rise, times.last ?? .zero)
            if before < beat { times.append(before); values.append(from) }
            times.append(beat); values.append(from + amount)
            let after = next.map { MediaTime.min(beat + fall, $0) } ?? beat + fall
            if after > beat { times.append(after); values.append(from) }
        }
        let end = last + fall
        return try KeyframeAnimation(keyPath: keyPath, values: values.map(AnimatableValue.number),
                                     keyTimes: times.map { $0.seconds / end.seconds },
                                     timing: AnimationTiming(duration: end))
    }

    /// `keyPath` (a number) following `levels`, one every `interval` from `start`: `floor`
    /// and below map to `from`, `ceiling` and above to `to`, linearly between (dB or LUFS in,
    /// any property out: opacity, scale, a blur radius).
    static func envelope(keyPath: AnimatableKeyPath, levels: [Double], interval: MediaTime, start: MediaTime,
                         floor: Double, ceiling: Double, from: Double, to: Double) throws -> KeyframeAnimation {
        try checkNumeric(keyPath)
        guard !levels.isEmpty else { throw EngineError("the envelope has no values") }
        guard interval.value > 0 else { throw EngineError("the interval must be more than 0 s") }
        guard floor < ceiling else { throw EngineError("floor (\(floor)) must be below ceiling (\(ceiling))") }
        let values = levels.map { level -> AnimatableValue in
            let position = min(max((level - floor) / (ceiling - floor), 0), 1)
            return .number(from + (to - from) * (position.isNaN ? 0 : position))
        }
        let steps = Int64(max(levels.count - 1, 1))
        return try KeyframeAnimation(keyPath: keyPath, values: values,
                                     keyTimes: levels.indices.map { Double($0) / Double(steps) },
                                     timing: AnimationTiming(beginTime: start, duration: interval * steps))
    }

    private static func checkNumeric(_ keyPath: AnimatableKeyPath) throws {
        guard keyPath.valueKind == .number else {
            throw EngineError("\(keyPath.rawValue) is a \(keyPath.valueKind.rawValue); only number properties (opacity, transform.scale, …) can follow the sound")
        }
    }
}
