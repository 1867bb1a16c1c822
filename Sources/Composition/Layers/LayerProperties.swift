import MoonreelMedia

/// The model values of a layer, as in `CALayer`. Geometry is Core Animation's: pixels with
/// the origin at the bottom-left and y up, unless an ancestor sets `isGeometryFlipped`
/// (see that property). `frame` is derived from `bounds`, `position`, `anchorPoint` and
/// `transform`, as in Core Animation: setting it sets the bounds' size and the position.
public struct LayerProperties: Sendable, Hashable {
    /// The layer's own coordinate space; its origin shifts the sublayers (as in CALayer).
    public var bounds: Rect = .zero
    /// Where the anchor point sits, in the superlayer's coordinates.
    public var position: Point = .zero
    /// Unit coordinates in the bounds (0.5, 0.5 = centre): the point `position` places and
    /// `transform` turns about.
    public var anchorPoint = Point(x: 0.5, y: 0.5)
    /// Drawing order among siblings: higher draws later (on top); ties keep insertion order.
    public var zPosition: Double = 0
    /// 0 (transparent) … 1 (opaque), applied to the layer and its sublayers as a group;
    /// values above 1 draw as 1. A layer at 0 is skipped with its sublayers.
    public var opacity: Double = 1
    /// Applied about the anchor point, after the layer is placed by `position` (as
    /// `CALayer.affineTransform()`); rotation angles are in radians.
    public var transform: AffineTransform = .identity
    /// When true the layer and its sublayers are not drawn (`CALayer.isHidden`).
    public var isHidden = false
    /// Fills the bounds (rounded by `cornerRadius`) under the contents; clear by default.
    public var backgroundColor: Color = .clear
    /// Radius in pixels of the rounded corners of the background, the border and, with
    /// `masksToBounds`, the clip; at most half the shorter side. 0: square corners.
    public var cornerRadius: Double = 0
    /// Width in pixels of the border drawn inside the bounds, over the sublayers; 0: none.
    public var borderWidth: Double = 0
    /// Colour of the border (black by default; it shows only with a `borderWidth`).
    public var borderColor: Color = .black
    /// When true, contents and sublayers are clipped to the bounds (with rounded corners
    /// when `cornerRadius` is set), as `CALayer.masksToBounds`.
    public var masksToBounds = false
    /// The image drawn in the bounds, placed by `contentsGravity`; nil: none. Ignored on
    /// the video layer, which shows the video frame instead.
    public var contents: ImageSource? = nil
    /// How `contents` (or the video frame, on the video layer) is fitted into the bounds;
    /// `.resize` (stretch to fill) by default.
    public var contentsGravity: ContentsGravity = .resize
    /// The layer the composed video frame is drawn into (`animationTool.videoLayer`).
    public var isVideoLayer = false
    /// Sublayers are placed from the top-left, y down (UIKit's way), instead of Core
    /// Animation's bottom-left, y up. Contents and text are drawn upright either way.
    public var isGeometryFlipped = false
    /// Applied to the layer and its sublayers as drawn, before they are composited (as
    /// CALayer.filters); radii in render-size pixels.
    public var filters: [Filter] = []
    /// What the layer is called (`CALayer.name`): diagnostics about it name it so (the
    /// lyrics effect names each line's layer after its cue and the cue's file line).
    public var name: String?

    /// Core Animation's defaults: empty bounds at the origin, anchor at the centre, opaque,
    /// visible, no background, border, contents or filters.
    public init() {}

    /// The bounds placed in the superlayer, before the transform.
    var untransformedFrame: Rect {
        Rect(x: position.x - anchorPoint.x * bounds.width, y: position.y - anchorPoint.y * bounds.height,
             width: bounds.width, height: bounds.height)
    }

    /// The smallest rectangle in the superlayer that holds the transformed bounds. Setting
    /// it sets `bounds.size` and `position` and leaves the transform alone (with a
    /// non-identity transform, reading back gives the transformed box, as in CALayer).
    public var frame: Rect {
        get {
            guard !transform.isIdentity else { return untransformedFrame }
            let aboutAnchor = AffineTransform.translation(-anchorPoint.x * bounds.width, -anchorPoint.y * bounds.height)
                .concatenating(transform)
                .concatenating(.translation(position.x, position.y))
            return aboutAnchor.apply(Rect(x: 0, y: 0, width: bounds.width, height: bounds.height))
        }
        set {
            bounds.size = newValue.size
            position = Point(x: newValue.x + anchorPoint.x * newValue.width,
                             y: newValue.y + anchorPoint.y * newValue.height)
        }
    }
}

/// The space a layer is placed in: its superlayer's bounds (or the canvas, for the root).
struct LayerContainer {
    var boundsOrigin: Point
    var height: Double
    /// Core Animation's default orientation (y up), unless an ancestor flips it.
    var isYUp: Bool
}

/// A layer's values at one time: model values with the animations applied.
package struct ResolvedLayer: Sendable {
    package var properties: LayerProperties
    package var text: TextStyle?

    package var isVisible: Bool { !properties.isHidden && properties.opacity > 0 }

    /// The layer as drawn at `t`: each animation in turn over the model values (the last
    /// one on a property wins, as in Core Animation).
    func animated(by animations: [LayerAnimation], at t: MediaTime) -> ResolvedLayer {
        var layer = self
        for animation in animations {
            let keyPath = animation.keyPath
            if let value = animation.value(at: t, current: layer.value(for: keyPath)) {
                layer.set(value, for: keyPath)
            }
        }
        return layer
    }

    func value(for keyPath: AnimatableKeyPath) -> AnimatableValue? {
        let p = properties
        switch keyPath {
        case .opacity: return .number(p.opacity)
        case .position: return .point(p.position)
        case .bounds: return .rect(p.bounds)
        case .transform: return .transform(p.transform)
        case .transformScale, .transformScaleX: return .number(p.transform.decomposed.scaleX)
        case .transformScaleY: return .number(p.transform.decomposed.scaleY)
        case .transformRotation: return .number(p.transform.decomposed.angle)
        case .transformTranslationX: return .number(p.transform.tx)
        case .transformTranslationY: return .number(p.transform.ty)
        case .backgroundColor: return .color(p.backgroundColor)
        case .borderColor: return .color(p.borderColor)
        case .borderWidth: return .number(p.borderWidth)
        case .cornerRadius: return .number(p.cornerRadius)
        case .isHidden: return .bool(p.isHidden)
        case .contents: return p.contents.map { .image($0) }
        case .string: return text.map { .string($0.string) }
        case .foregroundColor: return text.map { .color($0.foregroundColor) }
        case .shadowOpacity: return text.map { .number($0.shadowOpacity) }
        case .highlightedScalars: return text.map { .number(Double($0.highlightedScalars)) }
        case .filterParameter(let name, let parameter):
            guard let filter = p.filters.first(where: { $0.name == name }), filter.kind.parameter(parameter) != nil else { return nil }
            return .number(filter.number(parameter))
        }
    }

    /// Sets the property; a value of the wrong kind is ignored (animations are checked
    /// against their key path when built, so this does not happen).
    mutating func set(_ value: AnimatableValue, for keyPath: AnimatableKeyPath) {
        switch (keyPath, value) {
        case (.opacity, .number(let n)): properties.opacity = n
        case (.position, .point(let p)): properties.position = p
        case (.bounds, .rect(let r)): properties.bounds = r
        case (.transform, .transform(let t)): properties.transform = t
        case (.transformScale, .number(let n)): updateTransform { $0.scaleX = n; $0.scaleY = n }
        case (.transformScaleX, .number(let n)): updateTransform { $0.scaleX = n }
        case (.transformScaleY, .number(let n)): updateTransform { $0.scaleY = n }
        case (.transformRotation, .number(let n)): updateTransform { $0.angle = n }
        case (.transformTranslationX, .number(let n)): properties.transform.tx = n
        case (.transformTranslationY, .number(let n)): properties.transform.ty = n
        case (.backgroundColor, .color(let c)): properties.backgroundColor = c
        case (.borderColor, .color(let c)): properties.borderColor = c
        case (.borderWidth, .number(let n)): properties.borderWidth = n
        case (.cornerRadius, .number(let n)): properties.cornerRadius = n
        case (.isHidden, .bool(let b)): properties.isHidden = b
        case (.contents, .image(let i)): properties.contents = i
        case (.string, .string(let s)): text?.string = s
        case (.foregroundColor, .color(let c)): text?.foregroundColor = c
        case (.shadowOpacity, .number(let n)): text?.shadowOpacity = n
        case (.highlightedScalars, .number(let n)):
            // The whole part lights whole scalars; the rest fills the next one from its
            // leading edge (a linear animation between word edges sweeps across the word).
            let value = n.isNaN ? 0 : min(max(n, 0), Double(Int32.max))
            text?.highlightedScalars = Int(value.rounded(.down))
            text?.highlightFraction = ((value - value.rounded(.down)) * 32).rounded(.down) / 32
        case (.filterParameter(let name, let parameter), .number(let n)):
            guard let index = properties.filters.firstIndex(where: { $0.name == name }) else { break }
            properties.filters[index].setClamped(parameter, n)
        default: break
        }
    }

    /// Core Animation's transform sub-paths set one component of the decomposed matrix.
    private mutating func updateTransform(_ change: (inout DecomposedTransform) -> Void) {
        var parts = properties.transform.decomposed
        change(&parts)
        properties.transform = parts.recomposed
    }

    /// The snapshot of this layer alone (sublayers are added by the caller), in the
    /// top-left, y-down pixels renderers draw in. Layers are placed relative to their
    /// superlayer's bounds origin, as in CALayer; a layer in a y-up space (Core Animation's
    /// default) is mirrored into y-down within the superlayer's bounds height, with its
    /// transform and anchor point mirrored alike, so it shows where Core Animation shows it.
    func snapshot(in container: LayerContainer) -> LayerSnapshot {
        let p = properties
        var frame = p.untransformedFrame
        frame.origin = Point(x: frame.x - container.boundsOrigin.x, y: frame.y - container.boundsOrigin.y)
        var transform = p.transform
        var anchor = p.anchorPoint
        if container.isYUp {
            frame.origin.y = container.height - frame.y - frame.height
            (transform.b, transform.c, transform.ty) = (-transform.b, -transform.c, -transform.ty)
            anchor.y = 1 - anchor.y
        }
        var snapshot = LayerSnapshot(frame: frame)
        snapshot.transform = transform
        snapshot.anchorPoint = anchor
        snapshot.opacity = min(p.opacity, 1)
        snapshot.backgroundColor = p.backgroundColor
        snapshot.cornerRadius = p.cornerRadius
        snapshot.borderWidth = p.borderWidth
        snapshot.borderColor = p.borderColor
        snapshot.masksToBounds = p.masksToBounds
        snapshot.contents = p.contents
        snapshot.contentsGravity = p.contentsGravity
        snapshot.text = text
        // A shadow offset is in the layer's space: y up there means negative is down.
        if container.isYUp { snapshot.text?.shadowOffset.height.negate() }
        snapshot.isVideoLayer = p.isVideoLayer
        snapshot.filters = p.filters
        return snapshot
    }
}
