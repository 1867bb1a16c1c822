import MoonreelMedia

/// A node of the overlay tree, as `CALayer`: model values (`properties`, also readable and
/// writable directly: `layer.opacity = 0.5`), sublayers in drawing order, and animations
/// by key. Lives on one thread (the script's). To show a tree over video, make it the
/// `parentLayer` of a video composition's animation tool; the export freezes it then, so
/// later changes do not affect an export already started.
@dynamicMemberLookup
public class Layer {
    /// The layer's model values (geometry, colours, contents, filters), also reachable as
    /// members of the layer itself.
    public var properties: LayerProperties
    /// Drawing order: first drawn first; `zPosition` reorders siblings (stably) when frozen.
    public private(set) var sublayers: [Layer] = []
    /// The layer this one is a sublayer of; nil for a root. Held weakly: a tree is kept
    /// alive from its root.
    public private(set) weak var superlayer: Layer?
    /// The layer whose alpha decides where this one shows (`CALayer.mask`): placed in this
    /// layer's bounds as a sublayer would be and never drawn itself; where it is opaque the
    /// layer and its sublayers show, where it is transparent they do not. Set with `setMask`.
    public private(set) var mask: Layer?
    /// Whether the layer shows where its mask is transparent instead of where it is opaque
    /// (not Core Animation's: a transition's other side is drawn through the same mask so).
    public private(set) var maskIsInverted = false
    /// The layer this one is the mask of (held weakly); a mask has no superlayer.
    public private(set) weak var maskedLayer: Layer?
    /// Animations in the order added; later ones override earlier ones on the same property.
    public private(set) var animations: [(key: String?, animation: LayerAnimation)] = []
    /// The script line that made the layer (for a layer an effect made, the line that called
    /// the effect): what a diagnostic about the layer names. Nil when no script made it.
    public var origin: SourceLine?

    /// Limits checked before a tree grows, so a runaway script fails with a clear error.
    /// The most layers one tree may hold (100 000).
    public static let maxLayersPerTree = 100_000
    /// The most levels from a root to its deepest layer (1 000).
    public static let maxTreeDepth = 1_000
    /// The most animations one layer may hold (10 000).
    public static let maxAnimationsPerLayer = 10_000

    /// Number of layers in this layer's subtree, itself included.
    private(set) var subtreeCount = 1

    /// A layer with the given model values (by default Core Animation's: empty bounds at
    /// the origin, opaque, nothing drawn), no sublayers and no animations.
    public init(properties: LayerProperties = LayerProperties()) {
        self.properties = properties
    }

    /// Reads and writes `properties` members on the layer itself: `layer.opacity = 0.5`.
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<LayerProperties, Value>) -> Value {
        get { properties[keyPath: keyPath] }
        set { properties[keyPath: keyPath] = newValue }
    }

    /// The text this layer draws; text layers override it.
    package var textStyle: TextStyle? { nil }
    /// The sound a `SoundLayer` shows; nil for other layers.
    var soundVisual: SoundVisual? { nil }

    // MARK: Tree

    /// Adds `layer` on top of the sublayers (`CALayer.addSublayer`), taking it from its
    /// current superlayer; adding a sublayer again moves it to the top.
    /// - Throws: `EngineError` when `layer` is this layer or one of its ancestors (a cycle),
    ///   or when the tree would exceed `maxLayersPerTree` or `maxTreeDepth`.
    public func addSublayer(_ layer: Layer) throws {
        try insertSublayer(layer, at: sublayers.count - (layer.superlayer === self ? 1 : 0))
    }

    /// Inserts `layer` at `index` of `sublayers` (counted without `layer` itself if it is
    /// already a sublayer here), taking it from its current superlayer.
    /// - Throws: `EngineError` for a cycle, an index outside `0…sublayers.count`, or a tree
    ///   that would exceed `maxLayersPerTree` or `maxTreeDepth`.
    public func insertSublayer(_ layer: Layer, at index: Int) throws {
        if layer.maskedLayer != nil {
            throw EngineError("the layer is another layer's mask, and a mask cannot be a sublayer: set that layer's mask to nil first")
        }
        try checkPlacement(of: layer, what: "add a layer inside itself")
        let siblings = sublayers.count - (layer.superlayer === self ? 1 : 0)
        guard (0...siblings).contains(index) else {
            throw EngineError("sublayer index \(index) is out of range 0…\(siblings)")
        }
        let root = self.root
        if layer.root !== root, root.subtreeCount + layer.subtreeCount > Self.maxLayersPerTree {
            throw EngineError("a layer tree may hold at most \(Self.maxLayersPerTree) layers", kind: .limit)
        }
        layer.removeFromSuperlayer()
        sublayers.insert(layer, at: index)
        layer.superlayer = self
        adjustSubtreeCounts(by: layer.subtreeCount)
    }

    /// Replaces all sublayers (the `sublayers` property of the scripting API).
    /// - Throws: `EngineError` as `addSublayer(_:)`; the layers before the one refused stay added.
    public func setSublayers(_ layers: [Layer]) throws {
        for layer in sublayers { layer.removeFromSuperlayer() }
        for layer in layers { try addSublayer(layer) }
    }

    /// Detaches the layer (and its subtree) from its superlayer; nothing happens for a root.
    public func removeFromSuperlayer() {
        guard let parent = superlayer else { return }
        parent.sublayers.removeAll { $0 === self }
        parent.adjustSubtreeCounts(by: -subtreeCount)
        superlayer = nil
    }

    /// Makes `newMask` this layer's mask (nil: none), as `CALayer.mask`; the old mask is freed.
    /// - Throws: `EngineError` when `newMask` is a sublayer somewhere, already masks another
    ///   layer, is this layer or one of its ancestors (a cycle), or would make the tree deeper
    ///   than `maxTreeDepth`.
    public func setMask(_ newMask: Layer?, inverted: Bool = false) throws {
        if let newMask, newMask !== mask {
            if newMask.superlayer != nil {
                throw EngineError("a mask cannot be a sublayer: remove it from its superlayer first (it is drawn only as the mask)")
            }
            if newMask.maskedLayer != nil { throw EngineError("the layer is already another layer's mask; a layer masks one layer") }
            try checkPlacement(of: newMask, what: "make a layer the mask of itself or of a layer inside it")
        }
        mask?.maskedLayer = nil
        mask = newMask
        maskIsInverted = newMask != nil && inverted
        newMask?.maskedLayer = self
    }

    /// Checks that `layer` can go below this layer: it is not this layer or above it
    /// (through superlayers and masks: a cycle), and the tree stays within `maxTreeDepth`.
    private func checkPlacement(of layer: Layer, what: String) throws {
        var ancestor: Layer? = self
        var depth = 0
        while let current = ancestor {
            if current === layer { throw EngineError("cannot \(what): that would make a cycle") }
            ancestor = current.superlayer ?? current.maskedLayer
            depth += 1
        }
        if depth + layer.height > Self.maxTreeDepth {
            throw EngineError("a layer tree may be at most \(Self.maxTreeDepth) layers deep", kind: .limit)
        }
    }

    private func adjustSubtreeCounts(by delta: Int) {
        var ancestor: Layer? = self
        while let current = ancestor {
            current.subtreeCount += delta
            ancestor = current.superlayer
        }
    }

    var root: Layer {
        var top = self
        while let parent = top.superlayer { top = parent }
        return top
    }

    /// Levels from this layer to its deepest descendant or mask (1 for a leaf).
    private var height: Int {
        var deepest = 0
        var pending: [(Layer, Int)] = [(self, 1)]
        while let (layer, level) = pending.popLast() {
            deepest = max(deepest, level)
            pending += (layer.sublayers + [layer.mask].compactMap { $0 }).map { ($0, level + 1) }
        }
        return deepest
    }

    // MARK: Animations

    /// Adds an animation; one with the same key is replaced (and the new one goes last).
    /// A nil key never replaces anything (`CALayer.add(_:forKey:)`). As in Core Animation,
    /// `properties` keep their model values; the animation changes only what is drawn, at
    /// composition times (see `AnimationTiming`).
    /// - Throws: `EngineError` when the key path is for text layers only and this is not a
    ///   `TextLayer`, when it names a filter parameter the layer's filters do not have or
    ///   a value is out of that parameter's range, or when the layer already holds
    ///   `maxAnimationsPerLayer` animations.
    public func addAnimation(_ animation: LayerAnimation, forKey key: String?) throws {
        if animation.keyPath.isTextOnly, textStyle == nil {
            throw EngineError("keyPath \(animation.keyPath.rawValue) applies to text layers only")
        }
        if case .filterParameter(let name, let parameter) = animation.keyPath {
            let ends: [AnimatableValue?]
            switch animation {
            case .keyframe(let keyframes): ends = keyframes.values
            case .basic(let basic): ends = [basic.start, basic.end]
            }
            let numbers = ends.compactMap { $0?.number }
            do { try Filter.checkNumberParameter(parameter, of: name, among: properties.filters, values: numbers) } catch let error as EngineError {
                throw EngineError("keyPath \(animation.keyPath.rawValue): \(error.message)", kind: error.kind, subject: error.subject)
            }
        }
        if let key { removeAnimation(forKey: key) }
        guard animations.count < Self.maxAnimationsPerLayer else {
            throw EngineError("a layer may hold at most \(Self.maxAnimationsPerLayer) animations", kind: .limit)
        }
        animations.append((key, animation))
    }

    /// The numbers `keyPath` is drawn within on this layer (opacity's 0…1, a filter
    /// parameter's range): a value an animation reaches past them is drawn at the bound.
    /// Nil for a property without bounds.
    public func numberRange(of keyPath: AnimatableKeyPath) -> ClosedRange<Double>? {
        guard case .filterParameter(let name, let parameter) = keyPath else { return keyPath.numberRange }
        guard let filter = properties.filters.first(where: { $0.name == name }), let found = try? filter.parameterNamed(parameter),
              case .number(let range, _) = found.kind else { return nil }
        return range
    }

    /// Removes the animation added under `key`, if any (`CALayer.removeAnimation(forKey:)`).
    public func removeAnimation(forKey key: String) {
        animations.removeAll { $0.key == key }
    }

    /// Removes every animation, keyed or not.
    public func removeAllAnimations() {
        animations.removeAll()
    }

    /// The animation added under `key`; nil when there is none.
    public func animation(forKey key: String) -> LayerAnimation? {
        animations.first { $0.key == key }?.animation
    }

    /// The keys of the keyed animations, in the order added (`CALayer.animationKeys()`).
    public var animationKeys: [String] { animations.compactMap(\.key) }

    // MARK: Rendering

    /// This layer alone (not its superlayers) with its model values, as when no animation runs.
    package var modelValues: ResolvedLayer { ResolvedLayer(properties: properties, text: textStyle) }

    /// This layer alone (not its superlayers) as drawn at `t`, its animations applied.
    package func resolved(at t: MediaTime) -> ResolvedLayer {
        modelValues.animated(by: animations.map(\.animation), at: t)
    }

    /// The tree from this layer resolved at `t`; nil if this layer is hidden or fully
    /// transparent then. Freezes the tree each call: renderers keep a `LayerTimeline`.
    package func snapshot(at t: MediaTime) -> LayerSnapshot? {
        LayerTimeline(root: self).snapshot(at: t)
    }
}

/// A layer that draws text (`CATextLayer`). The text properties live in `style` and read
/// and write directly too: `layer.fontSize = 48`, `layer.string = "…"`.
@dynamicMemberLookup
public final class TextLayer: Layer {
    /// The text and how it is drawn: font, colours, alignment, wrapping, outline, shadow.
    public var style: TextStyle

    /// A text layer with the given style (by default an empty string in the default
    /// font) and model values.
    public init(style: TextStyle = TextStyle(string: ""), properties: LayerProperties = LayerProperties()) {
        self.style = style
        super.init(properties: properties)
    }

    /// Reads and writes `style` members on the layer itself: `layer.fontSize = 48`.
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<TextStyle, Value>) -> Value {
        get { style[keyPath: keyPath] }
        set { style[keyPath: keyPath] = newValue }
    }

    package override var textStyle: TextStyle? { style }
}

/// A layer that shows the sound: spectrum bars or a waveform, measured from the audio when
/// the layer is made and drawn for each frame's time (`SoundVisual`).
public final class SoundLayer: Layer {
    /// The sound it shows and how (`SoundVisual.measure`).
    public let visual: SoundVisual

    /// A layer showing `visual`, with the given model values (frame, opacity…).
    public init(visual: SoundVisual, properties: LayerProperties = LayerProperties()) {
        self.visual = visual
        super.init(properties: properties)
    }

    override var soundVisual: SoundVisual? { visual }
}
