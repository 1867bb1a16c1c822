import MoonreelMedia

/// A layer tree frozen for rendering: a Sendable value (handed to render threads) that
/// knows, for every layer, when it can be visible, so that `snapshot(at:)` touches only
/// the layers that can be visible at that time — O(log n + active) however many lyric
/// lines wait for their turn — and that tells when nothing changes (`isStatic(over:)`).
package struct LayerTimeline: Sendable {
    package struct FrozenLayer: Sendable {
        package var model: ResolvedLayer
        var animations: [LayerAnimation]
        /// What a sound layer shows, picked for each time.
        var sound: SoundVisual?
        /// The layer's mask, frozen in the space of the layer's bounds.
        var mask: LayerTimeline?
        var maskIsInverted = false
        /// Index of the superlayer (-1 for the root); layers are in drawing pre-order.
        package var parent: Int
        /// The script line that made the layer, for messages.
        package var origin: SourceLine?
        /// One past the index of the last layer of this layer's subtree.
        var subtreeEnd: Int
        /// Whether the space this layer is placed in has y up (Core Animation's default):
        /// each `isGeometryFlipped` above it turns that over.
        var livesInYUpSpace: Bool

        func resolved(at t: MediaTime) -> ResolvedLayer { model.animated(by: animations, at: t) }
    }

    package typealias Span = (start: TimelineBound, end: TimelineBound)

    /// Widening of computed visibility and change boundaries, which come from Double
    /// fractions of durations and may round a tick either way; erring wide only costs a
    /// layer checked or a frame redrawn.
    static let boundaryMargin = MediaTime(value: 1, timescale: 1000)

    package let layers: [FrozenLayer]
    /// For each layer (drawing pre-order), the stretches of time in which it can be visible.
    package let visibleSpans: [[Span]]
    /// Height of the space the root is placed in (the render size); nil: the root is the canvas.
    private let canvasHeight: Double?
    /// How long each frame drawn from the tree lasts (what a sound layer shows is the sound
    /// playing during its frame).
    private let frameDuration: MediaTime
    private let visibility: IntervalIndex
    /// Stretches of time in which something visible may change, by ascending start, with
    /// the latest end among each prefix.
    private let changes: [Span]
    private let latestChangeEnd: [TimelineBound]

    /// Number of layers frozen, the root included.
    package var layerCount: Int { layers.count }

    /// Freezes the tree under `root`, which is placed in a space `canvasHeight` high (the
    /// render size's height, as the animation tool's parent layer is); without one, the
    /// root itself is taken as the canvas.
    package init(root: Layer, canvasHeight: Double? = nil, frameDuration: MediaTime = MediaTime(value: 1, timescale: 30)) {
        self.init(root: root, canvasHeight: canvasHeight, rootLivesInYUpSpace: true, frameDuration: frameDuration)
    }

    /// `rootLivesInYUpSpace`: false for a mask inside a flipped layer (a mask is placed in its
    /// layer's bounds, as a sublayer is).
    private init(root: Layer, canvasHeight: Double?, rootLivesInYUpSpace: Bool, frameDuration: MediaTime) {
        self.canvasHeight = canvasHeight
        self.frameDuration = frameDuration
        var frozen: [FrozenLayer] = []
        var pending: [(layer: Layer, parent: Int)] = [(root, -1)]
        while let (layer, parent) = pending.popLast() {
            let index = frozen.count
            let yUp = parent < 0 ? rootLivesInYUpSpace : frozen[parent].livesInYUpSpace != frozen[parent].model.properties.isGeometryFlipped
            let mask = layer.mask.map {
                LayerTimeline(root: $0, canvasHeight: nil, rootLivesInYUpSpace: yUp != layer.properties.isGeometryFlipped, frameDuration: frameDuration)
            }
            frozen.append(FrozenLayer(model: ResolvedLayer(properties: layer.properties, text: layer.textStyle),
                                      animations: layer.animations.map(\.animation), sound: layer.soundVisual, mask: mask,
                                      maskIsInverted: layer.maskIsInverted, parent: parent, origin: layer.origin,
                                      subtreeEnd: index + layer.subtreeCount, livesInYUpSpace: yUp))
            // Stable sort by zPosition; pushed in reverse so the first is frozen first.
            let ordered = layer.sublayers.enumerated().sorted {
                ($0.element.properties.zPosition, $0.offset) < ($1.element.properties.zPosition, $1.offset)
            }
            pending += ordered.reversed().map { ($0.element, index) }
        }
        layers = frozen

        var visibleSpans: [[Span]] = []
        var entries: [IntervalIndex.Entry] = []
        var changes: [Span] = []
        for layer in frozen {
            var spans = Self.intersection(Self.visibleSpans(of: layer, .opacity) { ($0.number ?? 1) > 0 },
                                          Self.visibleSpans(of: layer, .isHidden) { $0 != .bool(true) })
            if layer.parent >= 0 { spans = Self.intersection(spans, visibleSpans[layer.parent]) }
            spans = Self.widened(spans)
            visibleSpans.append(spans)
            entries += spans.map { IntervalIndex.Entry(start: $0.start, end: $0.end, payload: visibleSpans.count - 1) }
            if !spans.isEmpty { changes += layer.animations.flatMap { Self.changeSpans($0.effectPieces) } + (layer.mask?.changes ?? []) }
            // A sound layer changes with every frame it shows.
            if layer.sound != nil { changes += spans }
            // So does one whose filters draw anew at every time (grain, glitch).
            if layer.model.properties.filters.contains(where: \.kind.changesOverTime) { changes += spans }
        }
        visibility = IntervalIndex(entries)
        self.visibleSpans = visibleSpans
        self.changes = changes.sorted { $0.start < $1.start }
        var latest: [TimelineBound] = []
        for span in self.changes { latest.append(max(latest.last ?? .negativeInfinity, span.end)) }
        latestChangeEnd = latest
    }

    /// The tree resolved at `t`; nil if the root is hidden or fully transparent then.
    /// Hidden and fully transparent layers are left out with their sublayers.
    package func snapshot(at t: MediaTime) -> LayerSnapshot? { snapshot(at: t, in: nil) }

    /// `space`: where the root is placed (a mask's layer's bounds); nil: the canvas.
    private func snapshot(at t: MediaTime, in space: LayerContainer?) -> LayerSnapshot? {
        var open: [(index: Int, snapshot: LayerSnapshot, sublayerSpace: LayerContainer)] = []
        var skipBelow = 0
        func closeTop() {
            let done = open.removeLast()
            if open.isEmpty { open.append(done) } else { open[open.count - 1].snapshot.sublayers.append(done.snapshot) }
        }
        for index in candidateLayers(at: t) where index >= skipBelow {
            let layer = layers[index]
            while let top = open.last, index >= layers[top.index].subtreeEnd, open.count > 1 { closeTop() }
            let resolved = layer.resolved(at: t)
            // A layer shows only inside a shown superlayer.
            guard (open.last?.index ?? -1) == layer.parent, resolved.isVisible else {
                skipBelow = layer.subtreeEnd
                continue
            }
            let container = open.last?.sublayerSpace ?? space ?? LayerContainer(
                boundsOrigin: .zero, height: canvasHeight ?? resolved.properties.untransformedFrame.maxY, isYUp: true)
            let bounds = resolved.properties.bounds
            let sublayerSpace = LayerContainer(boundsOrigin: bounds.origin, height: bounds.height,
                                               isYUp: layer.livesInYUpSpace != resolved.properties.isGeometryFlipped)
            var snapshot = resolved.snapshot(in: container)
            if !snapshot.filters.isEmpty { snapshot.filters = snapshot.filters.map { $0.drawn(at: t) } }
            snapshot.sound = layer.sound?.picture(at: t, frameDuration: frameDuration)
            if let mask = layer.mask {
                if let shape = mask.snapshot(at: t, in: sublayerSpace) {
                    snapshot.mask = LayerMask(shape, inverted: layer.maskIsInverted)
                } else if !layer.maskIsInverted {
                    // A hidden or transparent mask shows none of its layer (an inverted one, all).
                    skipBelow = layer.subtreeEnd
                    continue
                }
            }
            open.append((index, snapshot, sublayerSpace))
        }
        while open.count > 1 { closeTop() }
        return open.first?.snapshot
    }

    /// Indices (in drawing pre-order, ascending) of the layers that can be visible at `t`.
    func candidateLayers(at t: MediaTime) -> [Int] {
        visibility.payloads(containing: t).sorted()
    }

    /// True when the picture of the tree is the same at every time in `range` (nothing
    /// visible animates or switches inside it), so a renderer can reuse its last drawing.
    package func isStatic(over range: TimeRange) -> Bool {
        guard !range.isEmpty else { return true }
        let (start, end) = (TimelineBound.at(range.start), TimelineBound.at(range.end))
        // Changes that begin before the range ends: does any of them reach into it?
        var (low, high) = (0, changes.count)
        while low < high {
            let middle = (low + high) / 2
            if changes[middle].start < end { low = middle + 1 } else { high = middle }
        }
        return low == 0 || latestChangeEnd[low - 1] <= start
    }

    // MARK: Analysis

    /// Where the property `keyPath`, with its animations, may let the layer show.
    private static func visibleSpans(of layer: FrozenLayer, _ keyPath: AnimatableKeyPath,
                                     isVisible: @escaping (AnimatableValue) -> Bool) -> [Span] {
        let pieceLists = layer.animations.filter { $0.keyPath == keyPath }.map(\.effectPieces)
        let model = layer.model.value(for: keyPath)
        let mayShow = { (values: [AnimatableValue]?) -> Bool in
            // Interpolating between equal values gives that value; anything else may vary.
            guard let values, let first = values.first, values.allSatisfy({ $0 == first }) else { return true }
            return isVisible(first)
        }
        var bounds = Set<TimelineBound>([.negativeInfinity, .positiveInfinity])
        for piece in pieceLists.joined() { bounds.formUnion([piece.start, piece.end]) }
        let ordered = bounds.sorted()
        var spans: [Span] = []
        for (start, end) in zip(ordered, ordered.dropFirst()) {
            // The last animation in effect wins; without any, the model value shows.
            let values = pieceLists.reversed().lazy.compactMap { piece(in: $0, covering: start) }.first?.values
                ?? model.map { [$0] }
            guard mayShow(values) else { continue }
            if let last = spans.last, last.end == start { spans[spans.count - 1].end = end } else { spans.append((start, end)) }
        }
        return spans
    }

    /// The piece of a time-ordered list that contains `time`.
    private static func piece(in pieces: [EffectPiece], covering time: TimelineBound) -> EffectPiece? {
        var (low, high) = (0, pieces.count)
        while low < high {
            let middle = (low + high) / 2
            if pieces[middle].start <= time { low = middle + 1 } else { high = middle }
        }
        guard low > 0, pieces[low - 1].end > time else { return nil }
        return pieces[low - 1]
    }

    /// Where an animation may change what is shown: around the ends of constant pieces,
    /// and throughout pieces that interpolate.
    private static func changeSpans(_ pieces: [EffectPiece]) -> [Span] {
        var spans: [Span] = []
        for piece in pieces {
            if let values = piece.values, let first = values.first, values.allSatisfy({ $0 == first }) {
                spans += [piece.start, piece.end].compactMap { bound in
                    guard case .at = bound else { return nil }
                    return (bound, bound)
                }
            } else {
                spans.append((piece.start, piece.end))
            }
        }
        return widened(spans)
    }

    private static func widened(_ spans: [Span]) -> [Span] {
        var result: [Span] = []
        for span in spans {
            let start = span.start.shifted(by: -boundaryMargin), end = span.end.shifted(by: boundaryMargin)
            if let last = result.last, last.end >= start { result[result.count - 1].end = max(last.end, end) } else { result.append((start, end)) }
        }
        return result
    }

    /// Intersection of two time-ordered lists of disjoint spans.
    private static func intersection(_ a: [Span], _ b: [Span]) -> [Span] {
        var result: [Span] = []
        var (i, j) = (0, 0)
        while i < a.count, j < b.count {
            let start = max(a[i].start, b[j].start), end = min(a[i].end, b[j].end)
            if start < end { result.append((start, end)) }
            if a[i].end < b[j].end { i += 1 } else { j += 1 }
        }
        return result
    }
}

extension TimelineBound {
    func shifted(by offset: MediaTime) -> TimelineBound {
        if case .at(let time) = self { return .at(time + offset) }
        return self
    }
}

extension AnimatableValue {
    var number: Double? {
        if case .number(let n) = self { return n }
        return nil
    }
}
