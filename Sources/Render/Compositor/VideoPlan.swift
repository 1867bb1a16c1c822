import CMoonFFmpeg
import MoonreelComposition
import MoonreelMedia

/// The immutable description an export renders from: frozen from the script's mutable
/// objects when `export()` starts, validated, and safe to hand to render threads.
package struct VideoPlan: Sendable {
    package struct Layer: Sendable {
        let trackID: Int
        package let segments: [TrackSegment]
        let transform: PropertyTimeline<AffineTransform>
        let opacity: PropertyTimeline<Double>
        let crop: PropertyTimeline<Rect>?
        let filters: FilterStack
        /// Where the track shows (`LayerInstruction.mask`), frozen.
        let mask: LayerTimeline?
    }
    package struct Instruction: Sendable {
        package let timeRange: TimeRange
        let background: Color
        /// First is drawn on top.
        package let layers: [Layer]
    }

    let renderSize: Size
    /// Encoded size (the render size fitted by the preset, even numbers).
    package let outputWidth: Int
    package let outputHeight: Int
    package let frameDuration: MediaTime
    /// Composition time of output frame 0.
    package let start: MediaTime
    package let frameCount: Int64

    /// The number of the frame that shows at `time` (clamped to the plan's frames).
    func frameNumber(containing time: MediaTime) -> Int64 {
        min(max((time - start).floorDivided(by: frameDuration), 0), max(frameCount - 1, 0))
    }
    package let instructions: [Instruction]
    package var outputColor: ColorDescription
    /// The animation tool's layer tree, frozen (nil: the video alone).
    let overlay: LayerTimeline?
    /// Filters of the composed video (before the overlay).
    let filters: FilterStack
    /// The pixel format the frames leave the renderer in when the encoder wants another
    /// than the composed one (4:2:2, 10-bit SDR, BGRA for a GIF palette); nil: as composed.
    package var encoderFormat: AVPixelFormat?
    /// What sets the render's pace: how far decoding and drawing work ahead of the
    /// consumer (an export chooses by its encoder's cost).
    package var pace = RenderPace.renderer
    /// Preview copies decoded in place of their sources (none for an export).
    var proxies = ProxyFiles()

    func instruction(at time: MediaTime) -> Instruction? {
        instructions.first { $0.timeRange.contains(time) } ?? instructions.last.flatMap { $0.timeRange.end == time ? $0 : nil }
    }
}

extension VideoPlan {
    /// Validates `videoComposition` against `composition` and freezes both, with errors
    /// that name the offending instruction or track.
    package static func make(composition: Composition, videoComposition: VideoComposition, range: TimeRange,
                             outputWidth: Int, outputHeight: Int, dynamicRange: DynamicRange = .sdr) throws -> VideoPlan {
        let size = videoComposition.renderSize
        guard size != .zero else {
            throw EngineError("videoComposition.renderSize must be set", remedy: .setRenderSize)
        }
        guard videoComposition.frameDuration != .zero else {
            throw EngineError("videoComposition.frameDuration must be set", remedy: .setFrameDuration)
        }
        guard size.width >= 1, size.height >= 1, size.width <= Double(PixelLimits.maxSide), size.height <= Double(PixelLimits.maxSide),
              size.width * size.height <= Double(PixelLimits.maxPixels) else {
            throw EngineError("videoComposition.renderSize \(size) is not a usable size (1×1 up to \(PixelLimits.description))")
        }
        let frameDuration = videoComposition.renderFrameDuration.duration
        guard frameDuration.value > 0, frameDuration >= MediaTime(value: 1, timescale: 1000) else {
            throw EngineError("videoComposition.frameDuration must be at least 1/1000 s, got \(frameDuration.seconds) s")
        }
        let instructions = videoComposition.instructions
        guard !instructions.isEmpty else { throw EngineError("videoComposition has no instructions; add one covering 0…\(composition.duration.seconds) s") }
        var expectedStart = MediaTime.zero
        var frozen: [Instruction] = []
        for (number, instruction) in instructions.enumerated() {
            let name = "videoComposition.instructions[\(number + 1)]"
            let r = instruction.timeRange
            guard r.duration.value > 0 else { throw EngineError("\(name) has an empty time range") }
            if r.start > expectedStart {
                throw EngineError("\(name) starts at \(r.start.seconds) s, leaving a gap after \(expectedStart.seconds) s; instructions must cover the composition without gaps")
            }
            if r.start < expectedStart {
                throw EngineError("\(name) starts at \(r.start.seconds) s, overlapping the previous instruction, which ends at \(expectedStart.seconds) s")
            }
            expectedStart = r.end
            var layers: [Layer] = []
            for layer in instruction.layerInstructions {
                let trackID = composition.resolvedTrackID(layer.trackID, source: layer.source, mediaType: .video)
                guard let track = composition.track(withID: trackID), track.mediaType == .video else {
                    throw EngineError("\(name) has a layer instruction for track \(layer.trackID), which is not a video track of the composition")
                }
                try layer.filters.check("\(name).layerInstructions[\(layers.count + 1)].filters")
                layers.append(Layer(trackID: trackID, segments: track.segments, transform: layer.transform,
                                    opacity: layer.opacity, crop: layer.crop, filters: layer.filters,
                                    mask: layer.mask.map { LayerTimeline(root: $0, canvasHeight: size.height, frameDuration: frameDuration) }))
            }
            frozen.append(Instruction(timeRange: r, background: instruction.backgroundColor, layers: layers))
        }
        if expectedStart < composition.duration {
            throw EngineError("videoComposition.instructions[\(instructions.count)] ends at \(expectedStart.seconds) s but the composition lasts \(composition.duration.seconds) s; the last instruction must reach its end")
        }
        try videoComposition.filters.check("videoComposition.filters")
        if let keyer = videoComposition.filters.filters.first(where: \.kind.makesTransparent) {
            throw EngineError("videoComposition.filters: \(keyer.kind.rawValue) makes pixels transparent, and nothing lies under the composed video; put it on a layer instruction (li.filters) or a layer")
        }
        let count = (range.duration).ceilDivided(by: frameDuration)
        return VideoPlan(renderSize: size, outputWidth: outputWidth, outputHeight: outputHeight,
                         frameDuration: frameDuration, start: range.start, frameCount: max(count, 0),
                         instructions: frozen,
                         outputColor: dynamicRange.isHDR ? .hdr(dynamicRange) : .forOutput(width: outputWidth, height: outputHeight),
                         overlay: videoComposition.animationTool?.timeline(renderSize: size, frameDuration: frameDuration), filters: videoComposition.filters)
    }
}

/// What limits a render's speed, and so how far its decoders and drawing work ahead.
package enum RenderPace: Sendable, Equatable {
    /// Decoding and drawing may be the work: decoders use FFmpeg's frame threads and the next
    /// picture is drawn while the consumer takes the last.
    case renderer
    /// The encoder is the work: one decoder thread keeps ahead of it, and each picture is
    /// drawn once the encoder is done with the last. Pictures in flight would only hold
    /// memory (at 1080p, 19 MiB in the decoders' frame threads and 3 MiB in a second drawing).
    case encoder

    var decoderThreading: DecoderThreading { self == .encoder ? .single : .automatic }
}
