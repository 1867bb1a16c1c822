import MoonreelMedia

/// One layer's state resolved at one time: what the layer renderer draws. The layer model
/// (`Layer`, with its animations) produces these; the renderer knows nothing of animation.
/// Coordinates: pixels of the render size, origin top-left, y down.
package struct LayerSnapshot: Sendable, Hashable {
    /// Position and size in the parent's coordinates (the resolved `frame`, before `transform`).
    package var frame: Rect
    /// Applied about the layer's anchor point, as Core Animation does.
    package var transform: AffineTransform = .identity
    /// Unit coordinates in the layer's bounds (0.5, 0.5 = centre).
    package var anchorPoint: Point = Point(x: 0.5, y: 0.5)
    /// 0…1, applied to the layer and its sublayers as a group.
    package var opacity: Double = 1
    /// Fills the bounds (with rounded corners) under everything else.
    package var backgroundColor: Color = .clear
    /// Corner radius in pixels of background, border and clip.
    package var cornerRadius: Double = 0
    /// Border width in pixels, drawn inside the bounds over the sublayers.
    package var borderWidth: Double = 0
    /// Colour of the border.
    package var borderColor: Color = .black
    /// Whether contents and sublayers are clipped to the (rounded) bounds.
    package var masksToBounds = false
    /// The image drawn in the bounds; nil: none.
    package var contents: ImageSource? = nil
    /// How the contents or the video frame fit the bounds.
    package var contentsGravity: ContentsGravity = .resize
    /// The text drawn, for text layers; nil for other layers.
    package var text: TextStyle? = nil
    /// What a sound layer shows at this time (spectrum bars, a waveform); nil for other layers.
    package var sound: SoundPicture? = nil
    /// True for the layer into which the composed video frame is drawn.
    package var isVideoLayer = false
    /// Applied to the layer and its sublayers as drawn (see `LayerProperties.filters`).
    package var filters: [Filter] = []
    /// Drawing order: first drawn first (under later ones); already sorted by zPosition.
    package var sublayers: [LayerSnapshot] = []
    /// Whose alpha decides where the layer and its sublayers show (`CALayer.mask`), in the
    /// layer's own coordinates; nil: no mask.
    package var mask: LayerMask? = nil

    /// A layer at `frame` with Core Animation's defaults for everything else.
    package init(frame: Rect) { self.frame = frame }

    /// Whether this layer or one below it shows the sound (a drawing that changes every frame).
    package var showsSound: Bool { sound != nil || sublayers.contains { $0.showsSound } || mask?.layer.showsSound == true }

    /// Whether drawing this layer and its sublayers leaves every pixel under them as it was:
    /// transparent, or holding no text, picture, fill, border or filter anywhere.
    package var drawsNothing: Bool {
        opacity <= 0 || mask?.hidesAll == true || (text == nil && contents == nil && sound == nil && !isVideoLayer && backgroundColor.alpha <= 0 && borderWidth <= 0
                         && filters.isEmpty && sublayers.allSatisfy(\.drawsNothing))
    }
}

/// A snapshot's mask: a box, since a snapshot cannot hold a snapshot directly.
package final class LayerMask: Sendable, Hashable {
    package let layer: LayerSnapshot
    /// The layer shows where the mask is transparent instead (`Layer.maskIsInverted`).
    package let isInverted: Bool
    package init(_ layer: LayerSnapshot, inverted: Bool = false) { (self.layer, isInverted) = (layer, inverted) }
    package static func == (a: LayerMask, b: LayerMask) -> Bool { a.layer == b.layer && a.isInverted == b.isInverted }
    package func hash(into hasher: inout Hasher) {
        hasher.combine(layer)
        hasher.combine(isInverted)
    }

    /// Whether the layer under it shows nowhere.
    var hidesAll: Bool { !isInverted && layer.drawsNothing }
}

/// How a layer's contents image (or, on the video layer, the video frame) is placed in its
/// bounds, as `CALayerContentsGravity`. The raw values are Core Animation's names.
/// "Top" means the top of the picture as shown, whatever the layer geometry's y direction
/// (as on iOS). Placements at natural size are rounded to whole pixels.
public enum ContentsGravity: String, Sendable, Hashable, CaseIterable {
    /// Stretched to fill the bounds exactly, ignoring the aspect ratio (the default).
    case resize
    /// Scaled to fit inside the bounds with its aspect ratio, centred (letterboxed).
    case resizeAspect
    /// Scaled to cover the bounds with its aspect ratio, centred (cropped by a clip).
    case resizeAspectFill
    /// Natural size, centred.
    case center
    /// Natural size, centred horizontally, at the top edge.
    case top
    /// Natural size, centred horizontally, at the bottom edge.
    case bottom
    /// Natural size, centred vertically, at the left edge.
    case left
    /// Natural size, centred vertically, at the right edge.
    case right
    /// Natural size, in the top-left corner.
    case topLeft
    /// Natural size, in the top-right corner.
    case topRight
    /// Natural size, in the bottom-left corner.
    case bottomLeft
    /// Natural size, in the bottom-right corner.
    case bottomRight
}

/// How a text layer's lines are aligned across the layer's width, as `CATextLayerAlignmentMode`.
public enum TextAlignment: String, Sendable, Hashable, CaseIterable {
    /// Lines start at the left edge.
    case left
    /// Lines are centred.
    case center
    /// Lines end at the right edge.
    case right
    /// Wrapped lines are stretched to the full width, except each paragraph's last line.
    case justified
    /// Left for left-to-right text, right for right-to-left text (Arabic, Hebrew); the
    /// default.
    case natural
}

/// Where a line too long for a text layer is cut and marked with "…", as
/// `CATextLayerTruncationMode`.
public enum TruncationMode: String, Sendable, Hashable, CaseIterable {
    /// No ellipsis (the default): unwrapped text keeps its natural width and may overflow.
    case none
    /// The beginning is replaced by "…".
    case start
    /// The middle is replaced by "…".
    case middle
    /// The end is replaced by "…".
    case end
}

/// Everything that decides how a text layer's pixels look; equal styles rasterise equally,
/// so this is the cache key for rasterised text.
///
/// The properties of a `TextLayer` (`CATextLayer`'s, plus outline and karaoke highlight).
/// Text starts at the top of the layer's bounds and is aligned across their width; lengths
/// are in pixels of the render size. Drawing throws (failing the export) for a font size
/// outside 0 < size ≤ 4096 or a string longer than 64 KiB of UTF-8.
public struct TextStyle: Sendable, Hashable {
    /// The text drawn; line breaks start new lines (paragraphs).
    public var string: String
    /// Family name ("Noto Sans CJK JP"); fontconfig falls back per glyph.
    public var fontFamily: String = "Noto Sans CJK JP"
    /// Weight on the CSS scale: 400 regular (the default), 700 bold; clamped to 100…1000.
    public var fontWeight: Int = 400          // CSS-like 100…900
    /// Whether the italic (or oblique) style of the family is used.
    public var isItalic = false
    /// Font size in pixels (the em size), 36 by default; must be > 0 and ≤ 4096.
    public var fontSize: Double = 36          // pixels
    /// Colour of the glyphs; white by default (`CATextLayer.foregroundColor`).
    public var foregroundColor: Color = .white
    /// How lines are aligned across the layer's width.
    public var alignment: TextAlignment = .natural
    /// When true, lines break at words (or between characters, for CJK) to fit the width
    /// (`CATextLayer.isWrapped`); otherwise each line keeps its natural width.
    public var isWrapped = false
    /// The most lines drawn; 0 (the default) for no limit. Extra lines are left out, or
    /// the last one shown ends in "…" when a `truncationMode` is set.
    public var maxLines = 0                   // 0: unlimited
    /// Where too long lines are cut with "…"; also makes unwrapped lines fit the width,
    /// and wrapped text the height.
    public var truncationMode: TruncationMode = .none
    /// Extra space between lines in pixels (may be negative); 0 by default.
    public var lineSpacing: Double = 0        // extra pixels between lines
    /// Colour of the shadow (black by default); it shows only with a `shadowOpacity`.
    public var shadowColor: Color = .black
    /// Shadow opacity 0…1; 0 (the default) draws no shadow (`CALayer.shadowOpacity`).
    public var shadowOpacity: Double = 0
    /// Shadow offset in pixels with y down, so the default (0, −3) lifts the shadow as on
    /// iOS (`CALayer.shadowOffset`).
    public var shadowOffset = Size(width: 0, height: -3)
    /// Blur radius of the shadow in pixels, 3 by default (`CALayer.shadowRadius`).
    public var shadowRadius: Double = 3
    /// Colour of the outline around the glyphs (black by default; needs a `strokeWidth`).
    public var strokeColor: Color = .black
    /// Outline width in pixels outside the glyph edges, drawn under the fill; 0: none.
    public var strokeWidth: Double = 0        // outline width in pixels; 0: none
    /// Karaoke: how many leading Unicode scalars of `string` are already sung; they are
    /// drawn in `highlightColor` (when set) instead of `foregroundColor`.
    public var highlightedScalars: Int = 0
    /// Karaoke: how much of the next scalar is sung, 0 ≤ f < 1, from its leading edge (a
    /// fill sweeping across a word: ASS `\kf`); animations set it in steps of 1/32 of a scalar.
    public var highlightFraction: Double = 0
    /// Colour of the sung scalars (see `highlightedScalars`); nil: no highlight.
    public var highlightColor: Color? = nil
    /// How far the font may shrink so the text fits its layer before it is cut (as
    /// `UILabel.minimumScaleFactor` with `adjustsFontSizeToFitWidth`): 0.6 lets a line be
    /// drawn at down to 60 % of `fontSize`; 1 (the default) never shrinks.
    public var minimumScaleFactor: Double = 1

    /// A style drawing `string` with the defaults: Noto Sans CJK JP, regular, 36 px,
    /// white, natural alignment, unwrapped, no outline, no shadow.
    public init(string: String) { self.string = string }
}
