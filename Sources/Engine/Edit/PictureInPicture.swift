import MoonreelComposition
import MoonreelMedia

/// A second clip shown small in a corner of a video composition, built from ordinary parts:
/// new composition tracks for its media, one layer instruction placing it (upright, scaled,
/// moved into the corner), put on top in every instruction it overlaps (they are split at
/// its start and end), and, with a border, a layer in the animation tool's tree.
public struct PictureInPicture {
    /// The corner of the frame the inset sits in.
    public enum Corner: String, Sendable, CaseIterable {
        /// Top left of the frame.
        case topLeft
        /// Top right of the frame.
        case topRight
        /// Bottom left of the frame.
        case bottomLeft
        /// Bottom right of the frame (the default).
        case bottomRight
    }

    /// Where the inset goes; `.bottomRight` by default.
    public var corner = Corner.bottomRight
    /// The inset's width as a fraction of the frame's width.
    public var scale = 0.3
    /// Distance from the frame's edges, as a fraction of its shorter side.
    public var margin = 0.04
    /// Border around the inset, in pixels (0: none), drawn outside it.
    public var borderWidth = 0.0
    /// The border's colour; white by default.
    public var borderColor = Color.white

    /// The values `scale` may take (0.05…1). The engine does not check them; the scripting
    /// bindings refuse values outside.
    public static let scaleRange = 0.05...1.0
    /// The values `margin` may take (0…0.5). The engine does not check them; the scripting
    /// bindings refuse values outside.
    public static let marginRange = 0.0...0.5

    /// An inset in the bottom-right corner, 30 % of the frame's width, 4 % of its shorter side
    /// from the edges, with no border.
    public init() {}

    /// What the inset added.
    public struct Inset {
        /// The layer instruction placing the inset, put first (on top) in the instructions it spans.
        public let layerInstruction: LayerInstruction
        /// The new composition track holding the inset's picture.
        public let videoTrack: CompositionTrack
        /// The new composition track holding the inset's sound; nil when the asset has none.
        public let audioTrack: CompositionTrack?
        /// Where the inset sits, in render pixels (top-left origin).
        public let frame: Rect
        /// The border's layer in the animation tool's tree, shown only while the inset is; nil
        /// without a border.
        public let border: Layer?
    }

    /// Adds `range` of `asset` (nil: all of it) at composition time `at`.
    public func add(_ asset: Asset, range requested: TimeRange? = nil, at: MediaTime,
                    to composition: Composition, videoComposition: VideoComposition) throws -> Inset {
        guard let source = asset.tracks(withMediaType: .video).first else {
            throw EngineError("\"\(asset.path)\" has no video track to show in the inset", kind: .notFound)
        }
        guard !videoComposition.instructions.isEmpty else {
            throw EngineError("the video composition has no instructions to add the inset to", remedy: .makeVideoComposition)
        }
        let range = requested ?? TimeRange(start: .zero, duration: asset.duration)
        guard range.duration.value > 0 else { throw EngineError("the inset must last more than 0 s") }
        try source.checkInsideAsset(range)
        let video = try composition.addMutableTrack(mediaType: .video)
        try video.insertTimeRange(range, of: source, at: at)
        var audio: CompositionTrack? = nil
        if let sound = asset.tracks(withMediaType: .audio).first {
            audio = try composition.addMutableTrack(mediaType: .audio)
            try audio?.insertTimeRange(range, of: sound, at: at)
        }

        let picture = source.shownSize
        let frame = insetFrame(for: picture, in: videoComposition.renderSize)
        let layer = LayerInstruction(trackID: video.trackID)
        let scaleFactor = frame.width / picture.width
        layer.transform.set(source.shownTransform(preferredTransform: source.preferredTransform).concatenating(.scale(scaleFactor, scaleFactor))
                                .concatenating(.translation(frame.x, frame.y)), at: at)
        let shown = TimeRange(start: at, duration: range.duration)
        videoComposition.instructions = Self.split(videoComposition.instructions, adding: layer, over: shown)

        var border: Layer? = nil
        if borderWidth > 0 {
            let outline = Layer()
            outline.frame = Rect(x: frame.x - borderWidth, y: frame.y - borderWidth,
                                 width: frame.width + 2 * borderWidth, height: frame.height + 2 * borderWidth)
            outline.borderWidth = borderWidth
            outline.borderColor = borderColor
            try outline.show(only: shown)
            try videoComposition.overlayContainer(besideVideo: true).addSublayer(outline)
            border = outline
        }
        return Inset(layerInstruction: layer, videoTrack: video, audioTrack: audio, frame: frame, border: border)
    }

    /// The inset's place for a picture of upright size `picture` in a frame of `size`.
    func insetFrame(for picture: Size, in size: Size) -> Rect {
        let width = (size.width * scale).rounded()
        let height = (picture.height * width / picture.width).rounded()
        let gap = (min(size.width, size.height) * margin).rounded()
        let right = corner == .topRight || corner == .bottomRight, bottom = corner == .bottomLeft || corner == .bottomRight
        return Rect(x: right ? size.width - gap - width : gap, y: bottom ? size.height - gap - height : gap,
                    width: width, height: height)
    }

    /// `instructions` with `layer` drawn on top during `range`: each instruction it overlaps
    /// is cut at the range's ends, and an instruction of its own covers any time after the
    /// last one.
    static func split(_ instructions: [VideoCompositionInstruction], adding layer: LayerInstruction,
                      over range: TimeRange) -> [VideoCompositionInstruction] {
        var result: [VideoCompositionInstruction] = []
        for instruction in instructions {
            let span = instruction.timeRange
            guard span.intersection(range) != nil else {
                result.append(instruction)
                continue
            }
            let cuts = [span.start, max(min(range.start, span.end), span.start), max(min(range.end, span.end), span.start), span.end]
            for (from, to) in zip(cuts, cuts.dropFirst()) where from < to {
                let piece = VideoCompositionInstruction(timeRange: TimeRange(from: from, to: to))
                piece.backgroundColor = instruction.backgroundColor
                let inside = from >= range.start && to <= range.end
                piece.layerInstructions = (inside ? [layer] : []) + instruction.layerInstructions
                result.append(piece)
            }
        }
        if let last = instructions.last?.timeRange.end, range.end > last {
            if range.start > last { result.append(VideoCompositionInstruction(timeRange: TimeRange(from: last, to: range.start))) }
            let tail = VideoCompositionInstruction(timeRange: TimeRange(from: max(last, range.start), to: range.end))
            tail.layerInstructions = [layer]
            result.append(tail)
        }
        return result
    }
}
