import MoonreelComposition
import MoonreelMedia
import MoonreelPlatform

/// What an edit is made of, laid out in time for a timeline view (the studio draws it): the
/// composition's tracks and segments, the video composition's instructions and their ramps,
/// the audio mix's volume ramps, the animation tool's layers with the time each can be
/// visible, and the edit points between them. Seconds as Doubles: it is for drawing, not
/// for rendering.
public struct EditOutline: Sendable, Codable, Equatable {
    /// A piece of a track: where it sits in the composition and what it shows.
    public struct Segment: Sendable, Codable, Equatable {
        /// Composition time it starts at, and how long it lasts (seconds).
        public var start, duration: Double
        /// The source file's name (no folder), nil for an empty edit.
        public var source: String?
        /// Source time its first frame comes from.
        public var sourceStart: Double
    }

    /// A composition track and its segments.
    public struct Track: Sendable, Codable, Equatable {
        /// The track's ID.
        public var id: Int
        /// video or audio.
        public var mediaType: String
        /// Its segments in time order.
        public var segments: [Segment]
    }

    /// A change of one layer-instruction property: a ramp, or a value set (duration 0).
    public struct Ramp: Sendable, Codable, Equatable {
        /// opacity, transform or crop.
        public var kind: String
        /// When it starts and how long it lasts (seconds).
        public var start, duration: Double
        /// The values at its ends, as text (a number, a transform, a rectangle).
        public var from, to: String
    }

    /// A layer instruction: the track it draws and its changes.
    public struct LayerRamps: Sendable, Codable, Equatable {
        /// The composition track drawn.
        public var trackID: Int
        /// Its opacity, transform and crop changes.
        public var ramps: [Ramp]
    }

    /// A video composition instruction.
    public struct Instruction: Sendable, Codable, Equatable {
        /// Its time range (seconds).
        public var start, duration: Double
        /// Its layer instructions, top first.
        public var layers: [LayerRamps]
    }

    /// A volume change of the audio mix.
    public struct AudioRamp: Sendable, Codable, Equatable {
        /// The audio track it applies to.
        public var trackID: Int
        /// When it starts and how long it lasts (seconds; 0: a value set).
        public var start, duration: Double
        /// The volumes at its ends.
        public var from, to: Double
    }

    /// A layer of the animation tool's tree and one stretch of time in which it can be visible.
    public struct LayerSpan: Sendable, Codable, Equatable {
        /// "text “…”" with the start of its string, or its kind.
        public var name: String
        /// text, image, video or layer.
        public var kind: String
        /// How deep in the tree (the parent layer is 0).
        public var depth: Int
        /// When it can start and stop being visible (seconds).
        public var start, end: Double
    }

    /// The composition's length in seconds.
    public var duration: Double
    /// Every track of the composition.
    public var tracks: [Track]
    /// The video composition's instructions (none without one).
    public var instructions: [Instruction]
    /// The audio mix's volume changes.
    public var audioRamps: [AudioRamp]
    /// The animation tool's layers, each stretch of time it can be visible (at most `maxLayerSpans`).
    public var layers: [LayerSpan]
    /// Cuts, segment and instruction boundaries, ascending, the ends included.
    public var editPoints: [Double]

    /// At most this many layer spans are listed (a lyric video has a few hundred; a tree
    /// of 100 000 layers would make a page nobody can read).
    public static let maxLayerSpans = 2_000

    /// The outline of an export's edit: its composition, video composition and audio mix.
    public init(composition: Composition, videoComposition: VideoComposition?, audioMix: AudioMix?) {
        let end = composition.duration
        duration = end.seconds
        tracks = composition.tracks.map { track in
            Track(id: track.trackID, mediaType: track.mediaType.rawValue, segments: track.segments.map { segment in
                Segment(start: segment.targetRange.start.seconds, duration: segment.targetRange.duration.seconds,
                        source: segment.source.map { Paths.name(of: $0.path) }, sourceStart: segment.sourceRange.start.seconds)
            })
        }
        instructions = (videoComposition?.instructions ?? []).map { instruction in
            Instruction(start: instruction.timeRange.start.seconds, duration: instruction.timeRange.duration.seconds,
                        layers: instruction.layerInstructions.map { layer in
                            LayerRamps(trackID: layer.trackID,
                                       ramps: Self.ramps("opacity", layer.opacity) + Self.ramps("transform", layer.transform)
                                           + (layer.crop.map { Self.ramps("crop", $0) } ?? []))
                        })
        }
        audioRamps = (audioMix?.inputParameters ?? []).flatMap { input in
            input.volume.changes.map {
                AudioRamp(trackID: input.trackID, start: $0.start.seconds, duration: $0.duration.seconds, from: $0.from, to: $0.to)
            }
        }
        layers = videoComposition.flatMap { vc in
            vc.animationTool.map { Self.layerSpans($0, renderSize: vc.renderSize, frameDuration: vc.frameDuration, end: end) }
        } ?? []
        var points = Set([0, end.seconds])
        for track in composition.tracks {
            for segment in track.segments { points.formUnion([segment.targetRange.start.seconds, segment.targetRange.end.seconds]) }
        }
        for instruction in instructions { points.formUnion([instruction.start, instruction.start + instruction.duration]) }
        editPoints = points.filter { $0 >= 0 && $0 <= end.seconds }.sorted()
    }

    private static func ramps<Value: Rampable>(_ kind: String, _ timeline: PropertyTimeline<Value>) -> [Ramp] {
        timeline.changes.map {
            Ramp(kind: kind, start: $0.start.seconds, duration: $0.duration.seconds, from: text($0.from), to: text($0.to))
        }
    }

    /// A ramp's value as the page shows it: a crop as x, y, width×height to the hundredth of a
    /// pixel (a fitted crop's 0.25 came out as 0.24999999999994316), or "whole" for none.
    private static func text<Value>(_ value: Value) -> String {
        guard let rect = value as? Rect else { return "\(value)" }
        if rect == LayerInstruction.uncropped { return "whole" }
        let pixels = { (value: Double) in shortNumber((value * 100).rounded() / 100) }
        return "\(pixels(rect.x)), \(pixels(rect.y)), \(pixels(rect.width))×\(pixels(rect.height))"
    }

    private static func layerSpans(_ tool: AnimationTool, renderSize: Size, frameDuration: MediaTime, end: MediaTime) -> [LayerSpan] {
        let timeline = tool.timeline(renderSize: renderSize, frameDuration: frameDuration)
        var depths: [Int] = []
        var spans: [LayerSpan] = []
        for (index, layer) in timeline.layers.enumerated() {
            let depth = layer.parent < 0 ? 0 : depths[layer.parent] + 1
            depths.append(depth)
            for span in timeline.visibleSpans[index] where spans.count < maxLayerSpans {
                let start = max(0, seconds(span.start, otherwise: 0))
                let finish = min(end.seconds, seconds(span.end, otherwise: end.seconds))
                guard finish > start else { continue }
                spans.append(LayerSpan(name: name(of: layer.model), kind: kind(of: layer.model), depth: depth, start: start, end: finish))
            }
        }
        return spans
    }

    private static func seconds(_ bound: TimelineBound, otherwise: Double) -> Double {
        if case .at(let time) = bound { return time.seconds }
        return otherwise
    }

    private static func kind(of layer: ResolvedLayer) -> String {
        if layer.text != nil { return "text" }
        if layer.properties.isVideoLayer { return "video" }
        return layer.properties.contents != nil ? "image" : "layer"
    }

    private static func name(of layer: ResolvedLayer) -> String {
        guard let text = layer.text?.string else { return kind(of: layer) }
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return "text “" + (line.count > 40 ? line.prefix(39) + "…" : line) + "”"
    }
}
