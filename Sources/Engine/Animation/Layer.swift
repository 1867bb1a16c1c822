/// A node of the overlay tree, as `CALayer`: model values (`properties`, also readable and
/// writable directly: `layer.opacity = 0.5`), sublayers in drawing order, and animations
/// by key. Lives on one thread (the script's); freeze it into a `LayerTimeline` to render.
@dynamicMemberLookup
public class Layer {
    public var properties: LayerProperties
    /// Drawing order: first drawn first; `zPosition` reorders siblings (stably) when frozen.
    public private(set) var sublayers: [Layer] = []
    public private(set) weak var superlayer: Layer?
    /// Animations in the order added; later ones override earlier ones on the same property.
    public private(set) var animations: [(key: String?, animation: LayerAnimation)] = []

    /// Limits checked before a tree grows, so a runaway script fails with a clear error.
    public static let maxLayersPerTree = 100_000
    public static let maxTreeDepth = 1_000
    public static let maxAnimationsPerLayer = 10_000

    /// Number of layers in this layer's subtree, itself included.
    private(set) var subtreeCount = 1

    public init(properties: LayerProperties = LayerProperties()) {
        self.properties = properties
    }

    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<LayerProperties, Value>) -> Value {
        get { properties[keyPath: keyPath] }
        set { properties[keyPath: keyPath] = newValue }
    }

    /// The text this layer draws; text layers override it.
    var textStyle: TextStyle? { nil }

    // MARK: Tree

    public func addSublayer(_ layer: Layer) throws {
        try insertSublayer(layer, at: sublayers.count - (layer.superlayer === self ? 1 : 0))
    }

    /// Inserts `layer` at `index` of `sublayers` (counted without `layer` itself if it is
    /// already a sublayer here), taking it from its current superlayer.
    public func insertSublayer(_ layer: Layer, at index: Int) throws {
        var ancestor: Layer? = self
        var depth = 0
        while let current = ancestor {
            if current === layer { throw LayerError("cannot add a layer inside itself: that would make a cycle") }
            ancestor = current.superlayer
            depth += 1
        }
        let siblings = sublayers.count - (layer.superlayer === self ? 1 : 0)
        guard (0...siblings).contains(index) else {
            throw LayerError("sublayer index \(index) is out of range 0…\(siblings)")
        }
        let root = self.root
        if layer.root !== root, root.subtreeCount + layer.subtreeCount > Self.maxLayersPerTree {
            throw LayerError("a layer tree may hold at most \(Self.maxLayersPerTree) layers")
        }
        if depth + layer.height > Self.maxTreeDepth {
            throw LayerError("a layer tree may be at most \(Self.maxTreeDepth) layers deep")
        }
        layer.removeFromSuperlayer()
        sublayers.insert(layer, at: index)
        layer.superlayer = self
        adjustSubtreeCounts(by: layer.subtreeCount)
    }

    /// Replaces all sublayers (the `sublayers` property of the scripting API).
    public func setSublayers(_ layers: [Layer]) throws {
        for layer in sublayers { layer.removeFromSuperlayer() }
        for layer in layers { try addSublayer(layer) }
    }

    public func removeFromSuperlayer() {
        guard let parent = superlayer else { return }
        parent.sublayers.removeAll { $0 === self }
        parent.adjustSubtreeCounts(by: -subtreeCount)
        superlayer = nil
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

    /// Levels from this layer to its deepest descendant (1 for a leaf).
    private var height: Int {
        var deepest = 0
        var pending: [(Layer, Int)] = [(self, 1)]
        while let (layer, level) = pending.popLast() {
            deepest = max(deepest, level)
            pending += layer.sublayers.map { ($0, level + 1) }
        }
        return deepest
    }

    // MARK: Animations

    /// Adds an animation; one with the same key is replaced (and the new one goes last).
    public func addAnimation(_ animation: LayerAnimation, forKey key: String?) throws {
        if animation.keyPath.isTextOnly, textStyle == nil {
            throw LayerError("keyPath \(animation.keyPath.rawValue) applies to text layers only")
        }
        if case .filterParameter(let name, let parameter) = animation.keyPath {
            let ends: [AnimatableValue?]
            switch animation {
            case .keyframe(let keyframes): ends = keyframes.values
            case .basic(let basic): ends = [basic.fromValue, basic.toValue]
            }
            let numbers = ends.compactMap { $0?.number }
            do { try Filter.checkNumberParameter(parameter, of: name, among: properties.filters, values: numbers) } catch let error as FilterError {
                throw LayerError("keyPath \(animation.keyPath.rawValue): \(error.message)")
            }
        }
        if let key { removeAnimation(forKey: key) }
        guard animations.count < Self.maxAnimationsPerLayer else {
            throw LayerError("a layer may hold at most \(Self.maxAnimationsPerLayer) animations")
        }
        animations.append((key, animation))
    }

    public func removeAnimation(forKey key: String) {
        animations.removeAll { $0.key == key }
    }

    public func removeAllAnimations() {
        animations.removeAll()
    }

    public func animation(forKey key: String) -> LayerAnimation? {
        animations.first { $0.key == key }?.animation
    }

    public var animationKeys: [String] { animations.compactMap(\.key) }

    // MARK: Rendering

    /// The tree from this layer resolved at `t`; nil if this layer is hidden or fully
    /// transparent then. Freezes the tree each call: renderers keep a `LayerTimeline`.
    public func snapshot(at t: MediaTime) -> LayerSnapshot? {
        LayerTimeline(root: self).snapshot(at: t)
    }
}

/// A layer that draws text (`CATextLayer`). The text properties live in `style` and read
/// and write directly too: `layer.fontSize = 48`, `layer.string = "…"`.
@dynamicMemberLookup
public final class TextLayer: Layer {
    public var style: TextStyle

    public init(style: TextStyle = TextStyle(string: ""), properties: LayerProperties = LayerProperties()) {
        self.style = style
        super.init(properties: properties)
    }

    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<TextStyle, Value>) -> Value {
        get { style[keyPath: keyPath] }
        set { style[keyPath: keyPath] = newValue }
    }

    override var textStyle: TextStyle? { style }
}
