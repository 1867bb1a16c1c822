import MoonreelMedia

/// How one composition track is drawn during an instruction, like
/// `AVMutableVideoCompositionLayerInstruction`.
public final class LayerInstruction {
    /// The composition track drawn (AVFoundation's `trackID`). Made from an asset track, the ID
    /// may be that track's: see `source`.
    public let trackID: Int
    /// Set when made from an asset track: see `Composition.resolvedTrackID`.
    public var source: SourceReference?
    /// Places the track's stored frames in the render size (pixels, origin top-left, y down),
    /// like `setTransform(_:at:)`: identity until set, so a rotated phone clip needs its
    /// `preferredTransform` here.
    public var transform = PropertyTimeline<AffineTransform>(defaultValue: .identity)
    /// The track's opacity over time, 0 (invisible) to 1 (opaque, the default), like
    /// `setOpacity(_:at:)`.
    public var opacity = PropertyTimeline<Double>(defaultValue: 1)
    /// In the source frame's stored pixel coordinates; nil (default) shows the whole frame.
    public var crop: PropertyTimeline<Rect>? = nil
    /// Filters of the track's picture, before it is placed; radii in render-size pixels.
    public var filters = FilterStack()
    /// Where the track shows: a layer tree over the whole frame (placed as the animation tool's
    /// parent layer is: render-size coordinates, y up unless flipped; animations at composition
    /// times) whose alpha the placed picture is drawn through, as a layer's `mask`; nil shows it
    /// all. AVFoundation's layer instructions have none: a custom compositor's wipe needs one.
    public var mask: Layer? = nil

    /// Draws composition track `trackID`, untransformed and opaque, like
    /// `AVMutableVideoCompositionLayerInstruction(assetTrack:)`.
    public init(trackID: Int) { self.trackID = trackID }

    /// The crop that keeps the whole picture: what holds before the first crop is set (Core
    /// Animation's `CGRectInfinite`), and what a clip that needs none is given after one that
    /// does. Drawing cuts every crop to the picture.
    public static let uncropped = Rect(x: -1e9, y: -1e9, width: 2e9, height: 2e9)

    /// Shows only `rect` of the source frame from `time` on, like `setCropRectangle(_:at:)`;
    /// before the first crop set, the whole picture shows.
    /// - Parameters:
    ///   - rect: In the source frame's stored pixels (before the transform), origin top-left.
    ///   - time: Composition time.
    /// - Returns: The crop ramp this cuts short (`PropertyTimeline.set(_:at:)`).
    @discardableResult
    public func setCropRectangle(_ rect: Rect, at time: MediaTime) -> TimeRange? {
        var timeline = crop ?? PropertyTimeline(defaultValue: Self.uncropped)
        let cut = timeline.set(rect, at: time)
        crop = timeline
        return cut
    }

    /// Moves the crop from `from` to `to` over `range`, then holds `to`, like
    /// `setCropRectangleRamp(fromStartCropRectangle:toEndCropRectangle:timeRange:)`. Rectangles
    /// are in the source frame's stored pixels; `curve` eases the ramp (linear by default).
    /// - Returns: The crop change this ramp and it overlap (`PropertyTimeline.ramp(from:to:over:curve:)`).
    @discardableResult
    public func setCropRectangleRamp(from: Rect, to: Rect, over range: TimeRange, curve: TimingFunction = .linear) -> TimeRange? {
        var timeline = crop ?? PropertyTimeline(defaultValue: Self.uncropped)
        let cut = timeline.ramp(from: from, to: to, over: range, curve: curve)
        crop = timeline
        return cut
    }
}

/// One time range of a video composition: which tracks are drawn, in which order, over
/// which background, like `AVMutableVideoCompositionInstruction`.
public final class VideoCompositionInstruction {
    /// The composition time this instruction covers. The instructions of a video composition
    /// must cover it from 0 to its end, in order, without gaps or overlaps (checked at export).
    public var timeRange: TimeRange
    /// What shows where no track is drawn or tracks are transparent; black by default.
    public var backgroundColor: Color = .black
    /// First is drawn on top.
    public var layerInstructions: [LayerInstruction] = []

    /// An instruction over `timeRange` with a black background and no tracks drawn.
    public init(timeRange: TimeRange) { self.timeRange = timeRange }
}

/// How every output frame is composed, like `AVMutableVideoComposition`.
public final class VideoComposition {
    /// The size of the composed frames, in pixels (AVFoundation's `renderSize`), at least 1×1.
    /// Video output is rounded down to even numbers (4:2:0), and a preset with a size box may
    /// scale it down.
    public var renderSize: Size
    /// The time between output frames, at least 1/1000 s (AVFoundation's `frameDuration`):
    /// 1/30 s for 30 fps, `MediaTime(value: 1001, timescale: 30000)` for 29.97. Setting it
    /// keeps it as set: see `renderFrameDuration`.
    public var frameDuration: MediaTime {
        didSet { sourceFrameRate = nil }
    }
    /// The average rate of the sources `frameDuration` was taken from (`properties(of:)`,
    /// `av.join`); nil when it was set.
    package var sourceFrameRate: Double?
    /// Scales the render size for output (AVFoundation's `renderScale`): 0.5 renders at half
    /// size. Export takes more than 0 and at most 4; 1 by default.
    public var renderScale: Double = 1

    /// `renderSize` times `renderScale`: the size frames are rendered at, before any
    /// rounding. Throws when `renderScale` is outside (0, 4].
    package func scaledRenderSize() throws -> Size {
        let scale = renderScale
        guard scale > 0, scale <= 4, scale.isFinite else { throw EngineError("videoComposition.renderScale must be in (0, 4], got \(scale)") }
        return Size(width: renderSize.width * scale, height: renderSize.height * scale)
    }
    /// What is drawn when (AVFoundation's `instructions`): in time order, covering the
    /// composition from 0 to its end without gaps or overlaps (checked at export).
    public var instructions: [VideoCompositionInstruction] = []
    /// When set, the composed video is drawn into `videoLayer` and `parentLayer`'s tree
    /// around it (AVVideoCompositionCoreAnimationTool).
    public var animationTool: AnimationTool? = nil
    /// Filters of each composed frame, before the animation tool's layers go around it.
    public var filters = FilterStack()
    /// Explanations of choices made for the script (mismatched clip shapes…).
    public internal(set) var notes: [Diagnostic] = []

    /// A video composition with no instructions yet, like `AVMutableVideoComposition()` with
    /// its size and rate set; `properties(of:)` makes one with instructions from the sources.
    public init(renderSize: Size, frameDuration: MediaTime) {
        self.renderSize = renderSize
        self.frameDuration = frameDuration
    }

    /// A composition whose rate comes from sources averaging `rate` frames per second.
    package convenience init(renderSize: Size, sourceFrameRate rate: Double?) {
        self.init(renderSize: renderSize, frameDuration: Self.frameDuration(forRate: rate ?? 30))
        sourceFrameRate = rate
    }

    /// The frame duration renders use, and the note that says so when it is not
    /// `frameDuration`. Plain cuts keep the sources' pictures, at their own rate; but a rate
    /// taken from a variable-rate phone clip (10.5 or 28 fps on average) made a dissolve, a
    /// title card or a karaoke sweep move at 10.5 fps. So when the composition animates
    /// (layers, transitions, ramps) and its rate came from sources at no standard rate, it is
    /// rendered at the nearest of 24, 25, 30, 50 and 60 fps at or above their average (30
    /// below 24, as phones record). A `frameDuration` the script set is always kept.
    package var renderFrameDuration: (duration: MediaTime, note: Diagnostic?) {
        guard let rate = sourceFrameRate, animates, !Self.isStandard(frameDuration) else { return (frameDuration, nil) }
        let chosen = rate < 24 ? 30 : Self.smoothRates.first { Double($0) >= rate - 0.05 }
        guard let chosen else { return (frameDuration, nil) }
        let shown = shortNumber((rate * 10).rounded() / 10)
        return (MediaTime(value: 1, timescale: Int32(chosen)),
                Diagnostic(.frameRateChosen, .note, "the video is rendered at \(chosen) fps: its sources average \(shown) fps, no standard rate, and its layers, transitions or ramps would move at \(shown) fps",
                           remedy: "set the video composition's frameDuration to choose the rate yourself (\(frameDuration.value)/\(frameDuration.timescale) s keeps the sources')"))
    }

    /// The rates an animated render may be given.
    private static let smoothRates = [24, 25, 30, 50, 60]

    /// Whether anything in the picture moves other than the sources' own frames.
    var animates: Bool {
        animationTool != nil || instructions.contains { instruction in
            instruction.layerInstructions.count > 1 || instruction.layerInstructions.contains { layer in
                layer.transform.ramps || layer.opacity.ramps || layer.crop?.ramps == true
            }
        }
    }

    /// AVFoundation's `videoCompositionWithPropertiesOfAsset:`: render size, frame rate and
    /// transforms taken from the sources, so phone video comes out upright with no extra code.
    /// Each segment's own preferred transform is applied from its start, so a portrait and a
    /// landscape clip in one track are each shown upright.
    /// With `renderSize`, clips of another shape are placed in it by `placement`; drawn at
    /// their own size (`.natural`), each mismatch is explained in `notes`.
    public static func properties(of composition: Composition, renderSize: Size? = nil, placement: Placement = .natural) -> VideoComposition {
        let size = renderSize ?? composition.uprightVideoSize
        let videoTracks = composition.tracks(withMediaType: .video)
        let rates = videoTracks.flatMap { $0.segments.compactMap { $0.source?.nominalFrameRate } }.filter { $0 > 0 && $0 <= 240 }
        let videoComposition = VideoComposition(renderSize: size, sourceFrameRate: rates.max())
        let instruction = VideoCompositionInstruction(timeRange: TimeRange(start: .zero, duration: composition.duration))
        for track in videoTracks {
            let layer = LayerInstruction(trackID: track.trackID)
            for segment in track.segments {
                guard let source = segment.source else { continue }
                let upright = source.shownTransform(preferredTransform: track.preferredTransform(of: source))
                let transform = upright.concatenating(placement.transform(for: source.naturalSize, upright, in: size))
                layer.transform.set(transform, at: segment.targetRange.start)
                // A clip that needs no crop after one that does shows whole again.
                if let crop = placement.crop(for: source.naturalSize, placed: transform, in: size) {
                    layer.setCropRectangle(crop, at: segment.targetRange.start)
                } else if layer.crop != nil {
                    layer.setCropRectangle(LayerInstruction.uncropped, at: segment.targetRange.start)
                }
                let shown = source.shownSize(preferredTransform: track.preferredTransform(of: source))
                if placement == .natural, shown != size {
                    let shape = { (s: Size) in s.height > s.width ? "portrait" : s.width > s.height ? "landscape" : "square" }
                    videoComposition.notes.append(Diagnostic(.layerOffFrame, .warning, "clip \"\(source.path)\" at \(segment.targetRange.start.seconds) s is \(shape(shown)) \(shown) but the render size is \(shape(size)) \(size): it is drawn at its own size from the top-left corner; use fit = \"fit\" to scale it into the frame, or fit = \"fill\" to fill it", time: segment.targetRange.start.seconds))
                }
            }
            instruction.layerInstructions.append(layer)
        }
        videoComposition.instructions = [instruction]
        return videoComposition
    }

    /// How a picture of another shape goes into the render size.
    public enum Placement: Sendable, Equatable {
        /// At its own size from the top-left corner.
        case natural
        /// Scaled to fit inside, aspect kept, centred; the background shows around it.
        case fit
        /// Scaled to cover the frame, aspect kept, the rest cropped; `focus` (0…1 across and
        /// down the upright picture) is brought as near the centre as the picture allows.
        case fill(focus: Point)

        /// `.fill` centred.
        public static let fill = Placement.fill(focus: Point(x: 0.5, y: 0.5))

        /// What goes after an upright transform to place the picture stored at `stored` size.
        package func transform(for stored: Size, _ upright: AffineTransform, in size: Size) -> AffineTransform {
            let box = upright.apply(Rect(x: 0, y: 0, width: stored.width, height: stored.height))
            guard box.width > 0, box.height > 0 else { return .identity }
            let across = size.width / box.width, down = size.height / box.height
            switch self {
            case .natural:
                return .identity
            case .fit:
                let scale = Swift.min(across, down)
                return AffineTransform.translation(-box.x, -box.y).concatenating(.scale(scale, scale))
                    .concatenating(.translation((size.width - box.width * scale) / 2, (size.height - box.height * scale) / 2))
            case .fill(let focus):
                let scale = Swift.max(across, down)
                let (width, height) = (box.width * scale, box.height * scale)
                // The focus at the centre, but never an empty edge.
                let x = Swift.min(0, Swift.max(size.width - width, size.width / 2 - focus.x * width))
                let y = Swift.min(0, Swift.max(size.height - height, size.height / 2 - focus.y * height))
                return AffineTransform.translation(-box.x, -box.y).concatenating(.scale(scale, scale)).concatenating(.translation(x, y))
            }
        }

        /// For `.fill`, the part of the stored picture inside the frame (so a transition that
        /// moves the picture never shows what was cropped); nil when all of it shows.
        package func crop(for stored: Size, placed: AffineTransform, in size: Size) -> Rect? {
            guard case .fill = self, let toStored = placed.inverted() else { return nil }
            let whole = Rect(x: 0, y: 0, width: stored.width, height: stored.height)
            let inside = toStored.apply(Rect(x: 0, y: 0, width: size.width, height: size.height)).clamped(to: whole)
            return inside == whole ? nil : inside
        }
    }

    /// The rate of a source's real average (its nominal rate): the standard rate it stands
    /// for when it is within 0.5 % of one (exact 1001/30000 for 29.97), else the average
    /// itself to a tenth of a frame per second — a variable-rate phone clip averaging 10.5 fps
    /// is exported at 10.5 fps, not padded out to 23.976 with repeated pictures. Below 5 fps
    /// (slides, time-lapse stills) it is 23.976: a frame that long would stretch the end of
    /// the export by up to its length.
    package static func frameDuration(forRate rate: Double) -> MediaTime {
        standardFrameDuration(near: rate) ?? {
            guard rate >= 5 else { return MediaTime(value: 1001, timescale: 24000) }
            let tenths = Int32(min((rate * 10).rounded(), 2400)) // up to 240 fps
            return MediaTime(value: 10, timescale: tenths).reduced()
        }()
    }

    /// Whether `duration` is one frame of a standard rate.
    static func isStandard(_ duration: MediaTime) -> Bool {
        standardFrameDuration(near: 1 / duration.seconds) == duration
    }

    /// The standard rate within 0.5 % of `rate`, as a frame duration.
    private static func standardFrameDuration(near rate: Double) -> MediaTime? {
        let standard: [(Int32, Int64)] = [(24000, 1001), (24, 1), (25, 1), (30000, 1001), (30, 1),
                                          (50, 1), (60000, 1001), (60, 1), (120, 1), (240, 1)]
        let nearest = standard.min { abs(rate - Double($0.0) / Double($0.1)) < abs(rate - Double($1.0) / Double($1.1)) }
        guard let (timescale, value) = nearest, abs(rate - Double(timescale) / Double(value)) < rate * 0.005 else { return nil }
        return MediaTime(value: value, timescale: timescale)
    }
}

extension PropertyTimeline where Value == Rect {
    /// A crop timeline's rectangle at `time`; nil when the whole picture shows
    /// (`LayerInstruction.uncropped`).
    package func crop(at time: MediaTime) -> Rect? {
        let rect = value(at: time)
        return rect == LayerInstruction.uncropped ? nil : rect
    }
}
