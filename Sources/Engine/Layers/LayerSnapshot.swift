/// One layer's state resolved at one time: what the layer renderer draws. The layer model
/// (`Layer`, with its animations) produces these; the renderer knows nothing of animation.
/// Coordinates: pixels of the render size, origin top-left, y down.
public struct LayerSnapshot: Sendable, Hashable {
    /// Position and size in the parent's coordinates (the resolved `frame`, before `transform`).
    public var frame: Rect
    /// Applied about the layer's anchor point, as Core Animation does.
    public var transform: AffineTransform = .identity
    /// Unit coordinates in the layer's bounds (0.5, 0.5 = centre).
    public var anchorPoint: Point = Point(x: 0.5, y: 0.5)
    public var opacity: Double = 1
    public var backgroundColor: Color = .clear
    public var cornerRadius: Double = 0
    public var borderWidth: Double = 0
    public var borderColor: Color = .black
    public var masksToBounds = false
    public var contents: ImageSource? = nil
    public var contentsGravity: ContentsGravity = .resize
    public var text: TextStyle? = nil
    /// True for the layer into which the composed video frame is drawn.
    public var isVideoLayer = false
    /// Applied to the layer and its sublayers as drawn (see `LayerProperties.filters`).
    public var filters: [Filter] = []
    /// Drawing order: first drawn first (under later ones); already sorted by zPosition.
    public var sublayers: [LayerSnapshot] = []

    public init(frame: Rect) { self.frame = frame }
}

public enum ContentsGravity: String, Sendable, Hashable, CaseIterable {
    case resize, resizeAspect, resizeAspectFill, center, top, bottom, left, right
    case topLeft, topRight, bottomLeft, bottomRight
}

/// A still image for layer contents: a file, identified by its path so renderers can cache
/// it, or pixels already in memory (a frame from `ImageGenerator.image(at:)`).
public struct ImageSource: Sendable, Hashable {
    /// The file, or a description of the in-memory picture.
    public let path: String
    public let width: Int
    public let height: Int
    public let pixels: RGBAImage?

    public init(path: String, width: Int, height: Int) {
        self.path = path
        self.width = width
        self.height = height
        pixels = nil
    }

    public init(pixels: RGBAImage, description: String) {
        path = description
        width = pixels.width
        height = pixels.height
        self.pixels = pixels
    }

    public static func == (a: ImageSource, b: ImageSource) -> Bool {
        a.path == b.path && a.width == b.width && a.height == b.height && a.pixels === b.pixels
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(path)
        hasher.combine(pixels.map(ObjectIdentifier.init))
    }
}

public enum TextAlignment: String, Sendable, Hashable, CaseIterable { case left, center, right, justified, natural }
public enum TruncationMode: String, Sendable, Hashable, CaseIterable { case none, start, middle, end }

/// Everything that decides how a text layer's pixels look; equal styles rasterise equally,
/// so this is the cache key for rasterised text.
public struct TextStyle: Sendable, Hashable {
    public var string: String
    /// Family name ("Noto Sans CJK JP"); fontconfig falls back per glyph.
    public var fontFamily: String = "Noto Sans CJK JP"
    public var fontWeight: Int = 400          // CSS-like 100…900
    public var isItalic = false
    public var fontSize: Double = 36          // pixels
    public var foregroundColor: Color = .white
    public var alignment: TextAlignment = .natural
    public var isWrapped = false
    public var maxLines = 0                   // 0: unlimited
    public var truncationMode: TruncationMode = .none
    public var lineSpacing: Double = 0        // extra pixels between lines
    public var shadowColor: Color = .black
    public var shadowOpacity: Double = 0
    public var shadowOffset = Size(width: 0, height: -3)
    public var shadowRadius: Double = 3
    public var strokeColor: Color = .black
    public var strokeWidth: Double = 0        // outline width in pixels; 0: none
    /// Karaoke: how many leading Unicode scalars of `string` are already sung; they are
    /// drawn in `highlightColor` (when set) instead of `foregroundColor`.
    public var highlightedScalars: Int = 0
    public var highlightColor: Color? = nil

    public init(string: String) { self.string = string }
}
