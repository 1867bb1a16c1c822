import MoonreelComposition
import MoonreelMedia

/// How one piece of a joined sequence gives way to the next (see `JoinedSequence`).
public struct Transition: Sendable, Equatable {
    /// What the pictures do during the transition.
    public enum Kind: String, Sendable, CaseIterable {
        /// A cut: no overlap.
        case none
        /// The outgoing picture fades out over the incoming one (an opacity ramp).
        case dissolve
        /// Both pictures move by a whole frame, the incoming one pushing the other out (transform ramps).
        case slide
        /// A straight edge sweeps across the frame, the incoming picture behind it (a crop ramp).
        case wipe
        /// The outgoing picture fades to black over the first half, the incoming one up from
        /// black over the second (opacity ramps); the sound dips to silence the same way.
        case fadeThroughBlack
    }

    /// The way the pictures move (slide) or the edge travels (wipe).
    public enum Direction: String, Sendable, CaseIterable {
        /// Towards the frame's left edge.
        case left
        /// Towards the frame's right edge.
        case right
        /// Towards the frame's top edge.
        case up
        /// Towards the frame's bottom edge.
        case down

        /// A unit step in render pixels' axes (y grows down).
        var step: Point {
            switch self {
            case .left: Point(x: -1, y: 0)
            case .right: Point(x: 1, y: 0)
            case .up: Point(x: 0, y: -1)
            case .down: Point(x: 0, y: 1)
            }
        }
    }

    /// What the pictures do.
    public var kind: Kind
    /// How long the two pieces overlap; zero for `.none`. Each piece must last at least the
    /// transitions into and out of it.
    public var duration: MediaTime
    /// Where a slide moves the pictures or a wipe's edge travels; ignored by the other kinds.
    public var direction: Direction

    /// `direction` defaults to the kind's own: a slide moves left (the next picture comes in
    /// from the right), a wipe's edge travels right.
    public init(_ kind: Kind, duration: MediaTime, direction: Direction? = nil) {
        self.kind = kind
        self.duration = kind == .none ? .zero : duration
        self.direction = direction ?? (kind == .wipe ? .right : .left)
    }

    /// A cut: no overlap, no effect.
    public static let cut = Transition(.none, duration: .zero)
}

/// What a transition does to one side (the outgoing or the incoming picture) over its time
/// range, in render pixels: opacity changes, a move, and the part of the frame it still
/// shows. Applied alike to a layer instruction (video) and to a title card's layer.
/// What a transition effect makes each side of a join do (its number from 0, its time range
/// and the frame's size), in place of the transition's own motions; nil: the transition's own.
public typealias TransitionDrawing = (_ join: Int, _ range: TimeRange, _ size: Size) throws -> (outgoing: TransitionMotion, incoming: TransitionMotion)?

/// A transition drawn by an effect (`av.join`'s transitions by name) gives one for each side.
public struct TransitionMotion {
    /// Whether the incoming side of `outgoing` → `incoming` is drawn over the outgoing one: when
    /// it asks to be, or when it alone is masked.
    static func incomingIsOnTop(_ outgoing: TransitionMotion, _ incoming: TransitionMotion) -> Bool {
        incoming.isOnTop || (incoming.mask != nil && outgoing.mask == nil)
    }

    /// The picture's opacity going from `from` to `to` (0…1) over `range`, then held.
    public struct OpacityRamp {
        /// The opacity at the start of `range`.
        public let from: Double
        /// The opacity at its end.
        public let to: Double
        /// When it changes (composition time).
        public let range: TimeRange
        /// A ramp from `from` to `to` over `range`.
        public init(from: Double, to: Double, range: TimeRange) { (self.from, self.to, self.range) = (from, to, range) }
    }
    /// Opacity changes, in order (none: opaque throughout).
    public var opacity: [OpacityRamp] = []
    /// Offset from the picture's place at the start and at the end of the range.
    public var offset: (from: Point, to: Point)?
    /// Scale about the frame's centre at the start and at the end of the range (before the offset).
    public var scale: (from: Double, to: Double)?
    /// Gaussian blur radius (render pixels) at the start and at the end of the range.
    public var blur: (from: Double, to: Double)?
    /// The part of the frame the picture shows at the start and at the end of the range.
    var visible: (from: Rect, to: Rect)?
    /// Where the picture shows (a `LayerInstruction.mask`: render-size coordinates, y up
    /// unless flipped, animations at composition times); a masked side is drawn on top.
    public var mask: Layer?
    /// How the opacity, scale, offset and blur changes speed up and slow down (linear by
    /// default; a mask animates with its own timing).
    public var timing: TimingFunction = .linear
    /// Drawn over the other side (the incoming picture's choice; the outgoing one is on top
    /// otherwise, unless only the incoming one is masked).
    public var isOnTop = false
    /// A title card drawn over the side that should be on top shows through the inverse of
    /// that side's mask (cards are always drawn over clips).
    var inverseMask: Layer?

    /// No change: the picture as it is, all of it.
    public init() {}

    /// Makes this side, drawn over `other` though it should be under it (a title card), look
    /// as if it were: it shows through the inverse of `other`'s mask and fades in as `other`
    /// fades out (both are opaque pictures), unless it has a mask or fades of its own.
    mutating func goUnder(_ other: TransitionMotion) {
        if mask == nil { inverseMask = other.mask }
        if opacity.isEmpty { opacity = other.opacity.map { OpacityRamp(from: 1 - $0.from, to: 1 - $0.to, range: $0.range) } }
    }
}

extension Transition {
    /// The two sides' motions over `range` in a frame of `size`. `incomingOnTop` says which
    /// picture is drawn over the other: that one fades (dissolve) or is cut back (wipe) so
    /// the one beneath shows through.
    func motions(over range: TimeRange, in size: Size, incomingOnTop: Bool) -> (outgoing: TransitionMotion, incoming: TransitionMotion) {
        var outgoing = TransitionMotion(), incoming = TransitionMotion()
        switch kind {
        case .none:
            break
        case .dissolve:
            if incomingOnTop {
                incoming.opacity = [.init(from: 0, to: 1, range: range)]
            } else {
                outgoing.opacity = [.init(from: 1, to: 0, range: range)]
            }
        case .fadeThroughBlack:
            let (first, second) = range.halves
            outgoing.opacity = [.init(from: 1, to: 0, range: first), .init(from: 0, to: 0, range: second)]
            incoming.opacity = [.init(from: 0, to: 0, range: first), .init(from: 0, to: 1, range: second)]
        case .slide:
            let step = direction.step
            let distance = Point(x: step.x * size.width, y: step.y * size.height)
            outgoing.offset = (.zero, distance)
            incoming.offset = (Point(x: -distance.x, y: -distance.y), .zero)
        case .wipe:
            let whole = Rect(x: 0, y: 0, width: size.width, height: size.height)
            // The edge leaves from the side the direction points away from and ends at the
            // other: the outgoing picture keeps the part ahead of it, the incoming one the
            // part behind.
            let (start, end): (Rect, Rect) = switch direction {
            case .right: (Rect(x: 0, y: 0, width: 0, height: size.height), Rect(x: size.width, y: 0, width: 0, height: size.height))
            case .left: (Rect(x: size.width, y: 0, width: 0, height: size.height), Rect(x: 0, y: 0, width: 0, height: size.height))
            case .down: (Rect(x: 0, y: 0, width: size.width, height: 0), Rect(x: 0, y: size.height, width: size.width, height: 0))
            case .up: (Rect(x: 0, y: size.height, width: size.width, height: 0), Rect(x: 0, y: 0, width: size.width, height: 0))
            }
            if incomingOnTop {
                incoming.visible = (start, whole)
            } else {
                outgoing.visible = (whole, end)
            }
        }
        return (outgoing, incoming)
    }
}

extension TimeRange {
    /// The first and second half (split at the exact middle).
    package var halves: (TimeRange, TimeRange) {
        let middle = start + duration.multiplied(by: MediaTime(value: 1, timescale: 1), dividedBy: MediaTime(value: 2, timescale: 1))
        return (TimeRange(from: start, to: middle), TimeRange(from: middle, to: end))
    }
}

extension LayerInstruction {
    /// Applies `motion` over `range` to a picture placed by `placement` (its upright, fitted
    /// transform) whose stored frame is `stored`.
    /// `shown`: the part of the placed picture inside the frame, in render coordinates.
    func apply(_ motion: TransitionMotion, over range: TimeRange, placement: AffineTransform, shown picture: Rect, in size: Size) throws {
        for ramp in motion.opacity {
            opacity.ramp(from: ramp.from, to: ramp.to, over: ramp.range, curve: motion.timing)
        }
        if motion.offset != nil || motion.scale != nil {
            let offset = motion.offset ?? (.zero, .zero), scale = motion.scale ?? (1, 1)
            let moved = { (s: Double, by: Point) in
                placement.concatenating(.scale(s, s, about: Point(x: size.width / 2, y: size.height / 2))).concatenating(.translation(by.x, by.y))
            }
            // Every entry of the matrix is linear in the scale and the offset: one ramp is exact.
            transform.ramp(from: moved(scale.from, offset.from), to: moved(scale.to, offset.to), over: range, curve: motion.timing)
        }
        if let blur = motion.blur {
            var gaussian = Filter(.gaussianBlur)
            gaussian.name = "transitionBlur"
            filters.filters.append(gaussian)
            try filters.setRamp(from: blur.from, to: blur.to, parameter: "radius", filter: gaussian.name, over: range, curve: motion.timing)
        }
        mask = motion.mask
        if let (from, to) = motion.visible.map({ ($0.from, $0.to) }), let toStored = placement.inverted() {
            // The crop is in stored pixels and must stay inside the picture (outside it the
            // renderer would repeat edge pixels). Where the visible part meets the picture's
            // edges changes at a few moments; between them the crop moves in a straight
            // line, so one ramp per stretch is exact.
            let crop = { (u: Double) in toStored.apply(Rect.interpolate(from, to, u).clamped(to: picture)) }
            let breaks = ([0, 1] + Rect.crossings(from: from, to: to, edgesOf: picture)).sorted()
            setCropRectangle(crop(0), at: range.start)
            for (u0, u1) in zip(breaks, breaks.dropFirst()) where u1 > u0 {
                setCropRectangleRamp(from: crop(u0), to: crop(u1), over: range.fraction(u0, to: u1))
            }
        }
    }
}

extension TimeRange {
    /// The part from fraction `u0` to `u1` of the range (to the nearest 1/defaultTimescale s).
    func fraction(_ u0: Double, to u1: Double) -> TimeRange {
        let at = { (u: Double) in u <= 0 ? self.start : u >= 1 ? self.end : self.start + (MediaTime(seconds: self.duration.seconds * u) ?? .zero) }
        return TimeRange(from: at(u0), to: at(u1))
    }
}

extension Rect {
    /// The fractions in (0, 1) at which an edge of a rect moving in a straight line from
    /// `from` to `to` meets a line of `bounds`' edges.
    static func crossings(from: Rect, to: Rect, edgesOf bounds: Rect) -> [Double] {
        let pairs = [(from.x, to.x), (from.maxX, to.maxX)].flatMap { edge in [bounds.x, bounds.maxX].map { (edge, $0) } }
            + [(from.y, to.y), (from.maxY, to.maxY)].flatMap { edge in [bounds.y, bounds.maxY].map { (edge, $0) } }
        return pairs.compactMap { edge, line in
            let moved = edge.1 - edge.0
            guard moved != 0 else { return nil }
            let u = (line - edge.0) / moved
            return u > 0 && u < 1 ? u : nil
        }
    }
}
