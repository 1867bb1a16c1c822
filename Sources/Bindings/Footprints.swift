import MoonreelEngine
import MoonreelScriptHost

/// What each kind of engine object weighs against the memory cap of the Lua state that owns
/// it (see `EngineObjects`): its own storage, estimated from what grows with script input
/// (keyframes, segments, ramps, text, pixels), not the objects it refers to.
extension API {
    func installFootprints() {
        let record = 256
        classes[AnimationBox.self].footprint = { object in
            guard let spec = (object as? AnimationBox)?.spec else { return record }
            return record + spec.values.reduce(0) { $0 + $1.footprint }
                + 8 * ((spec.keyTimes?.count ?? 0) + spec.tensionValues.count + spec.continuityValues.count + spec.biasValues.count)
                + MemoryLayout<TimingFunction>.stride * spec.timingFunctions.count
        }
        classes[Layer.self].footprint = { object in
            guard let layer = object as? Layer else { return record }
            let text = (layer as? TextLayer)?.style.string.utf8.count ?? 0
            let sound = (layer as? SoundLayer)?.visual.storedBytes ?? 0
            return 2 * record + text + sound + 8 * layer.sublayers.count + record * layer.filters.count
                + layer.animations.reduce(0) { $0 + record + ($1.key?.utf8.count ?? 0) + $1.animation.footprint }
        }
        classes[TextLayer.self].footprint = classes[Layer.self].footprint
        classes[ImageBox.self].footprint = { object in
            guard let source = (object as? ImageBox)?.source else { return record }
            return record + source.path.utf8.count + (source.pixels == nil ? 0 : 4 * source.width * source.height)
        }
        classes[Composition.self].footprint = { object in
            guard let composition = object as? Composition else { return record }
            return record + composition.tracks.reduce(0) { $0 + record + MemoryLayout<TrackSegment>.stride * $1.segments.count }
        }
        classes[CompositionTrack.self].footprint = { object in
            record + MemoryLayout<TrackSegment>.stride * ((object as? CompositionTrack)?.segments.count ?? 0)
        }
        classes[VideoComposition.self].footprint = { object in
            guard let videoComposition = object as? VideoComposition else { return record }
            return record + record * videoComposition.instructions.count + videoComposition.filters.footprint
        }
        classes[VideoCompositionInstruction.self].footprint = { object in
            record + 8 * ((object as? VideoCompositionInstruction)?.layerInstructions.count ?? 0)
        }
        classes[LayerInstruction.self].footprint = { object in
            guard let instruction = object as? LayerInstruction else { return record }
            let changes = instruction.transform.changeCount + instruction.opacity.changeCount + (instruction.crop?.changeCount ?? 0)
            return record + 2 * MemoryLayout<AffineTransform>.stride * changes + instruction.filters.footprint
        }
        classes[AudioMix.self].footprint = { object in
            record + 8 * ((object as? AudioMix)?.inputParameters.count ?? 0)
        }
        classes[AudioMixInputParameters.self].footprint = { object in
            record + 64 * ((object as? AudioMixInputParameters)?.volume.changeCount ?? 0)
        }
    }
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
