import MoonreelEngine
import MoonreelScriptHost

/// What each kind of engine object weighs against the memory cap of the Lua state that owns
/// it (see `EngineObjects`): its own storage, estimated from what grows with script input
/// (keyframes, segments, ramps, text, pixels), not the objects it refers to. Each class sets
/// its `footprint` beside its binding (a text layer's is its parent Layer's); these are the
/// weights they share.
enum Footprint {
    /// An object's own record, before what grows with script input.
    static let record = 256
}

extension FilterStack {
    /// Filters (a LUT counted by its table) and their set values and ramps.
    var footprint: Int {
        filters.reduce(0) { total, filter in total + 256 + filter.values.values.reduce(0) { $0 + $1.footprint } } + 64 * changeCount
    }
}

extension AnimatableValue {
    /// Bytes one keyframe value takes, with the text of a string value.
    var footprint: Int {
        if case .string(let text) = self { return MemoryLayout<AnimatableValue>.stride + text.utf8.count }
        return MemoryLayout<AnimatableValue>.stride
    }
}

extension LayerAnimation {
    var footprint: Int {
        switch self {
        case .keyframe(let animation):
            animation.values.reduce(0) { $0 + $1.footprint } + 8 * animation.keyTimes.count
                + MemoryLayout<TimingFunction>.stride * animation.timingFunctions.count
        case .basic: 3 * MemoryLayout<AnimatableValue>.stride
        }
    }
}
